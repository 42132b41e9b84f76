//! Objects generated from a schema: required and optional properties, pattern and
//! additional properties, dependencies, and the property counts.

use std::borrow::Cow;

use rand::Rng;
use serde_json::{json, Map, Value};

use super::{strings, Gen};

impl<R: Rng> Gen<'_, R> {
    /// An object: the pins as given, the required properties, optional ones by the
    /// configured share, and what `dependentRequired` and the property counts ask for.
    pub(super) fn object(&mut self, s: &Value, pins: Option<&Map<String, Value>>) -> Value {
        let empty = Map::new();
        let props = s
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let patterns = s.get("patternProperties").and_then(Value::as_object);
        let extra = s.get("additionalProperties");
        let names = |k: &str| -> Vec<&str> {
            s.get(k)
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default()
        };
        let required = names("required");
        let pinned = |n: &str| pins.is_some_and(|p| p.contains_key(n));
        let share = if self.shallow() { 0.0 } else { self.optional };
        let mut chosen: Vec<String> = required.iter().map(|n| n.to_string()).collect();
        let mut optional: Vec<&String> = Vec::new();
        for name in props.keys() {
            if required.contains(&name.as_str()) || pinned(name) {
                continue;
            }
            if self.rng.random_bool(share) {
                chosen.push(name.clone());
            } else {
                optional.push(name);
            }
        }
        // Nested objects with properties are not sent empty when they can be filled.
        if self.depth > 1 && chosen.is_empty() && !optional.is_empty() && !self.shallow() {
            let i = self.rng.random_range(0..optional.len());
            chosen.push(optional.remove(i).clone());
        }
        // A property present brings the ones it depends on.
        let dependents = s
            .get("dependentRequired")
            .or_else(|| s.get("dependencies"))
            .and_then(Value::as_object);
        if let Some(deps) = dependents {
            for _ in 0..deps.len() {
                let mut added = false;
                for (name, needs) in deps {
                    let present = chosen.contains(name) || pinned(name);
                    for need in needs
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                    {
                        if present && !chosen.iter().any(|c| c == need) && !pinned(need) {
                            chosen.push(need.to_string());
                            optional.retain(|o| *o != need);
                            added = true;
                        }
                    }
                }
                if !added {
                    break;
                }
            }
        }
        let count = |k: &str| s.get(k).and_then(Value::as_u64).map(|n| n as usize);
        let pinned_n = pins.map_or(0, |p| p.len());
        if let Some(max) = count("maxProperties") {
            while chosen.len() + pinned_n > max && chosen.len() > required.len() {
                chosen.pop();
            }
        }
        if let Some(min) = count("minProperties") {
            while chosen.len() + pinned_n < min && !optional.is_empty() {
                chosen.push(optional.remove(0).clone());
            }
            let open = extra != Some(&Value::Bool(false)) || patterns.is_some();
            for i in 0..min.min(64) {
                if chosen.len() + pinned_n >= min || !open {
                    break;
                }
                let name = match patterns.and_then(|p| p.keys().next()) {
                    Some(p) if extra == Some(&Value::Bool(false)) => {
                        let s = json!({"type": "string", "pattern": p, "minLength": 1});
                        strings::string(&s, self.rng)
                            .as_str()
                            .unwrap_or_default()
                            .to_string()
                    }
                    _ => format!("extra{i}"),
                };
                if !name.is_empty() && !chosen.contains(&name) && !pinned(&name) {
                    chosen.push(name);
                }
            }
        }
        let mut out = pins.cloned().unwrap_or_default();
        for name in chosen {
            if out.contains_key(&name) {
                continue;
            }
            let mut parts: Vec<&Value> = props.get(&name).into_iter().collect();
            for (p, ps) in patterns.into_iter().flatten() {
                if strings::matches(p, &name) == Some(true) {
                    parts.push(ps);
                }
            }
            let schema: Cow<'_, Value> = match parts.as_slice() {
                [] => match extra {
                    Some(e @ Value::Object(_)) => Cow::Borrowed(e),
                    _ => Cow::Owned(json!({"type": "string"})),
                },
                [one] => Cow::Borrowed(*one),
                many => Cow::Owned(json!({ "allOf": many })),
            };
            let v = self.value(&schema, None);
            out.insert(name, v);
        }
        Value::Object(out)
    }
}
