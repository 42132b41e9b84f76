//! Unit tests of the transport-independent handler: lifecycle, negotiation, catalog
//! answers and error codes, without any I/O.

use super::*;
use serde_json::{json, Value};

fn handler() -> Handler {
    Handler::new(&ServerOptions::default())
}

/// Send one request and return the decoded reply.
async fn call(h: &Handler, s: &Session, method: &str, params: Value) -> Value {
    let msg = Incoming::Request {
        id: RequestId::Number(1),
        method: method.into(),
        params: Some(params),
    };
    let reply = h
        .handle(s, msg, &Notifier::none())
        .await
        .expect("requests get a reply");
    serde_json::from_slice(&reply).expect("reply is JSON")
}

async fn initialized(h: &Handler, version: &str) -> Session {
    let s = Session::new();
    let r = call(h, &s, "initialize", json!({"protocolVersion": version})).await;
    assert!(r.get("result").is_some(), "{r}");
    s
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"].as_i64().unwrap_or_default()
}

#[tokio::test]
async fn negotiation_echoes_each_legacy_version() {
    let h = handler();
    for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let s = Session::new();
        let r = call(
            &h,
            &s,
            "initialize",
            json!({"protocolVersion": v, "capabilities": {}}),
        )
        .await;
        assert_eq!(r["result"]["protocolVersion"], v);
        assert_eq!(s.version(), Some(v));
        let caps = &r["result"]["capabilities"];
        assert_eq!(caps["tools"], json!({"listChanged": true}));
        assert_eq!(
            caps["resources"],
            json!({"subscribe": false, "listChanged": true})
        );
        assert_eq!(caps["logging"], json!({}));
        assert_eq!(r["result"]["serverInfo"]["name"], "mcp-fleet-reference");
        assert_eq!(
            r["result"]["serverInfo"]["version"],
            env!("CARGO_PKG_VERSION")
        );
        assert!(r["result"]["instructions"].is_string());
    }
}

#[tokio::test]
async fn negotiation_counter_offers_latest_for_unknown_and_modern() {
    let h = handler();
    for v in ["1999-01-01", "2026-07-28"] {
        let s = Session::new();
        let r = call(&h, &s, "initialize", json!({"protocolVersion": v})).await;
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "for {v}");
    }
}

#[tokio::test]
async fn lifecycle_gates_requests_until_initialize() {
    let h = handler();
    let s = Session::new();
    let r = call(&h, &s, "tools/list", json!({})).await;
    assert_eq!(error_code(&r), -32600);
    assert_eq!(r["error"]["message"], "Server not initialized");
    assert_eq!(call(&h, &s, "ping", json!({})).await["result"], json!({}));
    call(
        &h,
        &s,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    )
    .await;
    let again = call(
        &h,
        &s,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    )
    .await;
    assert_eq!(error_code(&again), -32600);
    let note = Incoming::Notification {
        method: "notifications/initialized".into(),
        params: None,
    };
    assert!(h.handle(&s, note, &Notifier::none()).await.is_none());
    assert!(s.client_initialized());
    assert_eq!(
        error_code(&call(&h, &s, "no/such", json!({})).await),
        -32601
    );
}

#[tokio::test]
async fn pagination_walks_all_25_resources_in_3_pages() {
    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    let mut uris = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let r = call(&h, &s, "resources/list", params).await;
        pages += 1;
        for res in r["result"]["resources"]
            .as_array()
            .expect("resources array")
        {
            assert_eq!(res["mimeType"], "text/plain");
            uris.push(res["uri"].as_str().expect("uri").to_owned());
        }
        match r["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
        assert!(pages < 10, "pagination does not terminate");
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (1..=25).map(|n| format!("fleet://resources/{n}")).collect();
    assert_eq!(uris, expected);
}

#[tokio::test]
async fn invalid_cursor_is_invalid_params() {
    let h = handler();
    let s = initialized(&h, "2025-06-18").await;
    for cursor in [json!("nonsense"), json!("p99"), json!(7)] {
        let r = call(&h, &s, "tools/list", json!({"cursor": cursor})).await;
        assert_eq!(error_code(&r), -32602, "cursor {cursor}");
    }
}

#[tokio::test]
async fn tools_answer_and_reject() {
    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    let tools = call(&h, &s, "tools/list", json!({})).await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["echo", "add", "sleep", "fail", "progress"]);

    let echo = call(
        &h,
        &s,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hi"}}),
    )
    .await;
    assert_eq!(
        echo["result"]["content"][0],
        json!({"type": "text", "text": "hi"})
    );
    let add = call(
        &h,
        &s,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3.5}}),
    )
    .await;
    assert_eq!(add["result"]["structuredContent"], json!({"sum": 5.5}));
    let add = call(
        &h,
        &s,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
    .await;
    assert_eq!(add["result"]["structuredContent"], json!({"sum": 5}));

    let unknown = call(&h, &s, "tools/call", json!({"name": "nope"})).await;
    assert_eq!(error_code(&unknown), -32602);
    let bad = call(
        &h,
        &s,
        "tools/call",
        json!({"name": "echo", "arguments": {}}),
    )
    .await;
    assert_eq!(error_code(&bad), -32602);
    let too_long = call(
        &h,
        &s,
        "tools/call",
        json!({"name": "sleep", "arguments": {"ms": 60001}}),
    )
    .await;
    assert_eq!(error_code(&too_long), -32602);
}

#[tokio::test]
async fn fail_tool_is_an_execution_error() {
    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    let r = call(
        &h,
        &s,
        "tools/call",
        json!({"name": "fail", "arguments": {}}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true);
    assert!(r["result"]["content"][0]["text"].is_string());
    assert!(r.get("error").is_none());
}

#[tokio::test]
async fn progress_tool_notifies_each_step() {
    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let msg = Incoming::Request {
        id: RequestId::String("p".into()),
        method: "tools/call".into(),
        params: Some(
            json!({"name": "progress", "arguments": {"steps": 4}, "_meta": {"progressToken": 7}}),
        ),
    };
    assert!(Handler::wants_stream(&msg));
    let reply = h.handle(&s, msg, &Notifier::new(tx)).await.expect("reply");
    let mut seen = 0;
    while let Ok(note) = rx.try_recv() {
        seen += 1;
        let note: Value = serde_json::from_slice(&note).expect("json");
        assert_eq!(
            note["params"],
            json!({"progressToken": 7, "progress": seen, "total": 4})
        );
    }
    assert_eq!(seen, 4);
    let reply: Value = serde_json::from_slice(&reply).expect("json");
    assert_eq!(reply["id"], "p");
}

#[tokio::test]
async fn prompts_require_their_arguments() {
    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    let missing = call(
        &h,
        &s,
        "prompts/get",
        json!({"name": "greeting", "arguments": {}}),
    )
    .await;
    assert_eq!(error_code(&missing), -32602);
    let missing = call(
        &h,
        &s,
        "prompts/get",
        json!({"name": "review", "arguments": {"language": "rust"}}),
    )
    .await;
    assert_eq!(error_code(&missing), -32602);
    let unknown = call(&h, &s, "prompts/get", json!({"name": "nope"})).await;
    assert_eq!(error_code(&unknown), -32602);
    let ok = call(
        &h,
        &s,
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "fn x() {}"}}),
    )
    .await;
    assert_eq!(ok["result"]["messages"][0]["role"], "user");
    assert_eq!(ok["result"]["messages"][0]["content"]["type"], "text");
    let list = call(&h, &s, "prompts/list", json!({})).await;
    assert_eq!(list["result"]["prompts"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn resources_read_and_not_found() {
    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    let r = call(
        &h,
        &s,
        "resources/read",
        json!({"uri": "fleet://resources/7"}),
    )
    .await;
    let c = &r["result"]["contents"][0];
    assert_eq!(c["uri"], "fleet://resources/7");
    assert_eq!(c["mimeType"], "text/plain");
    assert!(c["text"].is_string());
    let missing = call(
        &h,
        &s,
        "resources/read",
        json!({"uri": "fleet://resources/99"}),
    )
    .await;
    assert_eq!(error_code(&missing), -32002);
    assert_eq!(
        missing["error"]["data"],
        json!({"uri": "fleet://resources/99"})
    );
    let t = call(&h, &s, "resources/templates/list", json!({})).await;
    assert_eq!(
        t["result"]["resourceTemplates"][0]["uriTemplate"],
        "fleet://resources/{id}"
    );
}

#[tokio::test]
async fn logging_and_completion() {
    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    assert_eq!(
        call(&h, &s, "logging/setLevel", json!({"level": "info"})).await["result"],
        json!({})
    );
    let bad = call(&h, &s, "logging/setLevel", json!({"level": "loud"})).await;
    assert_eq!(error_code(&bad), -32602);
    let c = call(
        &h,
        &s,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "review"},
        "argument": {"name": "language", "value": "ja"}}),
    )
    .await;
    assert_eq!(
        c["result"]["completion"]["values"],
        json!(["java", "javascript"])
    );
}

#[test]
fn malformed_input_gets_id_less_errors() {
    let parse = malformed_reply(&Malformed::NotJson("x".into()));
    let parse: Value = serde_json::from_slice(&parse).expect("json");
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);
    let batch: Value = serde_json::from_slice(&malformed_reply(&Malformed::Batch)).expect("json");
    assert_eq!(batch["error"]["code"], -32600);
}
