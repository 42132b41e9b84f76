//! `ceiling.json`, the results contract of a ceiling search (`mcp-fleet ceiling`): its
//! settings, every step's figures, and the answer with what bounds it. Written after
//! every step and read back by `compare`; versioned by `schema_version`, described in
//! docs/ceiling.md. The search and its verdicts are `crate::ceiling`'s; these are only
//! the shapes, so that reports can read them.

use super::soak::GeneratorLoad;
use super::ThresholdResult;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The file's name in the ceiling's results folder.
pub const FILE_NAME: &str = "ceiling.json";
/// Bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 1;

/// How the search was run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub from_per_s: f64,
    pub to_per_s: f64,
    pub factor: f64,
    pub step_s: f64,
    pub warmup_s: f64,
    pub resolution: f64,
    pub slos: Vec<String>,
    /// The target as the steps' `summary.json` names it (secrets redacted).
    pub target: String,
    pub server_cores: Option<f64>,
    /// `rate` (open-model arrival rates) or `clients` (closed-model clients): what the
    /// levels (`offered_per_s`, `ceiling_per_s` …) count.
    #[serde(default = "rate_ladder")]
    pub ladder: String,
    /// Generator processes (shards) that ran every step together: `--processes N` or
    /// `--shard I/N`; absent for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
    /// `--retries N`: a failing rate was measured again up to N times (0: once).
    #[serde(default)]
    pub retries: u32,
}

fn rate_ladder() -> String {
    "rate".into()
}

/// The whole of `ceiling.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CeilingFile {
    pub schema_version: u32,
    pub tool_version: String,
    pub started_at: String,
    pub settings: Settings,
    pub steps: Vec<StepFigures>,
    /// `None` until the search has an answer (no step done yet).
    pub answer: Option<Answer>,
    /// The search ran to its end (not stopped by a signal).
    pub complete: bool,
}

impl CeilingFile {
    /// Write it into `dir` (through a temporary file: a reader never sees half of it).
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(FILE_NAME);
        let tmp = dir.join(format!("{FILE_NAME}.tmp"));
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))
    }

    /// Read `dir/ceiling.json`.
    pub fn read(dir: &Path) -> anyhow::Result<CeilingFile> {
        let path = dir.join(FILE_NAME);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a ceiling.json", path.display()))
    }
}

/// Latency of one phase at one step (service time, as the SLOs read it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    pub count: u64,
    pub errors: u64,
    pub p50_us: Option<u64>,
    pub p95_us: Option<u64>,
    pub p99_us: Option<u64>,
}

/// The server's load during a step, from the watched process (`--server-pid`,
/// `--server-cgroup`, `--server-metrics`, or the built-in server's own process).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerLoad {
    /// Mean CPU over the step's intervals, in cores.
    pub cpu_cores: Option<f64>,
    pub cpu_cores_max: Option<f64>,
    pub threads_max: Option<f64>,
    pub fds_max: Option<f64>,
    pub rss_max_bytes: Option<f64>,
}

/// What the search keeps of one step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepFigures {
    /// 1, 2, … in the order measured.
    pub index: u32,
    /// `ladder` or `bisect`.
    pub stage: String,
    pub offered_per_s: f64,
    /// Sessions completed a second, over the step's length and its drain.
    pub achieved_per_s: f64,
    /// The step's results folder, relative to the ceiling's.
    pub dir: String,
    pub passed: bool,
    /// Why it failed, in words (empty when it passed).
    pub reasons: Vec<String>,
    /// A signal cut the step short: it decides nothing.
    pub interrupted: bool,
    pub slos: Vec<ThresholdResult>,
    pub started: u64,
    pub completed: u64,
    pub failed: u64,
    pub unreachable: u64,
    pub dropped: u64,
    /// Failures by kind (`timeout`, `connect_failed`, `http_status:503` …).
    pub failures: BTreeMap<String, u64>,
    /// The first example of each failure kind (as `summary.json` keeps them: redacted).
    pub failure_examples: BTreeMap<String, String>,
    pub phases: BTreeMap<String, PhaseFigures>,
    /// MCP requests a session made (every phase but the session, connection, close and
    /// notification ones).
    pub calls_per_session: f64,
    pub server: ServerLoad,
    /// `report::soak::generator` over the step.
    pub generator: GeneratorLoad,
}

impl StepFigures {
    /// p99 of `phase` at this step, µs.
    pub fn p99(&self, phase: &str) -> Option<u64> {
        self.phases.get(phase).and_then(|p| p.p99_us)
    }
}

/// What bounds the ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundKind {
    /// The generator saturated (CPU or scheduler lag): the ceiling is a lower bound.
    Generator,
    /// Connects failed or a descriptor limit was reached.
    Connections,
    /// The server's CPU was near its cores.
    ServerCpu,
    /// Latency rose while the server's CPU stayed idle: queueing.
    Queueing,
    /// Latency rose; the server's CPU was not watched, so CPU and queueing cannot be told apart.
    Latency,
    /// Every step up to `--to` passed: no ceiling below it.
    NotReached,
    /// Even the lowest step failed.
    BelowLowest,
}

impl BoundKind {
    pub fn name(self) -> &'static str {
        match self {
            BoundKind::Generator => "generator",
            BoundKind::Connections => "connections",
            BoundKind::ServerCpu => "server CPU",
            BoundKind::Queueing => "latency/queueing",
            BoundKind::Latency => "latency",
            BoundKind::NotReached => "not reached",
            BoundKind::BelowLowest => "below the lowest step",
        }
    }
}

/// What the search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The highest rate that met every SLO (sessions/s; with `--ladder clients`, the
    /// most clients, as every level of that ladder is).
    pub ceiling_per_s: Option<f64>,
    /// Sessions a second at the ceiling (the rate itself, or the clients' achieved rate).
    #[serde(default)]
    pub sessions_per_s: Option<f64>,
    /// The MCP requests a second that rate implies (at that step's calls per session).
    pub calls_per_s: Option<f64>,
    /// The lowest rate that failed.
    pub first_failing_per_s: Option<f64>,
    /// The last rate before p99 (of `knee_phase`) rose steeply.
    pub knee_per_s: Option<f64>,
    pub knee_phase: String,
    /// How the first failing step failed.
    pub failures_past: Vec<String>,
    pub bound: BoundKind,
    /// The bound in words, with the figures behind it.
    pub why: String,
    /// The generator limited a step that decides the answer: the ceiling is at least this.
    pub lower_bound: bool,
    /// Other things worth knowing (e.g. the generator busy at a passing step).
    pub notes: Vec<String>,
}
