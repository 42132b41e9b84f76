//! The text form of an inspection: a few labelled lines about the server, one line per
//! tool, resource and prompt with a schema summary, the timings, the findings and, with
//! `--raw`, every message. Long `instructions` are folded to [`WIDTH`] columns and cut
//! after [`INSTRUCTION_LINES`] lines (all of them are in `--json`).

use super::Inspection;
use crate::protocol::methods;
use crate::session::Direction;
use serde_json::Value;
use std::fmt::Write;

/// At most this many items of one list are shown in text (all are in `--json`).
const SHOWN: usize = 12;
/// Columns the header's values fold at.
const WIDTH: usize = 88;
/// Lines of `instructions` shown before "(N more lines …)".
const INSTRUCTION_LINES: usize = 6;
/// Where a folded value continues: under the value, past the label.
const HANGING: &str = "              ";

pub fn text(i: &Inspection, raw: bool) -> String {
    let mut out = String::new();
    header(&mut out, i);
    listings(&mut out, i);
    super::content::answers(&mut out, &i.answers);
    outcome(&mut out, i);
    if raw {
        messages(&mut out, i);
    }
    out
}

/// Target, transport, era and version, the server and its capabilities.
fn header(out: &mut String, i: &Inspection) {
    let _ = writeln!(
        out,
        "mcp-fleet inspect · {} · persona {:?} · session {}",
        i.target, i.persona, i.outcome
    );
    let mut transport = i.transport.clone();
    if let Some(id) = &i.session_id {
        transport.push_str(&format!(", Mcp-Session-Id {id}"));
    }
    label(out, "transport", &transport);
    let version = match (&i.protocol_version, &i.offered_version) {
        (Some(v), Some(o)) if v != o => format!("{v} (offered {o})"),
        (Some(v), _) => v.clone(),
        (None, _) => "none negotiated".into(),
    };
    let handshake = if i.era == "modern" {
        methods::SERVER_DISCOVER
    } else {
        methods::INITIALIZE
    };
    label(
        out,
        "era",
        &format!("{} ({handshake}), protocol {version}", i.era),
    );
    label(out, "server", &server(&i.server_info));
    label(out, "capabilities", &capabilities(&i.capabilities));
    if let Some(text) = &i.instructions {
        let _ = write!(out, "{:<13} ", "instructions");
        out.push_str(&instructions(text));
    }
}

/// `name version — title`, leaving out what the server left empty or did not send.
fn server(s: &Value) -> String {
    let field = |k: &str| {
        s.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let mut parts: Vec<String> = Vec::new();
    parts.push(field("name").unwrap_or("(no name)").to_string());
    match field("version") {
        Some(v) => parts.push(v.to_string()),
        None => parts.push("(no version)".into()),
    }
    let mut line = parts.join(" ");
    if let Some(t) = field("title") {
        line.push_str(&format!(" — {t}"));
    }
    if s.is_null() {
        return "not given".into();
    }
    line
}

/// The instructions folded at [`WIDTH`] columns under their label, at most
/// [`INSTRUCTION_LINES`] lines, then how many more there are.
fn instructions(text: &str) -> String {
    let lines = fold(text, WIDTH - HANGING.len());
    let mut out = String::new();
    for (n, line) in lines.iter().take(INSTRUCTION_LINES).enumerate() {
        if n > 0 {
            out.push_str(HANGING);
        }
        out.push_str(line);
        out.push('\n');
    }
    if lines.len() > INSTRUCTION_LINES {
        let _ = writeln!(
            out,
            "{HANGING}({} more lines; all in --json)",
            lines.len() - INSTRUCTION_LINES
        );
    }
    if lines.is_empty() {
        out.push_str("(empty)\n");
    }
    out
}

/// `text` word-wrapped at `width` characters; the text's own line breaks are kept, a
/// word longer than a line is cut into pieces.
fn fold(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.trim().lines() {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            let mut word: Vec<char> = word.chars().collect();
            while word.len() > width {
                if !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                }
                lines.push(word.drain(..width).collect());
            }
            let word: String = word.into_iter().collect();
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > width {
                lines.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&word);
        }
        lines.push(line);
    }
    lines
}

/// What the server lists: tools, resources, templates, prompts.
fn listings(out: &mut String, i: &Inspection) {
    section(out, "tools", &i.tools, tool);
    section(out, "resources", &i.resources, |r| {
        format!(
            "{}  {}{}",
            r["uri"].as_str().unwrap_or("?"),
            r["name"].as_str().unwrap_or(""),
            r["mimeType"]
                .as_str()
                .map(|m| format!("  ({m})"))
                .unwrap_or_default()
        )
    });
    section(out, "resource templates", &i.resource_templates, |r| {
        format!(
            "{}  {}",
            r["uriTemplate"].as_str().unwrap_or("?"),
            r["name"].as_str().unwrap_or("")
        )
    });
    section(out, "prompts", &i.prompts, prompt);
}

/// How each step went: timings, failures, findings.
fn outcome(out: &mut String, i: &Inspection) {
    let _ = writeln!(out, "\ntimings");
    for t in &i.timings {
        let errors = if t.errors > 0 {
            format!("  ({} failed)", t.errors)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  {:<26} {:>3}×  {:>9.2} ms{errors}",
            t.phase, t.count, t.mean_ms
        );
    }
    if !i.failures.is_empty() {
        let _ = writeln!(out, "\nfailures");
        for f in &i.failures {
            let _ = writeln!(out, "  {f}");
        }
    }
    if i.findings.is_empty() {
        let _ = writeln!(out, "\nfindings: none");
    } else {
        crate::report::text::render_findings(out, &i.findings);
    }
}

/// `--raw`: every wire message, timed.
fn messages(out: &mut String, i: &Inspection) {
    let _ = writeln!(out, "\nmessages");
    for e in &i.transcript {
        let arrow = match e.direction {
            Direction::Sent => "→",
            Direction::Received => "←",
            Direction::Note => "·",
        };
        let body = match &e.message {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        };
        let _ = writeln!(out, "  {:>9.3} ms {arrow} {body}", e.at_ms);
    }
}

fn label(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(out, "{name:<13} {value}");
}

fn section(out: &mut String, title: &str, items: &[Value], line: impl Fn(&Value) -> String) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title} ({})", items.len());
    for item in items.iter().take(SHOWN) {
        let _ = writeln!(out, "  {}", line(item));
    }
    if items.len() > SHOWN {
        let _ = writeln!(out, "  … {} more (all in --json)", items.len() - SHOWN);
    }
}

/// `tools{listChanged}, logging, …`
fn capabilities(caps: &Value) -> String {
    let Some(map) = caps.as_object() else {
        return if caps.is_null() {
            "unknown".into()
        } else {
            format!("not an object: {caps}")
        };
    };
    let list: Vec<String> = map
        .iter()
        .map(|(k, v)| {
            let flags: Vec<&str> = v
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, on)| on.as_bool() == Some(true))
                .map(|(f, _)| f.as_str())
                .collect();
            if flags.is_empty() {
                k.clone()
            } else {
                format!("{k}{{{}}}", flags.join(","))
            }
        })
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(", ")
    }
}

/// `echo(message: string*) → {sum: number} — description`; `*` marks required.
fn tool(t: &Value) -> String {
    let name = t["name"].as_str().unwrap_or("?");
    let args = schema_summary(&t["inputSchema"]);
    let output = t
        .get("outputSchema")
        .map(|s| format!(" → {{{}}}", schema_summary(s)))
        .unwrap_or_default();
    let desc = t["description"]
        .as_str()
        .map(|d| format!("  — {}", first_sentence(d)))
        .unwrap_or_default();
    // A run leaves it out of calls with generated arguments (README › Arguments).
    let destructive = if crate::session::is_destructive(t) {
        " [destructive: left out of generated calls unless allow_destructive]"
    } else {
        ""
    };
    format!("{name}({args}){output}{destructive}{desc}")
}

fn schema_summary(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let props = schema["properties"].as_object();
    props
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let ty = v["type"].as_str().unwrap_or("any");
            let star = if required.contains(&k.as_str()) {
                "*"
            } else {
                ""
            };
            format!("{k}: {ty}{star}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn prompt(p: &Value) -> String {
    let args: Vec<String> = p["arguments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            let star = if a["required"].as_bool() == Some(true) {
                "*"
            } else {
                ""
            };
            format!("{}{star}", a["name"].as_str().unwrap_or("?"))
        })
        .collect();
    let desc = p["description"]
        .as_str()
        .map(|d| format!("  — {}", first_sentence(d)))
        .unwrap_or_default();
    format!(
        "{}({}){desc}",
        p["name"].as_str().unwrap_or("?"),
        args.join(", ")
    )
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn destructive_tools_are_marked() {
        let t =
            |a: Value| json!({"name": "rm", "inputSchema": {"type": "object"}, "annotations": a});
        assert!(tool(&t(json!({"destructiveHint": true}))).contains("[destructive: left out"));
        let read_only = t(json!({"destructiveHint": true, "readOnlyHint": true}));
        assert!(!tool(&read_only).contains("destructive"));
        assert!(!tool(&json!({"name": "echo"})).contains("destructive"));
    }

    #[test]
    fn empty_server_names_and_versions_leave_no_artefacts() {
        assert_eq!(
            server(&json!({"name": "srv", "version": ""})),
            "srv (no version)"
        );
        assert_eq!(
            server(&json!({"name": "", "version": " "})),
            "(no name) (no version)"
        );
        assert_eq!(
            server(&json!({"name": "srv", "version": "1.2", "title": ""})),
            "srv 1.2"
        );
        assert_eq!(server(&Value::Null), "not given");
    }

    #[test]
    fn long_instructions_fold_under_their_label() {
        let text = "word ".repeat(200);
        let shown = instructions(&text);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines.len(), INSTRUCTION_LINES + 1, "{shown}");
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{shown}");
        assert!(lines[1].starts_with(HANGING), "{shown}");
        let last = lines.last().copied().unwrap_or_default();
        assert!(
            last.trim_start().starts_with('(') && last.contains("more lines"),
            "{last}"
        );
        // Short ones stay on one line; the server's own line breaks are kept.
        assert_eq!(instructions("Use echo."), "Use echo.\n");
        assert_eq!(instructions("a\nb"), format!("a\n{HANGING}b\n"));
    }
}
