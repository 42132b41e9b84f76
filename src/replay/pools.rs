//! Tool arguments as data pools, for a grouped profile: the calls of one tool with the
//! same argument names (and the same captured values passed on) share a *shape*; a shape
//! called with several different argument objects gets a JSON-lines pool of them (one
//! object a line, drawn at random), and its steps draw each argument that varies with
//! `${pool.NAME.FIELD}` (one row per call for all of them); a shape always called alike
//! keeps its arguments inline.

use super::names::{pool_name, Unique};
use crate::profile::{DataSection, Step};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One shape of call and the distinct argument objects seen with it.
#[derive(Debug)]
struct Shape {
    key: String,
    tool: String,
    /// The arguments without the captured values, as recorded (not as template text).
    rows: Vec<Map<String, Value>>,
    /// The pool's name, once it has one.
    pool: Option<String>,
}

/// Every shape of call of a profile's scenarios.
#[derive(Debug, Default)]
pub(super) struct ArgumentPools {
    shapes: Vec<Shape>,
}

/// A pool made: its section, its file (name and contents).
pub(super) struct Made {
    pub sections: BTreeMap<String, DataSection>,
    pub files: Vec<(String, String)>,
    pub notes: Vec<String>,
}

impl ArgumentPools {
    /// A step of a recorded session (every session's, not only the first of a scenario's).
    pub fn add(&mut self, step: &Step) {
        let Some((key, tool, literal)) = parts(step) else {
            return;
        };
        let i = match self.shapes.iter().position(|s| s.key == key) {
            Some(i) => i,
            None => {
                self.shapes.push(Shape {
                    key,
                    tool: tool.to_string(),
                    rows: Vec::new(),
                    pool: None,
                });
                self.shapes.len() - 1
            }
        };
        let rows = &mut self.shapes[i].rows;
        if !rows.contains(&literal) {
            rows.push(literal);
        }
    }

    /// Name a pool for every shape seen with more than one argument object; their
    /// `[data]` sections and files (`<stem>.data/<pool>.jsonl`).
    pub fn make(&mut self, stem: &str) -> Made {
        let mut unique = Unique::default();
        let mut made = Made {
            sections: BTreeMap::new(),
            files: Vec::new(),
            notes: Vec::new(),
        };
        for s in &mut self.shapes {
            if s.rows.len() < 2 {
                continue;
            }
            let varying = varying_keys(&s.rows);
            if varying.iter().any(|k| k.is_empty() || k.contains('}')) {
                made.notes.push(format!(
                    "tool {:?}: an argument name is empty or holds '}}', so its calls keep the first \
                     session's arguments instead of a pool",
                    s.tool
                ));
                continue;
            }
            let name = unique.take(&pool_name(&s.tool));
            let file = format!("{stem}.data/{name}.jsonl");
            let mut text = String::new();
            for row in &s.rows {
                text.push_str(&Value::Object(row.clone()).to_string());
                text.push('\n');
            }
            made.sections.insert(
                name.clone(),
                DataSection {
                    file: file.clone(),
                    format: None,
                    column: None,
                    order: Some("random".into()),
                },
            );
            made.files.push((file, text));
            s.pool = Some(name);
        }
        made
    }

    /// A step's arguments drawn from its shape's pool (unchanged without one).
    pub fn rewrite(&self, step: &mut Step) {
        let Some((key, _, _)) = parts(step) else {
            return;
        };
        let Some(shape) = self.shapes.iter().find(|s| s.key == key) else {
            return;
        };
        let (
            Some(pool),
            Step::ToolsCall {
                arguments: Some(Value::Object(args)),
                ..
            },
        ) = (&shape.pool, step)
        else {
            return;
        };
        for k in varying_keys(&shape.rows) {
            args.insert(k.clone(), Value::String(format!("${{pool.{pool}.{k}}}")));
        }
    }
}

/// The shape key, tool and argument values of a `tools/call` step: the key is the tool,
/// the argument names and the captured values it passes on.
fn parts(step: &Step) -> Option<(String, &str, Map<String, Value>)> {
    let Step::ToolsCall {
        tool, arguments, ..
    } = step
    else {
        return None;
    };
    let Some(Value::Object(args)) = arguments else {
        let key = serde_json::json!({ "tool": tool, "arguments": arguments }).to_string();
        return Some((key, tool, Map::new()));
    };
    let names: Vec<&String> = args.keys().collect();
    let captured: Map<String, Value> = args
        .iter()
        .filter(|(_, v)| passes_capture(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let literal: Map<String, Value> = args
        .iter()
        .filter(|(_, v)| !passes_capture(v))
        .map(|(k, v)| (k.clone(), unliteral(v)))
        .collect();
    let key = serde_json::json!({ "tool": tool, "names": names, "captured": captured });
    Some((key.to_string(), tool, literal))
}

/// The names whose values differ between rows.
fn varying_keys(rows: &[Map<String, Value>]) -> Vec<String> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    first
        .keys()
        .filter(|k| rows.iter().any(|r| r.get(*k) != first.get(*k)))
        .cloned()
        .collect()
}

/// Whether a value holds a captured variable (`"${v1}"`, as substitution writes them).
pub(super) fn passes_capture(v: &Value) -> bool {
    match v {
        Value::String(s) => s
            .strip_prefix("${v")
            .and_then(|r| r.strip_suffix('}'))
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())),
        Value::Array(items) => items.iter().any(passes_capture),
        Value::Object(fields) => fields.values().any(passes_capture),
        _ => false,
    }
}

/// Template text back to the value it stands for (`$${` → `${`): a pool's rows are
/// sent as they are.
fn unliteral(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("$${", "${")),
        Value::Array(items) => Value::Array(items.iter().map(unliteral).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), unliteral(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}
