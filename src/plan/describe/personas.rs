//! `validate`'s lines about what a persona does beyond the handshake: the client faults
//! it commits (with their shares), how it authenticates (the kind of token source, the
//! token URL and client id — never a token or a secret), its task policy.

use crate::plan::auth::{AuthPlan, TokenSource};
use crate::plan::client_faults::FaultMix;
use crate::plan::persona::Persona;
use crate::plan::tasks::{TaskCalls, TaskPolicy};
use std::fmt::Write;

/// The `faults`, `auth` and `tasks` lines of one persona (empty when it has none of
/// them; a default task policy is not told).
pub(super) fn lines(out: &mut String, p: &Persona) {
    if let Some(f) = faults(&p.faults) {
        let _ = writeln!(out, "  faults   {:<20} {f}", p.name);
    }
    if let Some(a) = &p.auth {
        let _ = writeln!(out, "  auth     {:<20} {}", p.name, auth(a));
    }
    if p.tasks != TaskPolicy::default() {
        let _ = writeln!(out, "  tasks    {:<20} {}", p.name, tasks(&p.tasks));
    }
}

/// `invalid-json 5%, oversized 2% (93% of its sessions well-behaved)`.
fn faults(m: &FaultMix) -> Option<String> {
    if m.is_empty() {
        return None;
    }
    let list: Vec<String> = m
        .faults
        .iter()
        .map(|(f, share)| format!("{} {}", f.name(), percent(*share)))
        .collect();
    let rest = (1.0 - m.faults.iter().map(|(_, s)| s).sum::<f64>()).max(0.0);
    Some(format!(
        "{} ({} of its sessions well-behaved)",
        list.join(", "),
        percent(rest)
    ))
}

/// `12.5%`, without trailing zeros.
fn percent(share: f64) -> String {
    let p = format!("{:.2}", share * 100.0);
    let p = p.trim_end_matches('0').trim_end_matches('.');
    format!("{p}%")
}

/// The token source without its secrets: how many tokens a file gave, or the grant's
/// token URL (redacted), client id, scope and resource.
fn auth(a: &AuthPlan) -> String {
    let source = match &a.source {
        TokenSource::Tokens { file, tokens } => format!(
            "bearer tokens from {file}: {} token{}, round-robin over the virtual clients",
            tokens.len(),
            if tokens.len() == 1 { "" } else { "s" }
        ),
        TokenSource::ClientCredentials(c) => {
            let url = c.token_url.as_ref().map_or_else(
                || "the token endpoint the discovery finds".to_string(),
                |u| crate::redact::url(u.as_str()),
            );
            let mut s = format!("client credentials at {url}, client id {}", c.client_id);
            if let Some(scope) = &c.scope {
                let _ = write!(s, ", scope {scope}");
            }
            if let Some(r) = &c.resource {
                let _ = write!(s, ", resource {}", crate::redact::url(r));
            }
            let _ = write!(
                s,
                ", refreshed {} before expiry",
                humantime::format_duration(c.refresh_before)
            );
            s
        }
    };
    let discover = if a.discover {
        "a session's first 401 walks the discovery"
    } else {
        "no discovery"
    };
    format!("{source}; {discover}")
}

/// `required tools as tasks, cancel 10%, ttl 30s, poll every 100ms (unless the server
/// says)`.
fn tasks(t: &TaskPolicy) -> String {
    let calls = match t.calls {
        TaskCalls::Never => "never as tasks (task-required tools fail)",
        TaskCalls::Required => "tools that require a task as tasks",
        TaskCalls::Allowed => "tools that allow a task as tasks",
    };
    let ttl = t.ttl.map_or_else(
        || "the server's ttl".to_string(),
        |d| format!("ttl {}", humantime::format_duration(d)),
    );
    format!(
        "{calls}, cancel {}, {ttl}, poll every {} unless the server gives a pollInterval",
        percent(t.cancel),
        humantime::format_duration(t.poll_interval)
    )
}

#[cfg(test)]
mod tests;
