//! Schema plumbing: local `$ref`s (JSON pointers into the tool's own schema), `allOf`
//! merged into one schema, and a light validator for what the generator cannot build
//! valid by construction (a `default` to trust, the one `oneOf` branch to match).

use std::borrow::Cow;
use std::cell::Cell;

use serde_json::{Map, Value};

use super::numbers::{is_multiple, multiple_of, Range};
use super::strings;

/// Keywords beside a `$ref` that do not constrain a value (pydantic adds these).
const ANNOTATIONS: [&str; 8] = [
    "$ref",
    "title",
    "description",
    "$comment",
    "$defs",
    "definitions",
    "$schema",
    "$id",
];

/// The schema a local reference (`#`, `#/$defs/Name`, `#/definitions/a~1b`) points to in
/// `root`; None for remote or broken references.
pub(super) fn lookup<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    if !pointer.starts_with('/') {
        return None; // a named anchor: not followed
    }
    let mut node = root;
    for token in pointer[1..].split('/') {
        let token = percent_decode(token).replace("~1", "/").replace("~0", "~");
        node = match node {
            Value::Object(o) => o.get(&token)?,
            Value::Array(a) => a.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(node)
}

fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

/// `schema` with its `$ref` followed and its `allOf` merged in, and how many references
/// that followed (the generator bounds recursion by them).
pub(super) fn resolve<'s>(root: &'s Value, schema: &'s Value) -> (Cow<'s, Value>, usize) {
    resolve_at(root, schema, 0)
}

/// Nesting of `$ref`-with-siblings and `allOf` parts resolved within one schema.
const RESOLVE_DEPTH: usize = 8;

fn resolve_at<'s>(root: &'s Value, schema: &'s Value, depth: usize) -> (Cow<'s, Value>, usize) {
    if depth > RESOLVE_DEPTH {
        return (Cow::Owned(Value::Bool(true)), 0);
    }
    let mut current = Cow::Borrowed(schema);
    let mut refs = 0;
    for _ in 0..16 {
        let Value::Object(o) = current.as_ref() else {
            break;
        };
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            refs += 1;
            let target = lookup(root, r).unwrap_or(&Value::Bool(true));
            let constrained = o.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()));
            current = if constrained {
                let mut rest = o.clone();
                rest.remove("$ref");
                let (target, n) = resolve_at(root, target, depth + 1);
                refs += n;
                Cow::Owned(merge(&Value::Object(rest), &target))
            } else {
                Cow::Borrowed(target)
            };
            continue;
        }
        if let Some(parts) = o.get("allOf").and_then(Value::as_array) {
            let mut rest = o.clone();
            rest.remove("allOf");
            let mut merged = Value::Object(rest);
            for part in parts {
                let (part, n) = resolve_at(root, part, depth + 1);
                refs += n;
                merged = merge(&merged, &part);
            }
            current = Cow::Owned(merged);
            continue;
        }
        break;
    }
    (current, refs)
}

/// One schema that asks what both `a` and `b` ask, near enough for generation: types
/// intersected, bounds tightened, properties and `required` joined (a property in both
/// gets both schemas), enums intersected; other keywords `a`'s, else `b`'s.
pub(super) fn merge(a: &Value, b: &Value) -> Value {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return match (a, b) {
            (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
            (Value::Object(_), _) => a.clone(),
            _ => b.clone(),
        };
    };
    let mut out = a.clone();
    for (k, bv) in b {
        let Some(av) = a.get(k) else {
            out.insert(k.clone(), bv.clone());
            continue;
        };
        let num = |v: &Value| v.as_f64();
        let merged = match k.as_str() {
            "type" => {
                let list = |v: &Value| -> Vec<Value> {
                    match v {
                        Value::Array(a) => a.clone(),
                        v => vec![v.clone()],
                    }
                };
                let (la, lb) = (list(av), list(bv));
                let both: Vec<Value> = la
                    .iter()
                    .filter(|t| {
                        lb.contains(t)
                            || (t.as_str() == Some("integer")
                                && lb.contains(&Value::from("number")))
                    })
                    .cloned()
                    .collect();
                let both = if both.is_empty() {
                    lb.iter()
                        .filter(|t| {
                            t.as_str() == Some("integer") && la.contains(&Value::from("number"))
                        })
                        .cloned()
                        .collect()
                } else {
                    both
                };
                match both.len() {
                    0 => av.clone(),
                    1 => both[0].clone(),
                    _ => Value::Array(both),
                }
            }
            "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties"
                if num(av).is_some() && num(bv).is_some() =>
            {
                if num(bv) > num(av) {
                    bv.clone()
                } else {
                    av.clone()
                }
            }
            "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties"
                if num(av).is_some() && num(bv).is_some() =>
            {
                if num(bv) < num(av) {
                    bv.clone()
                } else {
                    av.clone()
                }
            }
            "multipleOf" => match (num(av), num(bv)) {
                (Some(x), Some(y)) if is_multiple(y, x) => bv.clone(),
                (Some(x), Some(y)) if x.fract() == 0.0 && y.fract() == 0.0 => {
                    let (mut p, mut q) = (x as u64, y as u64);
                    while q != 0 {
                        (p, q) = (q, p % q);
                    }
                    Value::from((x as u64 / p.max(1)) * y as u64)
                }
                _ => av.clone(),
            },
            "required" => {
                let mut names = av.as_array().cloned().unwrap_or_default();
                for n in bv.as_array().into_iter().flatten() {
                    if !names.contains(n) {
                        names.push(n.clone());
                    }
                }
                Value::Array(names)
            }
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                let mut props = av.as_object().cloned().unwrap_or_default();
                for (name, s) in bv.as_object().into_iter().flatten() {
                    let joined = match props.get(name) {
                        Some(existing) => both(existing, s),
                        None => s.clone(),
                    };
                    props.insert(name.clone(), joined);
                }
                Value::Object(props)
            }
            "additionalProperties" | "items" => match (av, bv) {
                (Value::Bool(false), _) | (_, Value::Bool(false)) => Value::Bool(false),
                (Value::Bool(true), other) | (other, Value::Bool(true)) => other.clone(),
                (x, y) if x.is_object() && y.is_object() => both(x, y),
                _ => av.clone(),
            },
            "enum" => match (av.as_array(), bv.as_array()) {
                (Some(x), Some(y)) => Value::Array(
                    x.iter()
                        .filter(|v| y.iter().any(|w| same(v, w)))
                        .cloned()
                        .collect(),
                ),
                _ => av.clone(),
            },
            _ => av.clone(),
        };
        out.insert(k.clone(), merged);
    }
    // `a` wins for an enum that `b`'s const narrows: the const.
    if let (Some(c), Some(_)) = (b.get("const"), a.get("enum")) {
        out.insert("const".into(), c.clone());
    }
    Value::Object(out)
}

fn both(a: &Value, b: &Value) -> Value {
    let mut m = Map::new();
    m.insert("allOf".into(), Value::Array(vec![a.clone(), b.clone()]));
    Value::Object(m)
}

/// Equality as JSON Schema means it (1 equals 1.0).
pub(super) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Whether the JSON type `t` holds `v`.
pub(super) fn has_type(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|n| n.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// Whether `v` validates against `schema` (references into `root`), for the keywords
/// the generator knows; `format` and remote references are taken as met.
pub(super) fn valid(root: &Value, schema: &Value, v: &Value) -> bool {
    check(root, schema, v, 0, &Cell::new(CHECK_BUDGET))
}

/// Subschemas one `valid` looks at before it takes the rest as met (a schema of
/// self-references in `anyOf`s would otherwise take exponential time).
const CHECK_BUDGET: u32 = 2_000;

fn check(root: &Value, schema: &Value, v: &Value, depth: usize, budget: &Cell<u32>) -> bool {
    if budget.get() == 0 {
        return true;
    }
    budget.set(budget.get() - 1);
    let o = match schema {
        Value::Bool(b) => return *b,
        Value::Object(o) => o,
        _ => return true,
    };
    if depth > 24 {
        return true;
    }
    let sub = |s: &Value, v: &Value| check(root, s, v, depth + 1, budget);
    if let Some(r) = o.get("$ref").and_then(Value::as_str) {
        if let Some(target) = lookup(root, r) {
            if !sub(target, v) {
                return false;
            }
        }
    }
    let list = |k: &str| o.get(k).and_then(Value::as_array);
    if let Some(parts) = list("allOf") {
        if !parts.iter().all(|p| sub(p, v)) {
            return false;
        }
    }
    if let Some(parts) = list("anyOf") {
        if !parts.iter().any(|p| sub(p, v)) {
            return false;
        }
    }
    if let Some(parts) = list("oneOf") {
        if parts.iter().filter(|p| sub(p, v)).take(2).count() != 1 {
            return false;
        }
    }
    if let Some(not) = o.get("not") {
        if sub(not, v) {
            return false;
        }
    }
    if let Some(c) = o.get("const") {
        if !same(c, v) {
            return false;
        }
    }
    if let Some(options) = list("enum") {
        if !options.iter().any(|e| same(e, v)) {
            return false;
        }
    }
    match o.get("type") {
        Some(Value::String(t)) if !has_type(t, v) => return false,
        Some(Value::Array(ts)) if !ts.iter().filter_map(Value::as_str).any(|t| has_type(t, v)) => {
            return false
        }
        _ => {}
    }
    let count = |k: &str| o.get(k).and_then(Value::as_u64);
    match v {
        Value::Number(n) => {
            let Some(x) = n.as_f64() else { return true };
            let bounded = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
                .iter()
                .any(|k| o.contains_key(*k));
            if bounded {
                let mut r = Range::of(schema);
                // Range fills a missing side with a span; a validator does not.
                if !o.contains_key("minimum")
                    && !o.get("exclusiveMinimum").is_some_and(Value::is_number)
                {
                    r.lo = f64::NEG_INFINITY;
                }
                if !o.contains_key("maximum")
                    && !o.get("exclusiveMaximum").is_some_and(Value::is_number)
                {
                    r.hi = f64::INFINITY;
                }
                if !r.contains(x) {
                    return false;
                }
            }
            if let Some(m) = multiple_of(schema) {
                if !is_multiple(x, m) {
                    return false;
                }
            }
        }
        Value::String(s) => {
            let n = s.chars().count() as u64;
            if count("minLength").is_some_and(|m| n < m)
                || count("maxLength").is_some_and(|m| n > m)
            {
                return false;
            }
            if let Some(p) = o.get("pattern").and_then(Value::as_str) {
                if strings::matches(p, s) == Some(false) {
                    return false;
                }
            }
        }
        Value::Array(items) => {
            let n = items.len() as u64;
            if count("minItems").is_some_and(|m| n < m) || count("maxItems").is_some_and(|m| n > m)
            {
                return false;
            }
            if o.get("uniqueItems") == Some(&Value::Bool(true)) {
                for (i, a) in items.iter().enumerate() {
                    if items[i + 1..].iter().any(|b| same(a, b)) {
                        return false;
                    }
                }
            }
            let prefix = o
                .get("prefixItems")
                .and_then(Value::as_array)
                .or_else(|| o.get("items").and_then(Value::as_array));
            let rest = match (o.get("prefixItems"), o.get("items")) {
                (Some(_), rest) => rest,
                (None, Some(Value::Array(_))) => o.get("additionalItems"),
                (None, rest) => rest,
            };
            for (i, item) in items.iter().enumerate() {
                let s = prefix.and_then(|p| p.get(i)).or(rest);
                if let Some(s) = s {
                    if !sub(s, item) {
                        return false;
                    }
                }
            }
        }
        Value::Object(map) => {
            let n = map.len() as u64;
            if count("minProperties").is_some_and(|m| n < m)
                || count("maxProperties").is_some_and(|m| n > m)
            {
                return false;
            }
            for r in list("required")
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !map.contains_key(r) {
                    return false;
                }
            }
            let props = o.get("properties").and_then(Value::as_object);
            let patterns = o.get("patternProperties").and_then(Value::as_object);
            for (k, item) in map {
                let mut known = false;
                if let Some(s) = props.and_then(|p| p.get(k)) {
                    known = true;
                    if !sub(s, item) {
                        return false;
                    }
                }
                for (p, s) in patterns.into_iter().flatten() {
                    if strings::matches(p, k) == Some(true) {
                        known = true;
                        if !sub(s, item) {
                            return false;
                        }
                    }
                }
                if !known {
                    if let Some(extra) = o.get("additionalProperties") {
                        if !sub(extra, item) {
                            return false;
                        }
                    }
                }
            }
        }
        _ => {}
    }
    true
}
