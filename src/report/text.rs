//! The terminal summary: a header with the run's facts, the diagnosis when most sessions
//! failed, one table row per phase (service time, and response time in an open model),
//! failures, findings, client faults (and the personas side by side when buggy clients
//! ran), thresholds; with `--verbose` (and in `summary.txt`) also the
//! breakdowns by persona, transport, era, protocol version and tool — the same figures
//! as `summary.json`.

pub(crate) mod acceptance;
mod breakdowns;
pub(crate) mod faults;
pub mod histogram;
mod soak;
mod table;

use super::style::Style;
use crate::summary::Summary;
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

/// How much of the summary to show, and how it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// Also the breakdowns (persona, transport, era, protocol version, tool, counters,
    /// server messages); without it one line says what is hidden and where it is.
    pub verbose: bool,
    pub style: Style,
}

impl View {
    /// What `summary.txt` holds: everything, no colour.
    pub const FILE: View = View {
        verbose: true,
        style: Style::PLAIN,
    };
}

/// The full summary without colour, as `summary.txt` holds it.
pub fn render(s: &Summary) -> String {
    render_view(s, View::FILE)
}

/// The summary as `view` asks: compact or verbose, plain or coloured.
pub fn render_view(s: &Summary, view: View) -> String {
    let st = view.style;
    let mut out = String::new();
    header(&mut out, s, st);
    diagnosis(&mut out, s, st);
    let _ = writeln!(out);
    table::phases(&mut out, s, st);
    table::checks(&mut out, s, st);
    if view.verbose {
        breakdowns::render(&mut out, s, st);
    }
    acceptance::render(&mut out, s, st, view.verbose);
    failures(&mut out, s, st);
    render_findings_styled(&mut out, &s.findings, st);
    faults::render(&mut out, s, st, view.verbose);
    faults::side_by_side(&mut out, s, st, view.verbose);
    if view.verbose {
        breakdowns::events(&mut out, s);
    }
    let watched = s
        .resources
        .iter()
        .any(|r| r.name.starts_with("server.") || r.name.starts_with("scrape."));
    soak::render(&mut out, &s.soak, watched);
    outputs(&mut out, s, st);
    thresholds(&mut out, s, st);
    if !view.verbose {
        let mut hidden = breakdowns::hidden(s);
        if s.client_faults.iter().any(|f| faults::mistakes(f) == 0) {
            hidden.push("client faults handled");
        }
        if !hidden.is_empty() {
            let _ = writeln!(
                out,
                "\n{}",
                st.dim(&format!(
                    "not shown: {} — see --verbose, report.html or summary.json",
                    hidden.join(", ")
                ))
            );
        }
    }
    out
}

/// Each push output in one line: delivered, or what went wrong (a warning: the run's
/// figures do not depend on it).
fn outputs(out: &mut String, s: &Summary, st: Style) {
    for o in &s.outputs {
        let line = format!(
            "push {} {}: {} delivered, {} failed, {} dropped, final figures {}",
            o.kind,
            o.target,
            o.delivered,
            o.failed,
            o.dropped,
            if o.final_delivered {
                "delivered"
            } else {
                "NOT delivered"
            },
        );
        if o.troubled() {
            let _ = writeln!(out, "\n{}", st.warn(&format!("warning: {line}")));
            if let Some(e) = &o.last_error {
                let _ = writeln!(out, "  last error: {e}");
            }
            if o.series_left_out > 0 {
                let _ = writeln!(
                    out,
                    "  {} series left out of a push past the cap on series",
                    o.series_left_out
                );
            }
        } else {
            let _ = writeln!(
                out,
                "\n{}",
                st.dim(&format!("{line} ({} series)", o.series))
            );
        }
    }
}

/// The target and its transport: "http://127.0.0.1:3000/mcp (http)", and the built-in
/// server's "http://127.0.0.1:39529/mcp (built-in, http)" (not "(built-in) (http)").
pub(crate) fn target_line(r: &crate::summary::RunInfo) -> String {
    match r.target.strip_suffix(" (built-in)") {
        Some(url) => format!("{url} (built-in, {})", r.transport),
        None => format!("{} ({})", r.target, r.transport),
    }
}

/// `run.stopped_by` in words: "stopped by duration", "interrupted (Ctrl-C)" rather than
/// "stopped by interrupted".
pub(crate) fn how_it_ended(stopped_by: &str) -> String {
    match stopped_by {
        "duration" => "stopped by duration".into(),
        "sessions" => "stopped by the session budget".into(),
        "unreachable" => "stopped: the target was unreachable".into(),
        "interrupted" => "interrupted (Ctrl-C)".into(),
        "terminated" => "terminated (SIGTERM)".into(),
        "hangup" => "hung up (SIGHUP)".into(),
        "running" => "still running".into(),
        other => format!("stopped by {other}"),
    }
}

/// Version, run, seed, duration, target; the sessions line with the load in words.
fn header(out: &mut String, s: &Summary, st: Style) {
    let r = &s.run;
    let _ = writeln!(
        out,
        "{} {} · {} · seed {} · {:.1}s · {}",
        st.bold("mcp-fleet"),
        s.tool.version,
        st.bold(&r.name),
        r.seed,
        r.duration_s,
        target_line(r)
    );
    if let Some(label) = r.shard_label() {
        let _ = writeln!(out, "{}", st.bold(&label));
    }
    if !r.complete {
        let _ = writeln!(
            out,
            "{}",
            st.warn(&format!(
                "this run did not finish: figures as of the checkpoint at {} ({:.1}s in)",
                r.checkpoint_at.as_deref().unwrap_or("an unknown time"),
                r.duration_s
            ))
        );
    }
    let ss = &s.sessions;
    let failed = st.count(&format!("{} failed", ss.failed), ss.failed);
    let _ = writeln!(
        out,
        "sessions: {} started, {} completed, {failed}, {} interrupted · {:.1} sessions/s · {} · {}",
        ss.started,
        ss.completed,
        ss.interrupted,
        ss.rate_per_s,
        r.load.description,
        how_it_ended(&r.stopped_by)
    );
    if let Some(why) = &r.stopped_because {
        let _ = writeln!(out, "{}", st.bad(&format!("stopped: {why}")));
    }
    if ss.unreachable > 0 {
        let _ = writeln!(
            out,
            "{}",
            st.bad(&format!(
                "unreachable: {} sessions never reached the target (their connect failed); not counted in sessions/s or latency",
                ss.unreachable
            ))
        );
    }
}

/// When most sessions failed (or most generated tool calls were rejected): what was seen
/// and the likeliest cause, before any figure.
fn diagnosis(out: &mut String, s: &Summary, st: Style) {
    let Some(d) = &s.diagnosis else {
        return;
    };
    let rejected = d.cause == super::diagnosis::cause::ARGUMENTS_REJECTED;
    let (lead, share) = if rejected {
        let share = if d.failed_share > 0.0 {
            format!(" ({:.0}% of sessions failed)", d.failed_share * 100.0)
        } else {
            String::new()
        };
        ("✗ most tool calls were rejected:", share)
    } else {
        (
            "✗ most sessions failed:",
            format!(" ({:.0}% of sessions)", d.failed_share * 100.0),
        )
    };
    let _ = writeln!(
        out,
        "\n{} {}",
        st.bad(lead),
        st.bad(&format!("{}{share}", d.message))
    );
    let _ = writeln!(
        out,
        "  likely cause: {} — {}",
        st.bold(&d.cause.replace('_', " ")),
        d.fix
    );
}

/// Failures by kind with a first example, and the malformed messages.
fn failures(out: &mut String, s: &Summary, st: Style) {
    if !s.failures.is_empty() || s.malformed_messages > 0 {
        let _ = writeln!(out, "\n{}", st.bold("failures"));
        for (kind, n) in &s.failures {
            let example = s
                .failure_examples
                .get(kind)
                .and_then(|v| v.first())
                .map(|e| format!("  {}", st.dim(&format!("e.g. {e}"))))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  {kind:<26} {}{example}",
                st.count(&format!("{n:>8}"), *n)
            );
        }
        if s.malformed_messages > 0 {
            let _ = writeln!(
                out,
                "  {:<26} {}  (messages that are not JSON-RPC; each fails a request as protocol_violation)",
                "malformed messages",
                st.bad(&format!("{:>8}", s.malformed_messages))
            );
        }
    }
    tool_errors(out, s, st);
}

/// Tools that answered `isError: true`: how often, and what they said (for summaries
/// before schema 9; the tool calls table shows the first error texts since).
fn tool_errors(out: &mut String, s: &Summary, st: Style) {
    if s.tool_error_examples.is_empty() || !s.tool_acceptance.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{}", st.bold("tool errors (isError: true)"));
    for (tool, examples) in &s.tool_error_examples {
        let n = s.tools.get(tool).map_or(0, |p| p.tool_errors);
        let _ = writeln!(out, "  {tool:<26} {}", st.count(&format!("{n:>8}"), n));
        for e in examples {
            let _ = writeln!(out, "    {}", st.dim(&format!("e.g. {e}")));
        }
    }
}

/// The verdict, then each threshold as given, with ✓/✗ and what was observed.
fn thresholds(out: &mut String, s: &Summary, st: Style) {
    if s.thresholds.is_empty() {
        return;
    }
    let failed = s.thresholds.iter().filter(|t| !t.passed).count();
    let verdict = if failed == 0 {
        st.good(&format!("all {} passed", s.thresholds.len()))
    } else {
        st.bad(&format!("{failed} of {} FAILED", s.thresholds.len()))
    };
    let _ = writeln!(out, "\n{} {verdict}", st.bold("thresholds:"));
    for t in &s.thresholds {
        // An inconclusive slope passed because the run could not tell: marked `?`.
        let mark = if t.inconclusive {
            st.bold("?")
        } else {
            st.mark(t.passed)
        };
        let _ = writeln!(
            out,
            "  {mark} {:<44} observed {}",
            t.expression, t.observed_text
        );
        if !t.decided_by.is_empty() {
            let _ = writeln!(out, "      {}", t.decided_by);
        }
    }
}

/// The findings section: code, severity, count, the fix, the spec section and the
/// first example. Shared with `inspect`.
pub fn render_findings(out: &mut String, findings: &[crate::summary::FindingSummary]) {
    render_findings_styled(out, findings, Style::PLAIN);
}

/// [`render_findings`] in a style: errors red, warnings yellow.
pub fn render_findings_styled(
    out: &mut String,
    findings: &[crate::summary::FindingSummary],
    st: Style,
) {
    if findings.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n{}",
        st.bold("findings (what the server does wrong)")
    );
    for f in findings {
        let severity = format!("{:<7}", f.severity.name());
        let severity = match f.severity {
            crate::conformance::Severity::Error => st.bad(&severity),
            crate::conformance::Severity::Warning => st.warn(&severity),
        };
        let _ = writeln!(
            out,
            "  {severity} {:<38} {:>6}×  {}  {}",
            f.code,
            f.count,
            f.message,
            st.dim(&format!("[spec: {}]", f.spec))
        );
        if !f.example.is_empty() {
            let _ = writeln!(out, "          {}", st.dim(&format!("e.g. {}", f.example)));
        }
    }
}

#[cfg(test)]
mod tests;
