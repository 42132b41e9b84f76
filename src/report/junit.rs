//! `thresholds.xml`: the thresholds as a JUnit XML test suite, the format CI systems
//! (GitLab, Jenkins, GitHub test reporters) show as passed and failed tests.

use crate::summary::Summary;
use std::fmt::Write;

pub const FILE_NAME: &str = "thresholds.xml";

/// Escape text for XML attributes and content.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if c.is_control() && !matches!(c, '\n' | '\t' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// One test case per threshold; a run without thresholds is an empty, passing suite.
pub fn render(s: &Summary) -> String {
    let failures = s.thresholds.iter().filter(|t| !t.passed).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let suite = escape(&format!("mcp-fleet thresholds: {}", s.run.name));
    let _ = writeln!(
        out,
        "<testsuites name=\"{suite}\" tests=\"{}\" failures=\"{failures}\" time=\"{:.3}\">",
        s.thresholds.len(),
        s.run.duration_s
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{:.3}\" timestamp=\"{}\">",
        s.thresholds.len(),
        s.run.duration_s,
        escape(&s.run.started_at)
    );
    let _ = writeln!(
        out,
        "    <properties><property name=\"seed\" value=\"{}\"/><property name=\"target\" value=\"{}\"/></properties>",
        s.run.seed,
        escape(&s.run.target)
    );
    for t in &s.thresholds {
        let name = escape(&t.expression);
        let _ = write!(
            out,
            "    <testcase classname=\"mcp-fleet.thresholds\" name=\"{name}\" time=\"0\""
        );
        if t.passed {
            let _ = writeln!(
                out,
                "><system-out>observed {}</system-out></testcase>",
                escape(&t.observed_text)
            );
        } else {
            let _ = writeln!(
                out,
                "><failure message=\"{name}: observed {obs}\" type=\"threshold\">{name} failed: observed {obs}</failure></testcase>",
                obs = escape(&t.observed_text)
            );
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}
