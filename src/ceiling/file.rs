//! The search's words for people: the terminal's step table as it climbs and the verdict
//! at the end (also the top of `report.html`). The file they come from, `ceiling.json`,
//! is `summary::ceiling`'s (re-exported here).

use crate::report::text::format_us;
use crate::summary::ceiling::{Answer, StepFigures};
pub use crate::summary::ceiling::{CeilingFile, Settings, FILE_NAME, SCHEMA_VERSION};

/// The step table's header (latencies are of `phase`).
pub fn table_header(phase: &str, clients: bool) -> String {
    format!(
        "{:>4}  {:<6}  {:>9}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}  {:>10}  {:>7}  {:>7}  verdict   (latency: {phase})",
        "step", "stage", if clients { "clients" } else { "offered/s" }, "achieved/s", "p50", "p95", "p99", "errors", "server CPU", "gen CPU", "lag p99"
    )
}

/// One row of the step table.
pub fn table_row(s: &StepFigures, phase: &str) -> String {
    let p = s.phases.get(phase);
    let lat = |v: Option<u64>| v.map_or("–".to_string(), |us| format_us(us as f64));
    let errors = s.failed + s.unreachable;
    let error_pct = if s.started > 0 {
        format!("{:.2}%", errors as f64 / s.started as f64 * 100.0)
    } else {
        "–".into()
    };
    let cpu = s.server.cpu_cores.map_or("–".into(), |c| format!("{c:.2}"));
    let gen = s
        .generator
        .cpu_share_max
        .map_or("–".into(), |c| format!("{:.0}%", c * 100.0));
    let lag = s
        .generator
        .lag_p99_ms
        .map_or("–".into(), |ms| format!("{ms:.1}ms"));
    let mark = if s.interrupted {
        "stopped".to_string()
    } else if s.passed {
        "ok".to_string()
    } else {
        format!("FAIL {}", s.reasons.join("; "))
    };
    format!(
        "{:>4}  {:<6}  {:>9}  {:>10}  {:>10}  {:>10}  {:>10}  {:>6}  {:>10}  {:>7}  {:>7}  {mark}",
        s.index,
        s.stage,
        super::step::rate_name(s.offered_per_s),
        format!("{:.1}", s.achieved_per_s),
        lat(p.and_then(|p| p.p50_us)),
        lat(p.and_then(|p| p.p95_us)),
        lat(p.and_then(|p| p.p99_us)),
        error_pct,
        cpu,
        gen,
        lag,
    )
}

/// The verdict for people, several lines.
pub fn verdict_text(a: &Answer, clients: bool) -> String {
    let mut out = String::new();
    let unit = if clients { "clients" } else { "sessions/s" };
    match (a.ceiling_per_s, a.calls_per_s) {
        (Some(c), Some(calls)) if clients => out.push_str(&format!(
            "ceiling: {}{c} clients ({} sessions/s, {calls} calls/s) met every SLO\n",
            if a.lower_bound { "at least " } else { "" },
            a.sessions_per_s.unwrap_or_default()
        )),
        (Some(c), Some(calls)) => out.push_str(&format!(
            "ceiling: {}{c} sessions/s ({calls} calls/s) met every SLO\n",
            if a.lower_bound { "at least " } else { "" }
        )),
        (Some(c), None) => out.push_str(&format!("ceiling: {c} sessions/s met every SLO\n")),
        (None, _) => out.push_str("ceiling: none — even the lowest step failed its SLOs\n"),
    }
    if let Some(f) = a.first_failing_per_s {
        out.push_str(&format!(
            "first failing: {f} {unit} — {}\n",
            a.failures_past.join("; ")
        ));
    }
    match a.knee_per_s {
        Some(k) => out.push_str(&format!(
            "knee: p99({}) rises steeply past {k} {unit}\n",
            a.knee_phase
        )),
        None => out.push_str(&format!("knee: p99({}) never rose steeply\n", a.knee_phase)),
    }
    out.push_str(&format!("bound: {} — {}\n", a.bound.name(), a.why));
    for n in &a.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}
