//! A client-side response cache for the 2026-07-28 caching hints (`ttlMs`): a persona
//! with `cache = true` serves repeated discovery from here until the entry expires or a
//! `list_changed` notification invalidates it. It lives with the virtual client, so it
//! spans that client's sessions as a real host's cache would — which changes what the
//! server sees, and is why it is a per-persona switch.

use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;
use tokio::time::Instant;

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
        let expires = Instant::now() + Duration::from_millis(ttl);
        self.entries
            .insert(key(method, cursor), (result.clone(), expires));
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
