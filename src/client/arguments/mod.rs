//! Tool arguments generated from a tool's `inputSchema`, seeded so a run repeats. The
//! values follow the whole schema as servers write it (the Python SDK's pydantic
//! schemas included): local `$ref`/`$defs` with recursion bounded, `allOf` merged,
//! `anyOf`/`oneOf` (exactly one branch), nullable types (the non-null side preferred),
//! `const`/`enum`, `default`/`examples` (preferred when they validate), numeric ranges
//! and `multipleOf`, integer apart from number, string lengths in characters, `pattern`
//! and `format`, arrays (`minItems`/`maxItems`/`uniqueItems`, tuples), and objects
//! (`required`, optional properties by a configurable share, `additionalProperties`,
//! `patternProperties`, `minProperties`/`maxProperties`, `dependentRequired`). The
//! values are plausible, not adversarial and not degenerate (no empty arrays or strings
//! unless the schema asks): the point is load a server accepts.
//!
//! This file walks the schema (references, combinators, suggested values); each kind of
//! value has its file: `objects`, `arrays`, `numbers`, `strings`; `schema` resolves and
//! validates.

mod arrays;
mod numbers;
mod objects;
mod schema;
mod strings;
#[cfg(test)]
mod tests;

use rand::Rng;
use serde_json::{json, Map, Value};

use schema::{has_type, resolve, valid};

/// Deepest nesting followed; deeper schemas get an empty object.
const MAX_DEPTH: usize = 16;

/// Past this nesting the generator takes the way out of a recursive schema: an
/// `anyOf` option without `$ref`, no optional properties, arrays of `minItems`.
const SHALLOW_DEPTH: usize = 6;

/// References followed on one path before the generator takes the way out.
const MAX_REFS: usize = 4;

/// How often a schema's valid `default` or `examples` is sent instead of a new value.
const SUGGESTED: f64 = 0.8;

/// Tries at a `oneOf` value that matches exactly one branch.
const ONE_OF_TRIES: usize = 8;

/// Values one call builds (nested ones counted) before it takes the shortest way and
/// stops retrying: a pathological schema costs bounded time.
const STEPS: usize = 5_000;

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

/// Arguments for a tool whose `inputSchema` is `schema`: an object with the `pins` the
/// profile gives exactly as given (never regenerated, even when they break the schema),
/// every other required property generated, and each optional one with probability
/// `gen.optional`.
pub fn generate_with(
    schema: &Value,
    pins: &Map<String, Value>,
    gen: &Generation,
    rng: &mut impl Rng,
) -> Value {
    let optional = if gen.optional.is_nan() {
        0.5
    } else {
        gen.optional.clamp(0.0, 1.0)
    };
    let mut g = Gen {
        root: schema,
        rng,
        optional,
        depth: 0,
        refs: 0,
        steps: 0,
    };
    match g.value(schema, Some(pins)) {
        v @ Value::Object(_) => v,
        _ => Value::Object(pins.clone()),
    }
}

/// Arguments for a tool whose `inputSchema` is `schema`.
pub fn generate(schema: &Value, rng: &mut impl Rng) -> Value {
    generate_with(schema, &Map::new(), &Generation::default(), rng)
}

/// One generation: the tool's whole schema (what `$ref`s point into) and where we are.
struct Gen<'r, R> {
    root: &'r Value,
    rng: &'r mut R,
    optional: f64,
    depth: usize,
    refs: usize,
    steps: usize,
}

impl<R: Rng> Gen<'_, R> {
    /// Whether to take the way out of a recursive schema.
    fn shallow(&self) -> bool {
        self.depth > SHALLOW_DEPTH || self.refs > MAX_REFS || self.steps > STEPS
    }

    /// A value of `schema`; `pins` are the profile's top-level arguments, handed to the
    /// object the schema resolves to.
    fn value(&mut self, schema: &Value, pins: Option<&Map<String, Value>>) -> Value {
        if self.depth > MAX_DEPTH || self.steps > 4 * STEPS {
            return json!({});
        }
        self.steps += 1;
        let root = self.root;
        let (depth, refs) = (self.depth, self.refs);
        let (resolved, n) = resolve(root, schema);
        self.refs += n;
        self.depth += 1;
        let v = self.resolved(&resolved, pins);
        self.depth = depth;
        self.refs = refs;
        v
    }

    fn resolved(&mut self, s: &Value, pins: Option<&Map<String, Value>>) -> Value {
        if let Some(c) = s.get("const") {
            return c.clone();
        }
        if let Some(options) = s.get("enum").and_then(Value::as_array) {
            let fitting: Vec<&Value> = options
                .iter()
                .filter(|o| {
                    !o.is_null() && types(s).is_none_or(|t| t.iter().any(|t| has_type(t, o)))
                })
                .collect();
            if !fitting.is_empty() {
                return fitting[self.rng.random_range(0..fitting.len())].clone();
            }
            if !options.is_empty() {
                return options[self.rng.random_range(0..options.len())].clone();
            }
        }
        if pins.is_none_or(Map::is_empty) {
            if let Some(v) = self.suggested(s) {
                return v;
            }
        }
        if let Some(options) = s.get("oneOf").and_then(Value::as_array) {
            if !options.is_empty() {
                return self.one_of(s, options, pins);
            }
        }
        if let Some(options) = s.get("anyOf").and_then(Value::as_array) {
            if !options.is_empty() {
                let i = self.choose(options);
                let branch = with_branch(s, "anyOf", &options[i]);
                return self.value(&branch, pins);
            }
        }
        match type_of(s) {
            "object" => self.object(s, pins),
            "array" => self.array(s),
            "integer" => numbers::integer(s, self.rng),
            "number" => numbers::number(s, self.rng),
            "boolean" => Value::Bool(self.rng.random_bool(0.5)),
            "null" => Value::Null,
            _ => strings::string(s, self.rng),
        }
    }

    /// An option of an `anyOf`/`oneOf`: not the `null` one when another exists, and
    /// one without a `$ref` when recursion must end.
    fn choose(&mut self, options: &[Value]) -> usize {
        let null_only = |o: &Value| {
            o.get("type") == Some(&json!("null")) || o.get("const") == Some(&Value::Null)
        };
        let mut pool: Vec<usize> = (0..options.len())
            .filter(|&i| !null_only(&options[i]))
            .collect();
        if pool.is_empty() {
            pool = (0..options.len()).collect();
        }
        if self.shallow() {
            let flat: Vec<usize> = pool
                .iter()
                .copied()
                .filter(|&i| !has_ref(&options[i], 0))
                .collect();
            if !flat.is_empty() {
                pool = flat;
            }
        }
        pool[self.rng.random_range(0..pool.len())]
    }

    /// A value that matches exactly one branch of `oneOf`: built from one, checked
    /// against the others, tried again with another when it matches more.
    fn one_of(&mut self, s: &Value, options: &[Value], pins: Option<&Map<String, Value>>) -> Value {
        let mut last = Value::Null;
        for _ in 0..ONE_OF_TRIES {
            let i = self.choose(options);
            let branch = with_branch(s, "oneOf", &options[i]);
            let v = self.value(&branch, pins);
            let others = options
                .iter()
                .enumerate()
                .any(|(j, o)| j != i && valid(self.root, o, &v));
            if !others || self.steps > STEPS {
                return v;
            }
            last = v;
        }
        last
    }

    /// The schema's `default` or one of its `examples`, most of the time, when it
    /// validates and is not a degenerate value (null, "", [], {}).
    fn suggested(&mut self, s: &Value) -> Option<Value> {
        let root = self.root;
        let fits = |v: &&Value| {
            let degenerate = match v {
                Value::Null => true,
                Value::String(t) => t.is_empty(),
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            !degenerate && valid(root, s, v)
        };
        let candidates: Vec<&Value> = s
            .get("default")
            .into_iter()
            .chain(
                s.get("examples")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            )
            .filter(fits)
            .collect();
        if candidates.is_empty() || !self.rng.random_bool(SUGGESTED) {
            return None;
        }
        Some(candidates[self.rng.random_range(0..candidates.len())].clone())
    }
}

/// The declared types, if any.
fn types(s: &Value) -> Option<Vec<&str>> {
    match s.get("type") {
        Some(Value::String(t)) => Some(vec![t.as_str()]),
        Some(Value::Array(ts)) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// `s` with the combinator `key` replaced by one of its branches (the siblings still
/// apply: `{"type": "object", "anyOf": [{"required": ["a"]}, …]}`).
fn with_branch(s: &Value, key: &str, branch: &Value) -> Value {
    let Some(o) = s.as_object() else {
        return branch.clone();
    };
    let mut rest = o.clone();
    rest.remove(key);
    rest.remove("default");
    rest.remove("examples");
    if rest.keys().all(|k| {
        [
            "title",
            "description",
            "$defs",
            "definitions",
            "$schema",
            "$comment",
        ]
        .contains(&k.as_str())
    }) {
        return branch.clone();
    }
    json!({"allOf": [Value::Object(rest), branch]})
}

/// Whether a schema refers anywhere (a few levels down) to another.
fn has_ref(s: &Value, depth: usize) -> bool {
    if depth > 6 {
        return true;
    }
    match s {
        Value::Object(o) => o.contains_key("$ref") || o.values().any(|v| has_ref(v, depth + 1)),
        Value::Array(a) => a.iter().any(|v| has_ref(v, depth + 1)),
        _ => false,
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
            if has("properties")
                || has("required")
                || has("additionalProperties")
                || has("patternProperties")
            {
                "object"
            } else if has("items") || has("prefixItems") || has("minItems") || has("maxItems") {
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
