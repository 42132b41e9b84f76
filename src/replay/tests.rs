use super::*;
use crate::plan::{Overrides, Plan};
use crate::profile::{CaptureSpec, CaptureTable, Captures, Profile, Step};
use crate::trace::{ClosedBy, From, Header, HttpExchange, RecordedSession, Transport};
use serde_json::{json, Value};

pub(super) const MS: u64 = 1000;
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

pub(super) fn open(id: u64, transport: Transport, opened_ms: u64) -> RecordedSession {
    RecordedSession {
        id,
        transport,
        opened: opened_ms * MS,
        messages: Vec::new(),
        http: Vec::new(),
        closed: None,
    }
}

pub(super) fn client(s: &mut RecordedSession, t_ms: u64, m: Value) {
    s.messages.push((t_ms * MS, From::Client, m));
}

pub(super) fn server(s: &mut RecordedSession, t_ms: u64, m: Value) {
    s.messages.push((t_ms * MS, From::Server, m));
}

pub(super) fn http(s: &mut RecordedSession, t_ms: u64, method: &str, session_header: bool) {
    s.http.push((
        t_ms * MS,
        HttpExchange {
            method: method.into(),
            path: "/mcp".into(),
            status: 200,
            connection: 1,
            session_header,
            ..HttpExchange::default()
        },
    ));
}

pub(super) fn close(s: &mut RecordedSession, t_ms: u64, by: ClosedBy) {
    s.closed = Some((t_ms * MS, by, None));
}

pub(super) fn trace(sessions: Vec<RecordedSession>) -> Trace {
    Trace {
        header: Header {
            format: crate::trace::FORMAT.into(),
            version: crate::trace::VERSION,
            recorder: "mcp-fleet test".into(),
            started: "2026-08-01T10:00:00.000Z".into(),
            mode: "http".into(),
            upstream: "http://127.0.0.1:3000/mcp".into(),
        },
        sessions,
        complete: true,
    }
}

pub(super) fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub(super) fn answer(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(super) fn initialize(
    s: &mut RecordedSession,
    t_ms: u64,
    name: &str,
    version: &str,
    caps: Value,
) {
    client(
        s,
        t_ms,
        request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                   "clientInfo": {"name": name, "version": version}}),
        ),
    );
    server(
        s,
        t_ms + 2,
        answer(
            json!(0),
            json!({"protocolVersion": "2025-11-25", "capabilities": {}}),
        ),
    );
    client(
        s,
        t_ms + 3,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
}

pub(super) fn pause(d: &str) -> Step {
    Step::Pause { duration: d.into() }
}

pub(super) fn call(tool: &str, arguments: Value) -> Step {
    Step::ToolsCall {
        tool: tool.into(),
        arguments: Some(arguments),
        generate: Some(false),
        optional: None,
        capture: None,
        checks: None,
    }
}

/// initialize, two pages of tools/list, a call that returns an id, a pause, a call that
/// quotes it, a read; then a DELETE (or none).
pub(super) fn legacy_http(id: u64, opened_ms: u64, delete: bool) -> RecordedSession {
    let mut s = open(id, Transport::Http, opened_ms);
    let t = opened_ms;
    initialize(
        &mut s,
        t + 1,
        "claude-code",
        "1.2.0",
        json!({"roots": {"listChanged": true}}),
    );
    http(&mut s, t + 3, "POST", false);
    client(&mut s, t + 6, request(1, "tools/list", json!({})));
    server(
        &mut s,
        t + 7,
        answer(json!(1), json!({"tools": [], "nextCursor": "c2"})),
    );
    client(
        &mut s,
        t + 7,
        request(2, "tools/list", json!({"cursor": "c2"})),
    );
    server(&mut s, t + 8, answer(json!(2), json!({"tools": []})));
    client(
        &mut s,
        t + 11,
        request(
            3,
            "tools/call",
            json!({"name": "create", "arguments": {"title": "hello"}}),
        ),
    );
    server(
        &mut s,
        t + 13,
        answer(
            json!(3),
            json!({"content": [{"type": "text", "text": "{\"id\":\"abc123\"}"}],
                   "structuredContent": {"id": "abc123"}}),
        ),
    );
    client(
        &mut s,
        t + 263,
        request(
            4,
            "tools/call",
            json!({"name": "fetch", "arguments": {"id": "abc123", "note": "${not a var}"}}),
        ),
    );
    server(&mut s, t + 265, answer(json!(4), json!({"content": []})));
    client(
        &mut s,
        t + 266,
        request(5, "resources/read", json!({"uri": "file:///notes/a.txt"})),
    );
    server(&mut s, t + 270, answer(json!(5), json!({"contents": []})));
    if delete {
        http(&mut s, t + 280, "DELETE", true);
    } else {
        http(&mut s, t + 280, "POST", true);
    }
    close(&mut s, t + 281, ClosedBy::Client);
    s
}

fn captures(var: &str, pointer: &str) -> Option<Captures> {
    Some([(var.to_string(), CaptureSpec::Text(pointer.into()))].into())
}

#[test]
fn a_legacy_http_session_becomes_its_persona_and_steps() {
    let d = derive(&legacy_http(3, 0, true)).expect("derived");
    let p = &d.persona;
    assert_eq!(d.label, "claude-code-1.2.0");
    assert_eq!(p.era.as_deref(), Some("legacy"));
    assert_eq!(p.protocol_version.as_deref(), Some("2025-11-25"));
    let info = p.client_info.as_ref().expect("client info");
    assert_eq!(
        (info.name.as_deref(), info.version.as_deref()),
        (Some("claude-code"), Some("1.2.0"))
    );
    assert_eq!(
        p.capabilities,
        Some(json!({"roots": {"listChanged": true}}))
    );
    assert_eq!(p.transport.as_deref(), Some("http"));
    assert_eq!(
        (p.get_stream, p.abandon, p.listen.is_none()),
        (None, None, true)
    );
    let mut create = call("create", json!({"title": "hello"}));
    if let Step::ToolsCall { capture, .. } = &mut create {
        *capture = captures("v1", "/id");
    }
    let want = vec![
        pause("3ms"),
        Step::ToolsList {},
        pause("3ms"),
        create,
        pause("250ms"),
        call("fetch", json!({"id": "${v1}", "note": "$${not a var}"})),
        pause("1ms"),
        Step::ResourcesRead {
            uri: "file:///notes/a.txt".into(),
            capture: None,
        },
        pause("11ms"),
    ];
    assert_eq!(replay::paced(&d.steps, &d.gaps, 1.0), want);
    assert!(
        d.notes.iter().any(|n| n.contains("1 value(s) quoted")),
        "{:?}",
        d.notes
    );
}

#[test]
fn an_http_session_that_never_deletes_is_abandoned_and_its_close_is_no_pause() {
    let d = derive(&legacy_http(1, 0, false)).expect("derived");
    assert_eq!(d.persona.abandon, Some(1.0));
    assert_eq!(d.gaps.last(), Some(&None));
    // Only a real wait is a pause: the same recording closed by the recorder.
    let mut s = legacy_http(1, 0, true);
    close(&mut s, 400, ClosedBy::Recorder);
    let d = derive(&s).expect("derived");
    assert_eq!((d.persona.abandon, d.gaps.last()), (None, Some(&None)));
}

fn modern_meta(caps: Value) -> Value {
    json!({META_VERSION: "2026-07-28",
           "io.modelcontextprotocol/clientInfo": {"name": "m-client", "version": "2.0", "icons": []},
           "io.modelcontextprotocol/clientCapabilities": caps})
}

fn modern_session(id: u64) -> RecordedSession {
    let caps = json!({"elicitation": {"form": {}},
                      "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}, "bad": {}}});
    let meta = modern_meta(caps);
    let mut s = open(id, Transport::Http, 0);
    client(
        &mut s,
        1,
        request(1, "server/discover", json!({"_meta": meta})),
    );
    server(
        &mut s,
        2,
        answer(json!(1), json!({"supportedVersions": ["2026-07-28"]})),
    );
    client(
        &mut s,
        3,
        request(
            2,
            "subscriptions/listen",
            json!({"_meta": meta, "notifications":
            {"toolsListChanged": true, "promptsListChanged": false, "resourceSubscriptions": ["file:///a"]}}),
        ),
    );
    client(
        &mut s,
        4,
        request(
            3,
            "tools/call",
            json!({"name": "book", "arguments": {"when": "now"}, "_meta": meta}),
        ),
    );
    server(
        &mut s,
        5,
        answer(
            json!(3),
            json!({"resultType": "input_required", "requestState": "xyz",
            "inputRequests": {"q1": {"method": "elicitation/create", "params": {"message": "ok?"}}}}),
        ),
    );
    client(
        &mut s,
        25,
        request(
            4,
            "tools/call",
            json!({"name": "book", "arguments": {"when": "now"}, "_meta": meta,
            "requestState": "xyz", "inputResponses": {"q1": {"action": "accept", "content": {"ok": true}}}}),
        ),
    );
    server(
        &mut s,
        30,
        answer(
            json!(4),
            json!({"content": [{"type": "text", "text": "B-7781"}]}),
        ),
    );
    client(
        &mut s,
        31,
        request(
            5,
            "completion/complete",
            json!({"_meta": meta, "ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "a", "value": "B-7781"}}),
        ),
    );
    server(
        &mut s,
        32,
        answer(json!(5), json!({"completion": {"values": []}})),
    );
    client(
        &mut s,
        33,
        request(6, "tasks/get", json!({"_meta": meta, "taskId": "t-9"})),
    );
    client(
        &mut s,
        33,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}}),
    );
    close(&mut s, 40, ClosedBy::Server);
    s
}

#[test]
fn a_modern_session_keeps_its_meta_identity_listen_and_answers() {
    let d = derive(&modern_session(2)).expect("derived");
    let p = &d.persona;
    assert_eq!(
        (p.era.as_deref(), p.protocol_version.as_deref()),
        (Some("modern"), Some("2026-07-28"))
    );
    assert_eq!(p.capabilities, Some(json!({"elicitation": {"form": {}}})));
    assert_eq!(
        p.extensions,
        Some(json!({"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}}))
    );
    let listen = p.listen.as_ref().expect("listen");
    assert_eq!(
        (listen.lists.clone(), listen.resources.clone()),
        (vec!["tools".to_string()], vec!["file:///a".to_string()])
    );
    let e = p.elicitation.as_ref().expect("elicitation");
    assert_eq!(
        (e.accept, e.decline, e.cancel, e.delay.as_deref()),
        (Some(1), Some(0), Some(0), Some("20ms"))
    );
    let mut book = call("book", json!({"when": "now"}));
    if let Step::ToolsCall { capture, .. } = &mut book {
        let whole = CaptureTable {
            regex: Some(r"(?s)\A(.*)\z".into()),
            ..CaptureTable::default()
        };
        *capture = Some([("v1".to_string(), CaptureSpec::Table(whole))].into());
    }
    let want = vec![
        pause("2ms"),
        book,
        pause("1ms"),
        Step::Request {
            method: "completion/complete".into(),
            params: Some(
                json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "${v1}"}}),
            ),
            phase: None,
            checks: None,
        },
        pause("1ms"),
        Step::Request {
            method: "tasks/get".into(),
            params: Some(json!({"taskId": "t-9"})),
            phase: Some("replayed-tasks-get".into()),
            checks: None,
        },
    ];
    assert_eq!(replay::paced(&d.steps, &d.gaps, 1.0), want);
    let notes = d.notes.join("\n");
    for said in [
        "\"bad\" left out",
        "icons",
        "notifications/cancelled ×1",
        "1 input_required round",
    ] {
        assert!(notes.contains(said), "{said}: {notes}");
    }
}

pub(super) fn stdio_session(id: u64) -> RecordedSession {
    let mut s = open(id, Transport::Stdio, 0);
    initialize(
        &mut s,
        1,
        "cursor",
        "0.9",
        json!({"roots": {}, "sampling": {}}),
    );
    server(&mut s, 5, request(0, "roots/list", json!({})).tap_id("s1"));
    client(
        &mut s,
        8,
        answer(
            json!("s1"),
            json!({"roots": [{"uri": "file:///home/me/proj", "name": "proj"}, {"uri": "https://x"}]}),
        ),
    );
    client(&mut s, 9, request(1, "ping", json!({})));
    server(&mut s, 9, answer(json!(1), json!({})));
    client(
        &mut s,
        10,
        request(2, "tools/call", json!({"name": "ask", "arguments": {}})),
    );
    server(
        &mut s,
        11,
        request(0, "sampling/createMessage", json!({"messages": []})).tap_id("s2"),
    );
    client(
        &mut s,
        15,
        answer(
            json!("s2"),
            json!({"role": "assistant", "model": "gpt-x", "content": {"type": "text", "text": "Sure."}}),
        ),
    );
    server(&mut s, 16, answer(json!(2), json!({"content": []})));
    close(&mut s, 16, ClosedBy::Client);
    s
}

pub(super) trait TapId {
    fn tap_id(self, id: &str) -> Value;
}

impl TapId for Value {
    fn tap_id(mut self, id: &str) -> Value {
        self["id"] = json!(id);
        self
    }
}

#[test]
fn a_stdio_session_answers_the_server_as_it_did() {
    let d = derive(&stdio_session(5)).expect("derived");
    let p = &d.persona;
    assert_eq!(p.transport.as_deref(), Some("stdio"));
    let roots = p.roots.as_ref().expect("roots");
    assert_eq!(roots.len(), 1);
    assert_eq!(
        (roots[0].uri.as_str(), roots[0].name.as_deref()),
        ("file:///home/me/proj", Some("proj"))
    );
    let sampling = p.sampling.as_ref().expect("sampling");
    assert_eq!(
        (
            sampling.text.as_deref(),
            sampling.model.as_deref(),
            sampling.delay.as_deref()
        ),
        (Some("Sure."), Some("gpt-x"), Some("4ms"))
    );
    // The answers are no steps; the ping and the call are.
    let want = vec![
        pause("6ms"),
        Step::Ping {},
        pause("1ms"),
        call("ask", json!({})),
    ];
    assert_eq!(replay::paced(&d.steps, &d.gaps, 1.0), want);
    assert!(
        d.notes.iter().any(|n| n.contains("1 root(s) left out")),
        "{:?}",
        d.notes
    );
}

#[test]
fn a_probing_client_is_auto_with_both_versions() {
    let mut s = open(1, Transport::Stdio, 0);
    client(
        &mut s,
        1,
        request(
            9,
            "server/discover",
            json!({"_meta": modern_meta(json!({}))}),
        ),
    );
    server(
        &mut s,
        2,
        json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32601, "message": "no"}}),
    );
    initialize(&mut s, 3, "dual", "1", json!({}));
    client(&mut s, 7, request(1, "tools/list", json!({})));
    let d = derive(&s).expect("derived");
    let p = &d.persona;
    assert_eq!(p.era.as_deref(), Some("auto"));
    assert_eq!(
        (p.protocol_version.as_deref(), p.legacy_version.as_deref()),
        (Some("2026-07-28"), Some("2025-11-25"))
    );
    assert_eq!(
        replay::paced(&d.steps, &d.gaps, 1.0),
        vec![pause("2ms"), Step::ToolsList {}]
    );
}

#[test]
fn parallel_calls_keep_their_order_and_are_noted() {
    let mut s = open(1, Transport::Stdio, 0);
    initialize(&mut s, 1, "c", "1", json!({}));
    client(&mut s, 10, request(1, "tools/call", json!({"name": "a"})));
    client(&mut s, 11, request(2, "tools/call", json!({"name": "b"})));
    server(&mut s, 20, answer(json!(2), json!({})));
    server(&mut s, 21, answer(json!(1), json!({})));
    let d = derive(&s).expect("derived");
    let tools: Vec<&str> = d
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::ToolsCall { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["a", "b"]);
    assert_eq!(d.gaps[1], None);
    assert!(
        d.notes.iter().any(|n| n.contains("parallel")),
        "{:?}",
        d.notes
    );
}

fn opts() -> ReplayOptions {
    ReplayOptions::default()
}

fn at_ms(opened_ms: &[u64], o: &ReplayOptions) -> Vec<(u64, usize)> {
    let opened: Vec<u64> = opened_ms.iter().map(|t| t * MS).collect();
    schedule(&opened, o)
        .into_iter()
        .map(|(t, k)| (names::round_ms(t), k))
        .collect()
}

#[test]
fn schedules_follow_speed_rate_and_times_exactly() {
    let rec = [10_000, 11_000, 13_000];
    assert_eq!(at_ms(&rec, &opts()), [(0, 0), (1000, 1), (3000, 2)]);
    let speed = ReplayOptions {
        speed: 2.0,
        ..opts()
    };
    assert_eq!(at_ms(&rec, &speed), [(0, 0), (500, 1), (1500, 2)]);
    let rate = ReplayOptions {
        rate: Some(4.0),
        sessions: Some(5),
        ..opts()
    };
    assert_eq!(
        at_ms(&rec, &rate),
        [(0, 0), (250, 1), (500, 2), (750, 0), (1000, 1)]
    );
    let one_pass = ReplayOptions {
        rate: Some(2.0),
        ..opts()
    };
    assert_eq!(at_ms(&rec, &one_pass), [(0, 0), (500, 1), (1000, 2)]);
    let twice = ReplayOptions {
        times: Some(2),
        ..opts()
    };
    assert_eq!(
        at_ms(&rec, &twice),
        [
            (0, 0),
            (1000, 1),
            (1500, 0),
            (2500, 1),
            (3000, 2),
            (4500, 2)
        ]
    );
    let limited = ReplayOptions {
        times: Some(2),
        sessions: Some(4),
        ..opts()
    };
    assert_eq!(at_ms(&rec, &limited).len(), 4);
    let together = ReplayOptions {
        times: Some(3),
        ..opts()
    };
    assert_eq!(
        at_ms(&[5, 5], &together),
        [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    );
}

#[test]
fn nonsense_options_are_refused_by_name() {
    let t = trace(vec![legacy_http(1, 0, true)]);
    for (o, said) in [
        (
            ReplayOptions {
                speed: 0.0,
                ..opts()
            },
            "--speed",
        ),
        (
            ReplayOptions {
                speed: f64::NAN,
                ..opts()
            },
            "--speed",
        ),
        (
            ReplayOptions {
                rate: Some(-1.0),
                ..opts()
            },
            "--rate",
        ),
        (
            ReplayOptions {
                times: Some(0),
                ..opts()
            },
            "--times",
        ),
        (
            ReplayOptions {
                sessions: Some(0),
                ..opts()
            },
            "--sessions",
        ),
        (
            ReplayOptions {
                rate: Some(1.0),
                times: Some(2),
                ..opts()
            },
            "keep one",
        ),
    ] {
        let e = replay_profile(&t, &o).expect_err(said).to_string();
        assert!(e.contains(said), "{said}: {e}");
    }
}

#[test]
fn a_replay_has_a_persona_and_scenario_per_session_arriving_when_it_did() {
    let mut silent = open(9, Transport::Http, 50);
    http(&mut silent, 51, "POST", false);
    let t = trace(vec![
        legacy_http(3, 1000, true),
        modern_session(4),
        stdio_session(7),
        silent,
    ]);
    let o = ReplayOptions {
        speed: 2.0,
        source: "traces/claude.jsonl".into(),
        ..opts()
    };
    let (profile, notes) = replay_profile(&t, &o).expect("profile");
    let names: Vec<&str> = profile.personas.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["s3-claude-code-1.2.0", "s4-m-client-2.0", "s7-cursor-0.9"]
    );
    assert_eq!(profile.name.as_deref(), Some("replay-claude"));
    assert!(profile
        .description
        .as_deref()
        .is_some_and(|d| d.contains("traces/claude.jsonl")));
    let arrivals: Vec<(&str, &str)> = profile
        .load
        .arrivals
        .iter()
        .flatten()
        .map(|a| (a.at.as_str(), a.persona.as_str()))
        .collect();
    // The trace's sessions in the order they opened: 4 and 7 at 0, 3 at 1 s.
    assert_eq!(
        arrivals,
        [
            ("0ms", "s4-m-client-2.0"),
            ("0ms", "s7-cursor-0.9"),
            ("500ms", "s3-claude-code-1.2.0")
        ]
    );
    assert!(profile
        .scenarios
        .iter()
        .all(|s| s.on_error.as_deref() == Some("continue")));
    // Pauses are halved too: 250 ms → 125 ms.
    assert!(profile.scenarios[0].steps.contains(&pause("125ms")));
    assert!(
        notes
            .iter()
            .any(|n| n.contains("session 9 shows no identity")),
        "{notes:?}"
    );
    // Everything but the arrivals resolves (arrivals are another branch's).
    let parsed = Profile::parse(&profile_toml(&profile), "replay.toml").expect("parses");
    assert_eq!(parsed.load.arrivals, profile.load.arrivals);
    assert_eq!(parsed.scenarios[0].steps, profile.scenarios[0].steps);
    let mut profile = parsed;
    profile.load.arrivals = None;
    profile.load.clients = Some(1);
    profile.load.sessions = Some(3);
    let plan = Plan::resolve(profile, &Overrides::default(), "replay.toml").expect("resolves");
    assert_eq!(plan.personas.len(), 3);
    assert_eq!(plan.scenarios.len(), 3);
}

#[test]
fn a_trace_of_clients_that_never_connected_cannot_be_replayed() {
    let t = trace(vec![open(1, Transport::Http, 0)]);
    let e = replay_profile(&t, &opts()).expect_err("nothing");
    assert_eq!(
        e,
        DeriveError::NothingToReplay {
            trace: "trace".into(),
            sessions: 1
        }
    );
}

#[test]
fn a_trace_written_by_the_recorder_reads_back_into_steps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("t.jsonl");
    let w = crate::trace::TraceWriter::create(&path, "stdio", "server", Default::default())
        .expect("create");
    let s = w.open(Transport::Stdio);
    let src = stdio_session(1);
    for (_, from, m) in &src.messages {
        w.message(s, *from, m.clone());
    }
    w.close(s, ClosedBy::Client, None);
    w.finish().expect("finish");
    let t = Trace::load(&path, false).expect("load");
    let d = derive(&t.sessions[0]).expect("derived");
    assert_eq!(d.steps, [Step::Ping {}, call("ask", json!({}))]);
}

#[test]
fn a_task_call_takes_its_polls_and_its_result_with_it() {
    let mut s = open(1, Transport::Stdio, 0);
    initialize(&mut s, 1, "c", "1", json!({}));
    let task = json!({"name": "report", "arguments": {}, "task": {"ttl": 60000}});
    client(&mut s, 10, request(1, "tools/call", task));
    server(
        &mut s,
        11,
        answer(
            json!(1),
            json!({"task": {"taskId": "task-1", "status": "working"}}),
        ),
    );
    client(
        &mut s,
        20,
        request(2, "tasks/get", json!({"taskId": "task-1"})),
    );
    server(
        &mut s,
        21,
        answer(json!(2), json!({"taskId": "task-1", "status": "completed"})),
    );
    client(
        &mut s,
        22,
        request(3, "tasks/result", json!({"taskId": "task-1"})),
    );
    server(
        &mut s,
        30,
        answer(
            json!(3),
            json!({"structuredContent": {"reportId": "rep-42"}}),
        ),
    );
    let download = json!({"name": "download", "arguments": {"id": "rep-42"}});
    client(&mut s, 40, request(4, "tools/call", download));
    let d = derive(&s).expect("derived");
    let mut report = call("report", json!({}));
    if let Step::ToolsCall { capture, .. } = &mut report {
        *capture = captures("v1", "/reportId");
    }
    // The wait before the download counts from the task's result, not its creation.
    let want = vec![
        pause("7ms"),
        report,
        pause("10ms"),
        call("download", json!({"id": "${v1}"})),
    ];
    assert_eq!(replay::paced(&d.steps, &d.gaps, 1.0), want);
    let tasks = d.persona.tasks.as_ref().expect("tasks");
    assert_eq!(
        (tasks.call.as_deref(), tasks.cancel),
        (Some("allowed"), None)
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("tasks/result request(s) of the session's own tasks")),
        "{:?}",
        d.notes
    );
}
