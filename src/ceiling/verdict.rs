//! The answer of a ceiling search, from its steps: the highest rate that met every SLO
//! (and the calls a second it implies), the knee where p99 starts to rise steeply, how
//! the first step past the ceiling failed, and what bounds the ceiling — judged on that
//! step's measurements, in this order: the generator itself (then the figure is only a
//! lower bound), connections (refused or failed connects, a file-descriptor limit), the
//! server's CPU near its cores, else latency alone (queueing with idle CPU).

use super::search::{bracket, Bracket};
use crate::summary::ceiling::StepFigures;
pub use crate::summary::ceiling::{Answer, BoundKind};

/// The server's CPU counts as saturated at this share of its cores.
pub const CPU_BUSY: f64 = 0.85;
/// p99 has risen steeply once it is this many times the lowest step's …
pub const KNEE_RATIO: f64 = 2.0;
/// … and at least this much above it (µs): sub-millisecond jitter is no knee.
pub const KNEE_FLOOR_US: f64 = 1_000.0;
/// Failed connects above this share of a step's sessions are a connection limit.
pub const CONNECT_SHARE: f64 = 0.01;

/// What the verdicts need besides the steps.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The cores the server may use.
    pub server_cores: Option<f64>,
    /// The server process's open-file limit.
    pub server_fd_limit: Option<u64>,
    /// The phase whose p99 shows the knee.
    pub knee_phase: String,
    /// The ladder is of closed-model clients (`--ladder clients`), not of rates.
    pub clients: bool,
    /// How many generator processes (shards) ran each step; 0 or 1: one.
    pub shards: u32,
}

impl Context {
    /// A level of the ladder for people: `40/s`, or `40 clients`.
    pub fn level(&self, x: f64) -> String {
        if self.clients {
            format!("{x} clients")
        } else {
            format!("{x}/s")
        }
    }
}

/// The answer of `steps` (interrupted ones are left out).
pub fn answer(steps: &[StepFigures], ctx: &Context) -> Answer {
    let done: Vec<&StepFigures> = steps.iter().filter(|s| !s.interrupted).collect();
    let pairs: Vec<(f64, bool)> = done.iter().map(|s| (s.offered_per_s, s.passed)).collect();
    // A retried rate: the try that passed stands for the ceiling, the last try for a
    // failing rate.
    let at = |rate: f64, passed: bool| {
        let tries = || {
            done.iter()
                .copied()
                .filter(move |s| s.offered_per_s == rate)
        };
        tries()
            .rfind(|s| s.passed == passed)
            .or_else(|| tries().next_back())
    };
    let (ceiling, failing) = match bracket(&pairs) {
        Bracket::AllPassed => (pairs.iter().map(|p| p.0).reduce(f64::max), None),
        Bracket::NonePassed => (None, pairs.iter().map(|p| p.0).reduce(f64::min)),
        Bracket::Between { passed, failed } => (Some(passed), Some(failed)),
    };
    let best = ceiling.and_then(|r| at(r, true));
    let decider = failing.and_then(|r| at(r, false));
    // One note for every other step the generator limited, not one a step.
    let mut busy: Vec<&StepFigures> = done
        .iter()
        .copied()
        .filter(|s| s.generator.bottleneck && Some(s.offered_per_s) != failing)
        .collect();
    busy.sort_by(|a, b| a.offered_per_s.total_cmp(&b.offered_per_s));
    let mut notes = Vec::new();
    if !busy.is_empty() {
        let levels: Vec<String> = busy.iter().map(|s| ctx.level(s.offered_per_s)).collect();
        let lag = busy
            .iter()
            .filter_map(|s| s.generator.lag_p99_ms)
            .reduce(f64::max)
            .map(|ms| format!(", scheduler lag p99 up to {ms:.1} ms"))
            .unwrap_or_default();
        let cpu = busy
            .iter()
            .filter_map(|s| s.generator.cpu_share_max)
            .reduce(f64::max)
            .map(|c| format!(", CPU share up to {:.0} %", c * 100.0))
            .unwrap_or_default();
        notes.push(format!(
            "the generator was busy at {} too{lag}{cpu}: those steps' timings include its own delay",
            levels.join(", ")
        ));
    }
    // A machine busy with other work is not the generator's limit, but its delay is in
    // the latencies the SLOs judged: say at which steps, the deciding one first.
    let mut crowded: Vec<&StepFigures> = done
        .iter()
        .copied()
        .filter(|s| s.generator.machine_busy)
        .collect();
    crowded.sort_by(|a, b| a.offered_per_s.total_cmp(&b.offered_per_s));
    if !crowded.is_empty() {
        let levels: Vec<String> = crowded.iter().map(|s| ctx.level(s.offered_per_s)).collect();
        let deciding = if crowded.iter().any(|s| Some(s.offered_per_s) == failing) {
            ", the deciding step among them: the ceiling may be low, measure on a quiet machine"
        } else {
            ""
        };
        notes.push(format!(
            "the machine was busy with other work at {}{deciding} (their latencies include that delay; the generator did not limit the load)",
            levels.join(", ")
        ));
    }
    let (bound, why, lower_bound) = match decider {
        None if done.is_empty() => (BoundKind::NotReached, "no step was measured".into(), false),
        None => (
            BoundKind::NotReached,
            format!(
                "every step up to {} met the SLOs: raise --to to find the ceiling",
                ctx.level(ceiling.unwrap_or_default())
            ),
            best.is_some_and(|s| s.generator.bottleneck),
        ),
        Some(d) => {
            let base = done
                .iter()
                .copied()
                .min_by(|a, b| a.offered_per_s.total_cmp(&b.offered_per_s));
            let (kind, why) = bound_of(d, base, ctx);
            let kind = if ceiling.is_none() && kind != BoundKind::Generator {
                BoundKind::BelowLowest
            } else {
                kind
            };
            (kind, why, kind == BoundKind::Generator)
        }
    };
    Answer {
        ceiling_per_s: ceiling,
        sessions_per_s: best.map(|s| {
            if ctx.clients {
                s.achieved_per_s
            } else {
                s.offered_per_s
            }
        }),
        calls_per_s: best.map(|s| {
            let sessions = if ctx.clients {
                s.achieved_per_s
            } else {
                s.offered_per_s
            };
            (sessions * s.calls_per_session * 10.0).round() / 10.0
        }),
        first_failing_per_s: failing,
        knee_per_s: knee(&done, &ctx.knee_phase),
        knee_phase: ctx.knee_phase.clone(),
        failures_past: decider.map(|d| d.reasons.clone()).unwrap_or_default(),
        bound,
        why,
        lower_bound,
        notes,
    }
}

/// What bounds the search at the failing step `d`; `base` is the lowest step.
fn bound_of(d: &StepFigures, base: Option<&StepFigures>, ctx: &Context) -> (BoundKind, String) {
    let rate = ctx.level(d.offered_per_s);
    if d.generator.bottleneck {
        let spread = if ctx.shards > 1 {
            format!("more generator processes or machines than these {} shards (--processes, --shard: docs/ceiling.md)", ctx.shards)
        } else {
            "processes or machines (ceiling --processes N, or --shard I/N: docs/ceiling.md)".into()
        };
        return (
            BoundKind::Generator,
            format!(
                "the generator was the bottleneck at {rate} ({}): the ceiling is a lower bound; spread the load over {spread}",
                d.generator.reasons.join("; ")
            ),
        );
    }
    let connects = d.failures.get("connect_failed").copied().unwrap_or(0);
    if connects > 0 && connects as f64 >= CONNECT_SHARE * d.started.max(1) as f64 {
        let example = d
            .failure_examples
            .get("connect_failed")
            .map(|e| format!(", e.g. {e}"))
            .unwrap_or_default();
        return (
            BoundKind::Connections,
            format!("{connects} connects failed at {rate}{example}"),
        );
    }
    if let (Some(fds), Some(limit)) = (d.server.fds_max, ctx.server_fd_limit) {
        if limit > 0 && fds >= 0.9 * limit as f64 {
            return (
                BoundKind::Connections,
                format!("the server held {fds:.0} descriptors of its limit of {limit} at {rate}: raise its `ulimit -n`"),
            );
        }
    }
    let p99 = |s: &StepFigures| {
        s.p99(&ctx.knee_phase)
            .map(|us| crate::report::text::format_us(us as f64))
    };
    let rise = match (
        base.and_then(|b| p99(b).map(|p| (b.offered_per_s, p))),
        p99(d),
    ) {
        (Some((r0, p0)), Some(p1)) => format!(
            "p99({}) went from {p0} at {} to {p1} at {rate}",
            ctx.knee_phase,
            ctx.level(r0)
        ),
        _ => format!("the SLOs broke at {rate}"),
    };
    let gen = d
        .generator
        .cpu_share_max
        .map(|s| format!(", the generator at most {:.0} % of its CPU", s * 100.0))
        .unwrap_or_default();
    let extras = server_extras(d);
    match (d.server.cpu_cores, ctx.server_cores) {
        (Some(cpu), Some(cores)) if cpu >= CPU_BUSY * cores => (
            BoundKind::ServerCpu,
            format!("the server used {cpu:.2} of its {cores} cores at {rate}{extras}{gen}: its CPU is the limit"),
        ),
        (Some(cpu), Some(cores)) => (
            BoundKind::Queueing,
            format!("{rise} while the server used {cpu:.2} of its {cores} cores{extras}{gen}: requests queue with CPU to spare (a lock, a bounded worker pool, a downstream)"),
        ),
        _ => (
            BoundKind::Latency,
            format!("{rise}{gen}; the server's CPU was not watched: give --server-pid, --server-cgroup or --server-metrics to tell its CPU from queueing"),
        ),
    }
}

/// The server's threads, descriptors and memory at a step, for the verdict's text.
fn server_extras(d: &StepFigures) -> String {
    let mut parts = Vec::new();
    if let Some(t) = d.server.threads_max {
        parts.push(format!("{t:.0} threads"));
    }
    if let Some(f) = d.server.fds_max {
        parts.push(format!("{f:.0} descriptors"));
    }
    if let Some(r) = d.server.rss_max_bytes {
        parts.push(crate::report::soak::fit::bytes_text(r, false));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The last rate before p99 of `phase` rose steeply: above [`KNEE_RATIO`] × the lowest
/// p99 of the slower steps and [`KNEE_FLOOR_US`] above it (the lowest so far, not the
/// first step's: a first step may be slow from a cold start). `None` when it never did.
pub fn knee(steps: &[&StepFigures], phase: &str) -> Option<f64> {
    let mut by_rate: Vec<(f64, u64)> = steps
        .iter()
        .filter_map(|s| s.p99(phase).map(|p| (s.offered_per_s, p)))
        .collect();
    by_rate.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut low = by_rate.first()?.1 as f64;
    for i in 1..by_rate.len() {
        let p = by_rate[i].1 as f64;
        if p > (KNEE_RATIO * low).max(low + KNEE_FLOOR_US) {
            return Some(by_rate[i - 1].0);
        }
        low = low.min(p);
    }
    None
}
