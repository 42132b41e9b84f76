//! Tests of `compare`: the `--fail-if` grammar, the deltas and the regressions they flag.

use super::*;
use crate::report::threshold::tests::summary;

#[test]
fn rules_parse_with_clear_errors() {
    let r = FailIf::parse("p99 > +10%").expect("parses");
    assert_eq!((r.measure, r.phase, r.op), (Measure::P99, None, Op::Gt));
    assert_eq!(r.change, Change::Relative(0.10));
    let r = FailIf::parse("p99(initialize) > +5ms").expect("parses");
    assert_eq!(r.phase, Some(Phase::Initialize));
    assert_eq!(r.change, Change::Absolute(5_000.0));
    assert_eq!(
        FailIf::parse("rate < -20%").expect("parses").change,
        Change::Relative(-0.2)
    );
    for (bad, why) in [
        ("p99 > 10%", "give it a sign"),
        ("p98 > +10%", "unknown measure `p98`"),
        ("p99(init) > +10%", "unknown phase `init`"),
        ("p99 > +10parsecs", "unknown unit `parsecs`"),
        ("p99 +10%", "no comparison"),
    ] {
        let e = FailIf::parse(bad).expect_err(bad);
        assert!(e.problem.contains(why), "{bad}: {}", e.problem);
        assert_eq!(e.text, bad);
    }
}

#[test]
fn a_p95_rule_finds_a_p95_regression() {
    let base = summary();
    let mut new = summary();
    if let Some(p) = new.phases.get_mut("tools/call") {
        p.service.as_mut().expect("latency").p95_us = 20_000;
    }
    let rule = FailIf::parse("p95 > +10%").expect("parses");
    assert_eq!(rule.measure, Measure::P95);
    let c = compare(&base, &new, &[rule]);
    assert_eq!(c.regressions.len(), 1, "{:?}", c.regressions);
    assert!(
        c.regressions[0].starts_with("p95 > +10%: tools/call: 9.00ms → 20.00ms"),
        "{}",
        c.regressions[0]
    );
    assert!(c.text.contains("p95 base → new"), "{}", c.text);
}

#[test]
fn runs_that_differ_are_warned_about_first() {
    let base = summary();
    let same = compare_with(&base, &base, &[], Some(("a = 1", "a = 1")));
    assert!(!same.text.contains("warning:"), "{}", same.text);
    let mut new = summary();
    new.run.load.model = "open".into();
    new.run.target = "http://127.0.0.1:2/mcp".into();
    new.run.name = "other".into();
    new.tool.version = "9.9.9".into();
    new.schema_version = 8;
    let c = compare_with(&base, &new, &[], None);
    let warnings: Vec<&str> = c
        .text
        .lines()
        .take_while(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning: the runs differ in load model: closed → open",
            "warning: the runs differ in target: x → http://127.0.0.1:2/mcp",
            "warning: the runs differ in profile: t → other",
            "warning: the runs differ in mcp-fleet version: 0 → 9.9.9",
            "warning: the runs differ in schema version: 3 → 8",
        ]
    );
    let edited = compare_with(&base, &base, &[], Some(("a = 1", "a = 2")));
    assert!(
        edited
            .text
            .starts_with("warning: the runs differ in profile: profile.toml of t"),
        "{}",
        edited.text
    );
}

#[test]
fn a_tool_whose_accepted_share_fell_is_warned_about() {
    use crate::summary::ToolAcceptance;
    let calls = |n: u64, ok: u64| ToolAcceptance {
        calls: n,
        accepted: ok,
        invalid_params: n - ok,
        ..ToolAcceptance::default()
    };
    let mut base = summary();
    base.schema_version = 9;
    base.tool_acceptance
        .insert("get_time".into(), calls(100, 95));
    base.tool_acceptance.insert("echo".into(), calls(100, 100));
    base.tool_acceptance.insert("gone".into(), calls(10, 10));
    let mut new = base.clone();
    new.tool_acceptance
        .insert("get_time".into(), calls(200, 80));
    new.tool_acceptance.insert("echo".into(), calls(100, 91));
    new.tool_acceptance.remove("gone");
    let c = compare(&base, &new, &[]);
    let warnings: Vec<&str> = c
        .text
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(
        warnings,
        ["warning: tool get_time: the server accepted 95.0% → 40.0% of its calls (-55.0 points)"],
        "9 points is no warning; a tool only in one run is none: {}",
        c.text
    );
    assert!(c.regressions.is_empty(), "a warning, not a regression");
    assert!(compare(&new, &base, &[])
        .text
        .lines()
        .all(|l| !l.contains("accepted")));
    // A schema 8 base has no tool_acceptance: its tools give the shares.
    let mut old = summary();
    let mut p = old.phases["tools/call"].clone();
    p.count = 100;
    p.errors = 0;
    p.tool_errors = 0;
    old.tools.insert("get_time".into(), p.clone());
    p.tool_errors = 60;
    let mut worse = summary();
    worse.tools.insert("get_time".into(), p);
    let drops = acceptance_drops(&old, &worse);
    assert_eq!(
        drops,
        ["tool get_time: the server accepted 100.0% → 40.0% of its calls (-60.0 points)"]
    );
    assert!(
        acceptance_drops(&old, &base).is_empty(),
        "schema 8 (100%) against schema 9 (95%): 5 points"
    );
    assert_eq!(acceptance_drops(&old, &new).len(), 1, "100% → 40%");
}

#[test]
fn regressions_are_found_per_phase() {
    let base = summary();
    let mut new = summary();
    // initialize p99 40ms → 50ms (+25%); tools/call unchanged; rate halves.
    if let Some(p) = new.phases.get_mut("initialize") {
        p.service.as_mut().expect("latency").p99_us = 50_000;
    }
    for p in new.phases.values_mut() {
        p.rate_per_s /= 2.0;
    }
    let rules = [
        FailIf::parse("p99 > +10%").expect("parses"),
        FailIf::parse("p99(tools/call) > +1us").expect("parses"),
        FailIf::parse("rate < -40%").expect("parses"),
    ];
    let c = compare(&base, &new, &rules);
    let p99: Vec<&String> = c
        .regressions
        .iter()
        .filter(|r| r.starts_with("p99 >"))
        .collect();
    assert_eq!(p99.len(), 1, "{:?}", c.regressions);
    assert!(
        p99[0].contains("initialize: 40.00ms → 50.00ms (+25.0%)"),
        "{}",
        p99[0]
    );
    assert!(!c
        .regressions
        .iter()
        .any(|r| r.starts_with("p99(tools/call)")));
    assert_eq!(
        c.regressions
            .iter()
            .filter(|r| r.starts_with("rate <"))
            .count(),
        3
    );
    assert!(c.text.contains("REGRESSIONS"));
    assert!(c.text.contains("+25.0%"), "{}", c.text);
    let same = compare(&base, &base, &rules[..2]);
    assert!(same.regressions.is_empty());
    assert!(same.text.contains("no regression (2 rules)"));
}
