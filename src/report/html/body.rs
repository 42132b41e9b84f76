//! The body of `report.html`: its sections, top to bottom, as HTML (the page around it
//! and the chart data are `super`'s).

use super::esc;
use crate::conformance::Severity;
use crate::metrics::Phase;
use crate::report::text::format_opt_us;
use crate::summary::Summary;
use serde_json::Value;
use std::fmt::Write;

/// The page's body, section by section.
pub(super) fn body(
    s: &Summary,
    profile_toml: Option<&str>,
    charts: &Value,
    ranges: &[super::phases::Ranges],
) -> String {
    let mut out = String::new();
    diagnosis(&mut out, s);
    headline(&mut out, s);
    thresholds(&mut out, s);
    super::phases::tables(&mut out, s, ranges);
    checks(&mut out, s);
    super::soak::section(&mut out, s, &charts["latency"]);
    chart_places(&mut out, s, charts);
    super::phases::breakdowns(&mut out, s);
    failures(&mut out, s);
    findings(&mut out, s);
    super::faults::section(&mut out, s);
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

/// When most sessions failed: what was seen and what to do, before anything else.
fn diagnosis(out: &mut String, s: &Summary) {
    let Some(d) = &s.diagnosis else {
        return;
    };
    let lead = if d.cause != crate::report::diagnosis::cause::ARGUMENTS_REJECTED {
        format!("{:.0}% of sessions failed", d.failed_share * 100.0)
    } else if d.failed_share > 0.0 {
        format!(
            "Most tool calls were rejected ({:.0}% of sessions failed)",
            d.failed_share * 100.0
        )
    } else {
        "Most tool calls were rejected".to_string()
    };
    let _ = writeln!(
        out,
        "<section class=\"notice bad diagnosis\" id=diagnosis data-cause=\"{}\"><div>{lead}: {}</div><div class=fix>fix: {}</div></section>",
        esc(&d.cause),
        esc(&d.message),
        esc(&d.fix)
    );
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
        "<header><h1>{} {verdict}</h1><p class=sub>{} · {} · seed {} · {:.1}s · {}</p></header>",
        esc(super::title(s)),
        esc(&r.started_at),
        esc(&crate::report::text::target_line(r)),
        r.seed,
        r.duration_s,
        esc(&crate::report::text::how_it_ended(&r.stopped_by))
    );
    if let Some(label) = r.shard_label() {
        let _ = writeln!(out, "<p class=sub><strong>{}</strong></p>", esc(&label));
    }
    if let Some(why) = &r.stopped_because {
        let _ = writeln!(
            out,
            "<p class=sub><strong>stopped: {}</strong></p>",
            esc(why)
        );
    }
    let ss = &s.sessions;
    let errors: u64 = s.failures.values().sum();
    // A phase that did not run gets no tile; one whose every sample failed shows "–".
    let p99 = |name: &str| {
        s.phases.get(name).map(|p| {
            let v = p.service.as_ref().map(|l| l.p99_us as f64);
            (format!("p99 {name}"), format_opt_us(v))
        })
    };
    let mut tiles = vec![
        ("sessions".to_string(), format!("{}", ss.started)),
        ("completed".into(), format!("{}", ss.completed)),
        ("failed".into(), format!("{}", ss.failed)),
        ("unreachable".into(), format!("{}", ss.unreachable)),
        ("sessions/s".into(), format!("{:.1}", ss.rate_per_s)),
        ("errors".into(), format!("{errors}")),
    ];
    tiles.extend(
        ["initialize", "tools/call", "session"]
            .into_iter()
            .filter_map(p99),
    );
    out.push_str("<section class=tiles>");
    for (k, v) in tiles {
        let bad = matches!(k.as_str(), "failed" | "unreachable" | "errors") && v != "0";
        let _ = write!(
            out,
            "<div class=\"tile{}\"><div class=v>{}</div><div class=k>{}</div></div>",
            if bad { " bad" } else { "" },
            esc(&v),
            esc(&k)
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
                "<tr><td><code>{}</code>{}</td><td class=n>{}</td><td>{}</td></tr>",
                esc(&t.expression),
                if t.decided_by.is_empty() {
                    String::new()
                } else {
                    format!("<br><small>{}</small>", esc(&t.decided_by))
                },
                esc(&t.observed_text),
                match (t.passed, t.inconclusive) {
                    (true, true) => "<span class=\"badge none\">inconclusive</span>",
                    (true, false) => "<span class=\"badge pass\">pass</span>",
                    _ => "<span class=\"badge fail\">FAIL</span>",
                }
            );
        }
        out.push_str("</tbody></table>\n");
    }
}

/// Each step check: passes, fails, the share that held and the first failure.
fn checks(out: &mut String, s: &Summary) {
    if s.checks.is_empty() {
        return;
    }
    out.push_str("<h2 id=checks>Checks</h2><table><thead><tr><th>check</th><th class=n>passes</th><th class=n>fails</th><th class=n>held</th><th>first failure</th></tr></thead><tbody>");
    for (name, c) in &s.checks {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=n>{}</td><td class=n{}>{}</td><td class=n>{:.2}%</td><td>{}</td></tr>",
            esc(name),
            c.passes,
            if c.fails > 0 { " class=\"bad\"" } else { "" },
            c.fails,
            c.pass_share().unwrap_or(0.0) * 100.0,
            esc(c.example.as_deref().unwrap_or("")),
        );
    }
    out.push_str("</tbody></table>\n");
}

/// Where the script draws the charts (each canvas says what it shows; the script fills it
/// from the page's data and sets `data-points` to the points it drew).
fn chart_places(out: &mut String, s: &Summary, charts: &Value) {
    out.push_str("<h2>Latency over time</h2><p class=note>Service time of successful samples per interval (p50, p90, p95, p99, max). Hover or focus a chart for exact values.</p><section class=grid>");
    let lat = charts["latency"].as_object();
    for phase in Phase::ALL {
        // A card only for a phase that ran and has a successful sample to draw.
        if s.phases.contains_key(phase.name()) && lat.is_some_and(|l| l.contains_key(phase.name()))
        {
            let _ = write!(
                out,
                "<figure><figcaption>{}</figcaption><canvas tabindex=0 data-chart=latency data-phase=\"{}\"></canvas></figure>",
                esc(&caption(phase)),
                esc(phase.name())
            );
        }
    }
    let failed_only: Vec<&str> = Phase::ALL
        .iter()
        .map(|p| p.name())
        .filter(|n| s.phases.get(*n).is_some_and(|p| p.service.is_none()))
        .collect();
    out.push_str("</section>\n");
    if !failed_only.is_empty() {
        let _ = writeln!(
            out,
            "<p class=note>No successful sample, so no latency to draw: {}.</p>",
            esc(&failed_only.join(", "))
        );
    }
    let cap = match (s.run.load.max_in_flight, s.run.load.clients) {
        (Some(n), _) => format!(" (cap {n})"),
        (None, Some(n)) => format!(" ({n} clients)"),
        (None, None) => String::new(),
    };
    out.push_str("<h2>Sessions and throughput over time</h2><section class=grid2>");
    out.push_str("<figure><figcaption>sessions per second (ended, failed)</figcaption><canvas tabindex=0 data-chart=sessions></canvas></figure>");
    let _ = write!(
        out,
        "<figure><figcaption>sessions in flight (the most at once per interval){}</figcaption><canvas tabindex=0 data-chart=in-flight></canvas></figure>",
        esc(&cap)
    );
    out.push_str("<figure><figcaption>errors per second (all phases)</figcaption><canvas tabindex=0 data-chart=errors></canvas></figure></section>\n");
    // One small chart per phase rather than a dozen lines in one.
    out.push_str("<h3>Requests per second, by phase</h3><section class=grid>");
    let rates = charts["throughput"].as_object();
    for phase in Phase::ALL {
        if rates.is_some_and(|r| r.contains_key(phase.name())) {
            let _ = write!(
                out,
                "<figure><figcaption>{} per second</figcaption><canvas tabindex=0 data-chart=throughput data-phase=\"{}\"></canvas></figure>",
                esc(phase.name()),
                esc(phase.name())
            );
        }
    }
    out.push_str("</section>\n");
    out.push_str("<p class=note>A last interval shorter than the others is drawn dashed, at its own rate.</p>");
    out.push_str("<h2>Latency distribution</h2><p class=note>The whole run's service time per phase: how many samples took how long (log-spaced buckets), and by percentile, log scales as HdrHistogram plots do.</p>");
    histogram_place(out, charts);
    out.push_str("<figure class=wide><figcaption>by percentile</figcaption><canvas tabindex=0 data-chart=distribution></canvas></figure>\n");
}

/// A latency chart's caption: the phase, and what `lag` is (it is no request).
fn caption(phase: Phase) -> String {
    match phase {
        Phase::Lag => "lag (how late sessions started against their schedule)".into(),
        p => p.name().into(),
    }
}

/// The histogram with a selector of its phase (the first key phase that has samples).
fn histogram_place(out: &mut String, charts: &Value) {
    let Some(hist) = charts["histogram"].as_object().filter(|h| !h.is_empty()) else {
        return;
    };
    let names: Vec<&str> = Phase::ALL
        .iter()
        .map(|p| p.name())
        .filter(|n| hist.contains_key(*n))
        .collect();
    let chosen = ["tools/call", "session", "initialize"]
        .into_iter()
        .find(|n| names.contains(n))
        .or(names.first().copied())
        .unwrap_or_default();
    out.push_str("<figure class=wide><figcaption>samples by service time, phase <select id=histogram-phase aria-label=\"phase of the histogram\">");
    for n in &names {
        let _ = write!(
            out,
            "<option{}>{}</option>",
            if *n == chosen { " selected" } else { "" },
            esc(n)
        );
    }
    let _ = writeln!(
        out,
        "</select></figcaption><canvas tabindex=0 data-chart=histogram data-phase=\"{}\"></canvas></figure>",
        esc(chosen)
    );
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
/// Summaries before schema 9 only: since, the tool calls table shows the error texts.
fn tool_errors(out: &mut String, s: &Summary) {
    if s.tool_error_examples.is_empty() || !s.tool_acceptance.is_empty() {
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
    out.push_str("<h2>Run parameters</h2><table class=\"kv params\"><tbody>");
    let l = &r.load;
    let mut params = vec![
        ("name", r.name.clone()),
        ("target", r.target.clone()),
        ("transport", r.transport.clone()),
        ("seed", r.seed.to_string()),
        ("started", r.started_at.clone()),
        ("finished", r.finished_at.clone()),
        ("duration", format!("{:.3}s", r.duration_s)),
        ("load", l.description.clone()),
    ];
    if let Some(n) = l.sessions {
        params.push(("sessions budget", n.to_string()));
    }
    if let Some(d) = l.duration_s {
        params.push(("duration budget", format!("{d}s")));
    }
    // Think time is a closed-model client's pause; an open model's arrivals have none.
    if !l.is_open() {
        params.push(("think", l.think.clone()));
    }
    let timeout = std::time::Duration::from_secs_f64(l.timeout_ms.max(0.0) / 1000.0);
    params.extend([
        (
            "request timeout",
            humantime::format_duration(timeout).to_string(),
        ),
        ("interval", format!("{}s", r.interval_s)),
        ("mcp-fleet", s.tool.version.clone()),
    ]);
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
