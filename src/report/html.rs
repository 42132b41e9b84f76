//! `report.html`: one self-contained page (no CDN, no fetched script) a person can open
//! offline. Tables are rendered here; the charts are drawn on canvases by a small script
//! of ours (`report.js`, embedded) from a JSON blob in the page. Timelines are cut down
//! to at most [`MAX_POINTS`] points per series with min/max buckets, so hours of data
//! stay small and fast while peaks stay visible.

use super::summary::{PhaseSummary, Summary};
use super::text::format_us;
use crate::metrics::{IntervalRow, Phase};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

pub const FILE_NAME: &str = "report.html";
const TEMPLATE: &str = include_str!("report.html");
const SCRIPT: &str = include_str!("report.js");

/// Most points one timeline series carries into the page.
pub const MAX_POINTS: usize = 1000;

/// Everything the page shows.
#[derive(Debug)]
pub struct ReportInput<'a> {
    pub summary: &'a Summary,
    /// Every interval row (any order).
    pub timeline: &'a [IntervalRow],
    /// The whole run's service-time histogram per phase, for the percentile plot.
    pub histograms: BTreeMap<String, Histogram<u64>>,
    /// The effective profile, shown with the parameters.
    pub profile_toml: Option<String>,
}

/// Escape text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Percentiles as HdrHistogram plots them: dense towards the tail, x = 1/(1-p).
fn distribution(h: &Histogram<u64>) -> Vec<[f64; 2]> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Eight steps per decade of "nines", up to 99.999%.
    for k in 0..=40 {
        let q = 1.0 - 10f64.powf(-f64::from(k) / 8.0);
        out.push([q * 100.0, h.value_at_quantile(q) as f64]);
    }
    out.push([100.0, h.max() as f64]);
    out
}

/// Min/max decimation of one series of (t, v): keep each bucket's lowest and highest
/// point, in time order, so spikes survive.
fn decimate(points: &[(f64, f64)], max_points: usize) -> (Vec<f64>, Vec<f64>) {
    if points.len() <= max_points || max_points < 4 {
        return points.iter().copied().unzip();
    }
    let buckets = max_points / 2;
    let per = points.len().div_ceil(buckets);
    let (mut t, mut v) = (
        Vec::with_capacity(max_points),
        Vec::with_capacity(max_points),
    );
    for chunk in points.chunks(per) {
        let lo = chunk.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = chunk.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let (a, b) = if lo.0 <= hi.0 { (lo, hi) } else { (hi, lo) };
            t.push(a.0);
            v.push(a.1);
            if a.0 != b.0 {
                t.push(b.0);
                v.push(b.1);
            }
        }
    }
    (t, v)
}

/// Average a per-interval count into a per-second rate over buckets.
fn rate_series(rows: &[(f64, f64, u64)], max_points: usize) -> (Vec<f64>, Vec<f64>) {
    let per = rows.len().div_ceil(max_points.max(1)).max(1);
    rows.chunks(per)
        .map(|c| {
            let len: f64 = c.iter().map(|r| r.1).sum();
            let n: u64 = c.iter().map(|r| r.2).sum();
            let rate = if len > 0.0 { n as f64 / len } else { 0.0 };
            (
                (c[0].0 * 1000.0).round() / 1000.0,
                (rate * 100.0).round() / 100.0,
            )
        })
        .unzip()
}

fn series(t: Vec<f64>, v: Vec<f64>) -> Value {
    json!({ "t": t, "v": v })
}

/// The chart data as JSON.
fn chart_data(input: &ReportInput<'_>) -> Value {
    let mut by_phase: BTreeMap<Phase, Vec<&IntervalRow>> = BTreeMap::new();
    for r in input.timeline {
        by_phase.entry(r.phase).or_default().push(r);
    }
    let mut latency = serde_json::Map::new();
    let mut throughput = serde_json::Map::new();
    let mut errors: BTreeMap<u64, (f64, f64, u64)> = BTreeMap::new();
    for (phase, mut rows) in by_phase {
        rows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        let ok: Vec<&&IntervalRow> = rows.iter().filter(|r| r.count > r.errors).collect();
        let mut lines = serde_json::Map::new();
        for (name, get) in [
            (
                "p50",
                (|r: &IntervalRow| r.p50_us) as fn(&IntervalRow) -> u64,
            ),
            ("p90", |r| r.p90_us),
            ("p99", |r| r.p99_us),
            ("max", |r| r.max_us),
        ] {
            let pts: Vec<(f64, f64)> = ok.iter().map(|r| (r.start_s, get(r) as f64)).collect();
            let (t, v) = decimate(&pts, MAX_POINTS);
            lines.insert(name.into(), series(t, v));
        }
        latency.insert(phase.name().into(), Value::Object(lines));
        let counts: Vec<(f64, f64, u64)> =
            rows.iter().map(|r| (r.start_s, r.len_s, r.count)).collect();
        let (t, v) = rate_series(&counts, MAX_POINTS);
        throughput.insert(phase.name().into(), series(t, v));
        if phase != Phase::Session {
            for r in rows {
                // Rows of one interval share its start; key on milliseconds.
                let e = errors
                    .entry((r.start_s * 1000.0).round() as u64)
                    .or_insert((r.start_s, r.len_s, 0));
                e.2 += r.errors;
            }
        }
    }
    let errs: Vec<(f64, f64, u64)> = errors.into_values().collect();
    let (et, ev) = rate_series(&errs, MAX_POINTS);
    let dist: serde_json::Map<String, Value> = input
        .histograms
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(k, h)| (k.clone(), json!(distribution(h))))
        .collect();
    json!({
        "order": Phase::ALL.iter().map(|p| p.name()).collect::<Vec<_>>(),
        "latency": latency,
        "throughput": throughput,
        "errors": series(et, ev),
        "distribution": dist,
    })
}

fn phase_rows(
    out: &mut String,
    label: &str,
    phases: &BTreeMap<String, PhaseSummary>,
    only: Option<&[&str]>,
) {
    let mut list: Vec<(&String, &PhaseSummary)> = phases.iter().collect();
    list.sort_by_key(|(k, _)| Phase::from_name(k).map_or(usize::MAX, Phase::index));
    let mut first = true;
    for (name, p) in list {
        if only.is_some_and(|o| !o.contains(&name.as_str())) {
            continue;
        }
        let l = &p.service;
        let err_class = if p.errors > 0 { " class=\"bad\"" } else { "" };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=n>{}</td><td class=n{err_class}>{}</td><td class=n>{:.1}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            if first { esc(label) } else { String::new() },
            esc(name),
            p.count,
            p.errors,
            p.rate_per_s,
            format_us(l.p50_us as f64),
            format_us(l.p90_us as f64),
            format_us(l.p99_us as f64),
            format_us(l.p999_us as f64),
            format_us(l.max_us as f64),
        );
        first = false;
    }
}

const TABLE_HEAD: &str = "<table class=ph><thead><tr><th></th><th>phase</th><th class=n>count</th><th class=n>errors</th><th class=n>rate/s</th><th class=n>p50</th><th class=n>p90</th><th class=n>p99</th><th class=n>p99.9</th><th class=n>max</th></tr></thead><tbody>";

/// The phases the breakdowns show (the phase table has them all).
const KEY_PHASES: [&str; 6] = [
    "probe",
    "discover",
    "initialize",
    "tools/list",
    "tools/call",
    "session",
];

fn breakdown(
    out: &mut String,
    title: &str,
    groups: &BTreeMap<String, BTreeMap<String, PhaseSummary>>,
) {
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h3>by {}</h3>{TABLE_HEAD}", esc(title));
    for (name, phases) in groups {
        phase_rows(out, name, phases, Some(&KEY_PHASES));
    }
    out.push_str("</tbody></table>\n");
}

fn body(s: &Summary, profile_toml: Option<&str>, charts: &Value) -> String {
    let mut out = String::new();
    let r = &s.run;
    let verdict = match (s.thresholds.is_empty(), s.passed()) {
        (true, _) => "<span class=\"badge none\">no thresholds</span>".to_string(),
        (false, true) => format!(
            "<span class=\"badge pass\">PASS · {} thresholds</span>",
            s.thresholds.len()
        ),
        (false, false) => format!(
            "<span class=\"badge fail\">FAIL · {} of {} thresholds</span>",
            s.thresholds.iter().filter(|t| !t.passed).count(),
            s.thresholds.len()
        ),
    };
    let _ = writeln!(
        out,
        "<header><h1>{} {verdict}</h1><p class=sub>{} · {} ({}) · seed {} · {:.1}s · stopped by {}</p></header>",
        esc(&r.name),
        esc(&r.started_at),
        esc(&r.target),
        esc(&r.transport),
        r.seed,
        r.duration_s,
        esc(&r.stopped_by)
    );
    let ss = &s.sessions;
    let errors: u64 = s.failures.values().sum();
    let p99 = |name: &str| {
        s.phases
            .get(name)
            .map_or("–".to_string(), |p| format_us(p.service.p99_us as f64))
    };
    let tiles = [
        ("sessions", format!("{}", ss.started)),
        ("completed", format!("{}", ss.completed)),
        ("failed", format!("{}", ss.failed)),
        ("sessions/s", format!("{:.1}", ss.rate_per_s)),
        ("errors", format!("{errors}")),
        ("p99 initialize", p99("initialize")),
        ("p99 tools/call", p99("tools/call")),
        ("p99 session", p99("session")),
    ];
    out.push_str("<section class=tiles>");
    for (k, v) in tiles {
        let bad = (k == "failed" || k == "errors") && v != "0";
        let _ = write!(
            out,
            "<div class=\"tile{}\"><div class=v>{}</div><div class=k>{}</div></div>",
            if bad { " bad" } else { "" },
            esc(&v),
            esc(k)
        );
    }
    out.push_str("</section>\n");

    if !s.thresholds.is_empty() {
        out.push_str("<h2>Thresholds</h2><table><thead><tr><th>expression</th><th class=n>observed</th><th>result</th></tr></thead><tbody>");
        for t in &s.thresholds {
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td class=n>{}</td><td>{}</td></tr>",
                esc(&t.expression),
                esc(&t.observed_text),
                if t.passed {
                    "<span class=\"badge pass\">pass</span>"
                } else {
                    "<span class=\"badge fail\">FAIL</span>"
                }
            );
        }
        out.push_str("</tbody></table>\n");
    }

    out.push_str("<h2>Latency over time</h2><p class=note>Service time of successful samples per interval (p50, p90, p99, max).</p><section class=grid>");
    if let Some(lat) = charts["latency"].as_object() {
        for phase in Phase::ALL {
            if lat.contains_key(phase.name()) {
                let _ = write!(
                    out,
                    "<figure><figcaption>{}</figcaption><canvas data-chart=latency data-phase=\"{}\"></canvas></figure>",
                    esc(phase.name()),
                    esc(phase.name())
                );
            }
        }
    }
    out.push_str("</section>\n<h2>Throughput and errors over time</h2><section class=grid2>");
    out.push_str("<figure><figcaption>samples per second, by phase</figcaption><canvas data-chart=throughput></canvas></figure>");
    out.push_str("<figure><figcaption>errors per second (all phases)</figcaption><canvas data-chart=errors></canvas></figure></section>\n");
    out.push_str("<h2>Latency by percentile</h2><p class=note>The whole run's service time per phase, log scales as HdrHistogram plots do.</p>");
    out.push_str("<figure class=wide><canvas data-chart=distribution></canvas></figure>\n");

    let _ = writeln!(out, "<h2>Phases</h2>{TABLE_HEAD}");
    phase_rows(&mut out, "all", &s.phases, None);
    out.push_str("</tbody></table>\n");

    out.push_str("<h2>Breakdowns</h2>");
    let personas: BTreeMap<String, BTreeMap<String, PhaseSummary>> = s
        .personas
        .iter()
        .map(|(k, p)| {
            (
                format!("{k} ({} sessions, {} failed)", p.sessions, p.failed),
                p.phases.clone(),
            )
        })
        .collect();
    breakdown(&mut out, "persona", &personas);
    breakdown(&mut out, "transport", &s.transports);
    breakdown(&mut out, "era", &s.eras);
    breakdown(&mut out, "protocol version", &s.protocol_versions);
    if !s.tools.is_empty() {
        let _ = writeln!(out, "<h3>tools/call by tool</h3>{TABLE_HEAD}");
        for (name, p) in &s.tools {
            let one: BTreeMap<String, PhaseSummary> = [("tools/call".to_string(), p.clone())]
                .into_iter()
                .collect();
            phase_rows(&mut out, name, &one, None);
        }
        out.push_str("</tbody></table>\n");
    }

    out.push_str("<h2>Failures</h2>");
    if s.failures.is_empty() && s.malformed_messages == 0 {
        out.push_str("<p>No failures.</p>\n");
    } else {
        out.push_str("<table><thead><tr><th>kind</th><th class=n>count</th><th>examples</th></tr></thead><tbody>");
        for (kind, n) in &s.failures {
            let ex: Vec<String> = s
                .failure_examples
                .get(kind)
                .map(|v| {
                    v.iter()
                        .map(|e| format!("<div class=ex>{}</div>", esc(e)))
                        .collect()
                })
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td class=n>{n}</td><td>{}</td></tr>",
                esc(kind),
                ex.join("")
            );
        }
        if s.malformed_messages > 0 {
            let _ = writeln!(
                out,
                "<tr><td>malformed messages</td><td class=n>{}</td><td>not JSON-RPC; skipped</td></tr>",
                s.malformed_messages
            );
        }
        out.push_str("</tbody></table>\n");
    }

    out.push_str("<h2>Conformance findings</h2>");
    if s.findings.is_empty() {
        out.push_str("<p>None: the server did nothing the fleet can tell is wrong.</p>\n");
    } else {
        out.push_str("<table><thead><tr><th>severity</th><th>code</th><th class=n>count</th><th>what to fix</th><th>spec</th></tr></thead><tbody>");
        for f in &s.findings {
            let severity = match f.severity {
                crate::conformance::Severity::Error => "error",
                crate::conformance::Severity::Warning => "warning",
            };
            let _ = writeln!(
                out,
                "<tr><td>{severity}</td><td><code>{}</code></td><td class=n>{}</td><td>{}<div class=ex>{}</div></td><td>{}</td></tr>",
                esc(&f.code),
                f.count,
                esc(&f.message),
                esc(&f.example),
                esc(&f.spec)
            );
        }
        out.push_str("</tbody></table>\n");
    }

    out.push_str("<h2>Run parameters</h2><table class=kv><tbody>");
    let l = &r.load;
    let params = [
        ("name", r.name.clone()),
        ("seed", r.seed.to_string()),
        ("target", r.target.clone()),
        ("transport", r.transport.clone()),
        ("started", r.started_at.clone()),
        ("finished", r.finished_at.clone()),
        ("duration", format!("{:.3}s", r.duration_s)),
        ("load", format!("{}, {} clients", l.model, l.clients)),
        (
            "sessions budget",
            l.sessions.map_or("–".into(), |n| n.to_string()),
        ),
        (
            "duration budget",
            l.duration_s.map_or("–".into(), |d| format!("{d}s")),
        ),
        ("load", l.description.clone()),
        ("think", l.think.clone()),
        ("request timeout", format!("{}ms", l.timeout_ms)),
        ("interval", format!("{}s", r.interval_s)),
        ("mcp-fleet", s.tool.version.clone()),
    ];
    for (k, v) in params {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    out.push_str("</tbody></table>\n");
    if !s.counters.is_empty() || !s.server_messages.is_empty() {
        let list: Vec<String> = s.counters.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let msgs: Vec<String> = s
            .server_messages
            .iter()
            .map(|(k, v)| format!("{k} ×{v}"))
            .collect();
        let _ = writeln!(
            out,
            "<p class=note>counted: {} · from the server: {}</p>",
            esc(&if list.is_empty() {
                "–".into()
            } else {
                list.join(", ")
            }),
            esc(&if msgs.is_empty() {
                "–".into()
            } else {
                msgs.join(", ")
            })
        );
    }
    if let Some(p) = profile_toml {
        let _ = writeln!(
            out,
            "<details><summary>profile.toml (effective)</summary><pre>{}</pre></details>",
            esc(p)
        );
    }
    out
}

/// The page.
pub fn render(input: &ReportInput<'_>) -> String {
    let charts = chart_data(input);
    // `<` is escaped so no string in the data can close the script element.
    let data = charts.to_string().replace('<', "\\u003c");
    let s = input.summary;
    fill(
        TEMPLATE,
        &[
            ("{{TITLE}}", &esc(&format!("mcp-fleet · {}", s.run.name))),
            ("{{BODY}}", &body(s, input.profile_toml.as_deref(), &charts)),
            ("{{SCRIPT}}", SCRIPT),
            ("{{DATA}}", &data),
        ],
    )
}

/// Substitute each placeholder once, in one pass over the template, so text from the
/// run (a profile, an error message) that happens to contain a placeholder stays as is.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        match values.iter().find(|(k, _)| rest[at..].starts_with(k)) {
            Some((k, v)) => {
                out.push_str(v);
                rest = &rest[at + k.len()..];
            }
            None => {
                out.push_str("{{");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_spikes_and_bounds_points() {
        let pts: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (f64::from(i), if i == 54_321 { 9e6 } else { 100.0 }))
            .collect();
        let (t, v) = decimate(&pts, MAX_POINTS);
        assert!(t.len() <= MAX_POINTS, "{}", t.len());
        assert_eq!(t.len(), v.len());
        assert!(v.contains(&9e6), "the spike survives");
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "time order");
        let few = [(0.0, 1.0), (1.0, 2.0)];
        assert_eq!(decimate(&few, MAX_POINTS).1, vec![1.0, 2.0]);
    }

    #[test]
    fn rates_average_counts_over_buckets() {
        let rows: Vec<(f64, f64, u64)> = (0..4000).map(|i| (f64::from(i), 1.0, 10)).collect();
        let (t, v) = rate_series(&rows, MAX_POINTS);
        assert!(t.len() <= MAX_POINTS);
        assert!(v.iter().all(|&r| (r - 10.0).abs() < 1e-9));
    }
}
