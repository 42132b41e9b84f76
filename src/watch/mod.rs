//! The resource watcher: a task beside the collector that, every plan interval, samples
//! the server (its processes from procfs — the `--server-pid`s, the cgroup's processes
//! and the live stdio children —, its cgroup, its scraped `/metrics`) and the generator
//! itself, and makes the [`Series`] of `metrics::resources`. It writes `resources.csv`
//! as it goes, publishes the latest values for the live view and `/metrics`, and hands
//! the whole series back when stopped.
//!
//! A process that is gone is not an error: it stops contributing (and leaves
//! `server.processes`). A failed scrape is counted (`scrape.failures`) and retried at the
//! next interval.

mod cgroup;
mod generator;
mod machine;
mod procfs;
mod resources_csv;
mod sampler;
mod scrape;

pub use cgroup::NotACgroup;
pub use generator::{BUSY_PRESSURE, LOW_SHARE};
pub use resources_csv::read as read_csv;
pub use scrape::basic_auth;
pub use scrape::{parse as parse_exposition, Values as ScrapedValues};

use crate::metrics::resources::{Series, SeriesUnit};
use crate::plan::Plan;
use crate::protocol::TransportKind;
use crate::transport::stdio::ChildRegistry;
use sampler::Sampler;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

/// The file the watcher writes into the results folder.
pub const CSV_FILE: &str = "resources.csv";

/// The values of the latest interval, for the live views.
#[derive(Debug, Clone, Default)]
pub struct Latest {
    /// Seconds from the run start.
    pub t_s: f64,
    pub values: Vec<(String, SeriesUnit, f64)>,
    /// Scrapes that failed so far.
    pub scrape_failures: u64,
    /// Set when the generator itself limits the figures, in plain words.
    pub bottleneck: Option<String>,
}

impl Latest {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.values
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|&(_, _, v)| v)
    }
}

/// Why the watcher cannot start: what the plan names is not there.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("no process {0} (--server-pid / watch.server_pid)\nfix: start the server first, or give its current pid, e.g. --server-pid $(pgrep -f my-server)")]
    NoProcess(u32),
    #[error(transparent)]
    Cgroup(#[from] NotACgroup),
    #[error("creating {path}: {source}")]
    Csv {
        path: String,
        source: std::io::Error,
    },
}

/// What the watcher samples.
#[derive(Debug, Clone)]
struct Sources {
    pids: Vec<u32>,
    cgroup: Option<std::path::PathBuf>,
    metrics: Option<url::Url>,
    series: Vec<String>,
    children: ChildRegistry,
    /// Whether procfs/cgroup sources own the `server.*` names (else the scrape does).
    local: bool,
    /// The cgroup alone stands for the server (no pids, no stdio children).
    cgroup_only: bool,
    /// Values of the run itself read at every sample (`fleet.in_flight`).
    gauges: Vec<Gauge>,
}

/// A value of the run itself, read at every sample into a series of its own (the
/// sessions in flight: `fleet.in_flight`). A closure, so the watcher needs nothing of
/// the layers above it.
#[derive(Clone)]
pub struct Gauge {
    pub name: &'static str,
    pub unit: SeriesUnit,
    pub read: Arc<dyn Fn() -> f64 + Send + Sync>,
}

impl std::fmt::Debug for Gauge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gauge").field("name", &self.name).finish()
    }
}

/// The running watcher.
pub struct Watcher {
    done: CancellationToken,
    task: JoinHandle<Vec<Series>>,
    latest: watch::Receiver<Arc<Latest>>,
}

impl Watcher {
    /// Check the plan's sources and start sampling every `plan.interval`; times are
    /// seconds from `started`; `resources.csv` goes into `dir`.
    pub fn start(
        plan: &Plan,
        children: ChildRegistry,
        started: Instant,
        dir: &Path,
    ) -> Result<Watcher, WatchError> {
        Self::start_with(plan, children, started, dir, Vec::new())
    }

    /// [`Watcher::start`], also sampling the run's own `gauges` every interval.
    pub fn start_with(
        plan: &Plan,
        children: ChildRegistry,
        started: Instant,
        dir: &Path,
        gauges: Vec<Gauge>,
    ) -> Result<Watcher, WatchError> {
        let w = &plan.watch;
        if let Some(&pid) = w.server_pids.iter().find(|&&p| !procfs::exists(p)) {
            return Err(WatchError::NoProcess(pid));
        }
        if let Some(c) = &w.server_cgroup {
            cgroup::check(c)?;
        }
        let stdio = plan
            .personas
            .iter()
            .any(|p| p.route.transport == TransportKind::Stdio);
        let sources = Sources {
            pids: w.server_pids.clone(),
            cgroup: w.server_cgroup.clone(),
            metrics: w.server_metrics.clone(),
            series: w.series.clone(),
            children,
            local: stdio || !w.server_pids.is_empty() || w.server_cgroup.is_some(),
            cgroup_only: w.server_cgroup.is_some() && w.server_pids.is_empty() && !stdio,
            gauges,
        };
        let path = dir.join(CSV_FILE);
        let csv = resources_csv::ResourcesCsv::create(&path).map_err(|source| WatchError::Csv {
            path: path.display().to_string(),
            source,
        })?;
        let done = CancellationToken::new();
        let (tx, latest) = watch::channel(Arc::new(Latest::default()));
        let mut sampler = Sampler::new(sources, plan.interval, csv, done.clone());
        let interval = plan.interval;
        let stop = done.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(started + interval, interval);
            tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    () = stop.cancelled() => break,
                }
                let t_s = started.elapsed().as_secs_f64();
                let now = sampler.tick(t_s).await;
                let _ = tx.send(Arc::new(now));
            }
            sampler.into_series()
        });
        Ok(Watcher { done, task, latest })
    }

    /// The latest interval's values (updated every interval).
    pub fn latest(&self) -> watch::Receiver<Arc<Latest>> {
        self.latest.clone()
    }

    /// Stop sampling; every series, one point per interval.
    pub async fn stop(self) -> Vec<Series> {
        self.done.cancel();
        self.task.await.unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
