//! Tool arguments generated from a tool's `inputSchema`, seeded so a run repeats: every
//! required property, optional ones half the time, respecting types, `enum`/`const`,
//! numeric ranges, string lengths and formats, array sizes and nested objects. The
//! values are plausible, not adversarial: the point is load a server accepts.

use rand::Rng;
use serde_json::{json, Map, Value};

/// Deepest nesting followed; deeper schemas get an empty object.
const MAX_DEPTH: usize = 8;

/// Arguments for a tool whose `inputSchema` is `schema`.
pub fn generate(schema: &Value, rng: &mut impl Rng) -> Value {
    match value(schema, rng, 0) {
        v @ Value::Object(_) => v,
        _ => json!({}),
    }
}

fn value(schema: &Value, rng: &mut impl Rng, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return json!({});
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.is_empty() {
            return options[rng.random_range(0..options.len())].clone();
        }
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            if !options.is_empty() {
                let pick = &options[rng.random_range(0..options.len())];
                return value(pick, rng, depth + 1);
            }
        }
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        // Merge the object parts; good enough for the usual "base + extension" use.
        let mut merged = Map::new();
        for part in all {
            if let Value::Object(o) = value(part, rng, depth + 1) {
                merged.extend(o);
            }
        }
        return Value::Object(merged);
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // ["string", "null"]: the first non-null type.
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match ty {
        "object" => object(schema, rng, depth),
        "array" => array(schema, rng, depth),
        "integer" => integer(schema, rng),
        "number" => number(schema, rng),
        "boolean" => Value::Bool(rng.random_bool(0.5)),
        "null" => Value::Null,
        _ => string(schema, rng),
    }
}

fn object(schema: &Value, rng: &mut impl Rng, depth: usize) -> Value {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Map::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if required.contains(&name.as_str()) || rng.random_bool(0.5) {
                out.insert(name.clone(), value(prop, rng, depth + 1));
            }
        }
    }
    Value::Object(out)
}

fn array(schema: &Value, rng: &mut impl Rng, depth: usize) -> Value {
    let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
    let max = schema
        .get("maxItems")
        .and_then(Value::as_u64)
        .unwrap_or(min + 3)
        .max(min);
    let n = rng.random_range(min..=max.min(min + 8));
    let items = schema.get("items").cloned().unwrap_or(json!({}));
    Value::Array((0..n).map(|_| value(&items, rng, depth + 1)).collect())
}

fn bound(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn integer(schema: &Value, rng: &mut impl Rng) -> Value {
    let lo = bound(schema, "minimum")
        .or_else(|| bound(schema, "exclusiveMinimum").map(|v| v + 1.0))
        .unwrap_or(0.0)
        .ceil() as i64;
    let hi = bound(schema, "maximum")
        .or_else(|| bound(schema, "exclusiveMaximum").map(|v| v - 1.0))
        .unwrap_or(lo as f64 + 100.0)
        .floor() as i64;
    let v = if hi >= lo {
        rng.random_range(lo..=hi)
    } else {
        lo
    };
    json!(v)
}

fn number(schema: &Value, rng: &mut impl Rng) -> Value {
    let lo = bound(schema, "minimum")
        .or_else(|| bound(schema, "exclusiveMinimum"))
        .unwrap_or(0.0);
    let hi = bound(schema, "maximum")
        .or_else(|| bound(schema, "exclusiveMaximum"))
        .unwrap_or(lo + 100.0);
    let v = if hi > lo {
        rng.random_range(lo..hi)
    } else {
        lo
    };
    json!(v)
}

fn string(schema: &Value, rng: &mut impl Rng) -> Value {
    let fixed = match schema.get("format").and_then(Value::as_str) {
        Some("email") => Some("fleet@example.com"),
        Some("uri" | "url") => Some("https://example.com/fleet"),
        Some("date") => Some("2026-07-28"),
        Some("date-time") => Some("2026-07-28T12:00:00Z"),
        Some("uuid") => Some("6f1c1c2e-8b7a-4c1e-9a55-2f0d3c1b7e01"),
        _ => None,
    };
    if let Some(f) = fixed {
        return json!(f);
    }
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(1);
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .unwrap_or(min.max(12))
        .max(min);
    let len = rng.random_range(min..=max.min(min + 16)) as usize;
    let text: String = (0..len)
        .map(|_| char::from(b'a' + rng.random_range(0..26u8)))
        .collect();
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 3, "maxLength": 5},
                "units": {"type": "string", "enum": ["c", "f"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
                "ratio": {"type": "number", "minimum": 0.5, "maximum": 0.75},
                "flag": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
                "where": {"type": "object", "required": ["lat"], "properties": {
                    "lat": {"type": "number", "minimum": -90, "maximum": 90},
                    "label": {"type": ["string", "null"]}
                }},
                "mode": {"const": "fast"}
            },
            "required": ["city", "units", "days", "ratio", "flag", "tags", "where", "mode"]
        })
    }

    #[test]
    fn required_fields_respect_their_schema() {
        let mut rng = SmallRng::seed_from_u64(11);
        for _ in 0..200 {
            let a = generate(&schema(), &mut rng);
            let city = a["city"].as_str().expect("city");
            assert!((3..=5).contains(&city.len()), "{city}");
            assert!(["c", "f"].contains(&a["units"].as_str().expect("units")));
            assert!((1..=7).contains(&a["days"].as_i64().expect("days")));
            let r = a["ratio"].as_f64().expect("ratio");
            assert!((0.5..0.75).contains(&r));
            assert!(a["flag"].is_boolean());
            assert_eq!(a["tags"].as_array().map(Vec::len), Some(2));
            let lat = a["where"]["lat"].as_f64().expect("nested required");
            assert!((-90.0..=90.0).contains(&lat));
            assert_eq!(a["mode"], "fast");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_arguments() {
        let a = generate(&schema(), &mut SmallRng::seed_from_u64(5));
        let b = generate(&schema(), &mut SmallRng::seed_from_u64(5));
        let c = generate(&schema(), &mut SmallRng::seed_from_u64(6));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn odd_schemas_still_give_an_object() {
        let mut rng = SmallRng::seed_from_u64(1);
        assert_eq!(generate(&json!({}), &mut rng), json!({}));
        assert_eq!(generate(&json!({"type": "object"}), &mut rng), json!({}));
        let one_of = json!({"type": "object", "required": ["x"], "properties": {
            "x": {"oneOf": [{"type": "integer", "minimum": 3, "maximum": 3}]}}});
        assert_eq!(generate(&one_of, &mut rng)["x"], 3);
    }
}
