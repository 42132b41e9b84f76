//! The terminal's view of the buggy clients: one line per persona and client fault with
//! its verdicts, mistakes marked and their first examples (folded to one line when all
//! were handled, in the compact view), then the personas side by side so a reader sees
//! whether the buggy clients hurt the well-behaved ones. The HTML report reuses the
//! figures ([`persona_rows`], [`first_mistakes`]).

use super::format_opt_us;
use crate::metrics::Verdict;
use crate::report::style::Style;
use crate::summary::{ClientFaultSummary, Summary};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Examples are cut to this many characters (the lines stay within 150 columns).
const EXAMPLE_CHARS: usize = 100;

/// The verdicts that are the server's mistakes, in table order.
pub(crate) fn mistake_verdicts() -> impl Iterator<Item = &'static str> {
    Verdict::ALL
        .into_iter()
        .filter(|v| *v != Verdict::Handled)
        .map(Verdict::name)
}

/// Sessions of this fault the server did not handle as a correct server does.
pub(crate) fn mistakes(f: &ClientFaultSummary) -> u64 {
    mistake_verdicts()
        .map(|v| f.verdicts.get(v).copied().unwrap_or(0))
        .sum()
}

/// For each mistaken verdict that occurred, its first example (verdict, text).
pub(crate) fn first_mistakes(f: &ClientFaultSummary) -> Vec<(&'static str, &str)> {
    mistake_verdicts()
        .filter(|v| f.verdicts.get(*v).copied().unwrap_or(0) > 0)
        .filter_map(|v| {
            f.examples
                .iter()
                .find(|e| e.verdict == v)
                .map(|e| (v, e.text.as_str()))
        })
        .collect()
}

/// Whether any session committed a client fault.
pub(crate) fn committed(s: &Summary) -> bool {
    s.client_faults.iter().any(|f| f.sessions > 0)
}

/// `text` cut to `n` characters, with `…` when cut.
pub(crate) fn cut(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(n.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// One persona's figures beside the others'.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PersonaRow {
    pub name: String,
    /// Sessions of the persona that committed a client fault.
    pub faulty: u64,
    pub sessions: u64,
    /// Failed / (completed + failed).
    pub failed_share: Option<f64>,
    pub session_p50: Option<f64>,
    pub session_p99: Option<f64>,
    pub call_p99: Option<f64>,
    /// Failed `tools/call` / all of them.
    pub call_error_share: Option<f64>,
}

/// The personas' rows, in the summary's order.
pub(crate) fn persona_rows(s: &Summary) -> Vec<PersonaRow> {
    s.personas
        .iter()
        .map(|(name, p)| {
            let ended = p.completed + p.failed;
            let session = p.phases.get("session").and_then(|x| x.service.as_ref());
            let call = p.phases.get("tools/call");
            PersonaRow {
                name: name.clone(),
                faulty: s
                    .client_faults
                    .iter()
                    .filter(|f| &f.persona == name)
                    .map(|f| f.sessions)
                    .sum(),
                sessions: p.sessions,
                failed_share: (ended > 0).then(|| p.failed as f64 / ended as f64),
                session_p50: session.map(|l| l.p50_us as f64),
                session_p99: session.map(|l| l.p99_us as f64),
                call_p99: call
                    .and_then(|c| c.service.as_ref())
                    .map(|l| l.p99_us as f64),
                call_error_share: call
                    .filter(|c| c.count > 0)
                    .map(|c| c.errors as f64 / c.count as f64),
            }
        })
        .collect()
}

/// `12.5%`, or `–` without a figure.
pub(crate) fn share(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), |x| format!("{:.1}%", x * 100.0))
}

/// The client faults section: every line in `verbose`, else the mistaken ones and one
/// line for the rest (one line in all when the server handled every fault).
pub(super) fn render(out: &mut String, s: &Summary, st: Style, verbose: bool) {
    let faults = &s.client_faults;
    if faults.is_empty() {
        return;
    }
    let sessions: u64 = faults.iter().map(|f| f.sessions).sum();
    let names: BTreeSet<&str> = faults.iter().map(|f| f.fault.as_str()).collect();
    let mishandled: Vec<&ClientFaultSummary> = faults.iter().filter(|f| mistakes(f) > 0).collect();
    let facts = format!(
        "{sessions} sessions, {} fault{}",
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    );
    if mishandled.is_empty() && !verbose {
        let _ = writeln!(
            out,
            "\n{} {facts}, all handled {}",
            st.bold("client faults:"),
            st.mark(true)
        );
        return;
    }
    let verdict = if mishandled.is_empty() {
        format!("all handled {}", st.mark(true))
    } else {
        st.bad(&format!("{} mishandled ✗", mishandled.len()))
    };
    let _ = writeln!(
        out,
        "\n{} {facts}, {verdict}",
        st.bold("client faults (what buggy clients sent, and how the server took it):")
    );
    let head = format!(
        "  {:<20} {:<24} {:>8} {:>8} {:>11} {:>8} {:>6} {:>9}",
        "persona", "fault", "sessions", "handled", "wrong_error", "crashed", "hung", "accepted"
    );
    let _ = writeln!(out, "{}", st.dim(&head));
    for f in faults {
        if verbose || mistakes(f) > 0 {
            line(out, f, st);
        }
    }
    let folded: Vec<&ClientFaultSummary> = faults
        .iter()
        .filter(|f| !verbose && mistakes(f) == 0)
        .collect();
    if !folded.is_empty() {
        let n: u64 = folded.iter().map(|f| f.sessions).sum();
        let _ = writeln!(
            out,
            "  + {} more fault{}, all handled {} ({n} sessions)",
            folded.len(),
            if folded.len() == 1 { "" } else { "s" },
            st.mark(true)
        );
    }
}

/// One persona and fault: its verdict counts, ✓ or ✗; under a mistake, what a correct
/// server does and the first example of each mistaken verdict.
fn line(out: &mut String, f: &ClientFaultSummary, st: Style) {
    let v = |name: &str| f.verdicts.get(name).copied().unwrap_or(0);
    let _ = writeln!(
        out,
        "  {:<20} {:<24} {:>8} {:>8} {} {} {} {}  {}",
        cut(&f.persona, 20),
        f.fault,
        f.sessions,
        v("handled"),
        st.count(&format!("{:>11}", v("wrong_error")), v("wrong_error")),
        st.count(&format!("{:>8}", v("crashed")), v("crashed")),
        st.count(&format!("{:>6}", v("hung")), v("hung")),
        st.count(&format!("{:>9}", v("accepted")), v("accepted")),
        st.mark(mistakes(f) == 0)
    );
    if mistakes(f) == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "      {}",
        st.dim(&format!("expected: {}", cut(&f.expected, EXAMPLE_CHARS)))
    );
    for (verdict, text) in first_mistakes(f) {
        let _ = writeln!(
            out,
            "      {}",
            st.dim(&format!("e.g. {verdict}: {}", cut(text, EXAMPLE_CHARS)))
        );
    }
}

/// The personas side by side: in `verbose` when faults were committed or there are
/// several personas, else only when faults were committed.
pub(super) fn side_by_side(out: &mut String, s: &Summary, st: Style, verbose: bool) {
    let faults = committed(s);
    if !(faults || verbose && s.personas.len() > 1) {
        return;
    }
    let title = if faults {
        "personas side by side (did the buggy clients hurt the others?)"
    } else {
        "personas side by side"
    };
    let _ = writeln!(out, "\n{}", st.bold(title));
    let head = format!(
        "  {:<20} {:>8} {:>8} {:>8} {:>12} {:>12} {:>15} {:>18}",
        "persona",
        "sessions",
        "faulty",
        "failed",
        "session p50",
        "session p99",
        "tools/call p99",
        "tools/call errors"
    );
    let _ = writeln!(out, "{}", st.dim(&head));
    for r in persona_rows(s) {
        let failed = share(r.failed_share);
        let bad_failed = r.failed_share.is_some_and(|x| x > 0.0);
        let errors = share(r.call_error_share);
        let bad_errors = r.call_error_share.is_some_and(|x| x > 0.0);
        let _ = writeln!(
            out,
            "  {:<20} {:>8} {:>8} {} {:>12} {:>12} {:>15} {}",
            cut(&r.name, 20),
            r.sessions,
            if r.faulty > 0 {
                r.faulty.to_string()
            } else {
                "–".into()
            },
            st.count(&format!("{failed:>8}"), u64::from(bad_failed)),
            format_opt_us(r.session_p50),
            format_opt_us(r.session_p99),
            format_opt_us(r.call_p99),
            st.count(&format!("{errors:>18}"), u64::from(bad_errors)),
        );
    }
}

#[cfg(test)]
mod tests;
