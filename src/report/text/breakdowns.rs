//! The verbose part of the terminal summary: key phases by persona, transport, era and
//! protocol version, `tools/call` by tool, the counted events and what the server sent.
//! The compact summary names what it leaves out ([`hidden`]).

use super::table::{header, ordered, row};
use crate::report::style::Style;
use crate::summary::{PhaseSummary, Summary};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The phases shown in the breakdowns (the full table has them all).
/// `token`, `auth` and `task` only appear for personas that authenticate or call tasks.
const KEY_PHASES: [&str; 9] = [
    "token",
    "auth",
    "probe",
    "discover",
    "initialize",
    "tools/call",
    "task",
    "fanout",
    "session",
];

/// Phases by group (transport, era or protocol version).
type Grouped = BTreeMap<String, BTreeMap<String, PhaseSummary>>;

/// The breakdown tables that have something to say (one group is the phase table again).
fn tables(s: &Summary) -> Vec<(&'static str, &Grouped)> {
    [
        ("by transport", &s.transports),
        ("by era", &s.eras),
        ("by protocol version", &s.protocol_versions),
    ]
    .into_iter()
    .filter(|(_, t)| t.len() > 1)
    .collect()
}

/// The titles of what [`render`] and [`events`] would show.
pub(super) fn hidden(s: &Summary) -> Vec<&'static str> {
    let mut v = Vec::new();
    if s.personas.len() > 1 {
        v.push("by persona");
    }
    v.extend(tables(s).into_iter().map(|(t, _)| t));
    if !s.tools.is_empty() {
        v.push("tools/call by tool");
    }
    if !s.counters.is_empty() {
        v.push("counted events");
    }
    if !s.server_messages.is_empty() {
        v.push("messages from the server");
    }
    if !s.slowest_traces.is_empty() {
        v.push("slowest traced requests");
    }
    if !s.extensions.is_empty() {
        v.push("extensions");
    }
    v
}

/// Key phases by persona, transport, era and protocol version; `tools/call` by tool.
pub(super) fn render(out: &mut String, s: &Summary, st: Style) {
    if s.personas.len() > 1 {
        let _ = writeln!(out, "\n{}", st.bold("by persona"));
        header(out, "persona / phase", st);
        for (name, p) in &s.personas {
            let _ = writeln!(
                out,
                "  {name}: {} sessions, {} completed, {} failed",
                p.sessions,
                p.completed,
                st.count(&p.failed.to_string(), p.failed)
            );
            for (phase, ps) in ordered(&p.phases) {
                if KEY_PHASES.contains(&phase) {
                    row(out, &format!("  {phase}"), ps, st);
                }
            }
        }
    }
    for (title, table) in tables(s) {
        let _ = writeln!(out, "\n{}", st.bold(title));
        header(out, "group / phase", st);
        for (name, phases) in table {
            let _ = writeln!(out, "  {name}");
            for (phase, ps) in ordered(phases) {
                if KEY_PHASES.contains(&phase) {
                    row(out, &format!("  {phase}"), ps, st);
                }
            }
        }
    }
    if !s.tools.is_empty() {
        let _ = writeln!(out, "\n{}", st.bold("tools/call by tool"));
        header(out, "tool", st);
        for (name, p) in &s.tools {
            row(out, name, p, st);
        }
    }
}

/// Events without latency, and what the server sent on its own.
pub(super) fn events(out: &mut String, s: &Summary) {
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
    if !s.extensions.is_empty() {
        let _ = writeln!(out, "\nextensions (sessions):");
        for (id, verdicts) in &s.extensions {
            let said: Vec<String> = verdicts
                .iter()
                .filter(|(_, n)| **n > 0)
                .map(|(v, n)| format!("{v} {n}"))
                .collect();
            let _ = writeln!(out, "  {id:<40} {}", said.join(", "));
        }
    }
    if !s.slowest_traces.is_empty() {
        let _ = writeln!(
            out,
            "\nslowest traced requests (find them in the server's traces):"
        );
        for (phase, list) in &s.slowest_traces {
            let worst: Vec<String> = list
                .iter()
                .take(3)
                .map(|t| {
                    format!(
                        "{} trace {}",
                        super::format_us(t.latency_us as f64),
                        t.trace_id
                    )
                })
                .collect();
            let _ = writeln!(out, "  {phase:<22} {}", worst.join(", "));
        }
    }
}
