//! A [`Summary`] assembled from the collector's [`Stats`] and what the collector does not
//! know ([`RunFacts`]), then judged: the diagnosis and the thresholds' verdicts. The one
//! way from figures to the results contract (`crate::summary`): at the end of a run, at
//! each checkpoint, and in `merge` (from [`PlanBasis`], without the plan).

use super::{diagnosis, threshold};
use crate::conformance::Check;
use crate::metrics::{
    FailureKind, PhaseStats, PhaseTable, Series, SessionCounts, Stats, ToolCounts, Verdict,
};
use crate::plan::{LoadModel, Plan, Threshold};
use crate::summary::soak::Soak;
use crate::summary::{
    CheckSummary, ClientFaultExample, ClientFaultSummary, FindingSummary, Latency, LoadInfo,
    PersonaSummary, PhaseSummary, QuantileBounds, RunInfo, Sessions, Summary, ToolAcceptance,
    ToolInfo, INVALID_PARAMS, SCHEMA_VERSION,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Facts about the run that the collector does not know.
#[derive(Debug, Clone)]
pub struct RunFacts {
    pub started_at: std::time::SystemTime,
    pub finished_at: std::time::SystemTime,
    pub duration: std::time::Duration,
    pub target: String,
    pub transport: String,
    pub stopped_by: String,
    /// What stopped the run early, said whole (`abort_on_fail`).
    pub stopped_because: Option<String>,
    /// What the resource sampler saw (empty when nothing was watched).
    pub resources: Vec<Series>,
    /// The soak verdicts, outages and storms of the run.
    pub soak: Soak,
    /// When these facts are a checkpoint's (the run still going), its time; `None` for
    /// a finished run.
    pub checkpoint_at: Option<std::time::SystemTime>,
    /// `I/N`: these figures are one shard's (`None` unsharded and merged).
    pub shard: Option<String>,
    /// A merged report of this many shards.
    pub shards: Option<u32>,
    /// How each push output fared (empty without `--push`, in checkpoints and merges).
    pub outputs: Vec<crate::summary::PushSummary>,
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
    /// The phase names of `request` steps (the id of a `request` sample indexes them);
    /// absent from the state of runs before they existed.
    #[serde(default)]
    pub requests: Vec<String>,
    /// The steps' check names (a check event's id indexes them).
    #[serde(default)]
    pub checks: Vec<String>,
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
            requests: plan.requests.clone(),
            checks: plan.checks.clone(),
            thresholds: plan.thresholds.iter().map(|t| t.text.clone()).collect(),
        }
    }
}

/// The summary of a run of `plan`: its figures (`stats`) and `facts`, diagnosed and
/// judged by the plan's thresholds.
pub fn summary(plan: &Plan, stats: &Stats, facts: &RunFacts) -> Summary {
    summary_from(&PlanBasis::of(plan), &plan.thresholds, stats, facts)
}

/// The same from what the summary reads of the plan (`merge`'s way), with the
/// thresholds to evaluate.
pub fn summary_from(
    basis: &PlanBasis,
    thresholds: &[Threshold],
    stats: &Stats,
    facts: &RunFacts,
) -> Summary {
    let mut summary = measured(basis, stats, facts);
    summary.diagnosis = diagnosis::diagnose(&summary);
    summary.thresholds = threshold::evaluate_all(thresholds, &summary);
    summary
}

/// The figures, before the diagnosis and the thresholds.
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
        requests: plan
            .requests
            .iter()
            .zip(&stats.requests)
            .filter(|(_, s)| s.count() > 0)
            .map(|(name, s)| (name.clone(), phase_summary(s, secs)))
            .collect(),
        checks: plan
            .checks
            .iter()
            .zip(&stats.checks)
            .filter(|(_, c)| c.passes + c.fails > 0)
            .map(|(name, c)| {
                let check = CheckSummary {
                    passes: c.passes,
                    fails: c.fails,
                    example: c.example.clone(),
                };
                (name.clone(), check)
            })
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
        slowest_traces: extras::slowest_traces(stats),
        extensions: extras::extensions(stats),
        outputs: facts.outputs.clone(),
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
        load: shard_load(&plan.load, facts.shard.as_deref()),
        stopped_by: facts.stopped_by.clone(),
        stopped_because: facts.stopped_because.clone(),
        interval_s: stats.interval_s,
        complete: facts.checkpoint_at.is_none(),
        checkpoint_at: facts
            .checkpoint_at
            .map(|t| humantime::format_rfc3339_millis(t).to_string()),
        shard: facts.shard.clone(),
        shards: facts.shards,
    }
}

/// A shard's load in words says what this shard ran: "closed model, 4 of 8 clients
/// (shard 0/2)", where the plan says 8 for the whole fleet.
fn shard_load(load: &LoadInfo, shard: Option<&str>) -> LoadInfo {
    let mut load = load.clone();
    let Some(label) = shard else {
        return load;
    };
    let whole = load.clients.map(|c| format!("{c} clients"));
    match (crate::shard::Shard::parse(label), whole) {
        (Ok(s), Some(whole)) if load.description.contains(&whole) => {
            let total = load.clients.map(u64::from).unwrap_or_default();
            let part = format!("{} of {whole} (shard {label})", s.share(total));
            load.description = load.description.replacen(&whole, &part, 1);
        }
        _ => load.description = format!("{} (shard {label}'s share)", load.description),
    }
    load
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
        LoadModel::Arrivals { max_in_flight, .. } => ("arrivals", None, Some(*max_in_flight), None),
    };
    LoadInfo {
        model: model.into(),
        clients,
        max_in_flight,
        rate_per_s: peak_rate,
        iteration_rate_per_s: plan.load.iteration_rate,
        sessions: plan.load.sessions,
        duration_s: plan.load.duration.map(|d| d.as_secs_f64()),
        think: plan.load.think.describe(),
        description: plan.load.describe(),
        timeout_ms: plan.connection.timeout.as_secs_f64() * 1000.0,
    }
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
            let mut a = phase.map(acceptance).unwrap_or_default();
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

/// The call counts of one tool's figures (nothing generated or left out).
fn acceptance(p: &PhaseStats) -> ToolAcceptance {
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

/// Each persona's sessions and phases, by persona name.
fn persona_summaries(
    plan: &PlanBasis,
    stats: &Stats,
    secs: f64,
) -> BTreeMap<String, PersonaSummary> {
    plan.personas
        .iter()
        .zip(&stats.personas)
        // A persona no session was given (a small weight in a short run, a persona no
        // set arrival names) is no group.
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
        ci95: Some(QuantileBounds {
            samples: h.len(),
            p50: bounds(h, 0.5),
            p90: bounds(h, 0.9),
            p95: bounds(h, 0.95),
            p99: bounds(h, 0.99),
            p999: bounds(h, 0.999),
        }),
    })
}

/// The 95 % confidence bounds of the `q` quantile of `h`'s samples: the values at the
/// ranks `n·q ± 1.96·√(n·q·(1−q))` (a distribution-free interval from the binomial
/// count of samples below the true quantile); `None` when a rank falls outside the
/// samples, i.e. too few samples lie beyond the quantile to bound it.
pub fn bounds(h: &hdrhistogram::Histogram<u64>, q: f64) -> Option<[u64; 2]> {
    let n = h.len() as f64;
    let spread = 1.96 * (n * q * (1.0 - q)).sqrt();
    let (lo, hi) = ((n * q - spread).floor(), (n * q + spread).ceil() + 1.0);
    if n == 0.0 || lo < 1.0 || hi > n {
        return None;
    }
    Some([h.value_at_quantile(lo / n), h.value_at_quantile(hi / n)])
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

mod extras;
#[cfg(test)]
mod tests;
