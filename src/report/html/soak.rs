//! The report's soak section: the server's resources (RSS, CPU, descriptors, scraped
//! series) over time beside the latency percentiles, on one time axis; the generator's
//! own load; and the verdicts of `summary.soak` (slopes, drift, outages, storms, the
//! generator-bottleneck notice). Shown only when the run watched the server or lived
//! through an outage or a storm.

use super::{decimate, esc, MAX_POINTS};
use crate::metrics::SeriesUnit;
use crate::report::soak::shape::per_event_text;
use crate::summary::soak::{Soak, Trend};
use crate::summary::Summary;
use serde_json::{json, Value};
use std::fmt::Write;

/// Series drawn in the server memory chart with `server.rss` rather than on their own.
const RSS_SPREAD: [&str; 3] = ["server.rss.max", "server.rss.p50", "server.rss.p99"];
/// Phases whose latency is drawn beside the resources, the first one present.
const LATENCY_PHASES: [&str; 3] = ["tools/call", "session", "initialize"];

fn watched_server(s: &Summary) -> bool {
    s.resources
        .iter()
        .any(|r| r.name.starts_with("server.") || r.name.starts_with("scrape."))
}

/// What a run that watched no server still has to say: the outages and storms it lived
/// through. Slopes of the generator's own series and drift alone do not make a section
/// (every run has them), nor does a run too short for verdicts.
fn has_verdicts(soak: &Soak) -> bool {
    !(soak.outages.is_empty() && soak.storms.is_empty())
}

/// Whether the page has a soak section.
pub(super) fn shown(s: &Summary) -> bool {
    (watched_server(s) && s.soak.too_short.is_none()) || has_verdicts(&s.soak)
}

/// Whether the generator has something to say outside the soak section: it limited the
/// figures, or the machine was busy with other work.
fn generator_notice(s: &Summary) -> bool {
    s.soak.generator.bottleneck || s.soak.generator.machine_busy
}

/// The chart data of the section: every series cut down, and the run's span so every
/// chart of the section shares its time axis.
pub(super) fn data(s: &Summary) -> Value {
    let series: serde_json::Map<String, Value> = s
        .resources
        .iter()
        .map(|r| {
            let pts: Vec<(f64, f64)> = r.points.iter().map(|p| (p[0], p[1])).collect();
            let (t, v) = decimate(&pts, MAX_POINTS);
            (r.name.clone(), json!({ "unit": r.unit, "t": t, "v": v }))
        })
        .collect();
    json!({ "span_s": s.run.duration_s, "series": series })
}

fn figure(out: &mut String, caption: &str, series: &[&str]) {
    let _ = write!(
        out,
        "<figure><figcaption>{}</figcaption><canvas data-chart=resource data-series=\"{}\"></canvas></figure>",
        esc(caption),
        esc(&series.join(","))
    );
}

/// The section's HTML; nothing when [`shown`] is false.
pub(super) fn section(out: &mut String, s: &Summary, latency: &Value) {
    if !shown(s) {
        if generator_notice(s) {
            out.push_str("<section id=generator>");
            generator(out, s, &|_| false);
            out.push_str("</section>\n");
        }
        return;
    }
    let has = |name: &str| s.resources.iter().any(|r| r.name == name);
    out.push_str("<section id=soak><h2>Soak</h2>");
    if watched_server(s) {
        out.push_str("<p class=note>The server's resources over the run, beside the latency, on one time axis.</p><section class=grid>");
        if has("server.rss") {
            let mut rss = vec!["server.rss"];
            rss.extend(RSS_SPREAD.into_iter().filter(|n| has(n)));
            figure(out, "server memory (RSS)", &rss);
        }
        for (name, caption) in [
            ("server.cpu", "server CPU (cores)"),
            ("server.fds", "server file descriptors"),
            ("server.threads", "server threads"),
            ("server.processes", "server processes"),
        ] {
            if has(name) {
                figure(out, caption, &[name]);
            }
        }
        for r in s.resources.iter().filter(|r| r.name.starts_with("scrape.")) {
            figure(out, &r.name, &[r.name.as_str()]);
        }
        if let Some(phase) = LATENCY_PHASES
            .into_iter()
            .find(|p| latency.get(*p).is_some())
        {
            let _ = write!(
                out,
                "<figure><figcaption>{} latency</figcaption><canvas data-chart=soak-latency data-phase=\"{}\"></canvas></figure>",
                esc(phase),
                esc(phase)
            );
        }
        out.push_str("</section>\n");
    }
    generator(out, s, &has);
    verdicts(out, &s.soak);
    out.push_str("</section>\n");
}

/// The generator's own load: was it the bottleneck?
fn generator(out: &mut String, s: &Summary, has: &dyn Fn(&str) -> bool) {
    let g = &s.soak.generator;
    let names = ["generator.cpu_share", "generator.lag", "generator.rss"];
    if !names.iter().any(|n| has(n)) && !generator_notice(s) {
        return;
    }
    out.push_str("<h3>The generator's own load</h3>");
    if g.bottleneck {
        let _ = write!(
            out,
            "<p class=\"notice bad\">The generator was the bottleneck: these figures describe it as much as the server. {}</p>",
            esc(&g.reasons.join("; "))
        );
    }
    if g.machine_busy {
        let _ = write!(
            out,
            "<p class=\"notice warn\">The machine was busy with other work: the timings include that delay, but the generator did not limit the load. {}</p>",
            esc(&g.busy_reasons.join("; "))
        );
    }
    out.push_str("<section class=grid>");
    for (name, caption) in [
        ("generator.cpu_share", "generator CPU share (of its cores)"),
        ("generator.lag", "generator scheduler lag"),
        ("generator.rss", "generator memory (RSS)"),
    ] {
        if has(name) {
            figure(out, caption, &[name]);
        }
    }
    out.push_str("</section>\n");
}

fn unit_per_s(unit: SeriesUnit, per_s: f64) -> String {
    match unit {
        SeriesUnit::Bytes => format!("{:+.2} MiB/h", per_s * 3600.0 / 1_048_576.0),
        SeriesUnit::Count => format!("{:+.2}/min", per_s * 60.0),
        SeriesUnit::Cores => format!("{:+.3} cores/h", per_s * 3600.0),
        SeriesUnit::Seconds => format!("{:+.3} ms/h", per_s * 3_600_000.0),
    }
}

fn pct(change: Option<f64>) -> String {
    change.map_or("–".into(), |c| format!("{:+.1}%", c * 100.0))
}

/// The verdict tables of `summary.soak`.
fn verdicts(out: &mut String, soak: &Soak) {
    if !soak.slopes.is_empty() {
        let steady = if soak.steady_to_s > soak.steady_from_s {
            format!(
                " (steady part {:.0}s–{:.0}s)",
                soak.steady_from_s, soak.steady_to_s
            )
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "<h3>Leak slopes{steady}</h3><table class=soak-slopes><thead><tr><th>series</th><th>trend</th><th class=n>per session</th><th class=n>slope</th><th class=n>95% CI</th><th class=n>R²</th><th class=n>points</th><th>in words</th></tr></thead><tbody>"
        );
        for sl in &soak.slopes {
            let trend = sl.trend.map_or("", |t| t.words());
            let per = sl
                .per
                .iter()
                .find(|p| p.per == "session")
                .map_or("–".into(), |p| {
                    format!(
                        "{} ({} … {})",
                        per_event_text(p.value, sl.unit),
                        per_event_text(p.ci95[0], sl.unit),
                        per_event_text(p.ci95[1], sl.unit)
                    )
                });
            let class = match sl.trend {
                Some(Trend::Leak | Trend::AtLimit) => " class=bad",
                _ => "",
            };
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td{class}>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{} … {}</td><td class=n>{:.2}</td><td class=n>{}</td><td>{}<br><small>{}</small></td></tr>",
                esc(&sl.series),
                esc(trend),
                esc(&per),
                unit_per_s(sl.unit, sl.per_s),
                unit_per_s(sl.unit, sl.ci95_per_s[0]),
                unit_per_s(sl.unit, sl.ci95_per_s[1]),
                sl.r2,
                sl.points,
                esc(&sl.text),
                esc(&sl.decided_by)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if !soak.drift.is_empty() {
        out.push_str("<h3>Drift (first steady window against the last)</h3><table class=soak-drift><thead><tr><th>phase</th><th class=n>p50 first → last</th><th class=n>p50</th><th class=n>p99 first → last</th><th class=n>p99</th><th class=n>error rate</th></tr></thead><tbody>");
        let us =
            |v: Option<u64>| v.map_or("–".into(), |v| crate::report::text::format_us(v as f64));
        for d in &soak.drift {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=n>{} → {}</td><td class=n>{}</td><td class=n>{} → {}</td><td class=n>{}</td><td class=n>{}</td></tr>",
                esc(&d.phase),
                us(d.first.p50_us),
                us(d.last.p50_us),
                pct(d.p50_change),
                us(d.first.p99_us),
                us(d.last.p99_us),
                pct(d.p99_change),
                pct(d.error_rate_change)
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if !soak.outages.is_empty() {
        out.push_str("<h3>Outages</h3><table class=soak-outages><thead><tr><th class=n>from</th><th class=n>to</th><th class=n>downtime</th><th class=n>recovery</th><th class=n>sessions before</th></tr></thead><tbody>");
        for o in &soak.outages {
            let _ = writeln!(
                out,
                "<tr><td class=n>{:.1}s</td><td class=n>{}</td><td class=n>{:.1}s</td><td class=n>{}</td><td class=n>{}</td></tr>",
                o.from_s,
                o.to_s.map_or("still down".into(), |t| format!("{t:.1}s")),
                o.downtime_s,
                o.recovery_s.map_or("never".into(), |r| format!("{r:.1}s")),
                o.sessions_before
            );
        }
        out.push_str("</tbody></table>\n");
    }
    if !soak.storms.is_empty() {
        out.push_str("<h3>Reconnect storms</h3><table class=soak-storms><thead><tr><th class=n>at</th><th>kind</th><th class=n>dropped</th><th class=n>recovered</th><th class=n>recovery</th></tr></thead><tbody>");
        for st in &soak.storms {
            let _ = writeln!(
                out,
                "<tr><td class=n>{:.1}s</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
                st.at_s,
                esc(&st.kind),
                st.dropped,
                st.recovered,
                st.recovery_s.map_or("never".into(), |r| format!("{r:.1}s"))
            );
        }
        out.push_str("</tbody></table>\n");
    }
}
