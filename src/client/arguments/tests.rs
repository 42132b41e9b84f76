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
        steps: 0,
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

/// Patterns as tools write them.
const PATTERNS: [&str; 12] = [
    r"^[A-Z]{3}-\d{4}$",
    r"^\d{2}:\d{2}$",
    r"^[a-z0-9_-]{3,16}$",
    r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$",
    r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$",
    r"^(?:[01]\d|2[0-3]):[0-5]\d$",
    r"^#[0-9a-fA-F]{6}$",
    r"^v\d+\.\d+\.\d+$",
    r"^[a-z]+(_[a-z]+)*$",
    r"\d+",
    r"^/[\w./-]*$",
    r"^(GET|POST|PUT|DELETE)$",
];

/// A schema for the property test: every keyword the generator claims, nested, with
/// definitions (some recursive) collected in `defs`.
fn rich_schema(rng: &mut SmallRng, depth: usize, defs: &mut Map<String, Value>) -> Value {
    let leafy = depth >= 3;
    let pick = if leafy {
        rng.random_range(0..9)
    } else {
        rng.random_range(0..18)
    };
    let mut s = match pick {
        0..=2 => random_schema(rng, 3),
        3 => {
            let p = PATTERNS[rng.random_range(0..PATTERNS.len())];
            let mut s = json!({"type": "string", "pattern": p});
            if p == PATTERNS[2] && rng.random_bool(0.5) {
                s["maxLength"] = json!(8);
            }
            if p == PATTERNS[9] && rng.random_bool(0.5) {
                s["minLength"] = json!(6);
            }
            s
        }
        4 => {
            let f = [
                "date-time",
                "date",
                "time",
                "duration",
                "email",
                "uri",
                "uuid",
                "ipv4",
                "ipv6",
                "hostname",
            ][rng.random_range(0..10)];
            json!({"type": "string", "format": f})
        }
        5 => {
            // Nullable, in the three spellings.
            let inner = random_schema(rng, 3);
            match rng.random_range(0..3) {
                0 => json!({"anyOf": [inner, {"type": "null"}], "default": null, "title": "Maybe"}),
                1 if inner.get("type").is_some_and(Value::is_string) => {
                    let mut s = inner;
                    s["nullable"] = json!(true);
                    s
                }
                _ => json!({"oneOf": [{"type": "null"}, inner]}),
            }
        }
        6 => {
            // A pydantic default that does not fit: must not be sent.
            json!({"type": "integer", "minimum": 1, "maximum": 9, "default": null, "examples": [0, 3]})
        }
        7 => {
            let lo = rng.random_range(-50..50i64);
            json!({"type": "number", "exclusiveMinimum": lo, "exclusiveMaximum": lo + 1,
                "multipleOf": 0.25})
        }
        8 => json!({"type": "array", "items": {"enum": ["a", "b", "c", "d"]}, "uniqueItems": true,
            "minItems": rng.random_range(0..3), "maxItems": 4}),
        9 => {
            let name = format!("D{}", defs.len());
            let inner = rich_schema(rng, depth + 1, defs);
            defs.insert(name.clone(), inner);
            json!({"$ref": format!("#/$defs/{name}"), "description": "a model"})
        }
        10 => {
            // A recursive model, through a nullable anyOf and an array.
            defs.insert(
                "Node".into(),
                json!({"type": "object", "title": "Node", "required": ["name"], "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                }, "additionalProperties": false}),
            );
            json!({"$ref": "#/$defs/Node"})
        }
        11 => {
            let a = rich_schema(rng, depth + 1, defs);
            let b = rich_schema(rng, depth + 1, defs);
            json!({"type": "object", "allOf": [
                {"properties": {"a": a}, "required": ["a"]},
                {"properties": {"b": b}, "required": ["b"]}
            ]})
        }
        12 => {
            let lo = rng.random_range(-100..100i64);
            json!({"allOf": [{"type": "integer", "minimum": lo}, {"maximum": lo + 10}, {"multipleOf": 2}]})
        }
        13 => {
            // Overlapping branches: only values in one of them count.
            let lo = rng.random_range(0..50i64);
            json!({"oneOf": [
                {"type": "integer", "minimum": lo, "maximum": lo + 10},
                {"type": "integer", "minimum": lo + 5, "maximum": lo + 20},
                {"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"}
            ]})
        }
        14 => json!({"type": "array", "prefixItems": [{"type": "string", "format": "date"},
            {"type": "integer", "minimum": 0}], "items": false, "minItems": 2}),
        15 => json!({"type": "object", "minProperties": 2, "properties": {
            "x": {"type": "integer"}, "y": {"type": "integer"}, "z": {"type": "boolean"}},
            "additionalProperties": {"type": "string", "maxLength": 4}}),
        16 => json!({"type": "object", "patternProperties": {"^tag_[a-z]+$": {"type": "integer"}},
            "additionalProperties": false, "minProperties": 1}),
        _ => {
            let mut props = Map::new();
            let mut required = Vec::new();
            for i in 0..rng.random_range(1..5) {
                let name = format!("p{i}");
                if rng.random_bool(0.5) {
                    required.push(json!(name.clone()));
                }
                props.insert(name, rich_schema(rng, depth + 1, defs));
            }
            let mut s = json!({"type": "object", "properties": props, "required": required,
                "additionalProperties": false});
            if rng.random_bool(0.3) {
                s["dependentRequired"] = json!({"p0": ["p1"]});
                s["properties"]["p1"] = json!({"type": "string"});
            }
            if rng.random_bool(0.2) {
                s["required"] = json!(["p0", "undeclared"]);
                s.as_object_mut().map(|o| o.remove("additionalProperties"));
            }
            s
        }
    };
    if rng.random_bool(0.05) {
        s["title"] = json!("Titled");
    }
    s
}

#[test]
fn generated_values_validate_against_rich_random_schemas() {
    let mut schemas = SmallRng::seed_from_u64(16);
    let mut rng = SmallRng::seed_from_u64(61);
    let mut checked = 0;
    for round in 0..500 {
        let mut defs = Map::new();
        let inner = rich_schema(&mut schemas, 0, &mut defs);
        let mut schema = json!({"type": "object", "properties": {"v": inner, "w": rich_schema(&mut schemas, 1, &mut defs)},
            "required": ["v"]});
        if !defs.is_empty() {
            schema["$defs"] = Value::Object(defs);
        }
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("the test's schemas compile");
        for optional in [0.0, 0.5, 1.0] {
            let gen = Generation { optional };
            for _ in 0..3 {
                let args = generate_with(&schema, &Map::new(), &gen, &mut rng);
                let errors: Vec<String> = validator
                    .iter_errors(&args)
                    .map(|e| e.to_string())
                    .collect();
                assert!(
                    errors.is_empty(),
                    "round {round}: {args} breaks {schema}: {errors:?}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 500 * 9);
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .expect("the test's schema compiles")
}

fn assert_valid(schema: &Value, args: &Value) {
    let errors: Vec<String> = validator(schema)
        .iter_errors(args)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{args} breaks {schema}: {errors:?}");
}

/// What the Python SDK (pydantic v2) emits for `def add(item: Item, note: Optional[str]
/// = None, color: Color = Color.red, when: datetime)`.
fn pydantic_schemas() -> Vec<Value> {
    vec![
        json!({
            "$defs": {
                "Color": {"enum": ["red", "green", "blue"], "title": "Color", "type": "string"},
                "Item": {"properties": {
                    "name": {"title": "Name", "type": "string"},
                    "price": {"exclusiveMinimum": 0, "title": "Price", "type": "number"},
                    "tags": {"items": {"type": "string"}, "title": "Tags", "type": "array"},
                    "sku": {"pattern": "^[A-Z]{3}-\\d{4}$", "title": "Sku", "type": "string"}
                }, "required": ["name", "price", "sku"], "title": "Item", "type": "object"}
            },
            "properties": {
                "item": {"$ref": "#/$defs/Item"},
                "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "Note"},
                "color": {"$ref": "#/$defs/Color", "default": "red"},
                "when": {"format": "date-time", "title": "When", "type": "string"}
            },
            "required": ["item", "when"],
            "title": "addArguments",
            "type": "object"
        }),
        json!({
            "properties": {
                "repo_path": {"title": "Repo Path", "type": "string"},
                "max_count": {"default": 10, "title": "Max Count", "type": "integer"},
                "timezone": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "Timezone"},
                "time": {"pattern": "^\\d{2}:\\d{2}$", "title": "Time", "type": "string"},
                "limit": {"anyOf": [{"maximum": 100, "minimum": 1, "type": "integer"}, {"type": "null"}], "default": null}
            },
            "required": ["repo_path", "time"],
            "title": "git_logArguments",
            "type": "object"
        }),
        // pydantic v1 / draft 7: `definitions` and a model behind `allOf`.
        json!({
            "definitions": {
                "Point": {"title": "Point", "type": "object", "properties": {
                    "x": {"title": "X", "type": "integer", "multipleOf": 5},
                    "y": {"title": "Y", "type": "integer", "exclusiveMaximum": 0}
                }, "required": ["x", "y"]},
                "Shape": {"title": "Shape", "enum": ["circle", "square"]}
            },
            "type": "object",
            "properties": {
                "origin": {"title": "Origin", "allOf": [{"$ref": "#/definitions/Point"}]},
                "shape": {"$ref": "#/definitions/Shape"},
                "points": {"type": "array", "items": {"$ref": "#/definitions/Point"}, "minItems": 1}
            },
            "required": ["origin", "shape", "points"]
        }),
    ]
}

#[test]
fn pydantic_schemas_get_valid_models_enums_and_optionals() {
    let mut rng = SmallRng::seed_from_u64(42);
    let all = Generation { optional: 1.0 };
    for schema in pydantic_schemas() {
        let mut notes = 0;
        for _ in 0..200 {
            let args = generate_with(&schema, &Map::new(), &all, &mut rng);
            assert_valid(&schema, &args);
            assert!(
                args.as_object()
                    .is_some_and(|o| o.values().all(|v| !v.is_null())),
                "{args}"
            );
            notes += usize::from(args.get("note").is_some_and(Value::is_string));
        }
        if schema.get("$defs").is_some() {
            assert_eq!(notes, 200, "Optional[str] is sent as a string");
        }
    }
    let args = generate(&pydantic_schemas()[0], &mut rng);
    assert!(
        args["item"].is_object(),
        "a model argument is an object: {args}"
    );
    assert!(args["item"]["price"].as_f64().is_some_and(|p| p > 0.0));
}

#[test]
fn pins_are_kept_as_given_and_not_regenerated() {
    let mut rng = SmallRng::seed_from_u64(4);
    let schema = &pydantic_schemas()[1];
    let mut pins = Map::new();
    pins.insert("repo_path".into(), json!("/srv/repo"));
    pins.insert("max_count".into(), json!("not a number, as the user said"));
    for _ in 0..50 {
        let args = generate_with(schema, &pins, &Generation::default(), &mut rng);
        assert_eq!(args["repo_path"], "/srv/repo");
        assert_eq!(args["max_count"], "not a number, as the user said");
        assert!(
            args["time"]
                .as_str()
                .is_some_and(|t| t.len() == 5 && t.as_bytes()[2] == b':'),
            "{args}"
        );
    }
}

#[test]
fn the_optional_share_counts() {
    let mut rng = SmallRng::seed_from_u64(8);
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}});
    let count = |optional: f64, rng: &mut SmallRng| -> usize {
        (0..400)
            .map(|_| generate_with(&schema, &Map::new(), &Generation { optional }, rng))
            .map(|a| a.as_object().map_or(0, Map::len))
            .sum()
    };
    assert_eq!(count(0.0, &mut rng), 0);
    assert_eq!(count(1.0, &mut rng), 800);
    let half = count(0.5, &mut rng);
    assert!((300..500).contains(&half), "{half}");
    assert_eq!(
        count(f64::NAN, &mut rng).min(1),
        1,
        "a NaN share falls back to a half"
    );
}

#[test]
fn recursion_ends_and_escaped_pointers_resolve() {
    let mut rng = SmallRng::seed_from_u64(5);
    // Unsatisfiable (a required link forever): still an answer, no overflow.
    let endless = json!({"$defs": {"n": {"type": "object", "required": ["next"],
        "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"});
    assert!(generate(&endless, &mut rng).is_object());
    // Self-reference through the root.
    let tree = json!({"type": "object", "required": ["v"], "properties": {
        "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#"}}}});
    for _ in 0..100 {
        let args = generate(&tree, &mut rng);
        assert_valid(&tree, &args);
        assert!(
            args.to_string().len() < 20_000,
            "a bounded tree: {}",
            args.to_string().len()
        );
    }
    let escaped = json!({"$defs": {"a/b": {"const": 1}, "c~d": {"const": 2}, "e f": {"const": 3}},
        "type": "object", "required": ["x", "y", "z"], "properties": {
            "x": {"$ref": "#/$defs/a~1b"}, "y": {"$ref": "#/$defs/c~0d"}, "z": {"$ref": "#/$defs/e%20f"}}});
    assert_eq!(
        generate(&escaped, &mut rng),
        json!({"x": 1, "y": 2, "z": 3})
    );
}

#[test]
fn patterns_meet_lengths_and_odd_regexes_do_not_panic() {
    let mut rng = SmallRng::seed_from_u64(6);
    for (pattern, min, max) in [
        (r"^[a-z0-9_-]{3,16}$", 5, 6),
        (r"\d", 8, 10),
        (r"^[A-Z]{3}-\d{4}$", 0, 100),
    ] {
        let s = json!({"type": "string", "pattern": pattern, "minLength": min, "maxLength": max});
        for _ in 0..100 {
            let v = one(&s, &mut rng);
            let n = v.as_str().map_or(0, |t| t.chars().count());
            assert!((min..=max).contains(&n), "{v} for {s}");
            assert_eq!(
                strings::matches(pattern, v.as_str().unwrap_or_default()),
                Some(true),
                "{v}"
            );
        }
    }
    // Lookaround and backreferences are beyond the regex dialect: a plain string.
    for pattern in [r"^(?=.*\d)[a-z\d]{8}$", r"^(a)\1$", "(", r"[\p{Foo}]"] {
        let v = one(&json!({"type": "string", "pattern": pattern}), &mut rng);
        assert!(v.as_str().is_some_and(|t| !t.is_empty()), "{v}");
    }
    // Lengths in characters, not bytes.
    let v = one(
        &json!({"type": "string", "pattern": "^é{3}$", "maxLength": 3}),
        &mut rng,
    );
    assert_eq!(v, json!("ééé"));
}

#[test]
fn examples_and_defaults_are_preferred_when_valid() {
    let mut rng = SmallRng::seed_from_u64(10);
    let s = json!({"type": "string", "pattern": "^[A-Z]{2}$", "examples": ["NL", "nl"], "default": "DE"});
    let values: Vec<Value> = (0..1000).map(|_| one(&s, &mut rng)).collect();
    let suggested = values.iter().filter(|v| *v == "NL" || *v == "DE").count();
    assert!((720..880).contains(&suggested), "about 80 %: {suggested}");
    assert!(
        !values.contains(&json!("nl")),
        "an example that breaks the pattern is not sent"
    );
    // pydantic's `default: null` on a non-null type is not sent.
    let s = json!({"type": "integer", "default": null});
    assert!((0..100).all(|_| one(&s, &mut rng).is_i64()));
}

#[test]
fn one_of_matches_exactly_one_branch() {
    let mut rng = SmallRng::seed_from_u64(12);
    let s = json!({"type": "object", "required": ["n"], "properties": {"n": {"oneOf": [
        {"type": "integer", "minimum": 0, "maximum": 10},
        {"type": "integer", "minimum": 5, "maximum": 15}]}}});
    for _ in 0..200 {
        let args = generate(&s, &mut rng);
        let n = args["n"].as_i64().unwrap_or(-1);
        assert!((0..5).contains(&n) || (11..=15).contains(&n), "{n}");
    }
}

#[test]
fn arrays_and_strings_are_not_degenerate() {
    let mut rng = SmallRng::seed_from_u64(13);
    for _ in 0..100 {
        let a = one(
            &json!({"type": "array", "items": {"type": "string"}}),
            &mut rng,
        );
        assert!(
            a.as_array()
                .is_some_and(|a| !a.is_empty() && a.iter().all(|s| s != "")),
            "{a}"
        );
        let u = one(
            &json!({"type": "array", "items": {"type": "boolean"}, "uniqueItems": true, "minItems": 2}),
            &mut rng,
        );
        assert!(
            u == json!([true, false]) || u == json!([false, true]),
            "{u}"
        );
        let c = json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9},
            "contains": {"const": 7}, "minContains": 2, "maxItems": 3});
        let v = one(&c, &mut rng);
        assert_eq!(
            v.as_array()
                .map(|a| a.iter().filter(|x| **x == 7).count() >= 2),
            Some(true),
            "{v}"
        );
        assert_valid(&c, &v);
    }
}

/// Not asserted: how long one call's arguments take (run with --nocapture).
#[test]
fn generation_speed() {
    let mut rng = SmallRng::seed_from_u64(14);
    let schemas = pydantic_schemas();
    let n = 20_000;
    let start = std::time::Instant::now();
    let mut bytes = 0;
    for i in 0..n {
        bytes += generate(&schemas[i % schemas.len()], &mut rng)
            .to_string()
            .len();
    }
    let each = start.elapsed() / n as u32;
    println!("generation: {each:?} per call over pydantic-style schemas ({bytes} bytes)");
    assert!(bytes > 0);
}

#[test]
fn hostile_schemas_cost_bounded_time_and_never_panic() {
    let mut rng = SmallRng::seed_from_u64(15);
    let hostile = [
        json!({"$ref": "#", "minimum": 1}),
        json!({"type": "object", "required": ["a"], "properties": {"a": {"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}]}}}),
        json!({"type": "object", "required": ["a"], "properties": {"a": {"oneOf": [{"$ref": "#"}, {"$ref": "#"}]}}}),
        json!({"allOf": [{"$ref": "#"}]}),
        json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "number", "minimum": -1e308, "maximum": 1e308}}}),
        json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "number", "minimum": 1e308}}}),
        json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 10, "maximum": 1}}}),
        json!({"type": "object", "required": ["s"], "properties": {"s": {"type": "string", "minLength": 9, "maxLength": 2}}}),
        json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "array", "minItems": 5, "maxItems": 1, "uniqueItems": true, "items": {"const": 1}}}}),
        json!({"$ref": "https://example.com/remote.json"}),
        json!({"$ref": "#/$defs/missing"}),
        json!("not a schema"),
        json!(true),
        json!({"type": 7, "properties": [], "required": "x", "enum": []}),
    ];
    for schema in &hostile {
        let start = std::time::Instant::now();
        for _ in 0..20 {
            let args = generate(schema, &mut rng);
            assert!(args.is_object(), "{schema} gave {args}");
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{schema}: {:?}",
            start.elapsed()
        );
    }
}
