//! The text form of an inspection: a few labelled lines about the server, one line per
//! tool, resource and prompt with a schema summary, the timings, the findings and, with
//! `--raw`, every message.

use super::Inspection;
use crate::protocol::methods;
use crate::session::Direction;
use serde_json::Value;
use std::fmt::Write;

/// At most this many items of one list are shown in text (all are in `--json`).
const SHOWN: usize = 12;

pub fn text(i: &Inspection, raw: bool) -> String {
    let mut out = String::new();
    header(&mut out, i);
    listings(&mut out, i);
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
    let s = &i.server_info;
    let name = s.get("name").and_then(Value::as_str).unwrap_or("?");
    let ver = s.get("version").and_then(Value::as_str).unwrap_or("?");
    let title = s
        .get("title")
        .and_then(Value::as_str)
        .map(|t| format!(" — {t}"))
        .unwrap_or_default();
    label(out, "server", &format!("{name} {ver}{title}"));
    label(out, "capabilities", &capabilities(&i.capabilities));
    if let Some(text) = &i.instructions {
        label(out, "instructions", text);
    }
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
    format!("{name}({args}){output}{desc}")
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
