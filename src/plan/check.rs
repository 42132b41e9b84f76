//! Checks on a step's result (k6's `check()`), resolved: a named condition — what a JSON
//! pointer or a JSONPath query (RFC 9535) selects equals / contains / matches, `isError` is (not) set, `structuredContent`
//! valid against the tool's `outputSchema` — evaluated on every answer of the step and
//! counted per name (`summary.json`'s `checks`, thresholds `checks(NAME) > 99%`).

use super::error::PlanError;
use super::scenario::ToolTable;
use crate::metrics::StepCheckId;
use crate::profile::CheckSpec;
use serde_json::Value;

/// Where in a result a condition looks: a JSON pointer (one value) or a JSONPath query
/// (any number of nodes; the condition holds when any of them passes).
#[derive(Debug, Clone)]
pub enum Locator {
    Pointer(String),
    Path(String, serde_json_path::JsonPath),
}

impl Locator {
    /// The values at this place in `result` (none: nothing there).
    fn select<'v>(&self, result: &'v Value) -> Vec<&'v Value> {
        match self {
            Locator::Pointer(p) => result.pointer(p).into_iter().collect(),
            Locator::Path(_, q) => q.query(result).all(),
        }
    }

    /// As the profile wrote it.
    fn text(&self) -> &str {
        match self {
            Locator::Pointer(p) | Locator::Path(p, _) => p,
        }
    }
}

/// What a check asks of a result.
#[derive(Debug, Clone)]
pub enum Condition {
    Equals(Locator, Value),
    Contains(Locator, Value),
    Matches(Locator, regex::Regex),
    IsError(bool),
    /// `structuredContent` valid against the tool's `outputSchema`.
    OutputSchema,
}

#[derive(Debug, Clone)]
pub struct Check {
    pub id: StepCheckId,
    pub name: String,
    pub condition: Condition,
    /// A failure fails the step and ends the session.
    pub fail_session: bool,
}

impl PartialEq for Check {
    fn eq(&self, other: &Check) -> bool {
        // Two checks of one name share a counter; the plan compares steps by name.
        self.id == other.id && self.name == other.name && self.fail_session == other.fail_session
    }
}

const FORMS: &str =
    "write e.g. { name = \"sum\", pointer = \"/structuredContent/sum\", equals = 42 } \
                     (or path = \"$.structuredContent.sum\"), contains = …, matches = \"regex\", \
                     is_error = false or output_schema = true";

impl Check {
    /// The `checks` of the step at `key`; `tool_call`: whether `output_schema` applies.
    pub(super) fn all_from_specs(
        specs: &Option<Vec<CheckSpec>>,
        key: &str,
        origin: &str,
        tool_call: bool,
        names: &mut ToolTable,
    ) -> Result<Vec<Check>, PlanError> {
        let specs = specs.as_deref().unwrap_or_default();
        let mut out = Vec::with_capacity(specs.len());
        for (i, s) in specs.iter().enumerate() {
            let at = format!("{key}.checks[{i}]");
            let err = |what: &str, problem: String, fix: &str| {
                PlanError::new(origin, format!("{at}{what}"), problem, fix)
            };
            let bad = |c: char| c.is_whitespace() || "(),=<>\"".contains(c);
            if s.name.is_empty() || s.name.chars().any(bad) {
                return Err(err(
                    ".name",
                    format!(
                        "check name {:?} is empty or holds a space or one of ( ) , = < > \"",
                        s.name
                    ),
                    "use letters, digits and - _ . / :, e.g. name = \"sum-is-42\"",
                ));
            }
            let pointer = match (&s.pointer, &s.path) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        "",
                        format!("check {:?} has both a pointer and a path", s.name),
                        "keep one: pointer = \"/structuredContent/sum\" or path = \"$.structuredContent.sum\"",
                    ))
                }
                (_, Some(path)) => {
                    let q = serde_json_path::JsonPath::parse(path).map_err(|e| {
                        err(
                            ".path",
                            format!("{path:?} is not a JSONPath query: {e}"),
                            "write e.g. path = \"$.content[?@.type == 'text'].text\" (RFC 9535)",
                        )
                    })?;
                    Locator::Path(path.clone(), q)
                }
                (pointer, None) => {
                    let pointer = pointer.clone().unwrap_or_default();
                    if !(pointer.is_empty() || pointer.starts_with('/')) {
                        return Err(err(
                            ".pointer",
                            format!("{pointer:?} is not a JSON pointer"),
                            "start it with /, e.g. pointer = \"/structuredContent/sum\"",
                        ));
                    }
                    Locator::Pointer(pointer)
                }
            };
            let mut conditions = Vec::new();
            if let Some(v) = &s.equals {
                conditions.push(Condition::Equals(pointer.clone(), v.clone()));
            }
            if let Some(v) = &s.contains {
                conditions.push(Condition::Contains(pointer.clone(), v.clone()));
            }
            if let Some(r) = &s.matches {
                let re = regex::Regex::new(r).map_err(|e| {
                    err(".matches", format!("not a regular expression: {e}"), FORMS)
                })?;
                conditions.push(Condition::Matches(pointer.clone(), re));
            }
            if let Some(b) = s.is_error {
                conditions.push(Condition::IsError(b));
            }
            match s.output_schema {
                Some(true) if !tool_call => {
                    return Err(err(
                        ".output_schema",
                        "only a tools/call step has a tool's outputSchema".into(),
                        "move the check to a tools/call step",
                    ))
                }
                Some(true) => conditions.push(Condition::OutputSchema),
                Some(false) | None => {}
            }
            if conditions.len() != 1 {
                return Err(err(
                    "",
                    format!("check {:?} has {} conditions", s.name, conditions.len()),
                    &format!("give each check exactly one: {FORMS}"),
                ));
            }
            out.push(Check {
                id: names.intern_check(&s.name),
                name: s.name.clone(),
                condition: conditions.remove(0),
                fail_session: s.fail_session == Some(true),
            });
        }
        Ok(out)
    }

    /// Whether `result` passes; why not. `output`: whether `structuredContent` is valid
    /// against the tool's `outputSchema` (the session knows the schema; the plan does
    /// not judge conformance).
    pub fn evaluate(
        &self,
        result: &Value,
        output: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        // The values at the place; the first failure's words when none passes.
        let at = |l: &Locator| {
            let got = l.select(result);
            if got.is_empty() {
                Err(format!("{} has nothing at {:?}", self.name, l.text()))
            } else {
                Ok(got)
            }
        };
        let fail = |what: String| Err(format!("{}: {what}", self.name));
        let any = |l: &Locator, holds: &dyn Fn(&Value) -> bool, why: &dyn Fn(&Value) -> String| {
            let got = at(l)?;
            match got.iter().find(|v| holds(v)) {
                Some(_) => Ok(()),
                None if got.len() == 1 => fail(why(got[0])),
                None => fail(format!(
                    "none of the {} values at {} passes; the first: {}",
                    got.len(),
                    l.text(),
                    why(got[0])
                )),
            }
        };
        match &self.condition {
            Condition::Equals(l, want) => any(l, &|v| v == want, &|v| {
                format!("{} is {}, not {want}", l.text(), short(v))
            }),
            Condition::Contains(l, want) => any(
                l,
                &|v| match (v, want) {
                    (Value::String(s), Value::String(w)) => s.contains(w.as_str()),
                    (Value::Array(items), w) => items.contains(w),
                    _ => false,
                },
                &|v| format!("{} ({}) does not contain {want}", l.text(), short(v)),
            ),
            Condition::Matches(l, re) => {
                let text = |v: &Value| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                any(l, &|v| re.is_match(&text(v)), &|v| {
                    format!(
                        "{} ({}) does not match /{}/",
                        l.text(),
                        short(v),
                        re.as_str()
                    )
                })
            }
            Condition::IsError(want) => {
                let got = result.get("isError").and_then(Value::as_bool) == Some(true);
                if got == *want {
                    Ok(())
                } else {
                    fail(format!("isError is {got}"))
                }
            }
            Condition::OutputSchema => output().map_err(|why| format!("{}: {why}", self.name)),
        }
    }
}

/// A value as a failure's text says it: at most 80 characters.
fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(spec: Value) -> Result<Check, PlanError> {
        let spec: CheckSpec = serde_json::from_value(spec).expect("spec");
        let mut names = ToolTable::default();
        Check::all_from_specs(&Some(vec![spec]), "s", "p", true, &mut names)
            .map(|mut v| v.remove(0))
    }

    #[test]
    fn each_condition_passes_and_fails() {
        let r = json!({"content": [{"type": "text", "text": "sum is 42"}],
                       "structuredContent": {"sum": 42, "tags": ["a", "b"]}});
        let pass = [
            json!({"name": "a", "pointer": "/structuredContent/sum", "equals": 42}),
            json!({"name": "b", "pointer": "/content/0/text", "contains": "42"}),
            json!({"name": "c", "pointer": "/structuredContent/tags", "contains": "b"}),
            json!({"name": "d", "pointer": "/content/0/text", "matches": "^sum is \\d+$"}),
            json!({"name": "e", "is_error": false}),
            json!({"name": "p1", "path": "$.structuredContent.sum", "equals": 42}),
            json!({"name": "p2", "path": "$.content[?@.type == 'text'].text", "matches": "\\d+$"}),
            json!({"name": "p3", "path": "$.structuredContent.tags[*]", "equals": "b"}),
            json!({"name": "p4", "path": "$..sum", "equals": 42}),
        ];
        for spec in pass {
            one(spec.clone())
                .expect("valid")
                .evaluate(&r, || Ok(()))
                .unwrap_or_else(|e| panic!("{spec}: {e}"));
        }
        let fails = [
            (
                json!({"name": "a", "pointer": "/structuredContent/sum", "equals": 41}),
                "is 42, not 41",
            ),
            (
                json!({"name": "b", "pointer": "/content/0/text", "contains": "43"}),
                "does not contain",
            ),
            (
                json!({"name": "d", "pointer": "/content/0/text", "matches": "^x"}),
                "does not match",
            ),
            (json!({"name": "e", "is_error": true}), "isError is false"),
            (
                json!({"name": "f", "pointer": "/nope", "equals": 1}),
                "nothing at",
            ),
            (
                json!({"name": "g", "output_schema": true}),
                "no outputSchema",
            ),
            (
                json!({"name": "p1", "path": "$.structuredContent.sum", "equals": 41}),
                "$.structuredContent.sum is 42, not 41",
            ),
            (
                json!({"name": "p3", "path": "$.structuredContent.tags[*]", "equals": "c"}),
                "none of the 2 values at $.structuredContent.tags[*] passes",
            ),
            (
                json!({"name": "p5", "path": "$.content[?@.type == 'image']", "equals": 1}),
                "nothing at",
            ),
        ];
        let no_schema = || Err("the tool declares no outputSchema".to_string());
        for (spec, why) in fails {
            let e = one(spec)
                .expect("valid")
                .evaluate(&r, no_schema)
                .expect_err(why);
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn a_check_has_one_condition_and_a_usable_name() {
        for (spec, why) in [
            (json!({"name": "a"}), "has 0 conditions"),
            (
                json!({"name": "a", "equals": 1, "is_error": false}),
                "has 2 conditions",
            ),
            (json!({"name": "a b", "equals": 1}), "holds a space"),
            (
                json!({"name": "a", "pointer": "x", "equals": 1}),
                "not a JSON pointer",
            ),
            (
                json!({"name": "a", "matches": "("}),
                "not a regular expression",
            ),
            (
                json!({"name": "a", "path": "content[0]", "equals": 1}),
                "not a JSONPath query",
            ),
            (
                json!({"name": "a", "path": "$.a", "pointer": "/a", "equals": 1}),
                "both a pointer and a path",
            ),
        ] {
            let e = one(spec).expect_err(why).to_string();
            assert!(e.contains(why), "{e}");
        }
    }
}
