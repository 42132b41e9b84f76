//! The text form of the answers to `--call`, `--read` and `--get-prompt`: text as text
//! (long text folded, with a count of what was left out), `structuredContent` as pretty
//! JSON, images and audio by MIME type and decoded size, links and embedded resources
//! by URI, MIME and size, `isError` and JSON-RPC errors marked, each with its latency.

use super::answer::Answer;
use base64::Engine;
use serde_json::Value;
use std::fmt::Write;

/// Lines of one text shown before "… N more lines".
const MAX_LINES: usize = 20;
/// Characters of one line shown before it is cut.
const WIDTH: usize = 100;

/// The `results` section: one block per answer.
pub fn answers(out: &mut String, answers: &[Answer]) {
    if answers.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nresults ({})", answers.len());
    for a in answers {
        answer(out, a);
    }
}

fn answer(out: &mut String, a: &Answer) {
    let args = a
        .arguments
        .as_ref()
        .map(|v| format!(" {}", cut(&v.to_string(), 60)))
        .unwrap_or_default();
    let mut head = format!("  {} {}{args}", a.kind, a.name);
    if let Some(ms) = a.latency_ms {
        let _ = write!(head, "  ·  {ms:.2} ms");
    }
    if a.requests > 1 {
        let _ = write!(head, "  ·  {} requests", a.requests);
    }
    if !a.listed {
        let _ = write!(head, "  ·  not in {}", listing_of(a.kind));
    }
    let _ = writeln!(out, "{head}");
    for ev in &a.events {
        let reply = ev
            .reply
            .as_ref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let detail = if ev.detail.is_empty() {
            String::new()
        } else {
            format!(" {}", cut(&ev.detail, WIDTH))
        };
        // Since the request went out, the clock the latency is on.
        let since = ev.at_ms - a.at_ms.unwrap_or(ev.at_ms);
        let _ = writeln!(out, "    +{since:.2} ms ← {}{detail}{reply}", ev.method);
    }
    match a.status {
        "skipped" => {
            let _ = writeln!(
                out,
                "    ✗ not sent: the server does not declare the {} capability",
                a.capability()
            );
        }
        "not_sent" => {
            let _ = writeln!(
                out,
                "    ✗ not sent: the session ended before it (see its failures above)"
            );
        }
        "unanswered" => {
            let _ = writeln!(out, "    ✗ no answer (the session ended first)");
        }
        "error" => {
            let e = a.error.as_ref().unwrap_or(&Value::Null);
            let _ = writeln!(
                out,
                "    ✗ JSON-RPC error {}: {}",
                e["code"],
                e["message"].as_str().unwrap_or("(no message)")
            );
            if let Some(data) = e.get("data") {
                block(out, "      ", &pretty(data));
            }
        }
        _ => {
            let r = a.result.as_ref().unwrap_or(&Value::Null);
            match a.kind {
                "call" => call_result(out, r, a.is_error),
                "read" => read_result(out, r),
                _ => prompt_result(out, r),
            }
        }
    }
}

fn listing_of(kind: &str) -> &'static str {
    match kind {
        "call" => "tools/list",
        "read" => "resources/list",
        _ => "prompts/list",
    }
}

fn call_result(out: &mut String, r: &Value, is_error: bool) {
    if is_error {
        let _ = writeln!(out, "    ✗ isError: true — the tool reports a failure");
    }
    let blocks = r["content"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if blocks.is_empty() && r.get("structuredContent").is_none() {
        let _ = writeln!(out, "    (no content)");
    }
    for b in blocks {
        content_block(out, "    ", b);
    }
    if let Some(s) = r.get("structuredContent") {
        let _ = writeln!(out, "    structuredContent:");
        block(out, "      ", &pretty(s));
    }
}

fn read_result(out: &mut String, r: &Value) {
    let contents = r["contents"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    if contents.is_empty() {
        let _ = writeln!(out, "    (no contents)");
    }
    for c in contents {
        resource_contents(out, "    ", c);
    }
}

fn prompt_result(out: &mut String, r: &Value) {
    if let Some(d) = r["description"].as_str() {
        let _ = writeln!(out, "    description: {}", cut(d, WIDTH));
    }
    for m in r["messages"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "    {}:", m["role"].as_str().unwrap_or("?"));
        content_block(out, "      ", &m["content"]);
    }
}

/// One content block: text, image, audio, resource link or embedded resource.
fn content_block(out: &mut String, indent: &str, b: &Value) {
    let mime = b["mimeType"].as_str().unwrap_or("?");
    match b["type"].as_str().unwrap_or("?") {
        "text" => block(out, indent, b["text"].as_str().unwrap_or("")),
        kind @ ("image" | "audio") => {
            let _ = writeln!(out, "{indent}[{kind} {mime}, {}]", decoded_size(&b["data"]));
        }
        "resource_link" => {
            let size = b["size"]
                .as_u64()
                .map(|n| format!(", {n} bytes"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{indent}[link {} {mime}{size}] {}",
                b["uri"].as_str().unwrap_or("?"),
                b["name"].as_str().unwrap_or("")
            );
        }
        "resource" => resource_contents(out, indent, &b["resource"]),
        other => {
            let _ = writeln!(out, "{indent}[{other}] {}", cut(&b.to_string(), WIDTH));
        }
    }
}

/// Resource contents (of `resources/read` or embedded): URI, MIME, size, the text.
fn resource_contents(out: &mut String, indent: &str, c: &Value) {
    let uri = c["uri"].as_str().unwrap_or("?");
    let mime = c["mimeType"].as_str().unwrap_or("?");
    if let Some(text) = c["text"].as_str() {
        let _ = writeln!(out, "{indent}[{uri} {mime}, {} bytes]", text.len());
        block(out, &format!("{indent}  "), text);
    } else {
        let _ = writeln!(out, "{indent}[{uri} {mime}, {}]", decoded_size(&c["blob"]));
    }
}

/// `1234 bytes` of a base64 field, or why not.
fn decoded_size(data: &Value) -> String {
    let Some(text) = data.as_str() else {
        return "no data".into();
    };
    match base64::engine::general_purpose::STANDARD.decode(text.trim()) {
        Ok(bytes) => format!("{} bytes", bytes.len()),
        Err(_) => format!("{} characters, not valid base64", text.len()),
    }
}

/// `text` indented, at most [`MAX_LINES`] lines of at most [`WIDTH`] characters, with
/// a count of what was left out.
pub fn block(out: &mut String, indent: &str, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    let mut cut_lines = 0;
    for line in lines.iter().take(MAX_LINES) {
        if line.chars().count() > WIDTH {
            cut_lines += 1;
        }
        let _ = writeln!(out, "{indent}{}", cut(line, WIDTH));
    }
    let left = lines.len().saturating_sub(MAX_LINES);
    let mut notes = Vec::new();
    if left > 0 {
        let chars: usize = lines[MAX_LINES..].iter().map(|l| l.chars().count()).sum();
        notes.push(format!("{left} more lines, {chars} characters"));
    }
    if cut_lines > 0 {
        let s = if cut_lines == 1 { "" } else { "s" };
        notes.push(format!("{cut_lines} long line{s} cut"));
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "{indent}… {} (all in --json)", notes.join("; "));
    }
}

/// At most `width` characters of `s`, ending in "…" when cut.
pub fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
    t.push('…');
    t
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answered(kind: &'static str, result: Value) -> Answer {
        let mut a = Answer::for_test(kind);
        a.status = "answered";
        a.is_error = result["isError"] == json!(true);
        a.result = Some(result);
        a.latency_ms = Some(1.5);
        a
    }

    #[test]
    fn every_content_kind_reads_as_words() {
        let long: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let r = json!({
            "content": [
                {"type": "text", "text": long},
                {"type": "image", "mimeType": "image/png", "data": "AAECAw=="},
                {"type": "audio", "mimeType": "audio/wav", "data": "AAE="},
                {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "fleet://x", "mimeType": "application/octet-stream", "blob": "AAAA"}}
            ],
            "structuredContent": {"sum": 3},
            "isError": true
        });
        let mut out = String::new();
        answers(&mut out, &[answered("call", r)]);
        for want in [
            "results (1)",
            "call t {}  ·  1.50 ms",
            "✗ isError: true",
            "    line 20\n",
            "… 10 more lines, 70 characters (all in --json)",
            "[image image/png, 4 bytes]",
            "[audio audio/wav, 2 bytes]",
            "[link file:///a text/plain] a",
            "[fleet://x application/octet-stream, 3 bytes]",
            "structuredContent:",
            "\"sum\": 3",
        ] {
            assert!(out.contains(want), "missing {want:?} in\n{out}");
        }
        assert!(!out.contains("line 21"), "{out}");
    }

    #[test]
    fn long_lines_are_cut_and_counted() {
        let mut out = String::new();
        block(&mut out, "", &"x".repeat(250));
        assert!(
            out.starts_with(&format!("{}…\n", "x".repeat(WIDTH - 1))),
            "{out}"
        );
        assert!(out.contains("1 long line cut"), "{out}");
    }
}
