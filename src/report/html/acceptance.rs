//! The report's "tool calls" table: per tool, whether the server accepted its calls
//! (accepted share, `isError`, -32602, other failures), the generated calls accepted,
//! the calls left out and the first error texts. Shown beside the per-tool latencies.

use super::esc;
use crate::report::text::acceptance::{generated, left_out, share, troubled};
use crate::summary::Summary;
use std::fmt::Write;

pub(super) fn table(out: &mut String, s: &Summary) {
    let tools = &s.tool_acceptance;
    if tools.is_empty() {
        return;
    }
    let all_well = !tools.values().any(troubled);
    let _ = writeln!(
        out,
        "<h3 id=tool-acceptance>Tool calls: did the server accept them?</h3>{}",
        if all_well {
            "<p class=note>The server accepted every call.</p>"
        } else {
            ""
        }
    );
    out.push_str("<table class=acceptance><thead><tr><th>tool</th><th class=n>calls</th><th class=n>accepted</th><th class=n>isError</th><th class=n>-32602</th><th class=n>other</th><th class=n>generated (accepted/total)</th><th>left out</th><th>first error texts</th></tr></thead><tbody>");
    for (name, t) in tools {
        let bad = |n: u64| {
            if n > 0 {
                " class=\"n bad\""
            } else {
                " class=n"
            }
        };
        let accepted_class = if t.accepted < t.calls {
            " class=\"n bad\""
        } else {
            " class=n"
        };
        let examples: String = if t.accepted < t.calls {
            s.tool_error_examples
                .get(name)
                .map(|v| {
                    v.iter()
                        .map(|e| format!("<div class=ex>{}</div>", esc(e)))
                        .collect()
                })
                .unwrap_or_default()
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td class=n>{}</td><td{accepted_class}>{}</td><td{}>{}</td><td{}>{}</td><td{}>{}</td><td{}>{}</td><td>{}</td><td>{examples}</td></tr>",
            esc(name),
            t.calls,
            share(t),
            bad(t.tool_errors),
            t.tool_errors,
            bad(t.invalid_params),
            t.invalid_params,
            bad(t.other_errors),
            t.other_errors,
            bad(t.generated - t.generated_accepted.min(t.generated)),
            generated(t),
            esc(&left_out(t)),
        );
    }
    out.push_str("</tbody></table>\n");
}
