//! The soak verdicts in `summary.json` (`soak`): leak slopes of the resource series,
//! latency and error drift per phase, the outages and reconnect storms the run lived
//! through, and the generator's own load. `report::soak` computes them.

use crate::metrics::SeriesUnit;
use serde::{Deserialize, Serialize};

/// Everything the soak verdicts found. Empty (the default) for a run that watched
/// nothing and lived through no outage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Soak {
    /// The steady part of the run, after the warm-up: seconds from the start.
    pub steady_from_s: f64,
    pub steady_to_s: f64,
    /// One per resource series with enough points in the steady part.
    #[serde(default)]
    pub slopes: Vec<Slope>,
    /// One per phase with samples in both windows.
    #[serde(default)]
    pub drift: Vec<Drift>,
    /// Spans when the target could not be reached, and how the fleet came back.
    #[serde(default)]
    pub outages: Vec<Outage>,
    /// Reconnect storms the profile asked for (`events`), and how long recovery took.
    #[serde(default)]
    pub storms: Vec<Storm>,
    /// Whether the generator limited the figures.
    #[serde(default)]
    pub generator: GeneratorLoad,
    /// Set when the run was too short for slopes and drift (which are then empty): what
    /// it had and how long a run would need.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub too_short: Option<String>,
}

/// A least-squares line through one series over the steady part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slope {
    /// The series' name (`server.rss`, `server.fds`, `scrape.mcp_active_sessions` …).
    pub series: String,
    pub unit: SeriesUnit,
    /// Change per second, in the series' unit.
    pub per_s: f64,
    /// The 95 % confidence interval of `per_s`: `[low, high]`.
    pub ci95_per_s: [f64; 2],
    /// Coefficient of determination of the fit (0 … 1); 0 for a flat series.
    pub r2: f64,
    /// Points the fit used, and the span they cover (seconds from the start).
    pub points: u64,
    pub from_s: f64,
    pub to_s: f64,
    /// For people, e.g. `RSS +42 MiB/h (R² 0.97)`.
    pub text: String,
    /// The same span's growth per session that ended (`session`), per abandoned session
    /// (`abandoned`) and per `tools/call` (`call`): load-independent, where the run had
    /// enough of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per: Vec<PerCount>,
    /// What the series' shape says (memory and counts only; `None` for rates such as CPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trend: Option<Trend>,
    /// The test that decided `trend`, in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub decided_by: String,
    /// Where a series that levelled off did (seconds from the start): the figures above
    /// are from there on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels_off_at_s: Option<f64>,
    /// The server's own limit for this series (its open-file limit), when known, and
    /// when the series reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_limit_from_s: Option<f64>,
    /// An inconclusive trend: how long a run (seconds) would tell it apart from none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_s: Option<f64>,
}

/// A slope against a count of events instead of time: bytes (or descriptors…) kept per
/// session, per abandoned session, per call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCount {
    /// `session`, `abandoned` or `call`.
    pub per: String,
    /// Change per event, in the series' unit, and its 95 % confidence interval.
    pub value: f64,
    pub ci95: [f64; 2],
    pub r2: f64,
    /// Events over the span the fit used.
    pub events: u64,
}

/// The shape of a resource series over the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trend {
    /// It grows linearly to the end: something is kept per session (or per hour).
    Leak,
    /// It grew, then levelled off: an allocator's, a cache's or a runtime's warm-up.
    WarmUp,
    /// It reached the server's own limit and sat there (what grew was capped, not fixed).
    AtLimit,
    /// No growth beyond the noise.
    NoTrend,
}

impl Trend {
    pub fn words(self) -> &'static str {
        match self {
            Trend::Leak => "leak",
            Trend::WarmUp => "warm-up, then flat",
            Trend::AtLimit => "at its limit",
            Trend::NoTrend => "no trend",
        }
    }
}

/// One phase's first steady window against its last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub phase: String,
    pub first: DriftWindow,
    pub last: DriftWindow,
    /// `last / first − 1` of the service-time p50 and p99 (`None` when a window has no
    /// successful sample): 0.2 means 20 % slower at the end.
    pub p50_change: Option<f64>,
    pub p99_change: Option<f64>,
    /// `last − first` of the error rate (a difference of ratios).
    pub error_rate_change: Option<f64>,
}

/// The figures of one window (service times of successful samples, µs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DriftWindow {
    pub from_s: f64,
    pub to_s: f64,
    /// Samples that ended in the window (successful + failed).
    pub count: u64,
    pub errors: u64,
    pub p50_us: Option<u64>,
    pub p99_us: Option<u64>,
    pub error_rate: Option<f64>,
}

/// A span when sessions could not reach the target (a server restart, a crash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// When the first session failed to reach the target, seconds from the start.
    pub from_s: f64,
    /// When a session first reached it again (`None`: still down when the run ended).
    pub to_s: Option<f64>,
    /// `to_s − from_s`, or until the end of the run.
    pub downtime_s: f64,
    /// From `to_s` until as many sessions were live as just before the outage (`None`:
    /// never recovered, or nothing was live before).
    pub recovery_s: Option<f64>,
    /// Long-lived sessions live just before the outage.
    pub sessions_before: u64,
}

/// A reconnect storm: every long-lived session dropped at once and reconnected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Storm {
    /// When it happened, seconds from the start.
    pub at_s: f64,
    /// `reconnect`.
    pub kind: String,
    /// Sessions dropped.
    pub dropped: u64,
    /// Of those, how many were live again before the run ended.
    pub recovered: u64,
    /// From the storm until as many sessions were live as before it (`None`: never).
    pub recovery_s: Option<f64>,
}

/// The generator's own load, and whether it limited the figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratorLoad {
    /// The highest CPU share of the cores the generator may use (0 … 1), over intervals.
    pub cpu_share_max: Option<f64>,
    /// The p99 over intervals of the scheduler lag, milliseconds.
    pub lag_p99_ms: Option<f64>,
    /// The generator's RSS slope, bytes per second, over the steady part.
    pub rss_per_s: Option<f64>,
    /// True when the figures describe the generator rather than the server.
    pub bottleneck: bool,
    /// The built-in server ran inside the generator's process: its CPU share counts
    /// both, so a busy process is not called a starved generator (lag still is).
    #[serde(default)]
    pub server_inside: bool,
    /// Why, in plain words (empty when it was not the bottleneck).
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The machine was busy with other work (CPU pressure while the generator's own
    /// share was low): the timings include that delay, but the generator did not limit
    /// the load. Said in `busy_reasons`.
    #[serde(default)]
    pub machine_busy: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busy_reasons: Vec<String>,
    /// The p99 over steady intervals of the machine's CPU pressure (`/proc/pressure/cpu`
    /// `some`: the share of time a runnable task waited for a CPU), 0 … 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pressure_p99: Option<f64>,
}
