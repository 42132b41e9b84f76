//! The small rules every derived profile shares: names a profile accepts (persona,
//! scenario, pool), durations as profiles write them, and recorded values made safe to
//! write as TOML and as template text.

use serde_json::Value;
use std::collections::BTreeSet;

/// `name` with every character outside `[A-Za-z0-9._-]` replaced by `-`, runs of `-`
/// folded, no `-` at either end; `fallback` when nothing is left.
pub fn sanitize(name: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            c
        } else {
            '-'
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() {
        fallback.to_string()
    } else {
        out.to_string()
    }
}

/// A pool name (`[A-Za-z_][A-Za-z0-9_-]*`) from a tool's name.
pub fn pool_name(tool: &str) -> String {
    let s: String = sanitize(tool, "args")
        .chars()
        .map(|c| if c == '.' { '_' } else { c })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        s
    } else {
        format!("_{s}")
    }
}

/// Hands out names not handed out before: `base`, then `base-2`, `base-3` …
#[derive(Debug, Default)]
pub struct Unique(BTreeSet<String>);

impl Unique {
    pub fn take(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while !self.0.insert(name.clone()) {
            name = format!("{base}-{n}");
            n += 1;
        }
        name
    }
}

/// Microseconds rounded to the nearest millisecond.
pub fn round_ms(us: f64) -> u64 {
    if us.is_finite() && us > 0.0 {
        ((us / 1000.0).round()) as u64
    } else {
        0
    }
}

/// `"123ms"`: what every parser of durations in a profile reads.
pub fn ms(ms: u64) -> String {
    format!("{ms}ms")
}

/// The shortest gap written as a pause: shorter ones are the client's own processing.
pub const MIN_PAUSE_US: u64 = 1000;

/// A recorded string as template text: `${` is written `$${` so that it is sent as it was.
pub fn literal(s: &str) -> String {
    s.replace("${", "$${")
}

/// `v` made writable as TOML, which has no null and no integer above `i64::MAX`:
/// nulls are left out (of objects and arrays), such integers become floats. Whether
/// anything changed.
pub fn toml_safe(v: &mut Value) -> bool {
    match v {
        Value::Object(fields) => {
            let before = fields.len();
            fields.retain(|_, v| !v.is_null());
            let mut changed = fields.len() != before;
            for v in fields.values_mut() {
                changed |= toml_safe(v);
            }
            changed
        }
        Value::Array(items) => {
            let before = items.len();
            items.retain(|v| !v.is_null());
            let mut changed = items.len() != before;
            for v in items.iter_mut() {
                changed |= toml_safe(v);
            }
            changed
        }
        Value::Number(n) if n.is_u64() && n.as_i64().is_none() => {
            let f = n.as_f64().unwrap_or_default();
            *v = serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_sanitized_and_unique() {
        assert_eq!(
            sanitize("Claude Code/1.2 (beta)", "x"),
            "Claude-Code-1.2-beta"
        );
        assert_eq!(sanitize("  ", "client"), "client");
        assert_eq!(pool_name("9.search"), "_9_search");
        let mut u = Unique::default();
        assert_eq!(u.take("a"), "a");
        assert_eq!(u.take("a"), "a-2");
        assert_eq!(u.take("a"), "a-3");
    }

    #[test]
    fn values_are_made_safe_for_toml_and_templates() {
        let mut v = json!({"a": null, "b": [1, null], "c": u64::MAX, "d": "x"});
        assert!(toml_safe(&mut v));
        assert_eq!(v["b"], json!([1]));
        assert!(v.get("a").is_none() && v["c"].is_f64());
        assert!(!toml_safe(&mut json!({"d": "x"})));
        assert_eq!(literal("a ${x} $${y}"), "a $${x} $$${y}");
        assert_eq!(
            (round_ms(1499.0), round_ms(1500.0), ms(3)),
            (1, 2, "3ms".into())
        );
    }
}
