//! The page's text: title, cards only for phases that ran, "–" without a successful
//! sample, no repeated parameter, p95 and the response table, the diagnosis banner,
//! and chart data the script can draw (sessions, in flight, histogram, partial flags).

use super::*;
use crate::metrics::{Phase, Series, SeriesUnit};
use crate::summary::{Diagnosis, Latency, PhaseSummary};

fn summary() -> Summary {
    crate::report::threshold::tests::summary()
}

fn page(s: &Summary, timeline: &[IntervalRow]) -> String {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
    for v in 1..=1000u64 {
        h.record(v * 50).expect("record");
    }
    render(&ReportInput {
        summary: s,
        timeline,
        histograms: [("initialize".to_string(), h)].into_iter().collect(),
        profile_toml: None,
    })
}

/// The JSON the script reads.
fn data(html: &str) -> serde_json::Value {
    let start = html.find("id=\"chart-data\">").expect("data block") + 16;
    let end = start + html[start..].find("</script>").expect("end of data");
    serde_json::from_str(&html[start..end]).expect("chart data is JSON")
}

fn row(t: f64, len: f64, phase: Phase, count: u64, errors: u64) -> IntervalRow {
    IntervalRow {
        start_s: t,
        len_s: len,
        phase,
        count,
        errors,
        p50_us: 1_000,
        p90_us: 2_000,
        p95_us: 2_500,
        p99_us: 4_000,
        max_us: 9_000,
    }
}

fn failed_phase() -> PhaseSummary {
    let mut p = summary().phases["initialize"].clone();
    p.errors = p.count;
    p.service = None;
    p.response = None;
    p
}

#[test]
fn the_title_is_the_profile_name_or_else_the_target() {
    let mut s = summary();
    s.run.name = "checkout-soak".into();
    let html = page(&s, &[]);
    assert!(html.contains("<title>mcp-fleet · checkout-soak</title>"));
    assert!(html.contains("<h1>checkout-soak "));
    s.run.name = "run".into();
    s.run.target = "http://127.0.0.1:9/mcp?token=REDACTED".into();
    let html = page(&s, &[]);
    assert!(
        html.contains("<title>mcp-fleet · http://127.0.0.1:9/mcp?token=REDACTED</title>"),
        "{html:.400}"
    );
    assert!(!html.contains("<title>mcp-fleet · run</title>"));
}

#[test]
fn phases_that_did_not_run_get_no_card_and_failed_ones_show_a_dash() {
    let mut s = summary();
    s.phases.remove("tools/call");
    s.phases.insert("discover".into(), failed_phase());
    let timeline = [
        row(0.0, 1.0, Phase::Initialize, 10, 0),
        row(0.0, 1.0, Phase::Discover, 5, 5),
        row(0.0, 1.0, Phase::Session, 10, 0),
    ];
    let html = page(&s, &timeline);
    assert!(
        !html.contains("p99 tools/call"),
        "no tile for a phase that did not run"
    );
    assert!(!html.contains("data-phase=\"tools/call\""));
    assert!(
        !html.contains("data-chart=latency data-phase=\"discover\""),
        "no latency to draw"
    );
    // Its requests per second are drawn: every sample failed, but they were sent.
    assert!(html.contains("data-chart=throughput data-phase=\"discover\""));
    // The phase table first (as Gatling and k6 put it), the breakdowns after the charts.
    let at = |text: &str| html.find(text).unwrap_or_else(|| panic!("{text}"));
    assert!(at("<h2 id=phases>") < at("<h2>Latency over time"));
    assert!(at("<h2>Latency over time") < at("<h2>Breakdowns"));
    assert!(html.contains("data-chart=latency data-phase=\"initialize\""));
    assert!(html.contains("No successful sample, so no latency to draw: discover."));
    let discover = html
        .lines()
        .find(|l| l.contains("<td>discover</td>"))
        .expect("a discover row");
    assert_eq!(
        discover.matches("<td class=n>–</td>").count(),
        6,
        "{discover}"
    );
}

#[test]
fn no_parameter_is_shown_twice_and_the_load_is_in_words() {
    let mut s = summary();
    s.run.load.model = "open".into();
    s.run.load.clients = None;
    s.run.load.max_in_flight = Some(10_000);
    s.run.load.description = "open, 500/s, at most 10000 in flight".into();
    let html = page(&s, &[]);
    let at = html
        .find("<table class=\"kv params\">")
        .expect("parameters");
    let table = &html[at..at + html[at..].find("</table>").expect("end")];
    let keys: Vec<&str> = table
        .split("<tr><th>")
        .skip(1)
        .filter_map(|r| r.split("</th>").next())
        .collect();
    let mut unique = keys.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(keys.len(), unique.len(), "a repeated parameter: {keys:?}");
    assert!(table.contains("<td>open, 500/s, at most 10000 in flight</td>"));
    assert!(!table.contains("10000 clients"));
}

#[test]
fn p95_is_in_the_tables_and_the_latency_lines() {
    let mut s = summary();
    if let Some(l) = s
        .phases
        .get_mut("initialize")
        .and_then(|p| p.service.as_mut())
    {
        l.p95_us = 31_400;
    }
    let html = page(&s, &[row(0.0, 1.0, Phase::Initialize, 10, 0)]);
    assert!(html.contains("<th class=n>p95</th>"));
    assert!(html.contains("<td class=n>31.40ms</td>"));
    assert_eq!(data(&html)["latency"]["initialize"]["p95"]["v"][0], 2500.0);
}

#[test]
fn the_open_model_shows_response_beside_service_time() {
    let mut s = summary();
    let html = page(&s, &[]);
    assert!(
        !html.contains("id=response"),
        "closed model: they are equal"
    );
    s.run.load.model = "open".into();
    if let Some(p) = s.phases.get_mut("initialize") {
        p.response = Some(Latency {
            p50_us: 777_000,
            ..Latency::default()
        });
    }
    s.phases.insert("discover".into(), failed_phase());
    let html = page(&s, &[]);
    assert!(html.contains("id=response"));
    let init = html
        .lines()
        .find(|l| l.contains("<tr><td>initialize</td>"))
        .expect("initialize in the response table");
    assert!(
        init.contains("<td class=n>2.00ms</td><td class=n>777.00ms</td>"),
        "{init}"
    );
    let discover = html
        .lines()
        .find(|l| l.contains("<tr><td>discover</td>"))
        .expect("discover in the response table");
    assert_eq!(discover.matches("–").count(), 7, "{discover}");
}

#[test]
fn a_diagnosis_leads_the_page() {
    let mut s = summary();
    assert!(!page(&s, &[]).contains("id=diagnosis"));
    s.diagnosis = Some(Diagnosis {
        cause: "wrong_path".into(),
        failed_share: 1.0,
        message: "every session got HTTP 404 <Not Found>".into(),
        fix: "give the server's MCP endpoint, e.g. http://host:port/mcp".into(),
    });
    let html = page(&s, &[]);
    let banner = html.find("id=diagnosis").expect("a banner");
    assert!(
        banner < html.find("<header>").expect("the heading"),
        "first"
    );
    assert!(html.contains("100% of sessions failed: every session got HTTP 404 &lt;Not Found&gt;"));
    assert!(
        html.contains("fix: give the server&#39;s MCP endpoint")
            || html.contains("fix: give the server's MCP endpoint")
    );
}

#[test]
fn the_chart_data_has_sessions_in_flight_a_histogram_and_partial_intervals() {
    let mut s = summary();
    let mut f = Series::new(IN_FLIGHT, SeriesUnit::Count);
    f.push(1.0, 8.0);
    f.push(2.0, 7.0);
    s.resources.push(f);
    let timeline = [
        row(0.0, 1.0, Phase::Session, 100, 2),
        row(1.0, 0.5, Phase::Session, 50, 0),
        row(0.0, 1.0, Phase::ToolsCall, 300, 0),
        row(1.0, 0.5, Phase::ToolsCall, 150, 0),
        row(0.0, 1.0, Phase::Lag, 100, 0),
    ];
    let d = data(&page(&s, &timeline));
    assert_eq!(
        d["sessions"]["ended"]["v"],
        serde_json::json!([100.0, 100.0])
    );
    assert_eq!(d["sessions"]["ended"]["partial"], true);
    assert_eq!(d["sessions"]["failed"]["v"][0], 2.0);
    let rates = d["throughput"].as_object().expect("rates");
    assert!(rates.contains_key("tools/call"));
    assert!(
        !rates.contains_key("session") && !rates.contains_key("lag"),
        "own charts"
    );
    assert_eq!(d["throughput"]["tools/call"]["v"][1], 300.0, "no false dip");
    assert_eq!(d["in_flight"]["v"], serde_json::json!([8.0, 7.0]));
    assert_eq!(d["cap"], 8, "the clients of the closed model");
    let n: u64 = serde_json::from_value::<Vec<u64>>(d["histogram"]["initialize"]["n"].clone())
        .expect("counts")
        .iter()
        .sum();
    assert_eq!(n, 1000);
}

#[test]
fn the_tool_calls_table_follows_the_per_tool_latencies() {
    use crate::summary::ToolAcceptance;
    let mut s = summary();
    assert!(
        !page(&s, &[]).contains("id=tool-acceptance"),
        "no tools, no table"
    );
    s.tools
        .insert("get_time".into(), s.phases["initialize"].clone());
    s.tool_acceptance.insert(
        "get_time".into(),
        ToolAcceptance {
            calls: 200,
            accepted: 12,
            tool_errors: 8,
            invalid_params: 178,
            other_errors: 2,
            generated: 200,
            generated_accepted: 12,
            ..ToolAcceptance::default()
        },
    );
    s.tool_acceptance.insert(
        "delete".into(),
        ToolAcceptance {
            left_out: [("destructive".to_string(), 3)].into(),
            ..ToolAcceptance::default()
        },
    );
    s.tool_error_examples.insert(
        "get_time".into(),
        vec!["-32602 Invalid params: <tz>".into()],
    );
    let html = page(&s, &[]);
    let by_tool = html
        .find("<h3>tools/call by tool</h3>")
        .expect("latency by tool");
    let table = html
        .find("id=tool-acceptance")
        .expect("the acceptance table");
    assert!(by_tool < table, "beside the latencies, after them");
    let row = html[table..]
        .lines()
        .find(|l| l.contains("<code>get_time</code>"))
        .expect("a row");
    for cell in [
        ">200<",
        "<td class=\"n bad\">6.0%</td>",
        ">178<",
        ">12/200<",
        "<div class=ex>-32602 Invalid params: &lt;tz&gt;</div>",
    ] {
        assert!(row.contains(cell), "{cell}: {row}");
    }
    let left = html[table..]
        .lines()
        .find(|l| l.contains("<code>delete</code>"))
        .expect("a left-out row");
    assert!(left.contains("<td>destructive ×3</td>"), "{left}");
    assert!(
        !html.contains("Tool errors (<code>isError: true</code>)"),
        "the texts are not repeated"
    );
    s.diagnosis = Some(Diagnosis {
        cause: "arguments_rejected".into(),
        failed_share: 0.0,
        message: "generated arguments were rejected in 188 of 200 calls: get_time 6 %".into(),
        fix: "pin real values".into(),
    });
    let html = page(&s, &[]);
    assert!(
        html.contains("<div>Most tool calls were rejected: generated arguments were rejected in 188 of 200 calls"),
        "{html}"
    );
}

#[test]
fn the_parameters_say_the_timeout_in_seconds_and_no_think_time_for_an_open_model() {
    let mut s = summary();
    s.run.load.timeout_ms = 10_000.0;
    let closed = page(&s, &[]);
    assert!(
        closed.contains("<th>request timeout</th><td>10s</td>"),
        "timeout"
    );
    assert!(
        closed.contains("<th>think</th>"),
        "a closed model's think time"
    );
    s.run.load.model = "open".into();
    let open = page(&s, &[]);
    assert!(!open.contains("<th>think</th>"), "an open model has none");
    s.run.stopped_by = "interrupted".into();
    let interrupted = page(&s, &[]);
    assert!(interrupted.contains("interrupted (Ctrl-C)"));
    assert!(!interrupted.contains("stopped by interrupted"));
}

/// Response-time ranges: the bound is the tightest latency threshold on the phase (not
/// one of a persona, not a `>` or an error rate), else 500 ms; the counts are the
/// histogram's within and past it, and the phase's errors.
#[test]
fn response_time_ranges_count_within_and_past_the_phases_slo_and_failed() {
    use crate::plan::threshold::Threshold;
    let mut s = summary();
    let rules: Vec<Threshold> = [
        "p99(initialize) < 20ms",
        "p95(initialize) < 10ms",
        "p99(initialize, persona=x) < 1ms",
        "p50(initialize) > 1ms",
        "error_rate(initialize) < 1%",
    ]
    .iter()
    .map(|t| Threshold::parse(t).expect("threshold"))
    .collect();
    s.thresholds = crate::report::threshold::evaluate_all(&rules, &s);
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
    for v in 1..=1000u64 {
        h.record(v * 50).expect("record");
    }
    let histograms: BTreeMap<String, Histogram<u64>> =
        [("initialize".to_string(), h)].into_iter().collect();
    let rows = phases::ranges(&s, &histograms);
    let init = rows
        .iter()
        .find(|r| r.phase == "initialize")
        .expect("initialize");
    assert_eq!(
        (
            init.bound_us,
            init.slo.as_deref(),
            init.under,
            init.over,
            init.failed
        ),
        (10_000.0, Some("p95(initialize) < 10ms"), 200, 800, 2)
    );
    // No latency threshold on tools/call: 500 ms, said so; its errors still count.
    let call = rows
        .iter()
        .find(|r| r.phase == "tools/call")
        .expect("tools/call");
    assert_eq!(
        (call.bound_us, call.slo.as_deref(), call.failed),
        (500_000.0, None, 1)
    );
    let html = render(&ReportInput {
        summary: &s,
        timeline: &[],
        histograms,
        profile_toml: None,
    });
    assert!(
        html.contains("Response-time ranges"),
        "the section is there"
    );
    assert!(
        html.contains("(p95(initialize) &lt; 10ms)"),
        "the bound names its SLO"
    );
    assert!(html.contains("200 (20.0 %)") && html.contains("800 (79.8 %)"));
    assert!(html.contains("(no SLO)"));
}
