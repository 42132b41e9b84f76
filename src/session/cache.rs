//! A client-side response cache for the 2026-07-28 caching hints (`ttlMs`): a persona
//! with `cache = true` serves repeated discovery from here until the entry expires or a
//! `list_changed` notification invalidates it. It lives with the virtual client, so it
//! spans that client's sessions as a real host's cache would — which changes what the
//! server sees, and is why it is a per-persona switch.

use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

/// Most entries one client keeps. A cache spans all of a client's sessions, and its keys
/// hold the server's cursors: a server whose cursors change (a snapshot id, a time in
/// the cursor) would otherwise add an entry per listing for the whole run, since an
/// expired entry is only replaced when the same key comes again.
const MOST_ENTRIES: usize = 256;

#[derive(Debug, Default)]
pub struct ResponseCache {
    entries: HashMap<String, (Value, Instant)>,
}

fn key(method: &str, cursor: Option<&str>) -> String {
    format!("{method}\u{0}{}", cursor.unwrap_or(""))
}

impl ResponseCache {
    /// A fresh cached result for `method` at `cursor`.
    pub fn get(&self, method: &str, cursor: Option<&str>) -> Option<&Value> {
        self.entries
            .get(&key(method, cursor))
            .filter(|(_, expires)| Instant::now() < *expires)
            .map(|(v, _)| v)
    }

    /// Keep `result` if it says it may be cached (`ttlMs` > 0).
    pub fn put(&mut self, method: &str, cursor: Option<&str>, result: &Value) {
        let ttl = result.get("ttlMs").and_then(Value::as_u64).unwrap_or(0);
        if ttl == 0 {
            return;
        }
        let now = Instant::now();
        let key = key(method, cursor);
        if self.entries.len() >= MOST_ENTRIES && !self.entries.contains_key(&key) {
            self.make_room(now);
        }
        let expires = now + Duration::from_millis(ttl);
        self.entries.insert(key, (result.clone(), expires));
    }

    /// Drop the expired entries; when all are still fresh, the one that expires first.
    fn make_room(&mut self, now: Instant) {
        self.entries.retain(|_, (_, expires)| now < *expires);
        if self.entries.len() >= MOST_ENTRIES {
            let first = self
                .entries
                .iter()
                .min_by_key(|(_, (_, expires))| *expires)
                .map(|(k, _)| k.clone());
            if let Some(k) = first {
                self.entries.remove(&k);
            }
        }
    }

    /// Drop every page of `method` (after its `list_changed`).
    pub fn invalidate(&mut self, method: &str) {
        let prefix = format!("{method}\u{0}");
        self.entries.retain(|k, _| !k.starts_with(&prefix));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test(start_paused = true)]
    async fn changing_cursors_do_not_grow_the_cache() {
        let mut c = ResponseCache::default();
        let page = json!({"tools": [], "ttlMs": 1000});
        // A server with a fresh cursor per listing, 100 listings a second for 100 s.
        for i in 0..10_000 {
            c.put("tools/list", Some(&format!("snapshot-{i}")), &page);
            assert!(
                c.entries.len() <= MOST_ENTRIES,
                "{} entries",
                c.entries.len()
            );
            tokio::time::advance(Duration::from_millis(10)).await;
        }
        // Entries that never expire during the run: the oldest goes first.
        let forever = json!({"tools": [], "ttlMs": 3_600_000});
        for i in 0..1_000 {
            c.put("prompts/list", Some(&format!("p{i}")), &forever);
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        assert_eq!(c.entries.len(), MOST_ENTRIES);
        assert!(
            c.get("prompts/list", Some("p999")).is_some(),
            "the newest is kept"
        );
        assert!(
            c.get("prompts/list", Some("p0")).is_none(),
            "the oldest made room"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn entries_expire_and_invalidate() {
        let mut c = ResponseCache::default();
        c.put("tools/list", None, &json!({"tools": [], "ttlMs": 1000}));
        c.put(
            "tools/list",
            Some("p2"),
            &json!({"tools": [], "ttlMs": 1000}),
        );
        c.put("prompts/list", None, &json!({"prompts": [], "ttlMs": 0}));
        assert!(c.get("tools/list", None).is_some());
        assert!(c.get("prompts/list", None).is_none(), "ttl 0 is not cached");
        tokio::time::advance(Duration::from_millis(1001)).await;
        assert!(c.get("tools/list", None).is_none(), "expired");
        c.put("tools/list", None, &json!({"ttlMs": 1000}));
        c.invalidate("tools/list");
        assert!(c.get("tools/list", None).is_none());
        assert!(c.get("tools/list", Some("p2")).is_none());
    }
}
