//! `summary.json`: the results contract. The types here are the shape every report reads
//! and every script may rely on, and nothing that computes them: `report::assemble`
//! builds a summary from the collector's figures, and the rest of `report` judges and
//! renders it. The JSON schema is committed beside this file (`summary.schema.json`) and
//! tests check real output against it. Bump [`SCHEMA_VERSION`] when the shape changes.

pub mod ceiling;
mod findings;
mod outputs;
mod phase;
pub mod soak;
mod threshold;

pub use findings::{ClientFaultExample, ClientFaultSummary, FindingSummary};
pub use outputs::PushSummary;
pub use phase::{Latency, PhaseSummary, QuantileBounds, ToolAcceptance, INVALID_PARAMS};
pub use threshold::ThresholdResult;

use crate::conformance::Severity;
use crate::metrics::Series;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// 3: `thresholds`, `protocol_versions`, `run.interval_s`; 4: `findings`;
/// 5: `sessions.unreachable` (and per persona), `run.stopped_by` = `unreachable`;
/// 6: `resources` (server and generator series sampled over the run);
/// 7: `soak` (leak slopes, drift, outages, storms, the generator's load);
/// 8: `p95_us` in every latency; a phase without successful samples has no latency
/// fields (and `response` null) instead of zeros; `run.load.clients` null in an open
/// model, `run.load.max_in_flight` and `run.load.rate_per_s`; `diagnosis`;
/// 9: `tool_acceptance` (per tool: accepted, isError, -32602, other, generated, left out),
/// `diagnosis.cause` = `arguments_rejected`; 10: `client_faults` (verdicts per persona
/// and fault), `left_out` without the never-sent `not_listed`, the phases `token`,
/// `auth`, `task`, `tasks/get`, `tasks/result`, `tasks/cancel`, the `robustness.*`,
/// `auth.*` and `tasks.*` findings and their counters; 11: `run.shard` (`"1/4"`: this
/// run is one shard of a sharded run) and `run.shards` (a merged report of N shards);
/// 14: the phase `request` (every `request` step) and `requests` (each request step's
/// figures under its phase name), `checks` (each step check's passes and fails);
/// 15: the phases `subscriptions/listen` and `fanout`, the `listen_*` counters, the
/// `listen.*` and `extension.*` findings, `slowest_traces`, `extensions`; 16: `outputs`
/// (each push output's deliveries, failures and drops); 17: `run.load.model` =
/// `arrivals` (sessions at set times, `[load] arrivals`).
pub const SCHEMA_VERSION: u32 = 17;

/// The committed JSON schema of `summary.json`.
pub const SUMMARY_SCHEMA: &str = include_str!("summary.schema.json");

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    pub tool: ToolInfo,
    pub run: RunInfo,
    pub sessions: Sessions,
    pub phases: BTreeMap<String, PhaseSummary>,
    pub failures: BTreeMap<String, u64>,
    pub failure_examples: BTreeMap<String, Vec<String>>,
    pub personas: BTreeMap<String, PersonaSummary>,
    pub tools: BTreeMap<String, PhaseSummary>,
    /// Each `request` step's figures under its phase name (schema 14; absent before
    /// and when no scenario has one). The phase `request` adds them all up.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, PhaseSummary>,
    /// Each step check's verdicts by name (schema 14; absent before and when no step
    /// has checks).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, CheckSummary>,
    /// First error texts per tool (isError text or RPC error), at most 3: why a tool
    /// failed. Added within schema 4 (absent from earlier results).
    #[serde(default)]
    pub tool_error_examples: BTreeMap<String, Vec<String>>,
    /// Per tool: whether the server accepted its calls, apart from how fast it was
    /// (schema 9; absent before).
    #[serde(default)]
    pub tool_acceptance: BTreeMap<String, ToolAcceptance>,
    pub server_messages: BTreeMap<String, u64>,
    pub malformed_messages: u64,
    /// Phases broken down by transport (`stdio`, `http`, `sse`, `ws`).
    pub transports: BTreeMap<String, BTreeMap<String, PhaseSummary>>,
    /// Phases broken down by the era sessions spoke (`legacy`, `modern`).
    pub eras: BTreeMap<String, BTreeMap<String, PhaseSummary>>,
    /// Phases broken down by the protocol version sessions spoke (negotiated, else
    /// offered); versions that are not published ones are grouped as `other`.
    #[serde(default)]
    pub protocol_versions: BTreeMap<String, BTreeMap<String, PhaseSummary>>,
    /// Every threshold of the run and its verdict; any failure makes the exit code 1.
    #[serde(default)]
    pub thresholds: Vec<ThresholdResult>,
    /// Events without latency: re-initializations, era verdicts, list refetches,
    /// input rounds, cache hits …
    pub counters: BTreeMap<String, u64>,
    /// Conformance findings: what the server did wrong, by stable code, errors first.
    /// Absent from results written before schema 4.
    #[serde(default)]
    pub findings: Vec<FindingSummary>,
    /// Client-side faults the buggy personas committed and how the server took each
    /// (schema 10; absent before): one entry per persona and fault.
    #[serde(default)]
    pub client_faults: Vec<ClientFaultSummary>,
    /// Server and generator resources sampled every interval (RSS, CPU, descriptors,
    /// scraped series). Absent before schema 6.
    #[serde(default)]
    pub resources: Vec<Series>,
    /// Soak verdicts: leak slopes, drift, outages, storms, the generator's load.
    /// Absent before schema 7.
    #[serde(default)]
    pub soak: soak::Soak,
    /// When most sessions failed: the likeliest cause, in words, with its fix. The
    /// summary leads with it. Absent before schema 8 and when most sessions worked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Diagnosis>,
    /// The slowest traced requests per phase, slowest first, with their W3C trace
    /// context (personas with `trace = true`); absent when no request was traced.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slowest_traces: BTreeMap<String, Vec<SlowTrace>>,
    /// What servers made of the protocol extensions (SEP-2133), by id: sessions per
    /// verdict; absent when no side declared one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extensions: BTreeMap<String, BTreeMap<String, u64>>,
    /// How each push output fared (schema 16; absent without `--push`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<PushSummary>,
}

/// One traced request among the slowest of its phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowTrace {
    pub latency_us: u64,
    pub trace_id: String,
    pub span_id: String,
    /// The `traceparent` it carried.
    pub traceparent: String,
}

impl Summary {
    /// Whether any finding has error severity (`--strict` fails the run on it).
    pub fn has_error_findings(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// Whether every threshold held (true without thresholds).
    pub fn passed(&self) -> bool {
        self.thresholds.iter().all(|t| t.passed)
    }

    /// Sessions ended and not one completed: nothing worked, whatever the thresholds say
    /// (a `run` then exits 1). A run that ended none (a shard with no share) is not it.
    pub fn nothing_completed(&self) -> bool {
        let s = &self.sessions;
        s.completed == 0 && s.failed + s.unreachable > 0
    }
}

/// Why most sessions failed, as far as the failures tell.
/// One step check's verdicts (`checks = [...]` of a step).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckSummary {
    pub passes: u64,
    pub fails: u64,
    /// The first reason it did not hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

impl CheckSummary {
    /// The share of evaluations that held; `None` when it never ran.
    pub fn pass_share(&self) -> Option<f64> {
        let n = self.passes + self.fails;
        (n > 0).then(|| self.passes as f64 / n as f64)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// A stable code: `wrong_path`, `wrong_transport`, `server_down`,
    /// `version_rejected`, `auth_required`, `timeouts`, `server_errors`, `unknown` …
    pub cause: String,
    /// Sessions that failed or never reached the server, as a share of those that ended.
    pub failed_share: f64,
    /// What was seen, in one sentence.
    pub message: String,
    /// What to do about it.
    pub fix: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    pub name: String,
    pub seed: u64,
    pub started_at: String,
    pub finished_at: String,
    pub duration_s: f64,
    pub target: String,
    pub transport: String,
    pub load: LoadInfo,
    /// Why the run ended: `sessions`, `duration`, `unreachable` (the target stayed down
    /// for `--abort-on-unreachable`), or the signal that stopped it: `interrupted`
    /// (SIGINT), `terminated` (SIGTERM), `hangup` (SIGHUP); `running` in a checkpoint's
    /// summary; `threshold` when a live threshold was lost (`abort_on_fail`).
    pub stopped_by: String,
    /// What stopped the run early, said whole: `threshold \`p99(session) < 50ms\` lost
    /// at 12 s (observed 80.2ms)` (schema 14; absent when the run ended as planned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_because: Option<String>,
    /// The length of the intervals in the hlog and CSV files, seconds.
    #[serde(default)]
    pub interval_s: f64,
    /// False in a checkpoint's summary: the run was still going (`stopped_by` is
    /// `running`) and the figures are those as of `checkpoint_at`. A run killed hard
    /// leaves that summary behind. Absent (true) in results written before it existed.
    #[serde(default = "finished")]
    pub complete: bool,
    /// When the checkpoint was written (RFC 3339); absent in a finished run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_at: Option<String>,
    /// `I/N`: these figures are one shard's, a part of the run (`--shard`); absent in
    /// an unsharded run and in a merged report (schema 11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// A merged report (`mcp-fleet merge`): how many shards it adds up (schema 11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
}

impl RunInfo {
    /// How the reports name a part or a merge: `shard 1/4: a part of the run`,
    /// `merged from 4 shards`; `None` for an unsharded run.
    pub fn shard_label(&self) -> Option<String> {
        match (&self.shard, self.shards) {
            (Some(s), _) => Some(format!("shard {s}: a part of the run")),
            (None, Some(1)) => Some("merged from 1 shard".into()),
            (None, Some(n)) => Some(format!("merged from {n} shards")),
            (None, None) => None,
        }
    }
}

/// Old summaries were written at the end of their run.
fn finished() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadInfo {
    /// `closed`, `open` or `arrivals` (sessions at set times, `[load] arrivals`).
    pub model: String,
    /// Closed model: the most virtual clients at once; `None` in an open model or set
    /// arrivals (their sessions are not clients: see `max_in_flight`).
    pub clients: Option<u32>,
    /// Open model and set arrivals: the most sessions in flight at once (arrivals
    /// beyond are dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
    /// Open model: the highest arrival rate of the plan, sessions per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// `[load] iteration_rate` (`-q`): long-lived sessions' scenario iterations a second
    /// across the fleet, as planned (the fleet's whole, also in a shard's summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration_rate_per_s: Option<f64>,
    pub sessions: Option<u64>,
    pub duration_s: Option<f64>,
    pub think: String,
    /// The load in words: "closed, 8 clients", "open, 500/s, at most 10000 in flight" …
    pub description: String,
    pub timeout_ms: f64,
}

impl LoadInfo {
    /// Sessions started on a schedule whatever the server's speed (an open model, set
    /// arrivals): response time, from the intended start, is then the figure to read,
    /// and no client thinks between sessions.
    pub fn is_open(&self) -> bool {
        self.model == "open" || self.model == "arrivals"
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sessions {
    pub started: u64,
    pub completed: u64,
    /// Reached the server and failed there.
    pub failed: u64,
    pub interrupted: u64,
    /// Never reached the server (the connect phase failed). Absent before schema 5.
    #[serde(default)]
    pub unreachable: u64,
    /// Sessions that reached the server (completed + failed) per second.
    pub rate_per_s: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PersonaSummary {
    pub sessions: u64,
    pub completed: u64,
    pub failed: u64,
    pub interrupted: u64,
    /// Absent before schema 5.
    #[serde(default)]
    pub unreachable: u64,
    pub phases: BTreeMap<String, PhaseSummary>,
}

#[cfg(test)]
mod tests;
