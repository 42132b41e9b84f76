//! `capture = { NAME = … }`: values a step takes from its result into the session's
//! variables, for later steps' `${NAME}`.

use super::error::PlanError;
use super::template::is_identifier;
use crate::profile::{CaptureSpec, Captures};
use serde_json::Value;

/// Where in a result a value is.
#[derive(Debug, Clone)]
pub enum Source {
    /// Path segments into `structuredContent` (else the JSON of the text content);
    /// `None` is `[*]`, any element of an array.
    Path(Vec<Option<String>>),
    /// Over the text content: the first group, else the whole match.
    Regex(regex::Regex),
}

/// Which of several matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    First,
    Random,
}

#[derive(Debug, Clone)]
pub struct Capture {
    pub var: String,
    pub source: Source,
    pub pick: Pick,
}

impl PartialEq for Capture {
    fn eq(&self, other: &Capture) -> bool {
        let same_source = match (&self.source, &other.source) {
            (Source::Path(a), Source::Path(b)) => a == b,
            (Source::Regex(a), Source::Regex(b)) => a.as_str() == b.as_str(),
            _ => false,
        };
        self.var == other.var && self.pick == other.pick && same_source
    }
}

const FORMS: &str = "write \"/a/0/b\" (a JSON pointer), \"$.a[0].b\" or \"$.a[*].b\" (a path), \
                     or a table { regex = \"id: (\\\\w+)\", pick = \"first\" | \"random\" }";

impl Capture {
    /// The `capture` table of a step at `key`, in the order of its names.
    pub fn all_from_specs(
        specs: &Option<Captures>,
        key: &str,
        origin: &str,
    ) -> Result<Vec<Capture>, PlanError> {
        let Some(specs) = specs else {
            return Ok(Vec::new());
        };
        specs
            .iter()
            .map(|(var, spec)| {
                Capture::from_spec(var, spec, &format!("{key}.capture.{var}"), origin)
            })
            .collect()
    }

    /// One capture into variable `var`; `key` names it in errors.
    pub fn from_spec(
        var: &str,
        spec: &CaptureSpec,
        key: &str,
        origin: &str,
    ) -> Result<Capture, PlanError> {
        let err = |problem: String, fix: String| PlanError::new(origin, key, problem, fix);
        if !is_identifier(var) {
            return Err(err(
                format!("{var:?} is not a variable name"),
                "name it with letters, digits and '_', starting with a letter or '_'".into(),
            ));
        }
        let (source, pick) = match spec {
            CaptureSpec::Text(text) => (text_source(text, key, origin)?, Pick::First),
            CaptureSpec::Table(t) => {
                let pick = match t.pick.as_deref() {
                    None | Some("first") => Pick::First,
                    Some("random") => Pick::Random,
                    Some(other) => {
                        return Err(err(
                            format!("unknown pick {other:?}"),
                            "use pick = \"first\" or pick = \"random\"".into(),
                        ))
                    }
                };
                let source = match (&t.pointer, &t.path, &t.regex) {
                    (Some(p), None, None) => {
                        if !p.is_empty() && !p.starts_with('/') {
                            return Err(err(
                                format!("pointer {p:?} does not start with '/'"),
                                "write a JSON pointer as \"/a/0/b\"".into(),
                            ));
                        }
                        Source::Path(pointer_segments(p))
                    }
                    (None, Some(p), None) => Source::Path(path_segments(p).map_err(|problem| {
                        err(
                            format!("path {p:?}: {problem}"),
                            "write a path as $.a.b[0], $.a[*].b or $['odd key']".into(),
                        )
                    })?),
                    (None, None, Some(r)) => Source::Regex(compile(r, key, origin)?),
                    (None, None, None) => {
                        return Err(err(
                            "says nowhere to look".into(),
                            format!("give one of pointer, path or regex: {FORMS}"),
                        ))
                    }
                    _ => {
                        return Err(err(
                            "gives more than one of pointer, path and regex".into(),
                            "keep one of them".into(),
                        ))
                    }
                };
                (source, pick)
            }
        };
        Ok(Capture {
            var: var.to_string(),
            source,
            pick,
        })
    }

    /// The value in `result` (a `tools/call` or `resources/read` result), or `None` when
    /// nothing matches.
    pub fn extract(&self, result: &Value, rng: &mut impl rand::Rng) -> Option<Value> {
        match &self.source {
            Source::Path(segments) => {
                let mut found = Vec::new();
                if let Some(structured) = result.get("structuredContent") {
                    walk(structured, segments, &mut found);
                }
                if found.is_empty() {
                    for text in texts(result) {
                        if let Ok(doc) = serde_json::from_str::<Value>(text) {
                            walk(&doc, segments, &mut found);
                            if !found.is_empty() {
                                break;
                            }
                        }
                    }
                }
                self.choose(found, rng)
            }
            Source::Regex(re) => {
                let text = texts(result).collect::<Vec<_>>().join("\n");
                let found: Vec<Value> = re
                    .captures_iter(&text)
                    .filter_map(|c| {
                        let m = if re.captures_len() > 1 {
                            c.get(1)
                        } else {
                            c.get(0)
                        };
                        m.map(|m| Value::String(m.as_str().to_string()))
                    })
                    .collect();
                self.choose(found, rng)
            }
        }
    }

    fn choose(&self, mut found: Vec<Value>, rng: &mut impl rand::Rng) -> Option<Value> {
        if found.is_empty() {
            return None;
        }
        let i = match self.pick {
            Pick::First => 0,
            Pick::Random => rng.random_range(0..found.len()),
        };
        Some(found.swap_remove(i))
    }
}

/// The text contents of a result: `content[].text` (tools) and `contents[].text`
/// (resources).
fn texts(result: &Value) -> impl Iterator<Item = &str> {
    ["content", "contents"]
        .into_iter()
        .filter_map(|k| result.get(k).and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
}

/// Every value at `segments` below `v` (several under `[*]`).
fn walk(v: &Value, segments: &[Option<String>], out: &mut Vec<Value>) {
    let Some((first, rest)) = segments.split_first() else {
        out.push(v.clone());
        return;
    };
    match (first, v) {
        (None, Value::Array(items)) => items.iter().for_each(|item| walk(item, rest, out)),
        (Some(name), Value::Object(fields)) => {
            if let Some(child) = fields.get(name) {
                walk(child, rest, out);
            }
        }
        (Some(index), Value::Array(items)) => {
            if let Some(child) = index.parse::<usize>().ok().and_then(|i| items.get(i)) {
                walk(child, rest, out);
            }
        }
        _ => {}
    }
}

/// A string capture: a pointer (`/…`) or a path (`$…`).
fn text_source(text: &str, key: &str, origin: &str) -> Result<Source, PlanError> {
    if text.starts_with('/') {
        Ok(Source::Path(pointer_segments(text)))
    } else if text.starts_with('$') {
        path_segments(text).map(Source::Path).map_err(|problem| {
            PlanError::new(
                origin,
                key,
                format!("path {text:?}: {problem}"),
                "write a path as $.a.b[0], $.a[*].b or $['odd key']",
            )
        })
    } else {
        Err(PlanError::new(
            origin,
            key,
            format!("{text:?} is neither a JSON pointer nor a path"),
            FORMS,
        ))
    }
}

/// RFC 6901: `/a/0/b`, `~1` is `/`, `~0` is `~`.
fn pointer_segments(pointer: &str) -> Vec<Option<String>> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| Some(s.replace("~1", "/").replace("~0", "~")))
        .collect()
}

/// `$`, `.name`, `[0]`, `[*]`, `['odd key']` / `["odd key"]`.
fn path_segments(path: &str) -> Result<Vec<Option<String>>, String> {
    let mut rest = path
        .strip_prefix('$')
        .ok_or_else(|| "does not start with '$'".to_string())?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let name = &after[..end];
            if name.is_empty() {
                return Err("a '.' is followed by no name".into());
            }
            out.push((name != "*").then(|| name.to_string()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            if let Some(quoted) = after.strip_prefix(['\'', '"']) {
                let quote = after.as_bytes()[0] as char;
                let end = quoted
                    .find(quote)
                    .ok_or_else(|| "a quoted name is not closed".to_string())?;
                let name = &quoted[..end];
                rest = quoted[end + 1..]
                    .strip_prefix(']')
                    .ok_or_else(|| "a quoted name is not followed by ']'".to_string())?;
                out.push(Some(name.to_string()));
            } else {
                let end = after
                    .find(']')
                    .ok_or_else(|| "a '[' is not closed".to_string())?;
                let inner = after[..end].trim();
                if inner == "*" {
                    out.push(None);
                } else if inner.parse::<usize>().is_ok() {
                    out.push(Some(inner.to_string()));
                } else {
                    return Err(format!("[{inner}] is neither an index nor [*]"));
                }
                rest = &after[end + 1..];
            }
        } else {
            return Err(format!(
                "unexpected {:?}",
                rest.chars().next().unwrap_or(' ')
            ));
        }
    }
    Ok(out)
}

fn compile(pattern: &str, key: &str, origin: &str) -> Result<regex::Regex, PlanError> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            let last = detail
                .lines()
                .last()
                .unwrap_or("invalid")
                .trim()
                .to_string();
            PlanError::new(
                origin,
                key,
                format!("the regex does not compile: {last}"),
                "fix the regex (Rust syntax; write \\\\ for a backslash in a TOML string)",
            )
        })
}

#[cfg(test)]
mod tests;
