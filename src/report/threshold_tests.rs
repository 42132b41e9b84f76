//! Threshold parsing (good and bad expressions) and evaluation on a summary.

use super::*;
use serde_json::{json, Value};

fn phase(count: u64, errors: u64, p50: u64, p99: u64) -> Value {
    let lat = json!({"mean_us": p50 as f64, "min_us": 1, "p50_us": p50, "p90_us": p99,
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
    Threshold::parse(text).expect(text).evaluate(&summary())
}

#[test]
fn the_issue_examples_parse_to_the_right_limits() {
    let t = Threshold::parse("p99(initialize) < 50ms").expect("parses");
    assert_eq!(t.metric, Metric::Quantile(0.99));
    assert_eq!(t.subject, Subject::Phase(Phase::Initialize));
    assert_eq!((t.op, t.limit), (Op::Lt, 50_000.0));
    let t = Threshold::parse("error_rate < 0.1%").expect("parses");
    assert_eq!((t.metric, t.subject), (Metric::ErrorRate, Subject::All));
    assert!((t.limit - 0.001).abs() < 1e-12);
    let t = Threshold::parse("rate(sessions) > 500").expect("parses");
    assert_eq!(
        (t.metric, t.subject, t.op, t.limit),
        (Metric::Rate, Subject::Sessions, Op::Gt, 500.0)
    );
    let t = Threshold::parse(" p99.9( tools/call , persona=slow ) >= 1.5s ").expect("parses");
    assert_eq!(t.subject, Subject::Phase(Phase::ToolsCall));
    assert_eq!(t.persona.as_deref(), Some("slow"));
    assert_eq!((t.op, t.limit), (Op::Ge, 1_500_000.0));
    assert_eq!(
        Threshold::parse("max(ping) <= 250us")
            .expect("parses")
            .limit,
        250.0
    );
}

#[test]
fn bad_expressions_name_the_text_and_a_fix() {
    for (text, problem) in [
        ("p99(initialise) < 50ms", "unknown phase `initialise`"),
        ("p98(initialize) < 50ms", "unknown metric `p98`"),
        ("p99(initialize) < 50", "a latency needs a unit"),
        ("p99(initialize) < 50min", "unknown latency unit `min`"),
        ("p99(initialize) = 50ms", "no comparison"),
        ("p99 < 50ms", "`p99` needs a phase"),
        ("rate > 5", "`rate` needs sessions or a phase"),
        ("error_rate < lots", "`lots` is not a number"),
        ("p99(initialize < 50ms", "unclosed parenthesis"),
        ("error_rate < 1ms", "unknown unit `ms`"),
        ("count(session) > 5/s", "a count takes no unit"),
    ] {
        let e = Threshold::parse(text).expect_err(text);
        assert_eq!(e.text, text);
        assert!(e.problem.contains(problem), "{text}: {}", e.problem);
        assert!(!e.fix.is_empty());
        let shown = e.to_string();
        assert!(
            shown.contains(&format!("`{text}`")) && shown.contains("\nfix: "),
            "{shown}"
        );
    }
    let e = Threshold::parse("p99(nope) < 1ms").expect_err("unknown phase");
    assert!(
        e.fix.contains("tools/call"),
        "the fix lists the phases: {}",
        e.fix
    );
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
