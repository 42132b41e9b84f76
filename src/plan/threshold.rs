//! The threshold grammar: pass/fail rules a run checks against its own summary, so it
//! can gate CI. `p99(initialize) < 50ms`, `error_rate < 0.1%`, `rate(sessions) > 500`,
//! `p99(tools/call, persona=ts-sdk-v1) <= 20ms`. Parsed once when the plan is resolved,
//! from the profile (`thresholds = [...]`) and `--threshold`, so a bad expression, an
//! unknown phase or an unknown persona stops the run before it starts instead of passing
//! silently afterwards. Evaluation on the finished summary lives in `report::threshold`.

mod abort;
mod series;
mod shares;

pub use abort::abort_after;
use shares::{parse_accepted, parse_checks};

pub use series::SERIES_PREFIXES;

use super::error::PlanError;
use super::persona::Persona;
use crate::metrics::Phase;
use serde::{Deserialize, Serialize};

/// A bad threshold: the exact text, what is wrong, how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("threshold `{text}`: {problem}\nfix: {fix}")]
pub struct ThresholdError {
    pub text: String,
    pub problem: String,
    pub fix: String,
}

/// What a threshold measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// A service-time quantile (0.5, 0.9, 0.95, 0.99, 0.999) or 1.0 for the maximum.
    Quantile(f64),
    Mean,
    /// Failed / all samples (or failed / ended sessions for `sessions`).
    ErrorRate,
    Errors,
    /// Per second over the run.
    Rate,
    Count,
    /// The share of calls the server accepted (a result without `isError`, no failure):
    /// `accepted(TOOL)` or `accepted(tools/call)` for every tool.
    Accepted,
    /// The share of step checks that held: `checks(NAME)` for one, `checks` for all.
    Checks,
    /// The least-squares slope of [`Threshold::series`] over the steady part, per
    /// second in the unit given (`BytesPerS`, `PerS` for counts, `CoresPerS`).
    Slope(Unit),
    /// The same series' slope against a count of events (`per=session`, `abandoned`,
    /// `call`): per event, in the unit given (`Bytes`, `Count`, `Cores`).
    SlopePer(Unit, Per),
    /// The highest / lowest value of [`Threshold::series`] over the run.
    SeriesMax(Unit),
    SeriesMin(Unit),
    /// A phase's change from the first steady window to the last.
    Drift(DriftFigure),
}

/// What `slope(SERIES, per=…)` is set against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Per {
    /// Each session that reached the server and ended.
    Session,
    /// Each session that vanished without a goodbye.
    Abandoned,
    /// Each `tools/call`.
    Call,
}

impl Per {
    pub fn name(self) -> &'static str {
        match self {
            Per::Session => "session",
            Per::Abandoned => "abandoned",
            Per::Call => "call",
        }
    }
}

/// Which change `drift(…)` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftFigure {
    /// `last / first − 1` of the service-time p50 or p99.
    P50,
    P99,
    /// `last − first` of the error rate.
    ErrorRate,
}

/// Which figures a metric reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// Every phase except `session` (which repeats the others' failures).
    All,
    Sessions,
    Phase(Phase),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn holds(self, observed: f64, limit: f64) -> bool {
        match self {
            Op::Lt => observed < limit,
            Op::Le => observed <= limit,
            Op::Gt => observed > limit,
            Op::Ge => observed >= limit,
        }
    }
}

/// The unit a metric's values are kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Us,
    Ratio,
    PerS,
    Count,
    Bytes,
    BytesPerS,
    Cores,
    CoresPerS,
}

/// A parsed threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    pub text: String,
    pub metric: Metric,
    pub subject: Subject,
    pub persona: Option<String>,
    pub op: Op,
    /// In the metric's unit: µs for latencies, a ratio for error rates.
    pub limit: f64,
    /// The resource series a soak metric reads (`server.rss`); `None` for the others.
    pub series: Option<String>,
    /// The tool `accepted(TOOL)` reads; `None` for every other form (and for
    /// `accepted(tools/call)`, all tools).
    pub tool: Option<String>,
    /// The `request` step's phase a threshold reads (`p99(complete)`: its own figures,
    /// `summary.requests`); the subject is then the phase `request`.
    pub request: Option<String>,
    /// The step check `checks(NAME)` reads; `None` for every other form (and for
    /// `checks`, all of them).
    pub check: Option<String>,
    /// Stop the run when the live figures lose it, judged from this long into the run
    /// (`abort_on_fail`, `--abort-on-fail`); `None`: judged at the end only.
    pub abort_after: Option<std::time::Duration>,
}

const LATENCY_FIX: &str =
    "write e.g. p99(initialize) < 50ms (metrics: p50 p90 p95 p99 p999 max mean; units: us ms s min h)";
const FORMS: &str = "write METRIC(PHASE) OP VALUE, e.g. p99(initialize) < 50ms, error_rate < 0.1%, rate(sessions) > 500";

fn metric_of(name: &str) -> Option<Metric> {
    Some(match name {
        "p50" => Metric::Quantile(0.5),
        "p90" => Metric::Quantile(0.9),
        "p95" => Metric::Quantile(0.95),
        "p99" => Metric::Quantile(0.99),
        "p999" | "p99.9" => Metric::Quantile(0.999),
        "max" => Metric::Quantile(1.0),
        "mean" => Metric::Mean,
        "error_rate" => Metric::ErrorRate,
        "errors" => Metric::Errors,
        "rate" => Metric::Rate,
        "count" => Metric::Count,
        _ => return None,
    })
}

impl Metric {
    pub fn unit(self) -> Unit {
        match self {
            Metric::Quantile(_) | Metric::Mean => Unit::Us,
            Metric::ErrorRate | Metric::Accepted | Metric::Checks => Unit::Ratio,
            Metric::Rate => Unit::PerS,
            Metric::Errors | Metric::Count => Unit::Count,
            Metric::Slope(u)
            | Metric::SlopePer(u, _)
            | Metric::SeriesMax(u)
            | Metric::SeriesMin(u) => u,
            Metric::Drift(_) => Unit::Ratio,
        }
    }
}

/// Split `NAME(ARGS)` into the name and the comma-separated arguments.
pub fn split_call(text: &str) -> Option<(&str, Vec<&str>)> {
    let text = text.trim();
    match text.find('(') {
        None => Some((text, Vec::new())),
        Some(open) => {
            let inner = text[open + 1..].strip_suffix(')')?;
            let args = inner.split(',').map(str::trim).collect();
            Some((text[..open].trim(), args))
        }
    }
}

/// Split `LEFT OP RIGHT` on the first comparison operator.
pub fn split_op(text: &str) -> Option<(&str, Op, &str)> {
    let at = text.find(['<', '>'])?;
    let (op, len) = match (&text[at..at + 1], text[at + 1..].starts_with('=')) {
        ("<", true) => (Op::Le, 2),
        ("<", false) => (Op::Lt, 1),
        (_, true) => (Op::Ge, 2),
        (_, false) => (Op::Gt, 1),
    };
    Some((text[..at].trim(), op, text[at + len..].trim()))
}

/// A number and its unit suffix (`50ms` → (50, "ms")).
pub fn split_number(text: &str) -> Option<(f64, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-' || c == '_'))
        .unwrap_or(text.len());
    let n: f64 = text[..end].replace('_', "").parse().ok()?;
    n.is_finite().then_some((n, text[end..].trim()))
}

/// Microseconds per unit of latency.
pub fn latency_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "us" | "µs" => 1.0,
        "ms" => 1_000.0,
        "s" => 1_000_000.0,
        // As every duration flag takes them (`--duration 5m`).
        "m" | "min" => 60_000_000.0,
        "h" => 3_600_000_000.0,
        _ => return None,
    })
}

impl Threshold {
    /// A threshold on the built-in phases only.
    pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
        Threshold::parse_in(text, &[])
    }

    /// A threshold whose phase may also be one of `requests` (the phase names of the
    /// plan's `request` steps).
    pub fn parse_in(text: &str, requests: &[String]) -> Result<Threshold, ThresholdError> {
        let err = |problem: String, fix: &str| ThresholdError {
            text: text.to_string(),
            problem,
            fix: fix.to_string(),
        };
        if let Some(soak) = series::parse(text) {
            return soak;
        }
        if let Some(accepted) = parse_accepted(text) {
            return accepted;
        }
        if let Some(checks) = parse_checks(text) {
            return checks;
        }
        let Some((left, op, right)) = split_op(text) else {
            return Err(err("no comparison (<, <=, >, >=)".into(), FORMS));
        };
        let Some((name, args)) = split_call(left) else {
            return Err(err(format!("`{left}` has an unclosed parenthesis"), FORMS));
        };
        let metric = metric_of(name).ok_or_else(|| {
            err(
                format!("unknown metric `{name}`"),
                "use one of p50 p90 p95 p99 p999 max mean error_rate errors rate count accepted, or a soak form: slope(SERIES) max(SERIES) min(SERIES) drift(p99(PHASE))",
            )
        })?;
        let mut subject = Subject::All;
        let mut persona = None;
        let mut request = None;
        for arg in args {
            if let Some(p) = arg.strip_prefix("persona=") {
                if p.trim().is_empty() {
                    return Err(err("`persona=` names no persona".into(), FORMS));
                }
                persona = Some(p.trim().to_string());
            } else if arg == "sessions" {
                subject = Subject::Sessions;
            } else if let Some(p) = Phase::from_name(arg) {
                subject = Subject::Phase(p);
            } else if requests.iter().any(|r| r == arg) {
                subject = Subject::Phase(Phase::Request);
                request = Some(arg.to_string());
            } else {
                let phases: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
                let steps = if requests.is_empty() {
                    String::new()
                } else {
                    format!(", or a request step's: {}", requests.join(", "))
                };
                return Err(err(
                    format!("unknown phase `{arg}`"),
                    &format!("use sessions or a phase: {}{steps}", phases.join(", ")),
                ));
            }
        }
        if request.is_some() && persona.is_some() {
            return Err(err(
                "a request step's phase is counted for the whole fleet, not per persona".into(),
                "write it without persona=, or use the phase request (every request step) per persona",
            ));
        }
        match (metric, subject) {
            (Metric::Quantile(_) | Metric::Mean, Subject::All | Subject::Sessions) => {
                return Err(err(
                    format!("`{name}` needs a phase"),
                    "name one, e.g. p99(initialize) or p99(session) for whole sessions",
                ))
            }
            (Metric::Rate | Metric::Count, Subject::All) => {
                return Err(err(
                    format!("`{name}` needs sessions or a phase"),
                    "write e.g. rate(sessions) > 500 or rate(tools/call) > 1000",
                ))
            }
            (Metric::Errors, Subject::Sessions) => {
                return Err(err(
                    "errors counts samples, not sessions".into(),
                    "write error_rate(sessions) < 1% or errors(session) < 10",
                ))
            }
            _ => {}
        }
        let Some((value, unit)) = split_number(right) else {
            return Err(err(format!("`{right}` is not a number"), FORMS));
        };
        let limit = limit(metric, value, unit).map_err(|(problem, fix)| err(problem, &fix))?;
        Ok(Threshold {
            text: text.trim().to_string(),
            metric,
            subject,
            persona,
            op,
            limit,
            series: None,
            tool: None,
            request,
            check: None,
            abort_after: None,
        })
    }
}

/// The limit in the metric's unit (µs, a ratio, per second, a count), or the problem
/// and its fix.
fn limit(metric: Metric, value: f64, unit: &str) -> Result<f64, (String, String)> {
    let err = |problem: String, fix: &str| (problem, fix.to_string());
    Ok(match metric.unit() {
        Unit::Us => match latency_scale(unit) {
            Some(scale) => value * scale,
            None if unit.is_empty() => {
                return Err(err("a latency needs a unit".into(), LATENCY_FIX))
            }
            None => return Err(err(format!("unknown latency unit `{unit}`"), LATENCY_FIX)),
        },
        Unit::Ratio => match unit {
            "%" => value / 100.0,
            "" => value,
            _ => {
                return Err(err(
                    format!("unknown unit `{unit}` for a rate of errors"),
                    "write a percentage (error_rate < 0.1%) or a ratio (error_rate < 0.001)",
                ))
            }
        },
        Unit::PerS => match unit {
            "" | "/s" => value,
            _ => {
                return Err(err(
                    format!("unknown unit `{unit}` for a rate"),
                    "rates are per second: write rate(sessions) > 500 or > 500/s",
                ))
            }
        },
        // The soak forms read their own units (`series`).
        Unit::Bytes | Unit::BytesPerS | Unit::Cores | Unit::CoresPerS => value,
        Unit::Count => match unit {
            "" => value,
            _ => {
                return Err(err(
                    format!("a count takes no unit (`{unit}`)"),
                    "write e.g. errors(tools/call) < 10",
                ))
            }
        },
    })
}

/// The profile's thresholds (keys `thresholds[i]`), then the command line's.
pub(super) fn resolve_all(
    from_profile: &[crate::profile::ThresholdEntry],
    from_cli: &[String],
    personas: &[Persona],
    (tools, requests, checks): (&[String], &[String], &[String]),
    origin: &str,
) -> Result<Vec<Threshold>, PlanError> {
    let from_profile = from_profile
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("thresholds[{i}]"), t.text(), origin));
    let from_cli = from_cli
        .iter()
        .map(|t| ("--threshold".to_string(), t.as_str(), "command line"));
    from_profile
        .chain(from_cli)
        .map(|(key, text, origin)| {
            let to_plan = |e: ThresholdError| {
                PlanError::new(origin, &key, format!("`{}`: {}", e.text, e.problem), e.fix)
            };
            let t = Threshold::parse_in(text, requests).map_err(to_plan)?;
            if let Some(name) = &t.persona {
                if !personas.iter().any(|p| &p.name == name) {
                    let known: Vec<&str> = personas.iter().map(|p| p.name.as_str()).collect();
                    return Err(to_plan(ThresholdError {
                        text: text.to_string(),
                        problem: format!("unknown persona `{name}`"),
                        fix: format!("use one of the profile's personas: {}", known.join(", ")),
                    }));
                }
            }
            // A check no step has would fail only after the run ("never ran").
            if let Some(name) = &t.check {
                if !checks.iter().any(|n| n == name) {
                    let fix = if checks.is_empty() {
                        "no step has checks: add checks = [{ name = …, … }] to a tools/call \
                         or request step, or drop the threshold"
                            .to_string()
                    } else {
                        format!("use one of the steps' checks: {}", checks.join(", "))
                    };
                    return Err(to_plan(ThresholdError {
                        text: text.to_string(),
                        problem: format!("no step has check `{name}`"),
                        fix,
                    }));
                }
            }
            // A tool no scenario calls would fail only after the run ("not called").
            if let Some(name) = &t.tool {
                if !tools.iter().any(|n| n == name) {
                    let fix = if tools.is_empty() {
                        "no scenario calls a tool: use accepted(tools/call) with a tools/call \
                         or mix step, or drop the threshold"
                            .to_string()
                    } else {
                        format!(
                            "use one of the tools the scenarios call: {}",
                            tools.join(", ")
                        )
                    };
                    return Err(to_plan(ThresholdError {
                        text: text.to_string(),
                        problem: format!("no scenario calls tool `{name}`"),
                        fix,
                    }));
                }
            }
            Ok(t)
        })
        .collect()
}

#[cfg(test)]
mod tests;
