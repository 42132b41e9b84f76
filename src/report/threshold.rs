//! Thresholds evaluated: each parsed rule (`plan::threshold`) read against the finished
//! [`Summary`], giving the verdicts (`summary::ThresholdResult`) stored in `summary.json`
//! and `thresholds.xml`.

use crate::metrics::Phase;
use crate::metrics::SeriesUnit;
use crate::plan::threshold::{DriftFigure, Metric, Subject, Threshold, Unit};
use crate::summary::{Latency, PhaseSummary, Summary, ThresholdResult, ToolAcceptance};

/// The observed value, or why there is none.
fn observe(t: &Threshold, s: &Summary) -> Result<f64, String> {
    if let Some(v) = super::soak::observe(t, s) {
        return v;
    }
    if t.metric == Metric::Accepted {
        return accepted(t.tool.as_deref(), s);
    }
    if t.metric == Metric::Checks {
        return checks(t.check.as_deref(), s);
    }
    // (completed, failed, unreachable): rates count sessions that reached the server,
    // error rates count the unreachable ones as errors too.
    // A request step's phase reads its own figures (parse rules out a persona).
    let phases = if t.request.is_some() {
        &s.requests
    } else {
        &s.phases
    };
    let name_of = |p: Phase| t.request.as_deref().unwrap_or(p.name());
    let (phases, sessions) = match &t.persona {
        None => (
            phases,
            (
                s.sessions.completed,
                s.sessions.failed,
                s.sessions.unreachable,
            ),
        ),
        Some(name) => {
            let p = s
                .personas
                .get(name)
                .ok_or_else(|| format!("persona {name} did not run"))?;
            (&p.phases, (p.completed, p.failed, p.unreachable))
        }
    };
    let secs = s.run.duration_s;
    let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let phase = |p: Phase| -> Result<&PhaseSummary, String> {
        phases
            .get(name_of(p))
            .filter(|ps| ps.count > 0)
            .ok_or_else(|| format!("no {} samples", name_of(p)))
    };
    let ok_phase = |p: Phase| -> Result<&PhaseSummary, String> {
        phase(p).and_then(|ps| {
            (ps.count > ps.errors)
                .then_some(ps)
                .ok_or_else(|| format!("every {} sample failed", name_of(p)))
        })
    };
    let ok_latency = |p: Phase| -> Result<&Latency, String> {
        ok_phase(p)?
            .service
            .as_ref()
            .ok_or_else(|| format!("every {} sample failed", name_of(p)))
    };
    Ok(match (t.metric, t.subject) {
        (Metric::Quantile(q), Subject::Phase(p)) => ok_latency(p)?.at(q) as f64,
        (Metric::Mean, Subject::Phase(p)) => ok_latency(p)?.mean_us,
        (Metric::ErrorRate, Subject::Phase(p)) => {
            let ps = phase(p)?;
            ps.errors as f64 / ps.count as f64
        }
        (Metric::ErrorRate, Subject::Sessions) => {
            let ended = sessions.0 + sessions.1 + sessions.2;
            if ended == 0 {
                return Err("no session ended".into());
            }
            (sessions.1 + sessions.2) as f64 / ended as f64
        }
        (Metric::ErrorRate | Metric::Errors, Subject::All) => {
            let (mut n, mut e) = (0, 0);
            for (name, ps) in phases {
                if name != Phase::Session.name() {
                    n += ps.count;
                    e += ps.errors;
                }
            }
            match t.metric {
                Metric::Errors => e as f64,
                _ if n == 0 => return Err("no samples".into()),
                _ => e as f64 / n as f64,
            }
        }
        (Metric::Errors, Subject::Phase(p)) => {
            phases.get(name_of(p)).map_or(0, |ps| ps.errors) as f64
        }
        (Metric::Rate, Subject::Sessions) => per_s(sessions.0 + sessions.1),
        (Metric::Rate, Subject::Phase(p)) => per_s(phases.get(name_of(p)).map_or(0, |x| x.count)),
        (Metric::Count, Subject::Sessions) => (sessions.0 + sessions.1) as f64,
        (Metric::Count, Subject::Phase(p)) => {
            phases.get(name_of(p)).map_or(0, |ps| ps.count) as f64
        }
        // Ruled out by `parse`.
        _ => return Err("this metric does not apply here".into()),
    })
}

/// `accepted(TOOL)`: the tool's accepted share (`tool_acceptance`, or before schema 9
/// its `tools` figures); `accepted(tools/call)` (no tool): every tool's, from the phase.
fn accepted(tool: Option<&str>, s: &Summary) -> Result<f64, String> {
    let share = match tool {
        Some(name) => s
            .tool_acceptance
            .get(name)
            .cloned()
            .or_else(|| s.tools.get(name).map(ToolAcceptance::from_summary))
            .ok_or_else(|| format!("tool {name} was not called"))?
            .accepted_share()
            .ok_or_else(|| format!("tool {name} was not called"))?,
        None => {
            let p = s
                .phases
                .get(Phase::ToolsCall.name())
                .ok_or_else(|| "no tools/call samples".to_string())?;
            ToolAcceptance::from_summary(p)
                .accepted_share()
                .ok_or_else(|| "no tools/call samples".to_string())?
        }
    };
    Ok(share)
}

/// `checks(NAME)`: the share of that step check's evaluations that held; `checks`
/// (no name): of every check's.
fn checks(name: Option<&str>, s: &Summary) -> Result<f64, String> {
    let mut all = crate::summary::CheckSummary::default();
    match name {
        Some(n) => all = s.checks.get(n).cloned().unwrap_or_default(),
        None => {
            for c in s.checks.values() {
                all.passes += c.passes;
                all.fails += c.fails;
            }
        }
    }
    all.pass_share().ok_or_else(|| match name {
        Some(n) => format!("check {n} never ran"),
        None => "no check ran".into(),
    })
}

/// One threshold's verdict on `s`.
pub fn evaluate(t: &Threshold, s: &Summary) -> ThresholdResult {
    let unit = t.metric.unit();
    let (mut inconclusive, mut decided_by) = (false, String::new());
    let (observed, observed_text, passed) = match observe(t, s) {
        Ok(v) => {
            let mut passed = t.op.holds(v, t.limit);
            // A slope is decided by its interval and its trend, not the point alone.
            if let Some(reading) = super::soak::reading(t, s) {
                let d = super::soak::decide(t, v, &reading, |x| show(t.metric, x, unit));
                (passed, inconclusive, decided_by) = (d.passed, d.inconclusive, d.text);
            }
            (Some(v), show(t.metric, v, unit), passed)
        }
        Err(why) => (None, why, false),
    };
    ThresholdResult {
        expression: t.text.clone(),
        // Slopes per second are tiny (1 descriptor/h = 0.00028/s): soak figures stay
        // as they are.
        observed: observed.map(|v| match t.metric {
            Metric::Slope(_)
            | Metric::SlopePer(..)
            | Metric::SeriesMax(_)
            | Metric::SeriesMin(_)
            | Metric::Drift(_) => v,
            _ => (v * 1000.0).round() / 1000.0,
        }),
        limit: t.limit,
        unit,
        passed,
        observed_text,
        inconclusive,
        decided_by,
    }
}

/// A slope reads per minute or hour, a drift with its sign; the rest by unit.
fn show(metric: Metric, v: f64, unit: Unit) -> String {
    use super::soak::fit::rate_text;
    match (metric, unit) {
        (Metric::Slope(_), Unit::BytesPerS) => rate_text(v, SeriesUnit::Bytes),
        (Metric::Slope(_), Unit::CoresPerS) => rate_text(v, SeriesUnit::Cores),
        (Metric::Slope(_), _) => rate_text(v, SeriesUnit::Count),
        (Metric::SlopePer(u, per), _) => {
            let unit = match u {
                Unit::Bytes => SeriesUnit::Bytes,
                Unit::Cores => SeriesUnit::Cores,
                _ => SeriesUnit::Count,
            };
            format!(
                "{} per {}",
                super::soak::shape::per_event_text(v, unit),
                per.name()
            )
        }
        (Metric::Drift(DriftFigure::ErrorRate), _) => format!("{:+.3}%", v * 100.0),
        (Metric::Drift(_), _) => format!("{:+.1}%", v * 100.0),
        _ => format_value(v, unit),
    }
}

/// A value for people, in the unit its metric is written in.
pub fn format_value(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes => super::soak::fit::bytes_text(v, false),
        Unit::BytesPerS => format!("{}/s", super::soak::fit::bytes_text(v, true)),
        Unit::Cores => format!("{v:.2} cores"),
        Unit::CoresPerS => format!("{v:+.4} cores/s"),
        Unit::Us => super::text::format_us(v),
        Unit::Ratio => format!("{:.3}%", v * 100.0),
        Unit::PerS => format!("{v:.1}/s"),
        Unit::Count => format!("{v:.0}"),
    }
}

/// Evaluate every threshold.
pub fn evaluate_all(thresholds: &[Threshold], s: &Summary) -> Vec<ThresholdResult> {
    thresholds.iter().map(|t| evaluate(t, s)).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn phase(count: u64, errors: u64, p50: u64, p99: u64) -> Value {
        let lat = json!({"mean_us": p50 as f64, "min_us": 1, "p50_us": p50, "p90_us": p99, "p95_us": p99,
            "p99_us": p99, "p999_us": p99, "max_us": p99 * 2});
        let mut v = lat.clone();
        let o = v.as_object_mut().expect("object");
        for (k, x) in [
            ("count", json!(count)),
            ("errors", json!(errors)),
            ("tool_errors", json!(0)),
            ("skipped", json!(0)),
            ("rate_per_s", json!(count as f64 / 10.0)),
            ("response", lat),
            ("clamped", json!(0)),
            ("failures", json!({})),
        ] {
            o.insert(k.into(), x);
        }
        v
    }

    /// A 10-second run: 1000 sessions (10 failed), initialize p99 40ms with 2 errors in 1000.
    pub(crate) fn summary() -> Summary {
        let phases = json!({
            "initialize": phase(1000, 2, 2_000, 40_000),
            "tools/call": phase(3000, 1, 1_500, 9_000),
            "session": phase(1000, 10, 30_000, 90_000),
        });
        serde_json::from_value(json!({
            "schema_version": 3,
            "tool": {"name": "mcp-fleet", "version": "0"},
            "run": {"name": "t", "seed": 1, "started_at": "2026-01-01T00:00:00Z",
                "finished_at": "2026-01-01T00:00:10Z", "duration_s": 10.0, "target": "x",
                "transport": "http", "stopped_by": "sessions", "interval_s": 1.0,
                "load": {"model": "closed", "clients": 8, "sessions": 1000, "duration_s": null,
                    "think": "0s", "description": "closed, 8 clients", "timeout_ms": 10000.0}},
            "sessions": {"started": 1000, "completed": 990, "failed": 10, "interrupted": 0, "rate_per_s": 100.0},
            "phases": phases,
            "failures": {"timeout": 3}, "failure_examples": {},
            "personas": {"slow": {"sessions": 100, "completed": 100, "failed": 0, "interrupted": 0,
                "phases": {"initialize": phase(100, 0, 9_000, 80_000)}}},
            "tools": {}, "server_messages": {}, "malformed_messages": 0,
            "transports": {}, "eras": {}, "protocol_versions": {}, "thresholds": [], "counters": {}
        }))
        .expect("fixture is a summary")
    }

    fn check(text: &str) -> ThresholdResult {
        evaluate(&Threshold::parse(text).expect(text), &summary())
    }

    #[test]
    fn evaluation_reads_the_summary() {
        let r = check("p99(initialize) < 50ms");
        assert!(r.passed);
        assert_eq!(r.observed, Some(40_000.0));
        assert_eq!(r.observed_text, "40.00ms");
        assert!(!check("p99(initialize) < 30ms").passed);
        // 3 errors in 4000 samples (session excluded) = 0.075%.
        let r = check("error_rate < 0.1%");
        assert!(r.passed, "{r:?}");
        assert_eq!(r.observed_text, "0.075%");
        assert!(!check("error_rate < 0.05%").passed);
        assert!(check("error_rate(sessions) <= 1%").passed);
        assert!(!check("error_rate(initialize) < 0.1%").passed);
        // 1000 sessions in 10 s.
        assert!(check("rate(sessions) > 99").passed);
        assert!(!check("rate(sessions) > 500").passed);
        assert!(check("count(tools/call) >= 3000").passed);
        assert!(check("errors(tools/call) < 2").passed);
        assert!(check("max(tools/call) <= 18ms").passed);
    }

    #[test]
    fn accepted_reads_tool_acceptance_or_the_tool_figures() {
        use crate::summary::ToolAcceptance;
        let mut s = summary();
        s.tool_acceptance.insert(
            "get_time".into(),
            ToolAcceptance {
                calls: 200,
                accepted: 12,
                invalid_params: 188,
                ..ToolAcceptance::default()
            },
        );
        let eval = |text: &str, s: &Summary| evaluate(&Threshold::parse(text).expect(text), s);
        let r = eval("accepted(get_time) > 95%", &s);
        assert!(!r.passed);
        assert_eq!(r.observed, Some(0.06));
        assert_eq!(r.observed_text, "6.000%");
        assert!(eval("accepted(get_time) < 0.1", &s).passed);
        // tools/call: 3000 calls, 1 error, no isError.
        let r = eval("accepted(tools/call) > 0.99", &s);
        assert!(r.passed, "{r:?}");
        assert_eq!(r.observed, Some(1.0));
        let r = eval("accepted(nope) > 0.5", &s);
        assert!(!r.passed);
        assert_eq!(r.observed_text, "tool nope was not called");
        // Before schema 9: the tool's own figures.
        let mut old = summary();
        let mut p = old.phases["tools/call"].clone();
        p.count = 10;
        p.errors = 1;
        p.tool_errors = 4;
        old.tools.insert("echo".into(), p);
        assert_eq!(eval("accepted(echo) > 0.4", &old).observed, Some(0.5));
    }

    #[test]
    fn unreachable_sessions_are_errors_but_not_throughput() {
        let mut s = summary();
        s.sessions.unreachable = 1000;
        let t = |text: &str| evaluate(&Threshold::parse(text).expect(text), &s);
        // 10 failed + 1000 unreachable of 2000 sessions.
        assert!(
            !t("error_rate(sessions) < 1%").passed,
            "a dead target fails"
        );
        assert_eq!(t("error_rate(sessions) < 1%").observed_text, "50.500%");
        // Still 990 + 10 sessions that reached the server in 10 s.
        assert_eq!(t("rate(sessions) > 0").observed, Some(100.0));
    }

    #[test]
    fn p95_is_a_threshold_metric() {
        let r = check("p95(initialize) < 50ms");
        assert!(r.passed, "{r:?}");
        assert_eq!(r.observed, Some(40_000.0));
        assert!(!check("p95(initialize) < 30ms").passed);
    }

    #[test]
    fn phases_without_a_successful_sample_fail_every_form() {
        let mut s = summary();
        for p in [
            s.phases.get_mut("initialize"),
            s.personas
                .get_mut("slow")
                .and_then(|p| p.phases.get_mut("initialize")),
        ]
        .into_iter()
        .flatten()
        {
            p.errors = p.count;
            p.service = None;
            p.response = None;
        }
        for text in [
            "p99(initialize) < 100s",
            "p95(initialize) < 100s",
            "max(initialize) < 100s",
            "mean(initialize) < 100s",
            "p50(initialize, persona=slow) < 100s",
            "mean(initialize, persona=slow) < 100s",
        ] {
            let r = evaluate(&Threshold::parse(text).expect(text), &s);
            assert!(!r.passed, "{text} passed on no samples");
            assert_eq!(r.observed, None, "{text}");
            assert_eq!(r.observed_text, "every initialize sample failed", "{text}");
        }
    }

    #[test]
    fn per_persona_and_missing_data() {
        assert!(!check("p99(initialize, persona=slow) < 50ms").passed);
        assert!(check("p50(initialize, persona=slow) < 10ms").passed);
        // No samples is a failure with a reason, never a silent pass.
        let r = check("p99(ping) < 1s");
        assert!(!r.passed);
        assert_eq!(r.observed, None);
        assert_eq!(r.observed_text, "no ping samples");
        let r = check("p99(initialize, persona=gone) < 1s");
        assert!(!r.passed && r.observed_text.contains("gone"), "{r:?}");
    }
}
