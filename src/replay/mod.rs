//! Trace → profile: what `mcp-fleet replay` and `profile --from-trace` run. A recorded
//! session becomes a persona (its client's identity and habits) and a scenario (its
//! steps after the handshake, with the pauses it took and the values it quoted back as
//! captures), so that a trace is replayed by the same persona and scenario machinery as
//! any profile, never by a second engine.
//!
//! [`replay_profile`] keeps every session apart, each arriving when it did (`[load]
//! arrivals`); [`grouped_profile`] folds them into personas by identity and scenarios by
//! step sequence, with tool arguments as data pools, for a profile to edit and scale.
//! Pure: the caller reads the trace and writes the files.

mod derive;
mod exchange;
mod group;
mod names;
mod persona;
mod pools;
mod render;
#[allow(clippy::module_inception)]
mod replay;
mod substitute;

pub use derive::{derive, DerivedSession};
pub use group::{grouped_profile, DerivedProfile};
pub use render::{profile_toml, render};
pub use replay::{replay_profile, schedule, ReplayOptions};

use crate::trace::Trace;

/// A trace that cannot be made into a profile, or options that make no sense.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeriveError {
    #[error(
        "session {session} shows no identity: its client never sent `initialize` or a modern \
         request (it never got past connecting)"
    )]
    NoIdentity { session: u64 },
    #[error(
        "{trace}: none of its {sessions} session(s) can be replayed: no client got past \
         connecting; fix: record again while a client completes a handshake"
    )]
    NothingToReplay { trace: String, sessions: usize },
    #[error("{option} {value}: {problem}; fix: {fix}")]
    BadOption {
        option: &'static str,
        value: String,
        problem: &'static str,
        fix: &'static str,
    },
}

/// Every session of `trace` that can be read, in the order they opened, and a note for
/// each that cannot.
fn derive_all(trace: &Trace) -> (Vec<DerivedSession>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    for s in &trace.sessions {
        match derive(s) {
            Ok(d) => out.push(d),
            Err(e) => notes.push(format!("skipped: {e}")),
        }
    }
    (out, notes)
}

/// A name for what `source` (a path) holds: its file name without extensions.
fn stem(source: &str) -> String {
    let file = std::path::Path::new(source)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = file.split('.').next().unwrap_or_default();
    names::sanitize(stem, "trace")
}

#[cfg(test)]
mod group_tests;
#[cfg(test)]
mod tests;
