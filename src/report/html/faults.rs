//! The report's "client faults" section: per persona and fault, what the buggy client
//! did, what a correct server does, the verdicts and the first example of each mistake;
//! then the personas side by side, so a reader sees whether the buggy clients hurt the
//! others. No section when no client fault was committed.

use super::esc;
use crate::report::text::faults::{committed, first_mistakes, mistakes, persona_rows, share};
use crate::report::text::format_opt_us;
use crate::summary::Summary;
use std::fmt::Write;

/// The verdict columns: (summary name, heading).
const VERDICTS: [(&str, &str); 5] = [
    ("handled", "handled"),
    ("wrong_error", "wrong error"),
    ("crashed", "crashed"),
    ("hung", "hung"),
    ("accepted", "accepted"),
];

pub(super) fn section(out: &mut String, s: &Summary) {
    if !committed(s) {
        return;
    }
    let bad = s.client_faults.iter().filter(|f| mistakes(f) > 0).count();
    let _ = writeln!(
        out,
        "<h2 id=client-faults>Client faults</h2><p class=note>What the buggy personas sent, what a correct server does, and how this one took it. {}</p>",
        if bad == 0 {
            "The server handled every fault.".to_string()
        } else {
            format!("{bad} of {} mishandled.", s.client_faults.len())
        }
    );
    out.push_str("<table class=client-faults><thead><tr><th>persona</th><th>fault</th><th>what the client did</th><th>expected</th><th class=n>sessions</th>");
    for (_, head) in VERDICTS {
        let _ = write!(out, "<th class=n>{head}</th>");
    }
    out.push_str("<th>first examples</th></tr></thead><tbody>");
    for f in &s.client_faults {
        let row_class = if mistakes(f) > 0 { " class=bad" } else { "" };
        let _ = write!(
            out,
            "<tr{row_class} data-fault=\"{}\"><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=n>{}</td>",
            esc(&f.fault),
            esc(&f.persona),
            esc(&f.fault),
            esc(&f.description),
            esc(&f.expected),
            f.sessions
        );
        for (name, _) in VERDICTS {
            let n = f.verdicts.get(name).copied().unwrap_or(0);
            let class = if n > 0 && name != "handled" {
                "n bad"
            } else {
                "n"
            };
            let _ = write!(
                out,
                "<td class=\"{class}\" data-verdict=\"{name}\">{n}</td>"
            );
        }
        let examples: String = first_mistakes(f)
            .into_iter()
            .map(|(v, text)| format!("<div class=ex>{}: {}</div>", esc(v), esc(text)))
            .collect();
        let _ = writeln!(out, "<td>{examples}</td></tr>");
    }
    out.push_str("</tbody></table>\n");
    side_by_side(out, s);
}

/// Each persona's sessions, failed share, session p50/p99, tools/call p99 and error
/// share, the buggy ones beside the good ones.
fn side_by_side(out: &mut String, s: &Summary) {
    out.push_str("<h3 id=personas-side-by-side>Personas side by side: did the buggy clients hurt the others?</h3>");
    out.push_str("<table class=personas><thead><tr><th>persona</th><th class=n>sessions</th><th class=n>with a fault</th><th class=n>failed</th><th class=n>session p50</th><th class=n>session p99</th><th class=n>tools/call p99</th><th class=n>tools/call errors</th></tr></thead><tbody>");
    for r in persona_rows(s) {
        let bad = |x: Option<f64>| {
            if x.is_some_and(|x| x > 0.0) {
                "n bad"
            } else {
                "n"
            }
        };
        let _ = writeln!(
            out,
            "<tr data-persona=\"{}\"><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=\"{}\">{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=\"{}\">{}</td></tr>",
            esc(&r.name),
            esc(&r.name),
            r.sessions,
            if r.faulty > 0 { r.faulty.to_string() } else { "–".into() },
            bad(r.failed_share),
            share(r.failed_share),
            format_opt_us(r.session_p50),
            format_opt_us(r.session_p99),
            format_opt_us(r.call_p99),
            bad(r.call_error_share),
            share(r.call_error_share),
        );
    }
    out.push_str("</tbody></table>\n");
}

#[cfg(test)]
mod tests;
