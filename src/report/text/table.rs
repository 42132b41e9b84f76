//! The latency tables of the terminal summary: one row per phase, "–" where no sample
//! succeeded; in an open model a second table of response time (from the intended start),
//! which is where queueing shows.

use super::format_opt_us;
use crate::report::style::Style;
use crate::summary::{Latency, PhaseSummary, Summary};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The latency columns, in order (133 columns in all with the counts: within 150).
const LATENCY_COLUMNS: [&str; 7] = ["mean", "p50", "p90", "p95", "p99", "p99.9", "max"];

fn latency_cells(l: Option<&Latency>) -> String {
    let figures: [Option<f64>; 7] = match l {
        Some(l) => [
            Some(l.mean_us),
            Some(l.p50_us as f64),
            Some(l.p90_us as f64),
            Some(l.p95_us as f64),
            Some(l.p99_us as f64),
            Some(l.p999_us as f64),
            Some(l.max_us as f64),
        ],
        None => [None; 7],
    };
    figures
        .iter()
        .map(|f| format!(" {:>9}", format_opt_us(*f)))
        .collect()
}

fn latency_header() -> String {
    LATENCY_COLUMNS.iter().map(|c| format!(" {c:>9}")).collect()
}

/// One phase's service time with its counts.
pub(super) fn row(out: &mut String, name: &str, p: &PhaseSummary, st: Style) {
    let _ = writeln!(
        out,
        "  {name:<26} {:>8} {} {} {:>9.1}{}{}",
        p.count,
        st.count(&format!("{:>7}", p.errors), p.errors),
        st.count(&format!("{:>7}", p.tool_errors), p.tool_errors),
        p.rate_per_s,
        latency_cells(p.service.as_ref()),
        if p.skipped > 0 {
            st.dim(&format!(
                "  ({} skipped: not declared by the server)",
                p.skipped
            ))
        } else {
            String::new()
        }
    );
}

pub(super) fn header(out: &mut String, first: &str, st: Style) {
    let line = format!(
        "  {first:<26} {:>8} {:>7} {:>7} {:>9}{}",
        "count",
        "errors",
        "isError",
        "rate/s",
        latency_header()
    );
    let _ = writeln!(out, "{}", st.dim(&line));
}

/// Phases in pipeline order (the map is sorted by name).
pub(super) fn ordered(phases: &BTreeMap<String, PhaseSummary>) -> Vec<(&str, &PhaseSummary)> {
    let mut v: Vec<_> = phases.iter().map(|(k, p)| (k.as_str(), p)).collect();
    v.sort_by_key(|(k, _)| {
        crate::metrics::Phase::from_name(k).map_or(usize::MAX, crate::metrics::Phase::index)
    });
    v
}

/// The phase table; in an open model, then the response-time table.
pub(super) fn phases(out: &mut String, s: &Summary, st: Style) {
    let open = s.run.load.is_open();
    if open {
        let _ = writeln!(out, "{}", st.bold("service time (from the actual start)"));
    }
    header(out, "phase", st);
    for (name, p) in ordered(&s.phases) {
        row(out, name, p, st);
        // Each request step under its own phase name, below the row adding them up.
        if name == crate::metrics::Phase::Request.name() {
            for (step, p) in &s.requests {
                row(out, &format!("  {step}"), p, st);
            }
        }
    }
    if open && s.phases.values().any(|p| p.response.is_some()) {
        let _ = writeln!(
            out,
            "\n{}",
            st.bold("response time (from the intended start, includes queueing)")
        );
        let line = format!("  {:<26} {:>8}{}", "phase", "count", latency_header());
        let _ = writeln!(out, "{}", st.dim(&line));
        for (name, p) in ordered(&s.phases) {
            let _ = writeln!(
                out,
                "  {name:<26} {:>8}{}",
                p.count,
                latency_cells(p.response.as_ref())
            );
        }
    }
}

/// Each step check: how often it held (k6's `check()` lines), and the first reason a
/// failing one gave.
pub(super) fn checks(out: &mut String, s: &Summary, st: Style) {
    if s.checks.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", st.bold("checks"));
    for (name, c) in &s.checks {
        let share = c.pass_share().unwrap_or(0.0) * 100.0;
        let n = c.passes + c.fails;
        let _ = writeln!(
            out,
            "  {} {name:<30} {:>8} / {:<8} {share:>6.2}%",
            st.mark(c.fails == 0),
            c.passes,
            n
        );
        if let Some(e) = &c.example {
            let _ = writeln!(out, "      {}", st.dim(&format!("first failure: {e}")));
        }
    }
}
