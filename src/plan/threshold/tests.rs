//! The threshold grammar: the issue's examples, tools named or all, and bad
//! expressions that name the text and a fix.

use super::*;

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
fn accepted_reads_a_tool_or_every_tool() {
    let t = Threshold::parse("accepted(get_time) > 95%").expect("parses");
    assert_eq!((t.metric, t.op, t.limit), (Metric::Accepted, Op::Gt, 0.95));
    assert_eq!(t.tool.as_deref(), Some("get_time"));
    assert_eq!(t.metric.unit(), Unit::Ratio);
    let t = Threshold::parse("accepted(tools/call) >= 0.9").expect("parses");
    assert_eq!((t.tool, t.limit), (None, 0.9));
    for (bad, why) in [
        ("accepted > 95%", "name one tool"),
        ("accepted(a, b) > 95%", "name one tool"),
        ("accepted(persona=x) > 95%", "per tool, not per persona"),
        ("accepted(a) > 95ms", "unknown unit `ms`"),
        ("accepted(a) > lots", "not a number"),
    ] {
        let e = Threshold::parse(bad).expect_err(bad);
        assert!(e.problem.contains(why), "{bad}: {}", e.problem);
        assert!(e.fix.contains("accepted(TOOL)"), "{}", e.fix);
    }
}

#[test]
fn bad_expressions_name_the_text_and_a_fix() {
    for (text, problem) in [
        ("p99(initialise) < 50ms", "unknown phase `initialise`"),
        ("p98(initialize) < 50ms", "unknown metric `p98`"),
        ("p99(initialize) < 50", "a latency needs a unit"),
        ("p99(initialize) < 50d", "unknown latency unit `d`"),
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
fn latencies_take_the_units_every_duration_flag_takes() {
    let limit = |text: &str| Threshold::parse(text).map(|t| t.limit);
    assert_eq!(limit("p99(session) < 2min"), Ok(120_000_000.0));
    assert_eq!(limit("p99(session) < 2m"), Ok(120_000_000.0));
    assert_eq!(limit("max(session) < 1h"), Ok(3_600_000_000.0));
    assert_eq!(limit("p99(session) < 250us"), Ok(250.0));
    let unknown = Threshold::parse("p99(session) < 2d").expect_err("no days");
    assert!(unknown.to_string().contains("min h"), "{unknown}");
}
