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
mod tests {
    use super::*;
    use crate::profile::CaptureTable;
    use rand::SeedableRng;
    use serde_json::json;

    fn capture(spec: CaptureSpec) -> Result<Capture, PlanError> {
        Capture::from_spec("v", &spec, "scenario[0].steps[0].capture.v", "p.toml")
    }

    fn text(s: &str) -> Capture {
        capture(CaptureSpec::Text(s.into())).expect(s)
    }

    fn table(t: CaptureTable) -> Capture {
        capture(CaptureSpec::Table(t.clone())).expect("valid table")
    }

    fn rng() -> rand::rngs::SmallRng {
        rand::rngs::SmallRng::seed_from_u64(1)
    }

    fn tool_text(t: &str) -> Value {
        json!({"content": [{"type": "image", "data": "x"}, {"type": "text", "text": t}]})
    }

    #[test]
    fn pointers_and_paths_parse() {
        let segs = |c: Capture| match c.source {
            Source::Path(p) => p,
            Source::Regex(_) => panic!("a path"),
        };
        let s = |x: &str| Some(x.to_string());
        assert_eq!(segs(text("/a/0/b~1c~0d")), vec![s("a"), s("0"), s("b/c~d")]);
        assert_eq!(segs(text("$.a.b[0]")), vec![s("a"), s("b"), s("0")]);
        assert_eq!(segs(text("$.a[*].b")), vec![s("a"), None, s("b")]);
        assert_eq!(
            segs(text("$['odd key'][\"x.y\"]")),
            vec![s("odd key"), s("x.y")]
        );
        assert_eq!(segs(text("$")), Vec::<Option<String>>::new());
        let t = CaptureTable {
            pointer: Some("/id".into()),
            pick: Some("random".into()),
            ..Default::default()
        };
        let c = table(t);
        assert_eq!(c.pick, Pick::Random);
        assert_eq!(segs(c), vec![s("id")]);
    }

    #[test]
    fn bad_captures_name_the_key_and_a_fix() {
        let k = "p.toml: `scenario[0].steps[0].capture.v`: ";
        let t =
            |pointer: Option<&str>, path: Option<&str>, regex: Option<&str>, pick: Option<&str>| {
                CaptureSpec::Table(CaptureTable {
                    pointer: pointer.map(Into::into),
                    path: path.map(Into::into),
                    regex: regex.map(Into::into),
                    pick: pick.map(Into::into),
                })
            };
        let cases = [
            (
                CaptureSpec::Text("id".into()),
                "\"id\" is neither a JSON pointer nor a path\nfix: write \"/a/0/b\"",
            ),
            (
                CaptureSpec::Text("$.a[x]".into()),
                "path \"$.a[x]\": [x] is neither an index nor [*]\nfix: write a path as",
            ),
            (
                CaptureSpec::Text("$.a[0".into()),
                "path \"$.a[0\": a '[' is not closed",
            ),
            (
                CaptureSpec::Text("$..a".into()),
                "path \"$..a\": a '.' is followed by no name",
            ),
            (
                CaptureSpec::Text("$a".into()),
                "path \"$a\": unexpected 'a'",
            ),
            (
                CaptureSpec::Text("$['a".into()),
                "path \"$['a\": a quoted name is not closed",
            ),
            (
                t(None, None, Some("(unclosed"), None),
                "the regex does not compile",
            ),
            (
                t(None, None, None, None),
                "says nowhere to look\nfix: give one of pointer, path or regex",
            ),
            (
                t(Some("/a"), Some("$.a"), None, None),
                "gives more than one of pointer, path and regex\nfix: keep one",
            ),
            (
                t(Some("a"), None, None, None),
                "pointer \"a\" does not start with '/'",
            ),
            (
                t(Some("/a"), None, None, Some("last")),
                "unknown pick \"last\"\nfix: use pick = \"first\" or pick = \"random\"",
            ),
        ];
        for (spec, want) in cases {
            let got = capture(spec.clone())
                .expect_err(&format!("{spec:?}"))
                .to_string();
            assert!(
                got.starts_with(&format!("{k}{want}")),
                "for {spec:?}\n got: {got}\nwant: {k}{want}"
            );
        }
        let got = Capture::from_spec("9v", &CaptureSpec::Text("/a".into()), "k", "p.toml")
            .expect_err("bad name")
            .to_string();
        assert!(
            got.starts_with("p.toml: `k`: \"9v\" is not a variable name"),
            "{got}"
        );
    }

    #[test]
    fn pointer_reads_structured_content_first_then_text_json() {
        let c = text("/entity/id");
        let both = json!({
            "structuredContent": {"entity": {"id": 5}},
            "content": [{"type": "text", "text": "{\"entity\": {\"id\": 6}}"}]
        });
        assert_eq!(c.extract(&both, &mut rng()), Some(json!(5)));
        let texts = json!({"content": [
            {"type": "text", "text": "not json"},
            {"type": "text", "text": "{\"other\": 1}"},
            {"type": "text", "text": "{\"entity\": {\"id\": \"e-7\"}}"}
        ]});
        assert_eq!(c.extract(&texts, &mut rng()), Some(json!("e-7")));
        assert_eq!(c.extract(&tool_text("{\"entity\": {}}"), &mut rng()), None);
        assert_eq!(c.extract(&json!({}), &mut rng()), None);
        let idx = text("$.items[1].name");
        let r = json!({"structuredContent": {"items": [{"name": "a"}, {"name": "b"}]}});
        assert_eq!(idx.extract(&r, &mut rng()), Some(json!("b")));
        assert_eq!(text("$.items[9]").extract(&r, &mut rng()), None);
    }

    #[test]
    fn wildcards_pick_first_or_random() {
        let r = json!({"structuredContent": {"files": [
            {"name": "a.txt"}, {"name": "b.txt"}, {"size": 1}, {"name": "c.txt"}
        ]}});
        assert_eq!(
            text("$.files[*].name").extract(&r, &mut rng()),
            Some(json!("a.txt"))
        );
        let random = table(CaptureTable {
            path: Some("$.files[*].name".into()),
            pick: Some("random".into()),
            ..Default::default()
        });
        let mut seen = std::collections::BTreeSet::new();
        let mut g = rng();
        for _ in 0..200 {
            let v = random.extract(&r, &mut g).expect("a name");
            seen.insert(v.as_str().expect("a string").to_string());
        }
        let want: std::collections::BTreeSet<String> =
            ["a.txt", "b.txt", "c.txt"].map(String::from).into();
        assert_eq!(
            seen, want,
            "random picks reach every element and only those"
        );
        assert_eq!(
            text("$.files[*].name")
                .extract(&json!({"structuredContent": {"files": []}}), &mut rng()),
            None
        );
    }

    #[test]
    fn regex_takes_the_first_group_or_the_whole_match() {
        let r = tool_text("created id: abc\nand id: def");
        let group = table(CaptureTable {
            regex: Some("id: (\\w+)".into()),
            ..Default::default()
        });
        assert_eq!(group.extract(&r, &mut rng()), Some(json!("abc")));
        let whole = table(CaptureTable {
            regex: Some("\\d+".into()),
            ..Default::default()
        });
        assert_eq!(
            whole.extract(&tool_text("took 12 of 30"), &mut rng()),
            Some(json!("12"))
        );
        let random = table(CaptureTable {
            regex: Some("id: (\\w+)".into()),
            pick: Some("random".into()),
            ..Default::default()
        });
        let mut g = rng();
        let picks: std::collections::BTreeSet<String> = (0..100)
            .filter_map(|_| random.extract(&r, &mut g))
            .map(|v| v.to_string())
            .collect();
        assert_eq!(picks, ["\"abc\"", "\"def\""].map(String::from).into());
        assert_eq!(group.extract(&tool_text("nothing here"), &mut rng()), None);
        // Across text contents joined by newlines.
        let two =
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "id: z"}]});
        assert_eq!(group.extract(&two, &mut rng()), Some(json!("z")));
    }

    #[test]
    fn resources_read_results_are_read_too() {
        let r = json!({"contents": [
            {"uri": "file:///a", "blob": "AAAA"},
            {"uri": "file:///b", "mimeType": "application/json", "text": "{\"rows\": [{\"id\": 3}]}"}
        ]});
        assert_eq!(text("$.rows[*].id").extract(&r, &mut rng()), Some(json!(3)));
        let re = table(CaptureTable {
            regex: Some("\"id\": (\\d+)".into()),
            ..Default::default()
        });
        assert_eq!(re.extract(&r, &mut rng()), Some(json!("3")));
    }
}
