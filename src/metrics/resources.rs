//! Resources sampled over a run: the server's (its processes, its cgroup, its scraped
//! `/metrics`) and the generator's own. Each is a named [`Series`] of `(seconds from the
//! start of the run, value)` points, one per interval. The sampler (`watch`) makes them,
//! `resources.csv` and `summary.json` keep them, the verdicts (leak slopes) read them.
//!
//! Names are `WHO.WHAT[.AGG]`: `server.rss`, `server.fds`, `server.cpu`,
//! `server.threads`, `server.processes`, `server.rss.max`, `server.sessions`,
//! `generator.rss`, `generator.cpu`, `generator.lag` …; a scraped series the profile
//! names keeps its metric name under `scrape.` (`scrape.mcp_active_sessions`).

use serde::{Deserialize, Serialize};

/// What a series' values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesUnit {
    Bytes,
    /// A plain count (descriptors, threads, processes, sessions).
    Count,
    /// CPU in use, in cores (CPU seconds per second).
    Cores,
    Seconds,
}

/// One sampled series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub name: String,
    pub unit: SeriesUnit,
    /// `[seconds from the start of the run, value]`, in time order.
    pub points: Vec<[f64; 2]>,
}

impl Series {
    pub fn new(name: impl Into<String>, unit: SeriesUnit) -> Series {
        Series {
            name: name.into(),
            unit,
            points: Vec::new(),
        }
    }

    pub fn push(&mut self, t_s: f64, value: f64) {
        self.points.push([t_s, value]);
    }
}
