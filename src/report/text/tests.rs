//! The terminal summary rendered from hand-built summaries, plain and in colour.

use super::*;
use crate::plan::threshold::Unit;
use crate::summary::ThresholdResult;
use crate::summary::{
    Diagnosis, Latency, LoadInfo, PersonaSummary, PhaseSummary, RunInfo, Sessions, ToolAcceptance,
    ToolInfo,
};
use std::collections::BTreeMap;

pub(super) fn latency(base: u64) -> Latency {
    Latency {
        mean_us: base as f64 * 1.1,
        min_us: base / 2,
        p50_us: base,
        p90_us: base * 2,
        p95_us: base * 3,
        p99_us: base * 4,
        p999_us: base * 5,
        max_us: base * 6,
        ci95: None,
    }
}

pub(super) fn phase(
    count: u64,
    errors: u64,
    service: Option<Latency>,
    response: Option<Latency>,
) -> PhaseSummary {
    PhaseSummary {
        count,
        errors,
        tool_errors: 0,
        skipped: 0,
        rate_per_s: count as f64 / 10.0,
        service,
        response,
        clamped: 0,
        failures: BTreeMap::new(),
    }
}

/// A closed run: `initialize` worked, `tools/list` failed every time.
pub(super) fn summary(model: &str) -> Summary {
    let open = model == "open";
    let mut phases = BTreeMap::new();
    let response = open.then(|| latency(9_000));
    phases.insert(
        "initialize".to_string(),
        phase(100, 0, Some(latency(1_000)), response),
    );
    phases.insert("tools/list".to_string(), phase(40, 40, None, None));
    let mut personas = BTreeMap::new();
    for name in ["ts-sdk-v1", "py-sdk-v2"] {
        personas.insert(
            name.to_string(),
            PersonaSummary {
                sessions: 50,
                completed: 50,
                failed: 0,
                interrupted: 0,
                unreachable: 0,
                phases: phases.clone(),
            },
        );
    }
    let mut failures = BTreeMap::new();
    failures.insert("http_404".to_string(), 40);
    Summary {
        schema_version: crate::summary::SCHEMA_VERSION,
        tool: ToolInfo {
            name: "mcp-fleet".into(),
            version: "0.1.0".into(),
        },
        run: RunInfo {
            name: "hand".into(),
            seed: 7,
            started_at: String::new(),
            finished_at: String::new(),
            duration_s: 10.0,
            target: "http://127.0.0.1:1/mcp".into(),
            transport: "http".into(),
            load: LoadInfo {
                model: model.into(),
                clients: (!open).then_some(8),
                max_in_flight: open.then_some(10_000),
                rate_per_s: open.then_some(500.0),
                iteration_rate_per_s: None,
                sessions: None,
                duration_s: Some(10.0),
                think: "none".into(),
                description: if open {
                    "open, 500/s, at most 10000 in flight".into()
                } else {
                    "closed, 8 clients".into()
                },
                timeout_ms: 5000.0,
            },
            stopped_by: "duration".into(),
            stopped_because: None,
            interval_s: 1.0,
            complete: true,
            checkpoint_at: None,
            shard: None,
            shards: None,
        },
        sessions: Sessions {
            started: 100,
            completed: 60,
            failed: 40,
            interrupted: 0,
            unreachable: 0,
            rate_per_s: 10.0,
        },
        phases,
        failures,
        failure_examples: BTreeMap::new(),
        personas,
        tools: BTreeMap::new(),
        requests: BTreeMap::new(),
        checks: BTreeMap::new(),
        tool_error_examples: BTreeMap::new(),
        tool_acceptance: BTreeMap::new(),
        server_messages: BTreeMap::new(),
        malformed_messages: 0,
        transports: BTreeMap::new(),
        eras: BTreeMap::new(),
        protocol_versions: BTreeMap::new(),
        thresholds: vec![
            ThresholdResult {
                expression: "p99(initialize) < 500ms".into(),
                observed: Some(4_000.0),
                limit: 500_000.0,
                unit: Unit::Us,
                passed: true,
                observed_text: "4.00ms".into(),
                inconclusive: false,
                decided_by: String::new(),
            },
            ThresholdResult {
                expression: "error_rate < 1%".into(),
                observed: Some(0.4),
                limit: 0.01,
                unit: Unit::Ratio,
                passed: false,
                observed_text: "40.00%".into(),
                inconclusive: false,
                decided_by: String::new(),
            },
        ],
        counters: BTreeMap::new(),
        findings: Vec::new(),
        client_faults: Vec::new(),
        resources: Vec::new(),
        soak: Default::default(),
        diagnosis: None,
        slowest_traces: BTreeMap::new(),
        extensions: BTreeMap::new(),
        outputs: Vec::new(),
    }
}

pub(super) const COMPACT: View = View {
    verbose: false,
    style: Style::PLAIN,
};

pub(super) fn line_of<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start:?} in\n{text}"))
}

#[test]
fn units_switch_at_thousands() {
    assert_eq!(format_us(12.0), "12µs");
    assert_eq!(format_us(1_500.0), "1.50ms");
    assert_eq!(format_us(2_500_000.0), "2.50s");
}

#[test]
fn a_phase_without_a_successful_sample_shows_dashes_not_zeros() {
    let text = render_view(&summary("closed"), COMPACT);
    let row = line_of(&text, "tools/list");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &cells[..5],
        &["tools/list", "40", "40", "0", "4.0"],
        "{row}"
    );
    assert_eq!(&cells[5..], &["–"; 7], "every latency column: {row}");
    assert!(!row.contains("0µs"), "{row}");
    let ok = line_of(&text, "initialize");
    assert!(ok.contains("1.00ms") && ok.contains("3.00ms"), "{ok}");
}

#[test]
fn the_table_has_p95_between_p90_and_p99_within_150_columns() {
    let text = render(&summary("closed"));
    let head = line_of(&text, "phase");
    let words: Vec<&str> = head.split_whitespace().collect();
    let at = |w: &str| words.iter().position(|x| *x == w).unwrap_or(usize::MAX);
    assert!(at("p90") < at("p95") && at("p95") < at("p99"), "{head}");
    for l in text.lines() {
        assert!(
            l.chars().count() <= 150,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    // p95 of initialize is 3 ms: the fifth latency column.
    let row = line_of(&text, "initialize");
    assert_eq!(row.split_whitespace().nth(8), Some("3.00ms"), "{row}");
}

#[test]
fn an_open_model_names_no_clients_and_shows_response_time() {
    let open = render_view(&summary("open"), COMPACT);
    assert!(!open.contains("clients"), "{open}");
    assert!(
        open.contains("open, 500/s, at most 10000 in flight"),
        "{open}"
    );
    let at = open
        .find("response time (from the intended start")
        .unwrap_or_else(|| panic!("no response table: {open}"));
    let response_rows = &open[at..];
    let row = line_of(response_rows, "initialize");
    assert!(row.contains("9.00ms") && row.contains("27.00ms"), "{row}");
    let row = line_of(response_rows, "tools/list");
    assert!(row.contains('–') && !row.contains("µs"), "{row}");
    let closed = render_view(&summary("closed"), COMPACT);
    assert!(!closed.contains("response time"), "{closed}");
}

#[test]
fn compact_hides_the_breakdowns_and_says_where_they_are() {
    let s = summary("closed");
    let compact = render_view(&s, COMPACT);
    assert!(!compact.contains("\nby persona\n"), "{compact}");
    let hint = line_of(&compact, "not shown:");
    assert!(
        hint.contains("by persona") && hint.contains("--verbose"),
        "{hint}"
    );
    assert!(
        hint.contains("report.html") && hint.contains("summary.json"),
        "{hint}"
    );
    let verbose = render(&s);
    assert!(verbose.contains("\nby persona\n"), "{verbose}");
    assert!(!verbose.contains("not shown:"), "{verbose}");
    assert!(verbose.contains("ts-sdk-v1: 50 sessions"), "{verbose}");
}

#[test]
fn thresholds_are_marked_in_order_with_what_was_observed() {
    let text = render_view(&summary("closed"), COMPACT);
    assert!(text.contains("thresholds: 1 of 2 FAILED"), "{text}");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  ✓") || l.starts_with("  ✗"))
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("  ✓ p99(initialize) < 500ms"),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with("observed 4.00ms"), "{}", lines[0]);
    assert!(lines[1].starts_with("  ✗ error_rate < 1%"), "{}", lines[1]);
}

#[test]
fn the_diagnosis_comes_before_the_phase_table() {
    let mut s = summary("closed");
    s.diagnosis = Some(Diagnosis {
        cause: "wrong_path".into(),
        failed_share: 0.98,
        message: "every request got HTTP 404".into(),
        fix: "the MCP endpoint is usually /mcp: check the path of --target".into(),
    });
    let text = render_view(&s, COMPACT);
    let diag = text.find("most sessions failed: every request got HTTP 404 (98% of sessions)");
    let cause = text.find("likely cause: wrong path — the MCP endpoint is usually /mcp");
    let table = text.find("  phase ");
    assert!(
        diag.is_some() && cause.is_some() && table.is_some(),
        "{text}"
    );
    assert!(diag < cause && cause < table, "{text}");
    assert!(
        text.find("sessions: ") < diag,
        "after the sessions line: {text}"
    );
    assert!(!render_view(&summary("closed"), COMPACT).contains("most sessions failed"));
}

#[test]
fn colour_only_when_asked() {
    let s = summary("closed");
    let plain = render_view(&s, COMPACT);
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(!render(&s).contains('\x1b'), "summary.txt is plain");
    let colored = render_view(
        &s,
        View {
            verbose: false,
            style: Style::COLOR,
        },
    );
    assert!(colored.contains('\x1b'), "{colored}");
    let red_x = Style::COLOR.bad("✗");
    assert!(colored.contains(&red_x), "a red ✗: {colored:?}");
    assert!(colored.contains(&Style::COLOR.good("✓")), "a green ✓");
    // Errors in red, the padding kept: stripped of its codes the colour table is the plain one.
    let stripped = strip(&colored);
    assert_eq!(stripped, plain);
}

/// The text without its escape sequences (`ESC [ … letter`).
pub(super) fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A run with two tools: `echo` accepted every call, `get_time` rejected most of its
/// generated ones; `delete` was left out.
fn with_tools(rejecting: bool) -> Summary {
    let mut s = summary("closed");
    let echo = ToolAcceptance {
        calls: 50,
        accepted: 50,
        ..ToolAcceptance::default()
    };
    s.tool_acceptance.insert("echo".into(), echo);
    if rejecting {
        let time = ToolAcceptance {
            calls: 200,
            accepted: 12,
            tool_errors: 8,
            invalid_params: 178,
            other_errors: 2,
            generated: 200,
            generated_accepted: 12,
            ..ToolAcceptance::default()
        };
        s.tool_acceptance.insert("get_time".into(), time);
        let delete = ToolAcceptance {
            left_out: [("destructive".to_string(), 3)].into(),
            ..ToolAcceptance::default()
        };
        s.tool_acceptance.insert("delete".into(), delete);
        s.tool_error_examples.insert(
            "get_time".into(),
            vec![
                "-32602 Invalid params: timezone: not a time zone".into(),
                "second".into(),
            ],
        );
    }
    s
}

#[test]
fn compact_says_in_a_line_when_every_tool_call_was_accepted() {
    let s = with_tools(false);
    let compact = render_view(&s, COMPACT);
    assert!(
        compact.contains("tool calls: the server accepted all 50 calls of 1 tool\n"),
        "{compact}"
    );
    assert!(!compact.contains("did the server accept them"), "{compact}");
    let verbose = render(&s);
    let row = line_of(&verbose, "echo ");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells, ["echo", "50", "100.0%", "0", "0", "0", "–"], "{row}");
    // Without tool calls, neither.
    let none = render(&summary("closed"));
    assert!(!none.contains("tool calls"), "{none}");
}

#[test]
fn the_tool_calls_table_shows_rejections_left_outs_and_the_first_error() {
    let s = with_tools(true);
    for text in [render_view(&s, COMPACT), render(&s)] {
        let head = line_of(&text, "tool  ");
        for col in [
            "calls",
            "accepted",
            "isError",
            "-32602",
            "other",
            "generated",
            "left out",
        ] {
            assert!(head.contains(col), "{col}: {head}");
        }
        let row = line_of(&text, "get_time");
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            ["get_time", "200", "6.0%", "8", "178", "2", "12/200"],
            "{row}"
        );
        let at = text.find(row).unwrap_or(0) + row.len();
        let next = text[at..].lines().nth(1).unwrap_or_default();
        assert_eq!(
            next, "    e.g. -32602 Invalid params: timezone: not a time zone",
            "the first error text under the row: {text}"
        );
        assert!(!text.contains("e.g. second"), "only the first: {text}");
        let row = line_of(&text, "delete");
        assert!(row.ends_with("  destructive ×3"), "{row}");
        assert!(row.contains(" – "), "no calls, no share: {row}");
        // The old isError section is not repeated beside the table.
        assert!(!text.contains("tool errors (isError: true)"), "{text}");
        for l in text.lines() {
            assert!(l.chars().count() <= 150, "{l}");
        }
    }
    let colored = render_view(
        &s,
        View {
            verbose: false,
            style: Style::COLOR,
        },
    );
    assert_eq!(strip(&colored), render_view(&s, COMPACT));
}

#[test]
fn rejected_arguments_lead_with_what_was_rejected() {
    let mut s = with_tools(true);
    s.diagnosis = Some(Diagnosis {
        cause: "arguments_rejected".into(),
        failed_share: 0.0,
        message: "generated arguments were rejected in 188 of 200 calls: get_time 6 %".into(),
        fix: "pin real values".into(),
    });
    let text = render_view(&s, COMPACT);
    let lead = line_of(&text, "✗");
    assert_eq!(
        lead,
        "✗ most tool calls were rejected: generated arguments were rejected in 188 of 200 calls: get_time 6 %"
    );
    assert!(text.contains("likely cause: arguments rejected — pin real values"));
    if let Some(d) = s.diagnosis.as_mut() {
        d.failed_share = 0.5;
    }
    let text = render_view(&s, COMPACT);
    assert!(
        line_of(&text, "✗").ends_with("(50% of sessions failed)"),
        "{text}"
    );
}

#[test]
fn the_header_and_the_end_of_the_run_read_as_words() {
    let mut s = summary("closed");
    let text = render_view(&s, COMPACT);
    assert!(text.contains("· http://127.0.0.1:1/mcp (http)\n"), "{text}");
    assert!(text.contains("· stopped by duration\n"), "{text}");
    s.run.target = "http://127.0.0.1:39529/mcp (built-in)".into();
    s.run.stopped_by = "interrupted".into();
    let text = render_view(&s, COMPACT);
    assert!(
        text.contains("http://127.0.0.1:39529/mcp (built-in, http)"),
        "{text}"
    );
    assert!(!text.contains(") ("), "{text}");
    assert!(text.contains("· interrupted (Ctrl-C)\n"), "{text}");
    assert!(!text.contains("stopped by interrupted"), "{text}");
    assert_eq!(how_it_ended("sessions"), "stopped by the session budget");
    assert_eq!(how_it_ended("terminated"), "terminated (SIGTERM)");
}
