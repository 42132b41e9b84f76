//! `[load]`: how much load for how long — clients or a rate, stages, limits and
//! timed events.

use serde::{Deserialize, Serialize};

/// `[load]`: how much load, for how long. Closed (`clients`, or `stages` of clients) or
/// open (`rate`, or `stages` of rates).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Concurrent virtual clients (closed model).
    pub clients: Option<u32>,
    /// Sessions arriving per unit of time, e.g. `"500/s"` (open model).
    pub rate: Option<String>,
    /// Ramping: `[{ clients = 50, duration = "30s" }, …]` (closed) or
    /// `[{ rate = "200/s", duration = "1m" }, …]` (open), linear from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageSection>>,
    /// Open model: most sessions in flight; arrivals beyond are counted as `dropped`.
    pub max_in_flight: Option<u32>,
    /// Long-lived sessions: scenario iterations a second across the whole fleet (oha's
    /// `-q`), e.g. `"200/s"`: each iteration takes the next slot of one shared schedule
    /// and is timed from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration_rate: Option<String>,
    /// Sessions at set times, each of a named persona (what `mcp-fleet replay` writes):
    /// `[{ at = "1.5s", persona = "claude-1" }, …]`. The run ends after the last one;
    /// `max_in_flight` caps them as in the open model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Vec<ArrivalSection>>,
    /// Stop after this many sessions in total.
    pub sessions: Option<u64>,
    /// Stop after this long, e.g. `"30s"`.
    pub duration: Option<String>,
    /// Pause between one session's end and the client's next session (closed model):
    /// `"100ms"`, a uniform range `"100ms..1s"`, or an exponential mean `"exp:200ms"`.
    pub think: Option<String>,
    /// How long sessions still running at the deadline may take to finish, e.g. `"5s"`.
    pub grace: Option<String>,
    /// After a session that could not reach the target, a closed-model client waits
    /// before the next: `"100ms..5s"` (exponential from the first delay up to the cap,
    /// jittered), one duration for a fixed wait, or `"off"`. Default `"100ms..5s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_backoff: Option<String>,
    /// Stop the run (exit 2, results written) when the target has been unreachable this
    /// long, e.g. `"30s"`. Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_on_unreachable: Option<String>,
    /// Rewrite the results from the figures so far this often, e.g. `"1m"`, or `"off"`.
    /// Default: `"1m"` for runs over 5 minutes or without a duration, else off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Things that happen to the fleet at set times: `[{ at = "10m", storm = "reconnect" }]`
    /// drops every long-lived session at once (as a load balancer restart does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<EventSection>>,
}

/// One `[load] events` entry: `{ at = "10m", storm = "reconnect" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventSection {
    /// When, from the start of the run.
    pub at: String,
    /// `reconnect`: every long-lived session drops its connection and reconnects;
    /// `list-changed`: the server is asked for `count` list changes at once.
    pub storm: String,
    /// `list-changed`: how many changes (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

/// One load stage.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StageSection {
    pub clients: Option<u32>,
    pub rate: Option<String>,
    pub duration: String,
}

/// One `[load] arrivals` entry: `{ at = "1.5s", persona = "claude-1" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArrivalSection {
    /// When the session starts, from the start of the run.
    pub at: String,
    /// The persona it is (its name).
    pub persona: String,
}
