//! State that outlives one session: the last tool listing each persona saw (to catch a
//! tool set that changes between sessions or over time without `list_changed`) and the
//! run's conformance options. Touched once per complete `tools/list`, so a mutex is fine.

use crate::metrics::PersonaId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The last listing a persona saw, and how many `tools/list_changed` had been seen then.
#[derive(Debug, Clone, Copy)]
struct Seen {
    fingerprint: u64,
    notified: u64,
}

#[derive(Debug, Default)]
pub struct Tracker {
    /// Call the list methods of capabilities the server did not declare (`--probe-undeclared`).
    pub probe_undeclared: bool,
    tools: Mutex<HashMap<PersonaId, Seen>>,
    /// `notifications/tools/list_changed` seen by any session of the run.
    notified: AtomicU64,
}

impl Tracker {
    pub fn new(probe_undeclared: bool) -> Tracker {
        Tracker {
            probe_undeclared,
            ..Tracker::default()
        }
    }

    /// A session was told the tool list changed.
    pub fn tools_list_changed(&self) {
        self.notified.fetch_add(1, Ordering::Relaxed);
    }

    /// A complete tool listing; true when it differs from the persona's previous one and
    /// no session heard `tools/list_changed` in between.
    pub fn tools_listed(&self, persona: PersonaId, fingerprint: u64) -> bool {
        let notified = self.notified.load(Ordering::Relaxed);
        let mut map = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        let now = Seen {
            fingerprint,
            notified,
        };
        match map.insert(persona, now) {
            Some(before) => before.fingerprint != fingerprint && before.notified == notified,
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_silent_unless_announced() {
        let t = Tracker::new(false);
        assert!(!t.tools_listed(0, 1));
        assert!(!t.tools_listed(0, 1));
        assert!(t.tools_listed(0, 2), "changed without notification");
        t.tools_list_changed();
        assert!(!t.tools_listed(0, 3), "announced");
        assert!(!t.tools_listed(1, 9), "another persona's first listing");
    }
}
