//! The "tool calls" table of the terminal summary: per tool, how many calls the server
//! accepted, how many came back `isError`, -32602 or another failure, how many of the
//! generated calls were accepted and which calls were left out, with the first error text
//! of each tool that rejected calls. The verbose view always shows it when tools were
//! called; the compact one only when some tool did not accept every call (else a line).

use crate::report::style::Style;
use crate::summary::{Summary, ToolAcceptance};
use std::fmt::Write;

/// Whether a tool has anything to look at: a call not accepted, or one left out.
pub(crate) fn troubled(t: &ToolAcceptance) -> bool {
    t.accepted < t.calls || t.left_out_total() > 0
}

/// "93.5%", "–" without calls.
pub(crate) fn share(t: &ToolAcceptance) -> String {
    t.accepted_share()
        .map_or_else(|| "–".to_string(), |s| format!("{:.1}%", s * 100.0))
}

/// "12/200", "–" when nothing was generated.
pub(crate) fn generated(t: &ToolAcceptance) -> String {
    if t.generated == 0 {
        "–".to_string()
    } else {
        format!("{}/{}", t.generated_accepted, t.generated)
    }
}

/// "destructive ×3", empty when nothing was left out.
pub(crate) fn left_out(t: &ToolAcceptance) -> String {
    t.left_out
        .iter()
        .map(|(reason, n)| format!("{reason} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table (or, compact and all well, one line).
pub(super) fn render(out: &mut String, s: &Summary, st: Style, verbose: bool) {
    let tools = &s.tool_acceptance;
    if tools.is_empty() {
        return;
    }
    if !verbose && !tools.values().any(troubled) {
        let calls: u64 = tools.values().map(|t| t.calls).sum();
        let _ = writeln!(
            out,
            "\n{} {}",
            st.bold("tool calls:"),
            st.good(&format!(
                "the server accepted all {calls} calls of {} tool{}",
                tools.len(),
                if tools.len() == 1 { "" } else { "s" }
            ))
        );
        return;
    }
    let _ = writeln!(
        out,
        "\n{}",
        st.bold("tool calls (did the server accept them?)")
    );
    let head = format!(
        "  {:<26} {:>8} {:>9} {:>8} {:>8} {:>8} {:>11}  {}",
        "tool", "calls", "accepted", "isError", "-32602", "other", "generated", "left out"
    );
    let _ = writeln!(out, "{}", st.dim(&head));
    for (name, t) in tools {
        let accepted = format!("{:>9}", share(t));
        let accepted = if t.accepted < t.calls {
            st.bad(&accepted)
        } else {
            accepted
        };
        let generated = format!("{:>11}", generated(t));
        let generated = if t.generated_accepted < t.generated {
            st.warn(&generated)
        } else {
            generated
        };
        let left = left_out(t);
        let _ = writeln!(
            out,
            "  {name:<26} {:>8} {accepted} {} {} {} {generated}{}",
            t.calls,
            st.count(&format!("{:>8}", t.tool_errors), t.tool_errors),
            st.count(&format!("{:>8}", t.invalid_params), t.invalid_params),
            st.count(&format!("{:>8}", t.other_errors), t.other_errors),
            if left.is_empty() {
                String::new()
            } else {
                format!("  {}", st.warn(&left))
            }
        );
        if t.accepted < t.calls {
            if let Some(e) = s.tool_error_examples.get(name).and_then(|v| v.first()) {
                let _ = writeln!(out, "    {}", st.dim(&format!("e.g. {e}")));
            }
        }
    }
}
