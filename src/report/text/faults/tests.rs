//! The client faults section and the personas side by side, from hand-built summaries.

use super::super::tests::{latency, line_of, phase, strip, summary, COMPACT};
use super::super::{render, render_view, View};
use crate::report::style::Style;
use crate::summary::{ClientFaultExample, ClientFaultSummary, Summary};

fn fault(
    persona: &str,
    name: &str,
    verdicts: [u64; 5],
    examples: &[(&str, &str)],
) -> ClientFaultSummary {
    let names = ["handled", "wrong_error", "crashed", "hung", "accepted"];
    ClientFaultSummary {
        persona: persona.into(),
        fault: name.into(),
        description: "what the client did".into(),
        expected: "-32700 Parse error (or HTTP 400)".into(),
        sessions: verdicts.iter().sum(),
        verdicts: names
            .iter()
            .zip(verdicts)
            .map(|(n, c)| (n.to_string(), c))
            .collect(),
        examples: examples
            .iter()
            .map(|(v, t)| ClientFaultExample {
                verdict: v.to_string(),
                text: t.to_string(),
            })
            .collect(),
    }
}

/// `py-sdk-v2` is the buggy persona: it committed `invalid-json` (handled) and, when
/// `mistaken`, `oversized` that the server crashed on or answered wrongly.
fn with_faults(mistaken: bool) -> Summary {
    let mut s = summary("closed");
    s.client_faults.push(fault(
        "py-sdk-v2",
        "invalid-json",
        [20, 0, 0, 0, 0],
        &[("handled", "-32700 Parse error")],
    ));
    let oversized = if mistaken {
        [4, 2, 3, 0, 1]
    } else {
        [10, 0, 0, 0, 0]
    };
    s.client_faults.push(fault(
        "py-sdk-v2",
        "oversized",
        oversized,
        &[
            ("crashed", "connection closed before the answer"),
            ("crashed", "second crash"),
            ("wrong_error", "-32603 Internal error"),
            ("accepted", "a result for a 6 MiB request"),
            ("handled", "HTTP 413"),
        ],
    ));
    for (name, failed, p99) in [("ts-sdk-v1", 0, 1_000), ("py-sdk-v2", 5, 8_000)] {
        let p = s.personas.get_mut(name).expect("persona");
        p.completed = 50 - failed;
        p.failed = failed;
        p.phases.insert(
            "session".into(),
            phase(50, failed, Some(latency(p99)), None),
        );
        p.phases.insert(
            "tools/call".into(),
            phase(200, failed * 2, Some(latency(p99 / 2)), None),
        );
    }
    s
}

#[test]
fn faults_all_handled_fold_into_one_line_and_verbose_shows_each() {
    let s = with_faults(false);
    let compact = render_view(&s, COMPACT);
    assert!(
        compact.contains("\nclient faults: 30 sessions, 2 faults, all handled ✓\n"),
        "{compact}"
    );
    assert!(!compact.contains("wrong_error"), "no table: {compact}");
    assert!(
        line_of(&compact, "not shown:").contains("client faults handled"),
        "{compact}"
    );
    let verbose = render(&s);
    let row = line_of(&verbose, "py-sdk-v2            oversized");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "py-sdk-v2",
            "oversized",
            "10",
            "10",
            "0",
            "0",
            "0",
            "0",
            "✓"
        ],
        "{row}"
    );
    assert!(
        verbose.contains("py-sdk-v2            invalid-json"),
        "{verbose}"
    );
    assert!(
        !verbose.contains("e.g. "),
        "no example of a handled fault: {verbose}"
    );
}

#[test]
fn mistakes_are_marked_with_what_was_expected_and_a_first_example_each() {
    let s = with_faults(true);
    let compact = render_view(&s, COMPACT);
    let title = line_of(&compact, "client faults");
    assert!(
        title.ends_with("30 sessions, 2 faults, 1 mishandled ✗"),
        "{title}"
    );
    let row = line_of(&compact, "py-sdk-v2            oversized");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells,
        ["py-sdk-v2", "oversized", "10", "4", "2", "3", "0", "1", "✗"],
        "{row}"
    );
    let at = compact.find(row).expect("row") + row.len() + 1;
    let under: Vec<&str> = compact[at..].lines().take(4).collect();
    assert_eq!(
        under,
        [
            "      expected: -32700 Parse error (or HTTP 400)",
            "      e.g. wrong_error: -32603 Internal error",
            "      e.g. crashed: connection closed before the answer",
            "      e.g. accepted: a result for a 6 MiB request",
        ],
        "{compact}"
    );
    assert!(
        !compact.contains("second crash"),
        "only the first: {compact}"
    );
    assert!(
        !compact.contains("py-sdk-v2            invalid-json"),
        "{compact}"
    );
    assert!(
        compact.contains("  + 1 more fault, all handled ✓ (20 sessions)\n"),
        "{compact}"
    );
    // After the failures and before the thresholds.
    let (failures, faults, thresholds) = (
        compact.find("\nfailures\n"),
        compact.find("\nclient faults"),
        compact.find("\nthresholds:"),
    );
    assert!(failures < faults && faults < thresholds, "{compact}");
    let verbose = render(&s);
    assert!(
        verbose.contains("py-sdk-v2            invalid-json"),
        "{verbose}"
    );
    assert!(!verbose.contains("more fault"), "{verbose}");
    for l in verbose.lines().chain(compact.lines()) {
        assert!(l.chars().count() <= 150, "{l}");
    }
    let colored = render_view(
        &s,
        View {
            verbose: false,
            style: Style::COLOR,
        },
    );
    assert!(colored.contains(&Style::COLOR.bad("✗")), "{colored:?}");
    assert_eq!(strip(&colored), compact);
}

#[test]
fn the_personas_side_by_side_show_whether_the_good_ones_suffered() {
    let s = with_faults(true);
    let compact = render_view(&s, COMPACT);
    assert!(
        compact.contains("\npersonas side by side (did the buggy clients hurt the others?)\n"),
        "{compact}"
    );
    let table = &compact[compact.find("personas side by side").expect("table")..];
    let head = line_of(table, "persona  ");
    for col in [
        "sessions",
        "faulty",
        "failed",
        "session p50",
        "session p99",
        "tools/call p99",
        "tools/call errors",
    ] {
        assert!(head.contains(col), "{col}: {head}");
    }
    let good: Vec<&str> = line_of(table, "ts-sdk-v1").split_whitespace().collect();
    assert_eq!(
        good,
        [
            "ts-sdk-v1",
            "50",
            "–",
            "0.0%",
            "1.00ms",
            "4.00ms",
            "2.00ms",
            "0.0%"
        ]
    );
    let bad: Vec<&str> = line_of(table, "py-sdk-v2  ").split_whitespace().collect();
    assert_eq!(
        bad,
        [
            "py-sdk-v2",
            "50",
            "30",
            "10.0%",
            "8.00ms",
            "32.00ms",
            "16.00ms",
            "5.0%"
        ]
    );
    let colored = render_view(
        &s,
        View {
            verbose: false,
            style: Style::COLOR,
        },
    );
    assert_eq!(strip(&colored), compact);
}

#[test]
fn without_client_faults_nothing_new_shows_but_verbose_compares_personas() {
    let s = summary("closed");
    let compact = render_view(&s, COMPACT);
    assert!(!compact.contains("client faults"), "{compact}");
    assert!(!compact.contains("side by side"), "{compact}");
    let verbose = render(&s);
    assert!(!verbose.contains("client faults"), "{verbose}");
    assert!(
        verbose.contains("\npersonas side by side\n"),
        "two personas: {verbose}"
    );
    let row: Vec<&str> = line_of(&verbose, "ts-sdk-v1  ")
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        ["ts-sdk-v1", "50", "–", "0.0%", "–", "–", "–", "–"],
        "no session phase, no calls"
    );
    let mut one = summary("closed");
    one.personas.remove("py-sdk-v2");
    assert!(!render(&one).contains("side by side"), "one persona");
}

#[test]
fn auth_and_task_phases_sit_where_they_happen() {
    let mut s = summary("closed");
    for name in [
        "session",
        "tasks/cancel",
        "tasks/result",
        "tasks/get",
        "task",
        "tools/call",
        "auth",
        "token",
        "connect",
    ] {
        s.phases
            .insert(name.into(), phase(10, 0, Some(latency(1_000)), None));
    }
    let text = render_view(&s, COMPACT);
    let order = [
        "connect",
        "token",
        "auth",
        "initialize",
        "tools/list",
        "tools/call",
        "task",
        "tasks/get",
        "tasks/result",
        "tasks/cancel",
        "session",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|p| {
            let row = line_of(&text, &format!("{p} "));
            text.find(row).expect("row")
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{order:?}: {text}");
    // The breakdown by persona shows a persona's token and task phases too, in order.
    if let Some(p) = s.personas.get_mut("py-sdk-v2") {
        for name in ["task", "token", "tools/call"] {
            p.phases
                .insert(name.into(), phase(5, 0, Some(latency(2_000)), None));
        }
    }
    let verbose = render(&s);
    let by = &verbose[verbose.find("\nby persona\n").expect("by persona")..];
    let py = &by[by.find("py-sdk-v2:").expect("persona")..];
    let rows: Vec<&str> = py
        .lines()
        .skip(1)
        .take(4)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(rows, ["token", "initialize", "tools/call", "task"], "{py}");
    let ts = &by[by.find("ts-sdk-v1:").expect("persona")..];
    assert!(
        !ts.lines().nth(1).unwrap_or_default().contains("token"),
        "{ts}"
    );
}
