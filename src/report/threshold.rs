//! Thresholds: pass/fail rules a run checks against its own summary, so it can gate CI.
//! `p99(initialize) < 50ms`, `error_rate < 0.1%`, `rate(sessions) > 500`,
//! `p99(tools/call, persona=ts-sdk-v1) <= 20ms`. Parsed once when the plan is resolved
//! (a bad expression or an unknown phase is a profile error, never a silent pass) and
//! evaluated on the finished [`Summary`].

use super::summary::{PhaseSummary, Summary};
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
    /// A service-time quantile (0.5, 0.9, 0.99, 0.999) or 1.0 for the maximum.
    Quantile(f64),
    Mean,
    /// Failed / all samples (or failed / ended sessions for `sessions`).
    ErrorRate,
    Errors,
    /// Per second over the run.
    Rate,
    Count,
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
}

/// A threshold's verdict, as stored in `summary.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThresholdResult {
    pub expression: String,
    /// `None` when there was nothing to measure (no samples): that fails.
    pub observed: Option<f64>,
    pub limit: f64,
    pub unit: Unit,
    pub passed: bool,
    /// The observed value for people, e.g. `63.2ms`, `0.25%`, or why there is none.
    pub observed_text: String,
}

const LATENCY_FIX: &str =
    "write e.g. p99(initialize) < 50ms (metrics: p50 p90 p99 p999 max mean; units: us ms s)";
const FORMS: &str = "write METRIC(PHASE) OP VALUE, e.g. p99(initialize) < 50ms, error_rate < 0.1%, rate(sessions) > 500";

fn metric_of(name: &str) -> Option<Metric> {
    Some(match name {
        "p50" => Metric::Quantile(0.5),
        "p90" => Metric::Quantile(0.9),
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
            Metric::ErrorRate => Unit::Ratio,
            Metric::Rate => Unit::PerS,
            Metric::Errors | Metric::Count => Unit::Count,
        }
    }
}

/// Split `NAME(ARGS)` into the name and the comma-separated arguments.
pub(crate) fn split_call(text: &str) -> Option<(&str, Vec<&str>)> {
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
pub(crate) fn split_op(text: &str) -> Option<(&str, Op, &str)> {
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
pub(crate) fn split_number(text: &str) -> Option<(f64, &str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-' || c == '_'))
        .unwrap_or(text.len());
    let n: f64 = text[..end].replace('_', "").parse().ok()?;
    n.is_finite().then_some((n, text[end..].trim()))
}

/// Microseconds per unit of latency.
pub(crate) fn latency_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "us" | "µs" => 1.0,
        "ms" => 1_000.0,
        "s" => 1_000_000.0,
        _ => return None,
    })
}

impl Threshold {
    pub fn parse(text: &str) -> Result<Threshold, ThresholdError> {
        let err = |problem: String, fix: &str| ThresholdError {
            text: text.to_string(),
            problem,
            fix: fix.to_string(),
        };
        let Some((left, op, right)) = split_op(text) else {
            return Err(err("no comparison (<, <=, >, >=)".into(), FORMS));
        };
        let Some((name, args)) = split_call(left) else {
            return Err(err(format!("`{left}` has an unclosed parenthesis"), FORMS));
        };
        let metric = metric_of(name).ok_or_else(|| {
            err(
                format!("unknown metric `{name}`"),
                "use one of p50 p90 p99 p999 max mean error_rate errors rate count",
            )
        })?;
        let mut subject = Subject::All;
        let mut persona = None;
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
            } else {
                let phases: Vec<&str> = Phase::ALL.iter().map(|p| p.name()).collect();
                return Err(err(
                    format!("unknown phase `{arg}`"),
                    &format!("use sessions or a phase: {}", phases.join(", ")),
                ));
            }
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
        let limit =
            match metric.unit() {
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
                    _ => return Err(err(
                        format!("unknown unit `{unit}` for a rate of errors"),
                        "write a percentage (error_rate < 0.1%) or a ratio (error_rate < 0.001)",
                    )),
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
                Unit::Count => match unit {
                    "" => value,
                    _ => {
                        return Err(err(
                            format!("a count takes no unit (`{unit}`)"),
                            "write e.g. errors(tools/call) < 10",
                        ))
                    }
                },
            };
        Ok(Threshold {
            text: text.trim().to_string(),
            metric,
            subject,
            persona,
            op,
            limit,
        })
    }

    /// The observed value, or why there is none.
    fn observe(&self, s: &Summary) -> Result<f64, String> {
        let (phases, sessions) = match &self.persona {
            None => (&s.phases, (s.sessions.completed, s.sessions.failed)),
            Some(name) => {
                let p = s
                    .personas
                    .get(name)
                    .ok_or_else(|| format!("persona {name} did not run"))?;
                (&p.phases, (p.completed, p.failed))
            }
        };
        let secs = s.run.duration_s;
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let phase = |p: Phase| -> Result<&PhaseSummary, String> {
            phases
                .get(p.name())
                .filter(|ps| ps.count > 0)
                .ok_or_else(|| format!("no {} samples", p.name()))
        };
        let ok_phase = |p: Phase| -> Result<&PhaseSummary, String> {
            phase(p).and_then(|ps| {
                (ps.count > ps.errors)
                    .then_some(ps)
                    .ok_or_else(|| format!("every {} sample failed", p.name()))
            })
        };
        Ok(match (self.metric, self.subject) {
            (Metric::Quantile(q), Subject::Phase(p)) => {
                let l = &ok_phase(p)?.service;
                (match q {
                    x if x >= 1.0 => l.max_us,
                    x if x >= 0.999 => l.p999_us,
                    x if x >= 0.99 => l.p99_us,
                    x if x >= 0.9 => l.p90_us,
                    _ => l.p50_us,
                }) as f64
            }
            (Metric::Mean, Subject::Phase(p)) => ok_phase(p)?.service.mean_us,
            (Metric::ErrorRate, Subject::Phase(p)) => {
                let ps = phase(p)?;
                ps.errors as f64 / ps.count as f64
            }
            (Metric::ErrorRate, Subject::Sessions) => {
                let ended = sessions.0 + sessions.1;
                if ended == 0 {
                    return Err("no session ended".into());
                }
                sessions.1 as f64 / ended as f64
            }
            (Metric::ErrorRate | Metric::Errors, Subject::All) => {
                let (mut n, mut e) = (0, 0);
                for (name, ps) in phases {
                    if name != Phase::Session.name() {
                        n += ps.count;
                        e += ps.errors;
                    }
                }
                match self.metric {
                    Metric::Errors => e as f64,
                    _ if n == 0 => return Err("no samples".into()),
                    _ => e as f64 / n as f64,
                }
            }
            (Metric::Errors, Subject::Phase(p)) => {
                phases.get(p.name()).map_or(0, |ps| ps.errors) as f64
            }
            (Metric::Rate, Subject::Sessions) => per_s(sessions.0 + sessions.1),
            (Metric::Rate, Subject::Phase(p)) => per_s(phases.get(p.name()).map_or(0, |x| x.count)),
            (Metric::Count, Subject::Sessions) => (sessions.0 + sessions.1) as f64,
            (Metric::Count, Subject::Phase(p)) => {
                phases.get(p.name()).map_or(0, |ps| ps.count) as f64
            }
            // Ruled out by `parse`.
            _ => return Err("this metric does not apply here".into()),
        })
    }

    pub fn evaluate(&self, s: &Summary) -> ThresholdResult {
        let unit = self.metric.unit();
        let (observed, observed_text, passed) = match self.observe(s) {
            Ok(v) => (Some(v), format_value(v, unit), self.op.holds(v, self.limit)),
            Err(why) => (None, why, false),
        };
        ThresholdResult {
            expression: self.text.clone(),
            observed: observed.map(|v| (v * 1000.0).round() / 1000.0),
            limit: self.limit,
            unit,
            passed,
            observed_text,
        }
    }
}

/// A value for people, in the unit its metric is written in.
pub fn format_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Us => super::text::format_us(v),
        Unit::Ratio => format!("{:.3}%", v * 100.0),
        Unit::PerS => format!("{v:.1}/s"),
        Unit::Count => format!("{v:.0}"),
    }
}

/// Evaluate every threshold.
pub fn evaluate_all(thresholds: &[Threshold], s: &Summary) -> Vec<ThresholdResult> {
    thresholds.iter().map(|t| t.evaluate(s)).collect()
}

#[cfg(test)]
#[path = "threshold_tests.rs"]
pub(crate) mod tests;
