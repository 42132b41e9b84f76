//! Values a session quoted back from an earlier answer (an id a tool returned, passed to
//! a later call) become captures: the earlier step takes `capture = { v1 = "/id" }`, the
//! later one says `"${v1}"`, so a replay passes on what *its* server answered instead of
//! a value that server never gave. Every other recorded string is written literally
//! (`${` as `$${`).
//!
//! A string is taken as quoted when it is at least [`MIN_LEN`] characters long, equals
//! exactly a string of an earlier `tools/call` or `resources/read` result that was
//! answered before it was sent, and a capture can find it there as the run will
//! (checked with the plan's own [`Capture::extract`]); the first such place wins.

use super::derive::Draft;
use super::names::literal;
use crate::plan::capture::Capture;
use crate::profile::{CaptureSpec, CaptureTable, Step};
use rand::SeedableRng;
use serde_json::Value;
use std::collections::HashMap;

/// Shorter strings are too likely to match by chance (`"ok"`, `"en"`).
pub const MIN_LEN: usize = 4;

/// The whole text of a result with one text block.
const WHOLE_TEXT: &str = r"(?s)\A(.*)\z";

/// Turn quoted values into captures, and write every other string literally.
pub(super) fn apply(drafts: &mut [Draft], notes: &mut Vec<String>) {
    let index: Vec<HashMap<String, CaptureSpec>> = drafts
        .iter()
        .map(|d| {
            // A run captures only from a result that is not a tool error.
            d.result
                .filter(|r| r.get("isError") != Some(&Value::Bool(true)))
                .map(quotable)
                .unwrap_or_default()
        })
        .collect();
    // (step, spec) → variable, in the order made.
    let mut vars: Vec<(usize, CaptureSpec, String)> = Vec::new();
    let mut quoted = 0;
    for i in 0..drafts.len() {
        let start = drafts[i].start;
        let answered_before: Vec<bool> = drafts[..i]
            .iter()
            .map(|d| d.end.is_some_and(|e| e <= start))
            .collect();
        each_string(&mut drafts[i].step, &mut |s: &mut String| {
            let found = (s.chars().count() >= MIN_LEN)
                .then(|| {
                    (0..i)
                        .filter(|&j| answered_before[j])
                        .find_map(|j| index[j].get(s.as_str()).map(|spec| (j, spec)))
                })
                .flatten();
            *s = match found {
                Some((j, spec)) => {
                    quoted += 1;
                    let var = match vars.iter().find(|(k, sp, _)| *k == j && sp == spec) {
                        Some((_, _, v)) => v.clone(),
                        None => {
                            let v = format!("v{}", vars.len() + 1);
                            vars.push((j, spec.clone(), v.clone()));
                            v
                        }
                    };
                    format!("${{{var}}}")
                }
                None => literal(s),
            };
        });
    }
    for (j, spec, var) in vars {
        if let Step::ToolsCall { capture, .. } | Step::ResourcesRead { capture, .. } =
            &mut drafts[j].step
        {
            capture
                .get_or_insert_with(Default::default)
                .insert(var, spec);
        }
    }
    if quoted > 0 {
        notes.push(format!(
            "{quoted} value(s) quoted from earlier answers are captured and passed on (${{v…}})"
        ));
    }
}

/// Every string of `result` a capture can take, with the first capture that takes it.
fn quotable(result: &Value) -> HashMap<String, CaptureSpec> {
    let mut candidates: Vec<(String, CaptureSpec)> = Vec::new();
    if let Some(structured) = result.get("structuredContent") {
        strings(structured, String::new(), &mut candidates);
    }
    let texts: Vec<&str> = ["content", "contents"]
        .into_iter()
        .filter_map(|k| result.get(k).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    for text in &texts {
        if let Ok(doc) = serde_json::from_str::<Value>(text) {
            strings(&doc, String::new(), &mut candidates);
        }
    }
    if let [text] = texts.as_slice() {
        let table = CaptureTable {
            regex: Some(WHOLE_TEXT.into()),
            ..CaptureTable::default()
        };
        candidates.push((text.to_string(), CaptureSpec::Table(table)));
    }
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0);
    let mut out = HashMap::new();
    for (s, spec) in candidates {
        if s.chars().count() < MIN_LEN || out.contains_key(&s) {
            continue;
        }
        let takes = Capture::from_spec("v", &spec, "capture", "trace")
            .ok()
            .and_then(|c| c.extract(result, &mut rng));
        if takes.as_ref().and_then(Value::as_str) == Some(s.as_str()) {
            out.insert(s, spec);
        }
    }
    out
}

/// Every string below `v` with the capture that points at it.
fn strings(v: &Value, pointer: String, out: &mut Vec<(String, CaptureSpec)>) {
    match v {
        Value::String(s) => {
            let at = if pointer.is_empty() {
                "$".into()
            } else {
                pointer
            };
            out.push((s.clone(), CaptureSpec::Text(at)));
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, format!("{pointer}/{i}"), out);
            }
        }
        Value::Object(fields) => {
            for (k, item) in fields {
                let k = k.replace('~', "~0").replace('/', "~1");
                strings(item, format!("{pointer}/{k}"), out);
            }
        }
        _ => {}
    }
}

/// Every string of a step that a profile reads as a template.
fn each_string(step: &mut Step, f: &mut impl FnMut(&mut String)) {
    match step {
        Step::ToolsCall {
            arguments: Some(v), ..
        }
        | Step::Request {
            params: Some(v), ..
        } => each_in_value(v, f),
        Step::ResourcesRead { uri, .. } => f(uri),
        Step::PromptsGet { prompt, arguments } => {
            f(prompt);
            if let Some(v) = arguments {
                each_in_value(v, f);
            }
        }
        _ => {}
    }
}

fn each_in_value(v: &mut Value, f: &mut impl FnMut(&mut String)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter_mut().for_each(|v| each_in_value(v, f)),
        Value::Object(fields) => fields.values_mut().for_each(|v| each_in_value(v, f)),
        _ => {}
    }
}
