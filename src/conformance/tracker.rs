//! State that outlives one session: the last tool listing each persona saw (to catch a
//! tool set that changes between sessions or over time without `list_changed`), the
//! server capabilities each client (persona and version) was told, the targets whose
//! undeclared capabilities were already probed, and the run's conformance options.
//! Touched once per handshake or complete `tools/list`, so a mutex is fine.

use crate::metrics::PersonaId;
use crate::plan::Route;
use crate::protocol::VersionId;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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
    /// The first capabilities each client was told (interned: the sessions told the
    /// same hold the same allocation).
    capabilities: Mutex<HashMap<(PersonaId, VersionId), Arc<Value>>>,
    /// Targets whose undeclared capabilities a default run already probed.
    probed: Mutex<Vec<Route>>,
    /// Another process of the run makes the once-per-run probe (a shard other than 0):
    /// this one never does, so a sharded run probes as often as one process.
    probed_elsewhere: bool,
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

impl Tracker {
    /// The server capabilities a session of `persona` speaking `version` was told. When
    /// an earlier session of the same client was told different ones, returns those
    /// (as JSON text, for the example). Equal capabilities are one interned allocation,
    /// so the usual answer costs a pointer comparison.
    pub fn capabilities_seen(
        &self,
        persona: PersonaId,
        version: VersionId,
        capabilities: &Arc<Value>,
    ) -> Option<String> {
        let mut map = self.capabilities.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(&(persona, version)) {
            Some(first) => (!Arc::ptr_eq(first, capabilities) && **first != **capabilities)
                .then(|| first.to_string()),
            None => {
                map.insert((persona, version), capabilities.clone());
                None
            }
        }
    }

    /// Leave the once-per-run probe to another process of the run (`elsewhere`: this is
    /// a shard other than shard 0).
    pub fn probed_elsewhere(mut self, elsewhere: bool) -> Tracker {
        self.probed_elsewhere = elsewhere;
        self
    }

    /// True for the first session that asks about `target`: it probes the list methods
    /// of undeclared capabilities for the whole run (a default run's cheap check).
    pub fn first_probe(&self, target: &Route) -> bool {
        if self.probed_elsewhere {
            return false;
        }
        let mut probed = self.probed.lock().unwrap_or_else(|e| e.into_inner());
        if probed.contains(target) {
            return false;
        }
        probed.push(target.clone());
        true
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

    #[test]
    fn changed_capabilities_are_told_per_client() {
        let t = Tracker::new(false);
        let v = VersionId::of("2025-06-18");
        let a = Arc::new(serde_json::json!({"tools": {}}));
        let b = Arc::new(serde_json::json!({"tools": {"listChanged": true}}));
        assert_eq!(t.capabilities_seen(0, v, &a), None);
        assert_eq!(t.capabilities_seen(0, v, &a), None);
        assert_eq!(
            t.capabilities_seen(0, v, &Arc::new((*a).clone())),
            None,
            "an equal value in another allocation"
        );
        assert_eq!(
            t.capabilities_seen(0, v, &b).as_deref(),
            Some(r#"{"tools":{}}"#)
        );
        assert_eq!(t.capabilities_seen(1, v, &b), None, "another persona");
        let other = VersionId::of("2025-03-26");
        assert_eq!(t.capabilities_seen(0, other, &b), None, "another version");
    }

    #[test]
    fn each_target_is_probed_once() {
        let t = Tracker::new(false);
        let route = Route {
            transport: crate::protocol::TransportKind::StreamableHttp,
            target: crate::plan::Target::BuiltIn,
        };
        assert!(t.first_probe(&route));
        assert!(!t.first_probe(&route));
        let other = Route {
            transport: crate::protocol::TransportKind::WebSocket,
            ..route.clone()
        };
        assert!(t.first_probe(&other));
        // Shards other than 0 leave it to shard 0.
        let t = Tracker::new(false).probed_elsewhere(true);
        assert!(!t.first_probe(&other));
    }
}
