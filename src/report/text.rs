//! The terminal summary: a header with the run's facts, one table row per phase, then
//! personas, tools and failures — the same figures as `summary.json`.

use super::summary::{Latency, PhaseSummary, Summary};
use std::fmt::Write;

/// Format microseconds with a unit a person reads at a glance.
pub fn format_us(us: f64) -> String {
    if us < 1_000.0 {
        format!("{us:.0}µs")
    } else if us < 1_000_000.0 {
        format!("{:.2}ms", us / 1_000.0)
    } else {
        format!("{:.2}s", us / 1_000_000.0)
    }
}

/// [`format_us`], or "–" where there is no figure (no successful sample).
pub fn format_opt_us(us: Option<f64>) -> String {
    us.map_or_else(|| "–".to_string(), format_us)
}

fn row(out: &mut String, name: &str, p: &PhaseSummary) {
    let l: Option<&Latency> = p.service.as_ref();
    let q = |f: fn(&Latency) -> f64| format_opt_us(l.map(f));
    let _ = writeln!(
        out,
        "  {name:<26} {:>8} {:>7} {:>7} {:>9.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}{}",
        p.count,
        p.errors,
        p.tool_errors,
        p.rate_per_s,
        q(|l| l.mean_us),
        q(|l| l.p50_us as f64),
        q(|l| l.p90_us as f64),
        q(|l| l.p99_us as f64),
        q(|l| l.p999_us as f64),
        q(|l| l.max_us as f64),
        if p.skipped > 0 {
            format!("  ({} skipped: not declared by the server)", p.skipped)
        } else {
            String::new()
        }
    );
}

fn header(out: &mut String, first: &str) {
    let _ = writeln!(
        out,
        "  {first:<26} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "count", "errors", "isError", "rate/s", "mean", "p50", "p90", "p99", "p99.9", "max"
    );
}

/// Phases in pipeline order (the map is sorted by name).
fn ordered(
    phases: &std::collections::BTreeMap<String, PhaseSummary>,
) -> Vec<(&str, &PhaseSummary)> {
    let mut v: Vec<_> = phases.iter().map(|(k, p)| (k.as_str(), p)).collect();
    v.sort_by_key(|(k, _)| {
        crate::metrics::Phase::from_name(k).map_or(usize::MAX, crate::metrics::Phase::index)
    });
    v
}

/// The phases shown in the breakdowns (the full table has them all).
const KEY_PHASES: [&str; 5] = ["probe", "discover", "initialize", "tools/call", "session"];

pub fn render(s: &Summary) -> String {
    let mut out = String::new();
    let r = &s.run;
    let _ = writeln!(
        out,
        "mcp-fleet {} · {} · seed {} · {:.1}s · {} ({})",
        s.tool.version, r.name, r.seed, r.duration_s, r.target, r.transport
    );
    if !r.complete {
        let _ = writeln!(
            out,
            "this run did not finish: figures as of the checkpoint at {} ({:.1}s in)",
            r.checkpoint_at.as_deref().unwrap_or("an unknown time"),
            r.duration_s
        );
    }
    let ss = &s.sessions;
    let _ = writeln!(
        out,
        "sessions: {} started, {} completed, {} failed, {} interrupted · {:.1} sessions/s · {} · stopped by {}",
        ss.started, ss.completed, ss.failed, ss.interrupted, ss.rate_per_s, r.load.description, r.stopped_by
    );
    if ss.unreachable > 0 {
        let _ = writeln!(
            out,
            "unreachable: {} sessions never reached the target (their connect failed); not counted in sessions/s or latency",
            ss.unreachable
        );
    }
    let _ = writeln!(out);
    header(&mut out, "phase");
    for (name, p) in ordered(&s.phases) {
        row(&mut out, name, p);
    }
    breakdowns(&mut out, s);
    failures(&mut out, s);
    render_findings(&mut out, &s.findings);
    if !s.counters.is_empty() {
        let list: Vec<String> = s.counters.iter().map(|(m, n)| format!("{m} {n}")).collect();
        let _ = writeln!(out, "\ncounted: {}", list.join(", "));
    }
    if !s.server_messages.is_empty() {
        let list: Vec<String> = s
            .server_messages
            .iter()
            .map(|(m, n)| format!("{m} ×{n}"))
            .collect();
        let _ = writeln!(out, "\nfrom the server: {}", list.join(", "));
    }
    super::soak::text::render(&mut out, &s.soak);
    thresholds(&mut out, s);
    out
}

/// Key phases by persona, transport, era and protocol version; `tools/call` by tool.
fn breakdowns(out: &mut String, s: &Summary) {
    if s.personas.len() > 1 {
        let _ = writeln!(out, "\nby persona");
        for (name, p) in &s.personas {
            let _ = writeln!(
                out,
                "  {name}: {} sessions, {} completed, {} failed",
                p.sessions, p.completed, p.failed
            );
            for (phase, ps) in ordered(&p.phases) {
                if KEY_PHASES.contains(&phase) {
                    row(out, &format!("  {phase}"), ps);
                }
            }
        }
    }
    for (title, table) in [
        ("by transport", &s.transports),
        ("by era", &s.eras),
        ("by protocol version", &s.protocol_versions),
    ] {
        if table.len() > 1 {
            let _ = writeln!(out, "\n{title}");
            for (name, phases) in table {
                let _ = writeln!(out, "  {name}");
                for (phase, ps) in ordered(phases) {
                    if KEY_PHASES.contains(&phase) {
                        row(out, &format!("  {phase}"), ps);
                    }
                }
            }
        }
    }
    if !s.tools.is_empty() {
        let _ = writeln!(out, "\ntools/call by tool");
        for (name, p) in &s.tools {
            row(out, name, p);
        }
    }
}

/// Failures by kind with a first example, and the malformed messages.
fn failures(out: &mut String, s: &Summary) {
    if !s.failures.is_empty() || s.malformed_messages > 0 {
        let _ = writeln!(out, "\nfailures");
        for (kind, n) in &s.failures {
            let example = s
                .failure_examples
                .get(kind)
                .and_then(|v| v.first())
                .map(|e| format!("  e.g. {e}"))
                .unwrap_or_default();
            let _ = writeln!(out, "  {kind:<26} {n:>8}{example}");
        }
        if s.malformed_messages > 0 {
            let _ = writeln!(
                out,
                "  {:<26} {:>8}  (messages that are not JSON-RPC; each fails a request as protocol_violation)",
                "malformed messages", s.malformed_messages
            );
        }
    }
    tool_errors(out, s);
}

/// Tools that answered `isError: true`: how often, and what they said.
fn tool_errors(out: &mut String, s: &Summary) {
    if s.tool_error_examples.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "
tool errors (isError: true)"
    );
    for (tool, examples) in &s.tool_error_examples {
        let n = s.tools.get(tool).map_or(0, |p| p.tool_errors);
        let _ = writeln!(out, "  {tool:<26} {n:>8}");
        for e in examples {
            let _ = writeln!(out, "    e.g. {e}");
        }
    }
}

/// The verdict, then each threshold with what was observed.
fn thresholds(out: &mut String, s: &Summary) {
    if !s.thresholds.is_empty() {
        let failed = s.thresholds.iter().filter(|t| !t.passed).count();
        let _ = writeln!(
            out,
            "\nthresholds: {}",
            if failed == 0 {
                format!("all {} passed", s.thresholds.len())
            } else {
                format!("{failed} of {} FAILED", s.thresholds.len())
            }
        );
        for t in &s.thresholds {
            let _ = writeln!(
                out,
                "  {:<4} {:<44} observed {}",
                if t.passed { "ok" } else { "FAIL" },
                t.expression,
                t.observed_text
            );
        }
    }
}

/// The findings section: code, severity, count, the fix, the spec section and the
/// first example. Shared with `inspect`.
pub fn render_findings(out: &mut String, findings: &[super::summary::FindingSummary]) {
    if findings.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nfindings (what the server does wrong)");
    for f in findings {
        let _ = writeln!(
            out,
            "  {:<7} {:<38} {:>6}×  {}  [spec: {}]",
            f.severity.name(),
            f.code,
            f.count,
            f.message,
            f.spec
        );
        if !f.example.is_empty() {
            let _ = writeln!(out, "          e.g. {}", f.example);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_switch_at_thousands() {
        assert_eq!(format_us(12.0), "12µs");
        assert_eq!(format_us(1_500.0), "1.50ms");
        assert_eq!(format_us(2_500_000.0), "2.50s");
    }
}
