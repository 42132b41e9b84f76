//! The report's phase tables: every phase's count, errors, rate and service-time
//! percentiles ("–" where no sample succeeded), response time beside service time in
//! the open model, and the breakdowns by persona, transport, era, version and tool.

use super::esc;
use crate::metrics::Phase;
use crate::report::text::format_opt_us;
use crate::summary::{Latency, PhaseSummary, Summary};
use std::collections::BTreeMap;
use std::fmt::Write;

const TABLE_HEAD: &str = "<table class=ph><thead><tr><th></th><th>phase</th><th class=n>count</th><th class=n>errors</th><th class=n>rate/s</th><th class=n>p50</th><th class=n>p90</th><th class=n>p95</th><th class=n>p99</th><th class=n>p99.9</th><th class=n>max</th></tr></thead><tbody>";

/// The phases the breakdowns show (the phase table has them all).
/// `token`, `auth` and `task` only appear for personas that authenticate or call tasks.
const KEY_PHASES: [&str; 10] = [
    "token",
    "auth",
    "probe",
    "discover",
    "initialize",
    "tools/list",
    "tools/call",
    "task",
    "fanout",
    "session",
];

/// The phase table, response beside service time (open model): near the top of the
/// page, as Gatling and k6 put theirs; the breakdowns come after the charts.
pub(super) fn tables(out: &mut String, s: &Summary, ranges: &[Ranges]) {
    let _ = writeln!(out, "<h2 id=phases>Phases</h2>{TABLE_HEAD}");
    phase_rows(out, "all", &s.phases, None);
    // Each request step under its own phase name (the row `request` adds them up).
    phase_rows(out, "request steps", &s.requests, None);
    out.push_str("</tbody></table>\n");
    if s.run.load.is_open() {
        response_table(out, s);
    }
    ranges_table(out, ranges);
}

/// The breakdowns by persona, transport, era, version and tool.
pub(super) fn breakdowns(out: &mut String, s: &Summary) {
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
    super::acceptance::table(out, s);
}

/// Phases in pipeline order.
fn ordered(phases: &BTreeMap<String, PhaseSummary>) -> Vec<(&String, &PhaseSummary)> {
    let mut list: Vec<(&String, &PhaseSummary)> = phases.iter().collect();
    list.sort_by_key(|(k, _)| Phase::from_name(k).map_or(usize::MAX, Phase::index));
    list
}

/// A percentile of an optional latency, "–" without one.
fn q(l: Option<&Latency>, f: fn(&Latency) -> u64) -> String {
    format_opt_us(l.map(|l| f(l) as f64))
}

/// Open model: the time from each sample's intended start (response) beside the time
/// from its actual start (service); the gap is the wait that coordinated omission hides.
fn response_table(out: &mut String, s: &Summary) {
    out.push_str(
        "<h3 id=response>Response time (from the intended start) beside service time</h3>",
    );
    out.push_str("<p class=note>Open model: response time counts from when a session was due to start, so a server that falls behind shows it here even where service time stays low.</p>");
    out.push_str("<table class=ph><thead><tr><th>phase</th><th class=n>count</th><th class=n>service p50</th><th class=n>response p50</th><th class=n>service p95</th><th class=n>response p95</th><th class=n>service p99</th><th class=n>response p99</th><th class=n>response max</th></tr></thead><tbody>");
    for (name, p) in ordered(&s.phases) {
        if name == Phase::Lag.name() {
            continue;
        }
        let (sv, rs) = (p.service.as_ref(), p.response.as_ref());
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            esc(name),
            p.count,
            q(sv, |l| l.p50_us),
            q(rs, |l| l.p50_us),
            q(sv, |l| l.p95_us),
            q(rs, |l| l.p95_us),
            q(sv, |l| l.p99_us),
            q(rs, |l| l.p99_us),
            q(rs, |l| l.max_us),
        );
    }
    out.push_str("</tbody></table>\n");
}

fn phase_rows(
    out: &mut String,
    label: &str,
    phases: &BTreeMap<String, PhaseSummary>,
    only: Option<&[&str]>,
) {
    let mut first = true;
    for (name, p) in ordered(phases) {
        if only.is_some_and(|o| !o.contains(&name.as_str())) {
            continue;
        }
        let l = p.service.as_ref();
        let err_class = if p.errors > 0 { " class=\"bad\"" } else { "" };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=n>{}</td><td class=n{err_class}>{}</td><td class=n>{:.1}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            if first { esc(label) } else { String::new() },
            esc(name),
            p.count,
            p.errors,
            p.rate_per_s,
            q(l, |l| l.p50_us),
            q(l, |l| l.p90_us),
            q(l, |l| l.p95_us),
            q(l, |l| l.p99_us),
            q(l, |l| l.p999_us),
            q(l, |l| l.max_us),
        );
        first = false;
    }
}

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

/// A phase's bound for its response-time ranges when no threshold sets one.
const DEFAULT_BOUND_US: f64 = 500_000.0;

/// One phase's response-time ranges (Gatling's, against the run's own SLO): its
/// successful samples within the bound and past it (service time, from the whole run's
/// histogram), and its failed ones.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranges {
    pub phase: String,
    pub bound_us: f64,
    /// The threshold the bound comes from; `None`: no latency threshold on this phase.
    pub slo: Option<String>,
    pub under: u64,
    pub over: u64,
    pub failed: u64,
}

/// The ranges of every phase with samples: the bound is the tightest latency threshold
/// on the phase (`p99(initialize) < 50ms`, any percentile, the mean or max; not one
/// limited to a persona or a request step), else [`DEFAULT_BOUND_US`].
pub(crate) fn ranges(
    s: &Summary,
    histograms: &BTreeMap<String, hdrhistogram::Histogram<u64>>,
) -> Vec<Ranges> {
    use crate::plan::threshold::{Metric, Op, Subject, Threshold};
    let bound_of = |phase: &str| {
        s.thresholds
            .iter()
            .filter_map(|r| Threshold::parse(&r.expression).ok())
            .filter(|t| {
                matches!(t.metric, Metric::Quantile(_) | Metric::Mean)
                    && matches!(t.op, Op::Lt | Op::Le)
                    && matches!(t.subject, Subject::Phase(p) if p.name() == phase)
                    && t.persona.is_none()
                    && t.request.is_none()
            })
            .min_by(|a, b| a.limit.total_cmp(&b.limit))
    };
    ordered(&s.phases)
        .into_iter()
        .filter(|(name, p)| name.as_str() != Phase::Lag.name() && p.count > 0)
        .map(|(name, p)| {
            let slo = bound_of(name);
            let bound_us = slo.as_ref().map_or(DEFAULT_BOUND_US, |t| t.limit);
            let (under, total) = histograms.get(name).map_or((0, 0), |h| {
                (h.count_between(0, bound_us.max(0.0) as u64), h.len())
            });
            Ranges {
                phase: name.clone(),
                bound_us,
                slo: slo.map(|t| t.text),
                under,
                over: total.saturating_sub(under),
                failed: p.errors,
            }
        })
        .collect()
}

/// The ranges as a table with a bar a row: green within the bound, amber past it, red
/// failed.
pub(super) fn ranges_table(out: &mut String, rows: &[Ranges]) {
    if rows.is_empty() {
        return;
    }
    out.push_str("<h3 id=ranges>Response-time ranges</h3>");
    out.push_str("<p class=note>Each phase's samples within its SLO (the tightest latency threshold on it; without one, 500 ms), past it, and failed. Service time, over the whole run.</p>");
    out.push_str("<table class=ph><thead><tr><th>phase</th><th>bound</th><th class=n>within</th><th class=n>past</th><th class=n>failed</th><th>share</th></tr></thead><tbody>");
    for r in rows {
        let all = (r.under + r.over + r.failed).max(1) as f64;
        let pct = |n: u64| 100.0 * n as f64 / all;
        let bound = match &r.slo {
            Some(t) => format!(
                "{} <span class=note>({})</span>",
                format_opt_us(Some(r.bound_us)),
                esc(t)
            ),
            None => format!(
                "{} <span class=note>(no SLO)</span>",
                format_opt_us(Some(r.bound_us))
            ),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{bound}</td><td class=n>{} ({:.1} %)</td><td class=\"n{}\">{} ({:.1} %)</td><td class=\"n{}\">{} ({:.1} %)</td><td><div class=rng><span class=in style=\"width:{:.2}%\"></span><span class=past style=\"width:{:.2}%\"></span><span class=fail style=\"width:{:.2}%\"></span></div></td></tr>",
            esc(&r.phase),
            r.under,
            pct(r.under),
            if r.over > 0 { " warn" } else { "" },
            r.over,
            pct(r.over),
            if r.failed > 0 { " bad" } else { "" },
            r.failed,
            pct(r.failed),
            pct(r.under),
            pct(r.over),
            pct(r.failed),
        );
    }
    out.push_str("</tbody></table>\n");
}
