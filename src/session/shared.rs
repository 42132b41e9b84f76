//! JSON values that thousands of sessions would each keep a copy of — every listed tool's
//! `inputSchema` and `outputSchema`, the server's `capabilities` — kept once per process
//! and shared. Every session of a run talks to the same server, which lists the same
//! tools, so 20,000 long-lived sessions holding their own copies cost ~20 KiB each
//! (heaptrack, `results/BENCHMARKS.md`); shared, a session keeps one pointer per tool.
//!
//! Values are found by a hash of their tree and matched by equality, so two equal values
//! share one copy and a different one (another server, a changed listing) gets its own.
//! The table holds weak references: a value lives as long as some session holds it, and
//! the table drops dead entries as it grows, so it stays bounded by what sessions hold.
//! Each runtime thread remembers the last value it shared: the next session's equal
//! `capabilities` are matched against it without hashing the tree or taking the lock.
//! A value that arrives as JSON text ([`intern_json`]) is matched by its bytes first, so
//! the same server's same answer is not even built into a tree.

use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// Live entries after the last sweep: the next sweep comes when the table doubles.
struct Table {
    /// By [`crate::conformance::fingerprint`]: the live values of that hash.
    values: HashMap<u64, Vec<Weak<Value>>>,
    swept_at: usize,
}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

thread_local! {
    /// The last value this thread shared (weakly: it keeps nothing alive).
    static LAST: std::cell::RefCell<Weak<Value>> = const { std::cell::RefCell::new(Weak::new()) };
    /// The text of the last value this thread shared from text, and that value.
    static LAST_JSON: std::cell::RefCell<(Box<str>, Weak<Value>)> =
        std::cell::RefCell::new((Box::default(), Weak::new()));
}

/// The process's one copy of the value `json` holds; `None` when it is not JSON.
pub fn intern_json(json: &RawValue) -> Option<Arc<Value>> {
    let found = LAST_JSON.with(|l| {
        let last = l.borrow();
        (*last.0 == *json.get()).then(|| last.1.upgrade()).flatten()
    });
    if found.is_some() {
        return found;
    }
    let value: Value = serde_json::from_str(json.get()).ok()?;
    let shared = intern(&value);
    LAST_JSON.with(|l| *l.borrow_mut() = (json.get().into(), Arc::downgrade(&shared)));
    Some(shared)
}

/// The process's one copy of `value` (made now if no live session holds an equal one).
pub fn intern(value: &Value) -> Arc<Value> {
    // Scalars are as small as the pointer: no need to share them.
    if !(value.is_object() || value.is_array()) {
        return Arc::new(value.clone());
    }
    if let Some(last) = LAST.with(|l| l.borrow().upgrade()) {
        if *last == *value {
            return last;
        }
    }
    let shared = shared(value);
    LAST.with(|l| *l.borrow_mut() = Arc::downgrade(&shared));
    shared
}

/// The table's copy of `value`, made now when no live one is equal.
fn shared(value: &Value) -> Arc<Value> {
    let key = crate::conformance::fingerprint(value);
    // A poisoned lock only means another thread panicked mid-insert; the map is usable.
    let mut guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let table = guard.get_or_insert_with(|| Table {
        values: HashMap::new(),
        swept_at: 0,
    });
    let bucket = table.values.entry(key).or_default();
    if let Some(live) = bucket
        .iter()
        .filter_map(Weak::upgrade)
        .find(|live| **live == *value)
    {
        return live;
    }
    let shared = Arc::new(value.clone());
    bucket.retain(|v| v.strong_count() > 0);
    bucket.push(Arc::downgrade(&shared));
    if table.values.len() > 2 * table.swept_at.max(64) {
        table.values.retain(|_, bucket| {
            bucket.retain(|v| v.strong_count() > 0);
            !bucket.is_empty()
        });
        table.swept_at = table.values.len();
    }
    shared
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_share_one_copy_and_different_ones_do_not() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let a = intern(&schema);
        let b = intern(&schema.clone());
        assert!(Arc::ptr_eq(&a, &b), "equal schemas share one allocation");
        let other = intern(&json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
        assert!(!Arc::ptr_eq(&a, &other));
        // The thread's last value is `other` now; `schema` is found in the table.
        assert!(Arc::ptr_eq(&a, &intern(&schema)));
        assert!(Arc::ptr_eq(&other, &intern(&other.as_ref().clone())));
        assert_eq!(
            *other,
            json!({"type": "object", "properties": {"n": {"type": "integer"}}})
        );
        assert_eq!(*a, schema);
    }

    #[test]
    fn json_text_is_matched_by_its_bytes_and_then_by_its_value() {
        let raw = |s: &str| RawValue::from_string(s.to_string()).expect("json");
        let a = intern_json(&raw(r#"{"tools":{"listChanged":true},"x-json-test":1}"#));
        let b = intern_json(&raw(r#"{"tools":{"listChanged":true},"x-json-test":1}"#));
        let a = a.expect("json");
        assert!(Arc::ptr_eq(&a, &b.expect("json")), "the same bytes");
        // Other bytes of an equal value share it too; a different value does not.
        let spaced = intern_json(&raw(
            r#"{ "x-json-test": 1, "tools": {"listChanged": true} }"#,
        ));
        assert!(Arc::ptr_eq(&a, &spaced.expect("json")));
        let other = intern_json(&raw(r#"{"x-json-test":2}"#)).expect("json");
        assert_eq!(*other, json!({"x-json-test": 2}));
        assert!(!Arc::ptr_eq(&a, &other));
        assert_eq!(
            *a,
            json!({"tools": {"listChanged": true}, "x-json-test": 1})
        );
        // Once nobody holds it, the remembered text does not bring a dead value back.
        drop((a, other));
        let again = intern_json(&raw(r#"{"x-json-test":2}"#)).expect("json");
        assert_eq!(*again, json!({"x-json-test": 2}));
    }

    #[test]
    fn a_value_no_session_holds_any_more_is_made_again_and_dead_entries_are_dropped() {
        let one = json!({"unique-to-this-test": [1, 2, 3]});
        let first = intern(&one);
        drop(first);
        let again = intern(&one);
        assert_eq!(
            *again, one,
            "made again from the value, not from a dead entry"
        );
        // Many distinct values nobody keeps: the table sweeps them as it grows.
        for i in 0..1_000 {
            let _ = intern(&json!({"sweep-test": i}));
        }
        let guard = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        let len = guard.as_ref().map_or(0, |t| t.values.len());
        assert!(len < 1_000, "dead entries were swept ({len} left)");
    }
}
