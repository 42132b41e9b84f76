//! The body of `report.html`: its sections, top to bottom, as HTML (the page around it
//! and the chart data are `super`'s).

use super::esc;
use crate::conformance::Severity;
use crate::metrics::Phase;
use crate::report::summary::{PhaseSummary, Summary};
use crate::report::text::format_us;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The page's body, section by section.
pub(super) fn body(s: &Summary, profile_toml: Option<&str>, charts: &Value) -> String {
    let mut out = String::new();
    headline(&mut out, s);
    thresholds(&mut out, s);
    super::soak::section(&mut out, s, &charts["latency"]);
    chart_places(&mut out, charts);
    phase_tables(&mut out, s);
    failures(&mut out, s);
    findings(&mut out, s);
    parameters(&mut out, s);
    if let Some(p) = profile_toml {
        let _ = writeln!(
            out,
            "<details><summary>profile.toml (effective)</summary><pre>{}</pre></details>",
            esc(p)
        );
    }
    out
}

/// The title with the verdict, and the tiles of headline figures.
fn headline(out: &mut String, s: &Summary) {
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
            .and_then(|p| p.service.as_ref())
            .map_or("–".to_string(), |l| format_us(l.p99_us as f64))
    };
    let tiles = [
        ("sessions", format!("{}", ss.started)),
        ("completed", format!("{}", ss.completed)),
        ("failed", format!("{}", ss.failed)),
        ("unreachable", format!("{}", ss.unreachable)),
        ("sessions/s", format!("{:.1}", ss.rate_per_s)),
        ("errors", format!("{errors}")),
        ("p99 initialize", p99("initialize")),
        ("p99 tools/call", p99("tools/call")),
        ("p99 session", p99("session")),
    ];
    out.push_str("<section class=tiles>");
    for (k, v) in tiles {
        let bad = matches!(k, "failed" | "unreachable" | "errors") && v != "0";
        let _ = write!(
            out,
            "<div class=\"tile{}\"><div class=v>{}</div><div class=k>{}</div></div>",
            if bad { " bad" } else { "" },
            esc(&v),
            esc(k)
        );
    }
    out.push_str("</section>\n");
}

/// Each threshold with what was observed.
fn thresholds(out: &mut String, s: &Summary) {
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
}

/// Where the script draws the charts.
fn chart_places(out: &mut String, charts: &Value) {
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
}

/// The phase table, then the breakdowns by persona, transport, era, version and tool.
fn phase_tables(out: &mut String, s: &Summary) {
    let _ = writeln!(out, "<h2>Phases</h2>{TABLE_HEAD}");
    phase_rows(out, "all", &s.phases, None);
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
    breakdown(out, "persona", &personas);
    breakdown(out, "transport", &s.transports);
    breakdown(out, "era", &s.eras);
    breakdown(out, "protocol version", &s.protocol_versions);
    if !s.tools.is_empty() {
        let _ = writeln!(out, "<h3>tools/call by tool</h3>{TABLE_HEAD}");
        for (name, p) in &s.tools {
            let one: BTreeMap<String, PhaseSummary> = [("tools/call".to_string(), p.clone())]
                .into_iter()
                .collect();
            phase_rows(out, name, &one, None);
        }
        out.push_str("</tbody></table>\n");
    }
}

/// Failures by kind with their first examples.
fn failures(out: &mut String, s: &Summary) {
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
                "<tr><td>malformed messages</td><td class=n>{}</td><td>not JSON-RPC; each fails a request as <code>protocol_violation</code></td></tr>",
                s.malformed_messages
            );
        }
        out.push_str("</tbody></table>\n");
    }
    tool_errors(out, s);
}

/// Tools that answered `isError: true`, with what they said.
fn tool_errors(out: &mut String, s: &Summary) {
    if s.tool_error_examples.is_empty() {
        return;
    }
    out.push_str("<h3>Tool errors (<code>isError: true</code>)</h3>");
    out.push_str("<table><thead><tr><th>tool</th><th class=n>count</th><th>what it said</th></tr></thead><tbody>");
    for (tool, examples) in &s.tool_error_examples {
        let n = s.tools.get(tool).map_or(0, |p| p.tool_errors);
        let ex: String = examples
            .iter()
            .map(|e| format!("<div class=ex>{}</div>", esc(e)))
            .collect();
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=n>{n}</td><td>{ex}</td></tr>",
            esc(tool)
        );
    }
    out.push_str("</tbody></table>\n");
}

/// Conformance findings.
fn findings(out: &mut String, s: &Summary) {
    out.push_str("<h2>Conformance findings</h2>");
    if s.findings.is_empty() {
        out.push_str("<p>None: the server did nothing the fleet can tell is wrong.</p>\n");
    } else {
        out.push_str("<table><thead><tr><th>severity</th><th>code</th><th class=n>count</th><th>what to fix</th><th>spec</th></tr></thead><tbody>");
        for f in &s.findings {
            let severity = match f.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
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
}

/// The run's parameters and what was counted.
fn parameters(out: &mut String, s: &Summary) {
    let r = &s.run;
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
        ("load", l.description.clone()),
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
        let l = p.service.as_ref();
        let q = |f: fn(&super::super::summary::Latency) -> u64| {
            super::super::text::format_opt_us(l.map(|l| f(l) as f64))
        };
        let err_class = if p.errors > 0 { " class=\"bad\"" } else { "" };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=n>{}</td><td class=n{err_class}>{}</td><td class=n>{:.1}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            if first { esc(label) } else { String::new() },
            esc(name),
            p.count,
            p.errors,
            p.rate_per_s,
            q(|l| l.p50_us),
            q(|l| l.p90_us),
            q(|l| l.p99_us),
            q(|l| l.p999_us),
            q(|l| l.max_us),
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
