//! Tool arguments generated from a tool's `inputSchema`, seeded so a run repeats: every
//! required property, optional ones half the time, respecting types (integer apart from
//! number), `const`/`enum`, `default`/`examples`, numeric ranges (inclusive and
//! exclusive, draft-4 booleans too) and `multipleOf`, string lengths and formats, array
//! sizes and nested objects. The values are plausible, not adversarial: the point is
//! load a server accepts, so a valid schema must always get a valid call.

use rand::Rng;
use serde_json::{json, Map, Value};

/// Deepest nesting followed; deeper schemas get an empty object.
const MAX_DEPTH: usize = 8;

/// Width of a numeric range when the schema gives one bound or none.
const SPAN: f64 = 100.0;

/// How arguments are generated (the plan's `[arguments]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Generation {
    /// The share of optional properties included.
    pub optional: f64,
}

impl Default for Generation {
    fn default() -> Self {
        Generation { optional: 0.5 }
    }
}

/// Arguments for a tool whose `inputSchema` is `schema`, keeping the `pins` the profile
/// gives as they are and generating the other properties.
/// CONTRACT: the generator part makes `gen` count and pins shape the rest (a pinned
/// property is never generated, and a schema's dependencies on it are respected).
pub fn generate_with(
    schema: &Value,
    pins: &Map<String, Value>,
    _gen: &Generation,
    rng: &mut impl Rng,
) -> Value {
    let mut out = match generate(schema, rng) {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    for (k, v) in pins {
        out.insert(k.clone(), v.clone());
    }
    Value::Object(out)
}

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
    if let Some(v) = suggested(schema, rng) {
        return v;
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
    match type_of(schema) {
        "object" => object(schema, rng, depth),
        "array" => array(schema, rng, depth),
        "integer" => integer(schema, rng),
        "number" => number(schema, rng),
        "boolean" => Value::Bool(rng.random_bool(0.5)),
        "null" => Value::Null,
        _ => string(schema, rng),
    }
}

/// The type to generate: the declared one (for `["string", "null"]` the first non-null
/// one), else what the keywords imply.
fn type_of(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ => {
            let has = |k: &str| schema.get(k).is_some();
            if has("properties") || has("required") {
                "object"
            } else if has("items") || has("minItems") || has("maxItems") {
                "array"
            } else if ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
                .iter()
                .any(|k| has(k))
                || has("multipleOf")
            {
                "number"
            } else {
                "string"
            }
        }
    }
}

/// The schema's own suggestion, half the time each: `default`, then one of `examples`.
/// Only a value of a declared type is taken (a schema's `default` is not validated by
/// the server's own tooling, and a mismatched one would make an invalid call).
fn suggested(schema: &Value, rng: &mut impl Rng) -> Option<Value> {
    if let Some(d) = schema.get("default").filter(|d| fits_type(schema, d)) {
        if rng.random_bool(0.5) {
            return Some(d.clone());
        }
    }
    let examples: Vec<&Value> = schema
        .get("examples")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|e| fits_type(schema, e))
        .collect();
    if !examples.is_empty() && rng.random_bool(0.5) {
        return Some(examples[rng.random_range(0..examples.len())].clone());
    }
    None
}

/// Whether `v` is of a type the schema declares (any, when it declares none).
fn fits_type(schema: &Value, v: &Value) -> bool {
    let one = |t: &str| match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_f64().is_some_and(|n| n.fract() == 0.0),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    };
    match schema.get("type") {
        Some(Value::String(t)) => one(t),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).any(one),
        _ => true,
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

/// A numeric range from `minimum`/`maximum` and their exclusive forms (a number since
/// draft 6, a boolean beside `minimum`/`maximum` in draft 4).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Range {
    lo: f64,
    lo_open: bool,
    hi: f64,
    hi_open: bool,
}

impl Range {
    fn of(schema: &Value) -> Range {
        let num = |k: &str| schema.get(k).and_then(Value::as_f64);
        let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
        let side = |inclusive: &str, exclusive: &str, tighter: fn(f64, f64) -> bool| {
            let (inc, exc) = (num(inclusive), num(exclusive));
            match (inc, exc) {
                (Some(i), Some(e)) if tighter(e, i) || e == i => Some((e, true)),
                (Some(i), _) => Some((i, flag(exclusive))),
                (None, Some(e)) => Some((e, true)),
                (None, None) => None,
            }
        };
        let lo = side("minimum", "exclusiveMinimum", |a, b| a > b);
        let hi = side("maximum", "exclusiveMaximum", |a, b| a < b);
        let ((lo, lo_open), (hi, hi_open)) = match (lo, hi) {
            (Some(l), Some(h)) => (l, h),
            (Some(l), None) => (l, (l.0 + SPAN, false)),
            (None, Some(h)) => ((h.0 - SPAN, false), h),
            (None, None) => ((0.0, false), (SPAN, false)),
        };
        Range {
            lo,
            lo_open,
            hi,
            hi_open,
        }
    }

    fn contains(&self, v: f64) -> bool {
        let above = if self.lo_open {
            v > self.lo
        } else {
            v >= self.lo
        };
        let below = if self.hi_open {
            v < self.hi
        } else {
            v <= self.hi
        };
        above && below
    }

    /// The multiples k·step inside the range, as the smallest and largest k.
    fn multiples(&self, step: f64) -> Option<(i64, i64)> {
        let mut first = (self.lo / step).ceil();
        let mut last = (self.hi / step).floor();
        if !self.contains(first * step) {
            first += 1.0;
        }
        if !self.contains(last * step) {
            last -= 1.0;
        }
        let clamp = |k: f64| k.clamp(-9.0e15, 9.0e15) as i64;
        (first <= last).then(|| (clamp(first), clamp(last)))
    }
}

fn multiple_of(schema: &Value) -> Option<f64> {
    schema
        .get("multipleOf")
        .and_then(Value::as_f64)
        .filter(|m| *m > 0.0 && m.is_finite())
}

fn integer(schema: &Value, rng: &mut impl Rng) -> Value {
    let range = Range::of(schema);
    // An integer multiple of a fractional step (0.5 → 1, 0.25 → 1, 1.5 → 3).
    let step = match multiple_of(schema) {
        Some(m) => (1..=1000)
            .map(|n| m * f64::from(n))
            .find(|s| s.fract() == 0.0)
            .unwrap_or(1.0),
        None => 1.0,
    };
    match range.multiples(step) {
        Some((first, last)) => json!((rng.random_range(first..=last) as f64 * step) as i64),
        // No integer fits: the schema cannot be satisfied; send its lower bound.
        None => json!(range.lo.ceil() as i64),
    }
}

fn number(schema: &Value, rng: &mut impl Rng) -> Value {
    let range = Range::of(schema);
    let Some(step) = multiple_of(schema) else {
        let v = if range.hi > range.lo {
            rng.random_range(range.lo..=range.hi)
        } else {
            range.lo
        };
        let v = if range.contains(v) {
            v
        } else {
            (range.lo + range.hi) / 2.0
        };
        return json!(v);
    };
    let Some((first, last)) = range.multiples(step) else {
        return json!(range.lo);
    };
    // k·step in binary floating point is rarely an exact multiple of step (0.1·3 is
    // 0.30000000000000004): round to step's decimals and keep a value whose quotient by
    // step is whole, as validators compute it.
    let decimals = step.to_string().split_once('.').map_or(0, |(_, d)| d.len());
    let tidy = |k: i64| -> f64 {
        let raw = k as f64 * step;
        format!("{raw:.decimals$}").parse().unwrap_or(raw)
    };
    let whole = |v: f64| (v / step) % 1.0 < f64::EPSILON;
    for _ in 0..16 {
        let v = tidy(rng.random_range(first..=last));
        if whole(v) && range.contains(v) {
            return json!(v);
        }
    }
    // Multiples of step that are whole numbers divide exactly; so does 0.
    (first..=last)
        .take(10_000)
        .map(tidy)
        .find(|v| whole(*v) && range.contains(*v))
        .map_or(json!(tidy(first)), |v| json!(v))
}

fn string(schema: &Value, rng: &mut impl Rng) -> Value {
    if let Some(f) = schema.get("format").and_then(Value::as_str) {
        if let Some(text) = formatted(f, rng) {
            return Value::String(text);
        }
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

/// A seeded value of a string `format` (JSON Schema's formats), or None for formats we
/// do not know (then the string is free text).
fn formatted(format: &str, rng: &mut impl Rng) -> Option<String> {
    let n: u32 = rng.random_range(1..10_000);
    let text = match format {
        "date-time" => {
            let d = date(rng);
            format!("{d}T{}", time(rng))
        }
        "date" => date(rng),
        "time" => time(rng),
        "email" | "idn-email" => format!("fleet{n}@example.com"),
        "uri" | "url" | "iri" => format!("https://example.com/fleet/{n}"),
        "uri-reference" | "iri-reference" => format!("/fleet/{n}"),
        "uri-template" => "https://example.com/fleet/{id}".to_string(),
        "uuid" => {
            let b: [u16; 8] = std::array::from_fn(|_| rng.random());
            format!(
                "{:04x}{:04x}-{:04x}-4{:03x}-{:04x}-{:04x}{:04x}{:04x}",
                b[0],
                b[1],
                b[2],
                b[3] & 0x0fff,
                (b[4] & 0x3fff) | 0x8000,
                b[5],
                b[6],
                b[7]
            )
        }
        "ipv4" => format!("10.{}.{}.{}", n % 256, n / 256, rng.random_range(1..255u8)),
        "ipv6" => format!("fd00::{:x}:{:x}", n, rng.random::<u16>()),
        "hostname" | "idn-hostname" => format!("host{n}.example.com"),
        "duration" => format!("PT{n}S"),
        "json-pointer" => format!("/fleet/{n}"),
        "relative-json-pointer" => format!("0/fleet{n}"),
        "regex" => "^[a-z]+$".to_string(),
        _ => return None,
    };
    Some(text)
}

fn date(rng: &mut impl Rng) -> String {
    format!(
        "{}-{:02}-{:02}",
        rng.random_range(2000..2040u32),
        rng.random_range(1..=12u32),
        rng.random_range(1..=28u32)
    )
}

fn time(rng: &mut impl Rng) -> String {
    format!(
        "{:02}:{:02}:{:02}Z",
        rng.random_range(0..24u32),
        rng.random_range(0..60u32),
        rng.random_range(0..60u32)
    )
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

    #[test]
    fn numbers_honour_bounds_multiples_and_integer_types() {
        let mut rng = SmallRng::seed_from_u64(3);
        for _ in 0..300 {
            let v = value(
                &json!({"type": "integer", "exclusiveMinimum": 2, "exclusiveMaximum": 9,
                "multipleOf": 3}),
                &mut rng,
                0,
            );
            assert!(v == 3 || v == 6, "{v}");
            let v = value(&json!({"type": "integer", "maximum": -500}), &mut rng, 0);
            assert!(v.as_i64().is_some_and(|n| n <= -500), "{v}");
            let v = value(
                &json!({"type": "number", "minimum": 0, "maximum": 1,
                "exclusiveMinimum": true, "multipleOf": 0.1}),
                &mut rng,
                0,
            );
            let n = v.as_f64().expect("number");
            assert!(n > 0.0 && n <= 1.0 && (n / 0.1) % 1.0 < f64::EPSILON, "{v}");
            let v = value(
                &json!({"type": "integer", "multipleOf": 0.5, "minimum": 1,
                "maximum": 2}),
                &mut rng,
                0,
            );
            assert!(v.is_i64(), "an integer type gets an integer: {v}");
        }
    }

    #[test]
    fn defaults_and_examples_are_used_when_they_fit() {
        let mut rng = SmallRng::seed_from_u64(9);
        let schema = json!({"type": "string", "default": "d", "examples": ["e1", "e2"]});
        let seen: std::collections::HashSet<String> = (0..200)
            .map(|_| {
                value(&schema, &mut rng, 0)
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect();
        assert!(
            seen.contains("d") && seen.contains("e1") && seen.contains("e2"),
            "{seen:?}"
        );
        assert!(seen.len() > 3, "still generated sometimes: {seen:?}");
        let wrong = json!({"type": "integer", "minimum": 5, "maximum": 5, "default": "five"});
        for _ in 0..50 {
            assert_eq!(value(&wrong, &mut rng, 0), json!(5));
        }
    }

    /// A random schema using the keywords the generator honours; valid by construction
    /// (every range holds a value, defaults and examples fit).
    fn random_schema(rng: &mut SmallRng, depth: usize) -> Value {
        let pick = if depth >= 3 {
            rng.random_range(0..6)
        } else {
            rng.random_range(0..8)
        };
        let mut s = match pick {
            0 => random_integer(rng),
            1 => random_number(rng),
            2 => random_string(rng),
            3 => json!({"type": "boolean", "default": rng.random_bool(0.5)}),
            4 => {
                let options: Vec<Value> =
                    (0..rng.random_range(1..4)).map(|i| json!(i * 7)).collect();
                let default = options[0].clone();
                json!({"enum": options, "default": default})
            }
            5 => json!({"const": format!("c{}", rng.random_range(0..9))}),
            6 => {
                let min = rng.random_range(0..3u64);
                json!({"type": "array", "items": random_schema(rng, depth + 1),
                    "minItems": min, "maxItems": min + rng.random_range(0..3)})
            }
            _ => {
                let mut props = Map::new();
                let mut required = Vec::new();
                for i in 0..rng.random_range(1..5) {
                    let name = format!("p{i}");
                    if rng.random_bool(0.6) {
                        required.push(json!(name.clone()));
                    }
                    props.insert(name, random_schema(rng, depth + 1));
                }
                json!({"type": "object", "properties": props, "required": required,
                    "additionalProperties": false})
            }
        };
        if rng.random_bool(0.1) && s.get("type").is_some_and(Value::is_string) {
            let ty = s["type"].clone();
            s["type"] = json!([ty, "null"]);
        }
        s
    }

    fn random_integer(rng: &mut SmallRng) -> Value {
        let mut s = json!({"type": "integer"});
        let lo = rng.random_range(-1000..1000i64);
        let hi = lo + rng.random_range(20..200i64);
        match rng.random_range(0..4) {
            0 => s["minimum"] = json!(lo),
            1 => s["exclusiveMinimum"] = json!(lo),
            2 => s["maximum"] = json!(hi),
            _ => {}
        }
        if rng.random_bool(0.5) {
            let key = if rng.random_bool(0.5) {
                "maximum"
            } else {
                "exclusiveMaximum"
            };
            if s.get("maximum").is_none() {
                s[key] = json!(hi);
            }
        }
        if rng.random_bool(0.5) {
            s["multipleOf"] = json!([2, 3, 5, 7][rng.random_range(0..4)]);
        } else if rng.random_bool(0.3) {
            s["multipleOf"] = json!(0.5);
        } else if rng.random_bool(0.5) && s.get("minimum").is_some() {
            s["default"] = json!(lo);
            s["examples"] = json!([lo]);
        }
        s
    }

    fn random_number(rng: &mut SmallRng) -> Value {
        let mut s = json!({"type": "number"});
        let lo = rng.random_range(-1000.0..1000.0f64);
        let hi = lo + rng.random_range(5.0..50.0f64);
        s[if rng.random_bool(0.5) {
            "minimum"
        } else {
            "exclusiveMinimum"
        }] = json!(lo);
        if rng.random_bool(0.7) {
            s[if rng.random_bool(0.5) {
                "maximum"
            } else {
                "exclusiveMaximum"
            }] = json!(hi);
        }
        if rng.random_bool(0.6) {
            s["multipleOf"] = json!([0.1, 0.25, 0.5, 0.01, 2.5, 3.0, 0.2][rng.random_range(0..7)]);
        }
        s
    }

    fn random_string(rng: &mut SmallRng) -> Value {
        const FORMATS: [&str; 12] = [
            "date-time",
            "date",
            "time",
            "email",
            "uri",
            "uuid",
            "ipv4",
            "ipv6",
            "hostname",
            "uri-reference",
            "duration",
            "json-pointer",
        ];
        if rng.random_bool(0.6) {
            let f = FORMATS[rng.random_range(0..FORMATS.len())];
            return json!({"type": "string", "format": f});
        }
        let min = rng.random_range(0..6u64);
        let max = min + rng.random_range(0..10u64);
        let mut s = json!({"type": "string", "minLength": min, "maxLength": max});
        if rng.random_bool(0.3) {
            s["default"] = json!("x".repeat(min as usize));
            s["examples"] = json!(["y".repeat(max as usize)]);
        }
        s
    }

    #[test]
    fn generated_values_validate_against_random_schemas() {
        let mut schemas = SmallRng::seed_from_u64(2026);
        let mut rng = SmallRng::seed_from_u64(7);
        for round in 0..400 {
            let schema = match random_schema(&mut schemas, 0) {
                s if s.get("type") == Some(&json!("object")) => s,
                s => json!({"type": "object", "properties": {"v": s}, "required": ["v"]}),
            };
            let validator = jsonschema::options()
                .should_validate_formats(true)
                .build(&schema)
                .expect("the test's schemas compile");
            for _ in 0..5 {
                let args = generate(&schema, &mut rng);
                let errors: Vec<String> = validator
                    .iter_errors(&args)
                    .map(|e| e.to_string())
                    .collect();
                assert!(
                    errors.is_empty(),
                    "round {round}: {args} breaks {schema}: {errors:?}"
                );
            }
        }
    }
}
