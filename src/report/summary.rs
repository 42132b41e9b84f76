//! `summary.json`: the results contract. Built from the collector's [`Stats`] and the run's
//! facts; its JSON schema is committed beside this file (`summary.schema.json`) and a
//! test checks real output against it. Bump [`SCHEMA_VERSION`] when the shape changes.

use super::threshold::{self, ThresholdResult};
use crate::conformance::{Check, Severity};
use crate::metrics::{
    FailureKind, PhaseStats, PhaseTable, Series, SessionCounts, Stats, ToolCounts, Verdict,
};
use crate::plan::{LoadModel, Plan, Threshold};
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
/// run is one shard of a sharded run) and `run.shards` (a merged report of N shards).
pub const SCHEMA_VERSION: u32 = 11;

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
    pub soak: super::soak::Soak,
    /// When most sessions failed: the likeliest cause, in words, with its fix. The
    /// summary leads with it. Absent before schema 8 and when most sessions worked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Diagnosis>,
}

/// Why most sessions failed, as far as the failures tell.
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

/// One conformance finding in the report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindingSummary {
    pub code: String,
    pub severity: Severity,
    pub count: u64,
    /// What is wrong and how to fix it.
    pub message: String,
    /// The first occurrence, as seen (may be empty when none was kept).
    pub example: String,
    /// The spec section it rests on.
    pub spec: String,
}

/// How the server took one persona's commits of one client fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFaultSummary {
    pub persona: String,
    /// `metrics::ClientFault` name, e.g. `invalid-json`.
    pub fault: String,
    /// What the client did wrong.
    pub description: String,
    /// What a correct server does.
    pub expected: String,
    /// Sessions that committed it.
    pub sessions: u64,
    /// Sessions by verdict (`handled`, `wrong_error`, `crashed`, `hung`, `accepted`);
    /// every verdict is present, 0 included.
    pub verdicts: BTreeMap<String, u64>,
    /// What was seen, for the first few of each verdict other than `handled` first.
    pub examples: Vec<ClientFaultExample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientFaultExample {
    pub verdict: String,
    pub text: String,
}

/// The client faults of `stats`, by persona (plan order) then fault (table order);
/// `personas` are the plan's persona names.
pub fn client_faults(personas: &[String], stats: &Stats) -> Vec<ClientFaultSummary> {
    stats
        .client_faults
        .iter()
        .map(|((persona, fault), counts)| {
            let mut examples: Vec<ClientFaultExample> = counts
                .examples
                .iter()
                .map(|(v, text)| ClientFaultExample {
                    verdict: v.name().to_string(),
                    text: text.clone(),
                })
                .collect();
            // Mistakes first: they are what the reader looks for.
            examples.sort_by_key(|e| e.verdict == Verdict::Handled.name());
            ClientFaultSummary {
                persona: personas
                    .get(usize::from(*persona))
                    .map_or_else(|| format!("#{persona}"), Clone::clone),
                fault: fault.name().to_string(),
                description: fault.describe().to_string(),
                expected: fault.expected().to_string(),
                sessions: counts.total(),
                verdicts: Verdict::ALL
                    .into_iter()
                    .map(|v| (v.name().to_string(), counts.get(v)))
                    .collect(),
                examples,
            }
        })
        .collect()
}

/// The findings of `stats`, errors first, then by code.
pub fn findings(stats: &Stats) -> Vec<FindingSummary> {
    let mut out: Vec<FindingSummary> = stats
        .findings
        .iter()
        .filter_map(|(id, seen)| {
            let info = Check::from_id(*id)?.info();
            Some(FindingSummary {
                code: info.code.to_string(),
                severity: info.severity,
                count: seen.count,
                message: info.message.to_string(),
                example: seen.example.clone().unwrap_or_default(),
                spec: info.spec.to_string(),
            })
        })
        .collect();
    out.sort_by(|a, b| (a.severity, &a.code).cmp(&(b.severity, &b.code)));
    out
}

impl Summary {
    /// Whether any finding has error severity (`--strict` fails the run on it).
    pub fn has_error_findings(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
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
    /// summary.
    pub stopped_by: String,
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
    pub model: String,
    /// Closed model: the most virtual clients at once; `None` in an open model (its
    /// sessions are not clients: see `max_in_flight`).
    pub clients: Option<u32>,
    /// Open model: the most sessions in flight at once (arrivals beyond are dropped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
    /// Open model: the highest arrival rate of the plan, sessions per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    pub sessions: Option<u64>,
    pub duration_s: Option<f64>,
    pub think: String,
    /// The load in words: "closed, 8 clients", "open, 500/s, at most 10000 in flight" …
    pub description: String,
    pub timeout_ms: f64,
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

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Latency {
    pub mean_us: f64,
    pub min_us: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    /// Absent (0) in results written before schema 8.
    #[serde(default)]
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

impl Latency {
    /// The percentile nearest at or below `q` that the summary keeps (p50, p90, p95,
    /// p99, p99.9, max at 1.0).
    pub fn at(&self, q: f64) -> u64 {
        match q {
            x if x >= 1.0 => self.max_us,
            x if x >= 0.999 => self.p999_us,
            x if x >= 0.99 => self.p99_us,
            x if x >= 0.95 => self.p95_us,
            x if x >= 0.9 => self.p90_us,
            _ => self.p50_us,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseSummary {
    /// Samples that ran (successful + failed).
    pub count: u64,
    pub errors: u64,
    /// Successful `tools/call` results with `isError: true`.
    pub tool_errors: u64,
    /// Steps not run because the server did not declare the capability.
    pub skipped: u64,
    pub rate_per_s: f64,
    /// Service time (finished − started) of successful samples, flattened for scripts;
    /// `None` (no latency fields) when no sample succeeded: there is no latency to show.
    #[serde(flatten)]
    pub service: Option<Latency>,
    /// Response time (finished − intended start); equals service time in a closed model.
    /// `None` when no sample succeeded.
    pub response: Option<Latency>,
    /// Latencies above the histogram bound, clamped to it.
    pub clamped: u64,
    pub failures: BTreeMap<String, u64>,
}

/// Whether a tool's calls were valid, apart from how fast they were: the same calls as
/// `tools[TOOL]`, split by how the server took them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolAcceptance {
    /// Calls made (= `tools[TOOL].count`).
    pub calls: u64,
    /// Successful results without `isError`.
    pub accepted: u64,
    /// Results with `isError: true`.
    pub tool_errors: u64,
    /// JSON-RPC error -32602 (invalid params).
    pub invalid_params: u64,
    /// Every other failure (other RPC errors, timeouts, closed transports, `no_value`).
    pub other_errors: u64,
    /// Calls whose arguments were (partly) generated from the `inputSchema`, and how
    /// many of those were accepted.
    pub generated: u64,
    pub generated_accepted: u64,
    /// Why calls of the tool were left out, and how many times (`destructive`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub left_out: BTreeMap<String, u64>,
}

impl ToolAcceptance {
    /// The call counts of one tool's figures (nothing generated or left out).
    pub fn of(p: &PhaseStats) -> ToolAcceptance {
        let invalid_params = p
            .failures
            .get(&FailureKind::RpcError(INVALID_PARAMS))
            .copied()
            .unwrap_or(0);
        ToolAcceptance {
            calls: p.count(),
            accepted: p.ok.saturating_sub(p.tool_errors),
            tool_errors: p.tool_errors,
            invalid_params,
            other_errors: p.errors().saturating_sub(invalid_params),
            ..ToolAcceptance::default()
        }
    }

    /// The same from a tool's summary (`tools[TOOL]`), for summaries written before
    /// schema 9: -32602 apart from other failures, nothing generated.
    pub fn from_summary(p: &PhaseSummary) -> ToolAcceptance {
        let invalid_params = p
            .failures
            .get(&FailureKind::RpcError(INVALID_PARAMS).name())
            .copied()
            .unwrap_or(0);
        ToolAcceptance {
            calls: p.count,
            accepted: p.count.saturating_sub(p.errors + p.tool_errors),
            tool_errors: p.tool_errors,
            invalid_params,
            other_errors: p.errors.saturating_sub(invalid_params),
            ..ToolAcceptance::default()
        }
    }

    /// Accepted / calls, `None` without calls.
    pub fn accepted_share(&self) -> Option<f64> {
        (self.calls > 0).then(|| self.accepted as f64 / self.calls as f64)
    }

    /// Generated accepted / generated, `None` without generated calls.
    pub fn generated_share(&self) -> Option<f64> {
        (self.generated > 0).then(|| self.generated_accepted as f64 / self.generated as f64)
    }

    /// Calls left out, whatever the reason.
    pub fn left_out_total(&self) -> u64 {
        self.left_out.values().sum()
    }
}

/// JSON-RPC "Invalid params": what a server answers to arguments its schema refuses.
pub const INVALID_PARAMS: i64 = -32602;

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

/// The latency of a histogram's samples; `None` when it has none.
pub fn latency(h: &hdrhistogram::Histogram<u64>) -> Option<Latency> {
    if h.is_empty() {
        return None;
    }
    Some(Latency {
        mean_us: (h.mean() * 10.0).round() / 10.0,
        min_us: h.min(),
        p50_us: h.value_at_quantile(0.5),
        p90_us: h.value_at_quantile(0.9),
        p95_us: h.value_at_quantile(0.95),
        p99_us: h.value_at_quantile(0.99),
        p999_us: h.value_at_quantile(0.999),
        max_us: h.max(),
    })
}

fn phase_summary(s: &PhaseStats, duration_s: f64) -> PhaseSummary {
    PhaseSummary {
        count: s.count(),
        errors: s.errors(),
        tool_errors: s.tool_errors,
        skipped: s.skipped,
        rate_per_s: rate(s.count(), duration_s),
        service: latency(&s.service),
        response: latency(&s.response),
        clamped: s.clamped,
        failures: s.failures.iter().map(|(k, v)| (k.name(), *v)).collect(),
    }
}

fn phases(table: &PhaseTable, duration_s: f64) -> BTreeMap<String, PhaseSummary> {
    table
        .active()
        .map(|(p, s)| (p.name().to_string(), phase_summary(s, duration_s)))
        .collect()
}

fn rate(n: u64, secs: f64) -> f64 {
    if secs <= 0.0 {
        return 0.0;
    }
    ((n as f64 / secs) * 100.0).round() / 100.0
}

/// Facts about the run that the collector does not know.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub started_at: std::time::SystemTime,
    pub finished_at: std::time::SystemTime,
    pub duration: std::time::Duration,
    pub target: String,
    pub transport: String,
    pub stopped_by: String,
    /// What the resource sampler saw (empty when nothing was watched).
    pub resources: Vec<Series>,
    /// The soak verdicts, outages and storms of the run.
    pub soak: super::soak::Soak,
    /// When these facts are a checkpoint's (the run still going), its time; `None` for
    /// a finished run.
    pub checkpoint_at: Option<std::time::SystemTime>,
    /// `I/N`: these figures are one shard's (`None` unsharded and merged).
    pub shard: Option<String>,
    /// A merged report of this many shards.
    pub shards: Option<u32>,
}

/// What the summary reads of the plan, and nothing else: kept in each run's state so
/// that `merge` builds the summary without the plan (on a machine that has neither the
/// profile's data files nor its secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanBasis {
    pub name: String,
    pub seed: u64,
    pub load: LoadInfo,
    /// Persona names, in plan order ([`crate::metrics::PersonaId`] indexes them).
    pub personas: Vec<String>,
    /// Interned tool names ([`crate::metrics::ToolId`] indexes them).
    pub tools: Vec<String>,
    /// The thresholds as written (each parses with [`crate::plan::Threshold::parse`]).
    pub thresholds: Vec<String>,
}

impl PlanBasis {
    pub fn of(plan: &Plan) -> PlanBasis {
        PlanBasis {
            name: plan.name.clone(),
            seed: plan.seed,
            load: load_info(plan),
            personas: plan.personas.iter().map(|p| p.name.clone()).collect(),
            tools: plan.tools.clone(),
            thresholds: plan.thresholds.iter().map(|t| t.text.clone()).collect(),
        }
    }
}

impl Summary {
    pub fn build(plan: &Plan, stats: &Stats, facts: &RunFacts) -> Summary {
        Self::build_from(&PlanBasis::of(plan), &plan.thresholds, stats, facts)
    }

    /// The same from what the summary reads of the plan (`merge`'s way), with the
    /// thresholds to evaluate.
    pub fn build_from(
        basis: &PlanBasis,
        thresholds: &[Threshold],
        stats: &Stats,
        facts: &RunFacts,
    ) -> Summary {
        let mut summary = Self::measured(basis, stats, facts);
        summary.diagnosis = super::diagnosis::diagnose(&summary);
        summary.thresholds = threshold::evaluate_all(thresholds, &summary);
        summary
    }

    /// Whether every threshold held (true without thresholds).
    pub fn passed(&self) -> bool {
        self.thresholds.iter().all(|t| t.passed)
    }

    fn measured(plan: &PlanBasis, stats: &Stats, facts: &RunFacts) -> Summary {
        let secs = facts.duration.as_secs_f64();
        let counts = |c: &SessionCounts| Sessions {
            started: c.started,
            completed: c.completed,
            failed: c.failed,
            interrupted: c.interrupted,
            unreachable: c.unreachable,
            rate_per_s: rate(c.reached(), secs),
        };
        Summary {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "mcp-fleet".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            run: run_info(plan, stats, facts, secs),
            sessions: counts(&stats.sessions),
            phases: phases(&stats.phases, secs),
            failures: stats
                .failures()
                .into_iter()
                .map(|(k, v)| (k.name(), v))
                .collect(),
            failure_examples: stats
                .examples
                .iter()
                .map(|(k, v)| (k.name(), v.clone()))
                .collect(),
            personas: persona_summaries(plan, stats, secs),
            tools: plan
                .tools
                .iter()
                .zip(&stats.tools)
                .filter(|(_, s)| s.count() > 0)
                .map(|(name, s)| (name.clone(), phase_summary(s, secs)))
                .collect(),
            tool_error_examples: stats
                .tool_error_examples
                .iter()
                .filter_map(|(t, v)| Some((plan.tools.get(usize::from(*t))?.clone(), v.clone())))
                .collect(),
            tool_acceptance: tool_acceptance(&plan.tools, stats),
            server_messages: stats.server_messages.clone(),
            malformed_messages: stats.malformed,
            transports: stats
                .by_transport
                .iter()
                .map(|(k, t)| (k.name().to_string(), phases(t, secs)))
                .filter(|(_, p)| !p.is_empty())
                .collect(),
            eras: stats
                .by_era
                .iter()
                .map(|(k, t)| (k.name().to_string(), phases(t, secs)))
                .filter(|(_, p)| !p.is_empty())
                .collect(),
            protocol_versions: stats
                .by_version
                .iter()
                .map(|(k, t)| (k.name().to_string(), phases(t, secs)))
                .filter(|(_, p)| !p.is_empty())
                .collect(),
            thresholds: Vec::new(),
            counters: stats
                .counters
                .seen()
                .map(|(c, n)| (c.name().to_string(), n))
                .collect(),
            findings: findings(stats),
            client_faults: client_faults(&plan.personas, stats),
            resources: facts.resources.clone(),
            soak: facts.soak.clone(),
            diagnosis: None,
        }
    }
}

/// The run's facts and its load as the plan described it.
fn run_info(plan: &PlanBasis, stats: &Stats, facts: &RunFacts, secs: f64) -> RunInfo {
    RunInfo {
        name: plan.name.clone(),
        seed: plan.seed,
        started_at: humantime::format_rfc3339_millis(facts.started_at).to_string(),
        finished_at: humantime::format_rfc3339_millis(facts.finished_at).to_string(),
        duration_s: (secs * 1000.0).round() / 1000.0,
        target: facts.target.clone(),
        transport: facts.transport.clone(),
        load: plan.load.clone(),
        stopped_by: facts.stopped_by.clone(),
        interval_s: stats.interval_s,
        complete: facts.checkpoint_at.is_none(),
        checkpoint_at: facts
            .checkpoint_at
            .map(|t| humantime::format_rfc3339_millis(t).to_string()),
        shard: facts.shard.clone(),
        shards: facts.shards,
    }
}

/// The load as the plan described it.
fn load_info(plan: &Plan) -> LoadInfo {
    let (model, clients, max_in_flight, peak_rate) = match &plan.load.model {
        LoadModel::Closed { .. } => ("closed", Some(plan.load.clients()), None, None),
        LoadModel::Open {
            rate,
            max_in_flight,
        } => (
            "open",
            None,
            Some(*max_in_flight),
            Some(rate.peak_before(None)),
        ),
    };
    LoadInfo {
        model: model.into(),
        clients,
        max_in_flight,
        rate_per_s: peak_rate,
        sessions: plan.load.sessions,
        duration_s: plan.load.duration.map(|d| d.as_secs_f64()),
        think: plan.load.think.describe(),
        description: plan.load.describe(),
        timeout_ms: plan.connection.timeout.as_secs_f64() * 1000.0,
    }
}

/// Per tool that was called or left out: how the server took its calls.
fn tool_acceptance(tools: &[String], stats: &Stats) -> BTreeMap<String, ToolAcceptance> {
    let none = ToolCounts::default();
    tools
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let phase = stats.tools.get(i);
            let counts = stats.tool_counts.get(i).unwrap_or(&none);
            let called = phase.is_some_and(|p| p.count() > 0);
            if !called && counts.is_empty() {
                return None;
            }
            let mut a = phase.map(ToolAcceptance::of).unwrap_or_default();
            a.generated = counts.generated;
            a.generated_accepted = counts.generated_accepted;
            a.left_out = counts
                .left_out
                .iter()
                .map(|(k, v)| (k.name().to_string(), *v))
                .collect();
            Some((name.clone(), a))
        })
        .collect()
}

/// Each persona's sessions and phases, by persona name.
fn persona_summaries(
    plan: &PlanBasis,
    stats: &Stats,
    secs: f64,
) -> BTreeMap<String, PersonaSummary> {
    plan.personas
        .iter()
        .zip(&stats.personas)
        // A persona no session was given (a small weight in a short run) is no group.
        .filter(|(_, (table, c))| c.started > 0 || table.active().next().is_some())
        .map(|(p, (table, c))| {
            (
                p.clone(),
                PersonaSummary {
                    sessions: c.started,
                    completed: c.completed,
                    failed: c.failed,
                    interrupted: c.interrupted,
                    unreachable: c.unreachable,
                    phases: phases(table, secs),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{tool_acceptance, ToolAcceptance};
    use crate::metrics::{Counter, FailureKind, LeftOut, Outcome, Phase, Sample, Stats};
    use crate::protocol::{Era, VersionId};

    fn call(tool: u16, outcome: Outcome) -> Sample {
        let t = tokio::time::Instant::now();
        Sample {
            phase: Phase::ToolsCall,
            persona: 0,
            era: Era::Legacy,
            version: VersionId::of("2025-06-18"),
            tool: Some(tool),
            intended: t,
            started: t,
            finished: t,
            outcome,
        }
    }

    #[test]
    fn tool_acceptance_splits_calls_by_how_the_server_took_them() {
        let mut stats = Stats::new(1, 3);
        for outcome in [
            Outcome::Ok,
            Outcome::Ok,
            Outcome::ToolError,
            Outcome::Failed(FailureKind::RpcError(-32602)),
            Outcome::Failed(FailureKind::RpcError(-32602)),
            Outcome::Failed(FailureKind::Timeout),
            Outcome::Failed(FailureKind::NoValue),
        ] {
            stats.tools[0].add(&call(0, outcome));
        }
        stats.tool_counts[0].add_generated(Outcome::Ok);
        stats.tool_counts[0].add_generated(Outcome::ToolError);
        stats.tool_counts[2].add_left_out(LeftOut::Destructive);
        stats.tool_counts[2].add_left_out(LeftOut::Destructive);
        let names = ["get_time".to_string(), "never".into(), "delete".into()];
        let t = tool_acceptance(&names, &stats);
        assert_eq!(
            t.len(),
            2,
            "a tool neither called nor left out has no entry"
        );
        let a = &t["get_time"];
        assert_eq!(
            (
                a.calls,
                a.accepted,
                a.tool_errors,
                a.invalid_params,
                a.other_errors
            ),
            (7, 2, 1, 2, 2)
        );
        assert_eq!(
            a.calls,
            a.accepted + a.tool_errors + a.invalid_params + a.other_errors
        );
        assert_eq!((a.generated, a.generated_accepted), (2, 1));
        assert_eq!(a.generated_share(), Some(0.5));
        let d = &t["delete"];
        assert_eq!(d.calls, 0, "only left out, still an entry");
        assert_eq!(d.left_out.get("destructive"), Some(&2));
        assert_eq!(d.left_out_total(), 2);
        assert_eq!(d.accepted_share(), None);
        // A schema 8 summary's tools give the same call counts.
        let p = super::phase_summary(&stats.tools[0], 1.0);
        let old = ToolAcceptance::from_summary(&p);
        assert_eq!(
            (
                old.calls,
                old.accepted,
                old.tool_errors,
                old.invalid_params,
                old.other_errors
            ),
            (7, 2, 1, 2, 2)
        );
    }

    /// The left-out reasons in the schema are exactly the enum's names.
    #[test]
    fn the_schema_lists_exactly_the_left_out_reasons() {
        let schema: Value = serde_json::from_str(crate::report::SUMMARY_SCHEMA).expect("JSON");
        let names = &schema["properties"]["tool_acceptance"]["additionalProperties"]["properties"]
            ["left_out"]["propertyNames"]["enum"];
        let in_schema: BTreeSet<&str> = names
            .as_array()
            .expect("enum")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let in_code: BTreeSet<&str> = LeftOut::ALL.into_iter().map(LeftOut::name).collect();
        assert_eq!(in_schema, in_code);
    }
    use serde_json::Value;
    use std::collections::BTreeSet;

    /// The counters are a results contract: the schema lists exactly the enum's names,
    /// each documented, and refuses any other.
    #[test]
    fn the_schema_lists_exactly_the_counters() {
        let schema: Value = serde_json::from_str(crate::report::SUMMARY_SCHEMA).expect("JSON");
        let counters = &schema["properties"]["counters"];
        assert_eq!(counters["additionalProperties"], Value::Bool(false));
        let listed = counters["properties"].as_object().expect("properties");
        let in_schema: BTreeSet<&str> = listed.keys().map(String::as_str).collect();
        let in_code: BTreeSet<&str> = Counter::ALL.into_iter().map(Counter::name).collect();
        assert_eq!(in_schema, in_code);
        for (name, p) in listed {
            let text = p["description"].as_str().unwrap_or_default();
            assert!(!text.is_empty(), "{name} has no description");
        }
    }
}
