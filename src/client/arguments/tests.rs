//! Tests of the generator: per feature, and a property test over random schemas that
//! checks every value with the `jsonschema` crate (formats on).

use super::*;
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// One value of `schema` (itself the root its `$ref`s point into).
fn one(schema: &Value, rng: &mut SmallRng) -> Value {
    let mut g = Gen {
        root: schema,
        rng,
        optional: 0.5,
        depth: 0,
        refs: 0,
    };
    g.value(schema, None)
}

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
        let v = one(
            &json!({"type": "integer", "exclusiveMinimum": 2, "exclusiveMaximum": 9,
            "multipleOf": 3}),
            &mut rng,
        );
        assert!(v == 3 || v == 6, "{v}");
        let v = one(&json!({"type": "integer", "maximum": -500}), &mut rng);
        assert!(v.as_i64().is_some_and(|n| n <= -500), "{v}");
        let v = one(
            &json!({"type": "number", "minimum": 0, "maximum": 1,
            "exclusiveMinimum": true, "multipleOf": 0.1}),
            &mut rng,
        );
        let n = v.as_f64().expect("number");
        assert!(n > 0.0 && n <= 1.0 && (n / 0.1) % 1.0 < f64::EPSILON, "{v}");
        let v = one(
            &json!({"type": "integer", "multipleOf": 0.5, "minimum": 1,
            "maximum": 2}),
            &mut rng,
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
            one(&schema, &mut rng)
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
        assert_eq!(one(&wrong, &mut rng), json!(5));
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
            let options: Vec<Value> = (0..rng.random_range(1..4)).map(|i| json!(i * 7)).collect();
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
