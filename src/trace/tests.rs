use super::*;
use serde_json::json;
use std::io::Cursor;

fn written(events: impl FnOnce(&TraceWriter), redaction: Redaction) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    let w =
        TraceWriter::create(&path, "http", "http://127.0.0.1:1/mcp", redaction).expect("create");
    events(&w);
    w.finish().expect("finish");
    std::fs::read_to_string(&path).expect("read")
}

fn legacy_session(w: &TraceWriter) {
    let s = w.open(Transport::Http);
    w.message(
        s,
        From::Client,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"},
            "capabilities":{"roots":{}}}}),
    );
    w.http(
        s,
        HttpExchange {
            method: "POST".into(),
            path: "/mcp".into(),
            status: 200,
            connection: 1,
            ..HttpExchange::default()
        },
    );
    w.message(s, From::Server, json!({"jsonrpc":"2.0","id":0,"result":{}}));
    for (method, c) in [("GET", 2), ("POST", 1), ("DELETE", 1)] {
        w.http(
            s,
            HttpExchange {
                method: method.into(),
                path: "/mcp".into(),
                status: 200,
                connection: c,
                session_header: true,
                ..HttpExchange::default()
            },
        );
    }
    w.message(
        s,
        From::Client,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"user":"u","password":"p"}}}),
    );
    w.close(s, ClosedBy::Client, None);
}

#[test]
fn a_written_trace_reads_back_with_its_summary() {
    let text = written(legacy_session, Redaction::default());
    let trace = Trace::parse(Cursor::new(&text), "t", false).expect("parse");
    assert!(trace.complete);
    assert_eq!(trace.sessions.len(), 1);
    let s = trace.sessions[0].summary();
    assert_eq!(s.era, "legacy");
    assert_eq!(s.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(s.client_info, Some(json!({"name":"c","version":"1"})));
    let h = &s.habits;
    assert!(h.get_stream && h.delete && h.session_header && h.keep_alive);
    assert_eq!(h.connections, 2);
    // The close line carries the same summary, for people.
    let close = text
        .lines()
        .find(|l| l.contains("\"close\""))
        .expect("close");
    let close: Event = serde_json::from_str(close).expect("event");
    assert!(matches!(close, Event::Close { summary: Some(ref x), .. } if *x == s));
}

#[test]
fn redaction_by_pointer_and_by_tool() {
    for redaction in [
        Redaction {
            pointers: vec!["/params/arguments/password".into()],
            ..Redaction::default()
        },
        Redaction {
            tools: vec!["login".into()],
            ..Redaction::default()
        },
    ] {
        let text = written(legacy_session, redaction.clone());
        assert!(!text.contains("\"p\""), "{text}");
        assert!(text.contains(REDACTED));
        // The identity is untouched.
        assert!(text.contains("\"clientInfo\":{\"name\":\"c\""));
    }
    let plain = written(legacy_session, Redaction::default());
    assert!(plain.contains("\"password\":\"p\""));
}

#[test]
fn sessions_open_at_the_end_are_closed_by_the_recorder() {
    let text = written(
        |w| {
            w.open(Transport::Stdio);
        },
        Redaction::default(),
    );
    let trace = Trace::parse(Cursor::new(&text), "t", false).expect("parse");
    assert_eq!(
        trace.sessions[0].closed.as_ref().map(|c| c.1),
        Some(ClosedBy::Recorder)
    );
}

fn error(text: &str, partial: bool) -> String {
    match Trace::parse(Cursor::new(text), "t.jsonl", partial) {
        Ok(t) => panic!("accepted: {t:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_traces_are_clear_errors() {
    let whole = written(legacy_session, Redaction::default());
    let header = whole.lines().next().expect("header");
    // Newer format.
    let newer = whole.replacen("\"version\":1", "\"version\":99", 1);
    assert!(error(&newer, false).contains("version 99 is newer"));
    // Not a trace at all, and empty.
    assert!(error("{\"a\":1}\n", false).contains("not an mcp-fleet trace"));
    assert!(error("", false).contains("is empty"));
    // Cut short mid-line: truncated, unless partial.
    let cut = &whole[..whole.len() - 20];
    assert!(error(cut, false).contains("truncated"));
    assert!(Trace::parse(Cursor::new(cut), "t", true).is_ok_and(|t| !t.complete));
    // Whole lines but no end line.
    let no_end: String = whole.lines().take(3).map(|l| format!("{l}\n")).collect();
    assert!(error(&no_end, false).contains("no `end` line"));
    // Garbage in the middle: corrupt, with its line number, partial or not.
    let mut lines: Vec<&str> = whole.lines().collect();
    lines.insert(2, "{not json");
    assert!(error(&lines.join("\n"), true).contains("t.jsonl:3: corrupt"));
    // A message for a session never opened.
    let orphan = format!(
        "{header}\n{}\n{{\"kind\":\"end\",\"t\":2,\"sessions\":0,\"messages\":1}}\n",
        r#"{"kind":"message","t":1,"session":7,"from":"client","message":{}}"#
    );
    assert!(error(&orphan, false).contains("session 7 has no `open` line"));
    // No sessions.
    let empty = format!("{header}\n{{\"kind\":\"end\",\"t\":2,\"sessions\":0,\"messages\":0}}\n");
    assert!(error(&empty, false).contains("holds no session"));
}

#[test]
fn modern_identity_comes_from_the_meta() {
    let text = written(
        |w| {
            let s = w.open(Transport::Http);
            w.message(
                s,
                From::Client,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
                    META_VERSION: "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name":"m","version":"2"},
                    "io.modelcontextprotocol/clientCapabilities": {}}}}),
            );
            w.close(s, ClosedBy::Client, None);
        },
        Redaction::default(),
    );
    let trace = Trace::parse(Cursor::new(&text), "t", false).expect("parse");
    let s = trace.sessions[0].summary();
    assert_eq!(
        (s.era.as_str(), s.protocol_version.as_deref()),
        ("modern", Some("2026-07-28"))
    );
    assert_eq!(s.client_info, Some(json!({"name":"m","version":"2"})));
}

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
