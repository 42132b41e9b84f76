//! Unit tests of the transport-independent handler: lifecycle, negotiation, catalog
//! replies and error codes, without any I/O.

use super::*;
use crate::protocol::jsonrpc::Malformed;
use crate::protocol::meta::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

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
            json!({"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "t"}}),
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
    assert_eq!(
        names,
        [
            "echo",
            "add",
            "sleep",
            "fail",
            "progress",
            "ask_sampling",
            "ask_elicitation",
            "ask_roots",
            "notify_list_changed"
        ]
    );

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
    assert!(h.wants_stream(&msg));
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

// ---- 2026-07-28 (stateless) era ----

fn meta(caps: Value) -> Value {
    json!({
        META_PROTOCOL_VERSION: "2026-07-28",
        META_CLIENT_CAPABILITIES: caps,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    })
}

/// `params` plus a modern `_meta` declaring `caps`.
fn modern(params: Value, caps: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(caps);
    params
}

fn handler_with(eras: Eras) -> Handler {
    Handler::new(&ServerOptions {
        eras,
        ..ServerOptions::default()
    })
}

fn server_info_name(reply: &Value) -> &Value {
    &reply["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
}

#[tokio::test]
async fn modern_discover_lists_and_calls_need_no_initialize() {
    let h = handler();
    let s = Session::new();
    let d = call(&h, &s, "server/discover", modern(json!({}), json!({}))).await;
    let r = &d["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["supportedVersions"],
        json!([
            "2026-07-28",
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    assert_eq!(r["capabilities"]["tools"], json!({"listChanged": true}));
    assert!(r["instructions"].is_string());
    assert_eq!(server_info_name(&d), "mcp-fleet-reference");
    assert_eq!(r["ttlMs"], 60_000);
    assert_eq!(r["cacheScope"], "public");

    let list = call(&h, &s, "tools/list", modern(json!({}), json!({}))).await;
    assert_eq!(list["result"]["tools"].as_array().map(Vec::len), Some(9));
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(list["result"]["cacheScope"], "public");
    assert_eq!(server_info_name(&list), "mcp-fleet-reference");
    let page = call(
        &h,
        &s,
        "resources/list",
        modern(json!({"cursor": "p1"}), json!({})),
    )
    .await;
    assert_eq!(page["result"]["nextCursor"], "p2");
    assert_eq!(page["result"]["ttlMs"], 60_000);
    let read = call(
        &h,
        &s,
        "resources/read",
        modern(json!({"uri": "fleet://resources/3"}), json!({})),
    )
    .await;
    assert!(read["result"]["contents"][0]["text"].is_string());
    assert_eq!(read["result"]["ttlMs"], 60_000);
    let echo = call(
        &h,
        &s,
        "tools/call",
        modern(
            json!({"name": "echo", "arguments": {"message": "hi"}}),
            json!({}),
        ),
    )
    .await;
    assert_eq!(echo["result"]["content"][0]["text"], "hi");
    assert_eq!(echo["result"]["resultType"], "complete");
    assert_eq!(server_info_name(&echo), "mcp-fleet-reference");
    assert!(echo["result"].get("ttlMs").is_none());
    let prompt = call(
        &h,
        &s,
        "prompts/get",
        modern(
            json!({"name": "greeting", "arguments": {"name": "Ada"}}),
            json!({}),
        ),
    )
    .await;
    assert_eq!(prompt["result"]["resultType"], "complete");
    // Nothing of the legacy lifecycle happened.
    assert_eq!(s.version(), None);

    let missing = call(
        &h,
        &s,
        "resources/read",
        modern(json!({"uri": "fleet://resources/99"}), json!({})),
    )
    .await;
    assert_eq!(error_code(&missing), -32602);
    for gone in ["ping", "logging/setLevel", "no/such"] {
        let r = call(&h, &s, gone, modern(json!({"level": "info"}), json!({}))).await;
        assert_eq!(error_code(&r), -32601, "{gone}");
    }
}

#[tokio::test]
async fn modern_meta_is_required_and_versions_are_checked() {
    let h = handler();
    let s = Session::new();
    let bare = call(&h, &s, "server/discover", json!({})).await;
    assert_eq!(error_code(&bare), -32602);
    let no_caps = call(
        &h,
        &s,
        "tools/list",
        json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}),
    )
    .await;
    assert_eq!(error_code(&no_caps), -32602);
    let future = call(
        &h,
        &s,
        "server/discover",
        json!({"_meta": {META_PROTOCOL_VERSION: "2099-01-01", META_CLIENT_CAPABILITIES: {}}}),
    )
    .await;
    assert_eq!(error_code(&future), -32022);
    assert_eq!(future["error"]["message"], "Unsupported protocol version");
    assert_eq!(future["error"]["data"]["requested"], "2099-01-01");
    let supported = future["error"]["data"]["supported"]
        .as_array()
        .expect("supported list");
    assert_eq!(supported[0], "2026-07-28");
    assert!(supported.contains(&json!("2025-11-25")));
    // Retrying at a listed version works.
    let retry = call(&h, &s, "server/discover", modern(json!({}), json!({}))).await;
    assert_eq!(retry["result"]["resultType"], "complete");
}

#[tokio::test]
async fn legacy_and_modern_requests_mix_on_one_connection() {
    let h = handler();
    let s = Session::new();
    let m = call(&h, &s, "tools/list", modern(json!({}), json!({}))).await;
    assert_eq!(m["result"]["resultType"], "complete");
    let l = call(&h, &s, "tools/list", json!({})).await;
    assert_eq!(error_code(&l), -32600, "legacy still needs initialize");
    call(
        &h,
        &s,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    )
    .await;
    let l = call(&h, &s, "tools/list", json!({})).await;
    assert!(l["result"].get("resultType").is_none());
    assert!(l["result"]["tools"].is_array());
}

#[tokio::test]
async fn legacy_only_and_modern_only_servers() {
    let legacy = handler_with(Eras::Legacy);
    let s = Session::new();
    let d = call(&legacy, &s, "server/discover", modern(json!({}), json!({}))).await;
    assert_eq!(error_code(&d), -32601);
    let l = call(&legacy, &s, "tools/list", modern(json!({}), json!({}))).await;
    assert_eq!(error_code(&l), -32600);
    assert_eq!(l["error"]["message"], "Server not initialized");

    let modern_only = handler_with(Eras::Modern);
    let s = Session::new();
    let init = call(
        &modern_only,
        &s,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    )
    .await;
    assert_eq!(error_code(&init), -32600);
    let message = init["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("2026-07-28"), "{message}");
    assert_eq!(s.version(), None);
    let session_request = call(&modern_only, &s, "tools/list", json!({})).await;
    assert_eq!(error_code(&session_request), -32600);
    let d = call(
        &modern_only,
        &s,
        "server/discover",
        modern(json!({}), json!({})),
    )
    .await;
    assert_eq!(d["result"]["supportedVersions"], json!(["2026-07-28"]));
    let future = call(
        &modern_only,
        &s,
        "server/discover",
        json!({"_meta": {META_PROTOCOL_VERSION: "2099-01-01", META_CLIENT_CAPABILITIES: {}}}),
    )
    .await;
    assert_eq!(future["error"]["data"]["supported"], json!(["2026-07-28"]));
}

/// Run one MRTR exchange: the first call must ask for input under `key`; the retry carries
/// `answer`. Returns the retry's reply.
async fn round_trip(h: &Handler, tool: &str, args: Value, key: &str, answer: Value) -> Value {
    let s = Session::new();
    let caps = json!({"sampling": {}, "elicitation": {}, "roots": {}});
    let first = call(
        h,
        &s,
        "tools/call",
        modern(json!({"name": tool, "arguments": args}), caps.clone()),
    )
    .await;
    let r = &first["result"];
    assert_eq!(r["resultType"], "input_required", "{first}");
    assert!(r["inputRequests"][key]["method"].is_string(), "{first}");
    assert_eq!(server_info_name(&first), "mcp-fleet-reference");
    let state = r["requestState"].clone();
    assert!(state.is_string());
    call(
        h,
        &s,
        "tools/call",
        modern(
            json!({"name": tool, "arguments": args, "inputResponses": {key: answer},
                   "requestState": state}),
            caps,
        ),
    )
    .await
}

#[tokio::test]
async fn modern_ask_tools_use_multi_round_trip_requests() {
    let h = handler();
    let s = Session::new();
    let first = call(
        &h,
        &s,
        "tools/call",
        modern(
            json!({"name": "ask_sampling", "arguments": {"prompt": "2+2?"}}),
            json!({"sampling": {}}),
        ),
    )
    .await;
    let ask = &first["result"]["inputRequests"]["sampling"];
    assert_eq!(ask["method"], "sampling/createMessage");
    assert_eq!(
        ask["params"],
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
               "maxTokens": 64})
    );

    let model = json!({"role": "assistant", "content": {"type": "text", "text": "4"},
                       "model": "mock-model", "stopReason": "endTurn"});
    let done = round_trip(
        &h,
        "ask_sampling",
        json!({"prompt": "2+2?"}),
        "sampling",
        model,
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "4");

    let accept = json!({"action": "accept", "content": {"name": "Ada", "age": 36}});
    let done = round_trip(&h, "ask_elicitation", json!({}), "elicitation", accept).await;
    let text = done["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("action=accept") && text.contains("Ada"),
        "{text}"
    );
    assert!(done["result"].get("isError").is_none());
    let bad = json!({"action": "accept", "content": {"name": "Ada", "color": "pink"}});
    let done = round_trip(&h, "ask_elicitation", json!({}), "elicitation", bad).await;
    assert_eq!(done["result"]["isError"], true);
    let declined = json!({"action": "decline"});
    let done = round_trip(&h, "ask_elicitation", json!({}), "elicitation", declined).await;
    assert_eq!(done["result"]["content"][0]["text"], "action=decline");

    let roots = json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]});
    let done = round_trip(&h, "ask_roots", json!({}), "roots", roots).await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "2 roots: file:///a, file:///b"
    );

    // A request state from another call (different arguments) is refused.
    let caps = json!({"sampling": {}});
    let state = first["result"]["requestState"].clone();
    let forged = call(
        &h,
        &s,
        "tools/call",
        modern(
            json!({"name": "ask_sampling", "arguments": {"prompt": "other"},
                   "inputResponses": {"sampling": {"content": {"type": "text", "text": "x"}}},
                   "requestState": state}),
            caps,
        ),
    )
    .await;
    assert_eq!(error_code(&forged), -32602);
}

#[tokio::test]
async fn modern_ask_without_the_capability_is_32021() {
    let h = handler();
    let s = Session::new();
    for (tool, cap) in [
        ("ask_sampling", "sampling"),
        ("ask_elicitation", "elicitation"),
        ("ask_roots", "roots"),
    ] {
        let r = call(
            &h,
            &s,
            "tools/call",
            modern(
                json!({"name": tool, "arguments": {"prompt": "x"}}),
                json!({"elicitation": {"url": {}}}),
            ),
        )
        .await;
        assert_eq!(error_code(&r), -32021, "{tool}");
        assert!(
            r["error"]["data"]["requiredCapabilities"][cap].is_object(),
            "{r}"
        );
    }
}

// ---- legacy server→client requests ----

/// A legacy session whose client declared `caps`, and a running `tools/call` of `tool`
/// whose outgoing messages arrive on the returned receiver.
async fn legacy_call(
    caps: Value,
    tool: &str,
    args: Value,
) -> (
    Arc<Handler>,
    Arc<Session>,
    mpsc::UnboundedReceiver<Vec<u8>>,
    tokio::task::JoinHandle<Value>,
) {
    let h = Arc::new(handler());
    let s = Arc::new(Session::new());
    call(
        &h,
        &s,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": caps,
            "clientInfo": {"name": "t"}}),
    )
    .await;
    let (tx, rx) = mpsc::unbounded_channel();
    let msg = Incoming::Request {
        id: RequestId::Number(7),
        method: "tools/call".into(),
        params: Some(json!({"name": tool, "arguments": args})),
    };
    assert!(h.wants_stream(&msg));
    let (h2, s2) = (h.clone(), s.clone());
    let task = tokio::spawn(async move {
        let reply = h2.handle(&s2, msg, &Notifier::new(tx)).await;
        serde_json::from_slice(&reply.expect("reply")).expect("json")
    });
    (h, s, rx, task)
}

/// The server's request to the client, within a second.
async fn next_request(rx: &mut mpsc::UnboundedReceiver<Vec<u8>>) -> Value {
    let bytes = tokio::time::timeout(Duration::from_secs(1), rx.recv())
        .await
        .expect("a request within 1 s")
        .expect("channel open");
    serde_json::from_slice(&bytes).expect("json")
}

async fn answer(h: &Handler, s: &Session, request: &Value, outcome: Result<Value, RpcError>) {
    let id = serde_json::from_value(request["id"].clone()).expect("id");
    let msg = Incoming::Response {
        id: Some(id),
        outcome: outcome.map(crate::protocol::RawResult::from),
    };
    assert!(h.handle(s, msg, &Notifier::none()).await.is_none());
}

async fn finished(task: tokio::task::JoinHandle<Value>) -> Value {
    tokio::time::timeout(Duration::from_secs(1), task)
        .await
        .expect("tool finishes within 1 s")
        .expect("task")
}

#[tokio::test]
async fn legacy_ask_tools_send_requests_and_use_the_answers() {
    let caps = json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}});
    let (h, s, mut rx, task) =
        legacy_call(caps.clone(), "ask_sampling", json!({"prompt": "hi?"})).await;
    let req = next_request(&mut rx).await;
    assert_eq!(req["method"], "sampling/createMessage");
    assert_eq!(req["params"]["maxTokens"], 64);
    assert_eq!(req["params"]["messages"][0]["content"]["text"], "hi?");
    let model = json!({"role": "assistant", "content": {"type": "text", "text": "hello"},
                       "model": "mock-model", "stopReason": "endTurn"});
    answer(&h, &s, &req, Ok(model)).await;
    let r = finished(task).await;
    assert_eq!(r["id"], 7);
    assert_eq!(r["result"]["content"][0]["text"], "hello");

    let (h, s, mut rx, task) =
        legacy_call(caps.clone(), "ask_elicitation", json!({"message": "Who?"})).await;
    let req = next_request(&mut rx).await;
    assert_eq!(req["method"], "elicitation/create");
    assert_eq!(req["params"]["mode"], "form");
    assert_eq!(req["params"]["message"], "Who?");
    assert_eq!(
        req["params"]["requestedSchema"]["required"],
        json!(["name"])
    );
    let accepted = json!({"action": "accept",
                          "content": {"name": "Ada", "subscribe": true, "color": "blue"}});
    answer(&h, &s, &req, Ok(accepted)).await;
    let r = finished(task).await;
    assert!(r["result"].get("isError").is_none(), "{r}");
    assert_eq!(r["result"]["structuredContent"]["action"], "accept");

    let (h, s, mut rx, task) = legacy_call(caps.clone(), "ask_elicitation", json!({})).await;
    let req = next_request(&mut rx).await;
    answer(
        &h,
        &s,
        &req,
        Ok(json!({"action": "accept", "content": {"age": 3}})),
    )
    .await;
    let r = finished(task).await;
    assert_eq!(r["result"]["isError"], true, "missing required name: {r}");

    let (h, s, mut rx, task) = legacy_call(caps, "ask_roots", json!({})).await;
    let req = next_request(&mut rx).await;
    assert_eq!(req["method"], "roots/list");
    answer(&h, &s, &req, Ok(json!({"roots": [{"uri": "file:///w"}]}))).await;
    let r = finished(task).await;
    assert_eq!(r["result"]["content"][0]["text"], "1 roots: file:///w");
}

#[tokio::test]
async fn legacy_ask_without_capability_or_with_client_error_is_a_tool_error() {
    for tool in ["ask_sampling", "ask_elicitation", "ask_roots"] {
        let (_h, _s, mut rx, task) = legacy_call(
            json!({"elicitation": {"url": {}}}),
            tool,
            json!({"prompt": "x"}),
        )
        .await;
        let r = finished(task).await;
        assert_eq!(r["result"]["isError"], true, "{tool}: {r}");
        assert!(rx.try_recv().is_err(), "{tool}: nothing may be sent");
    }
    let (h, s, mut rx, task) = legacy_call(json!({"roots": {}}), "ask_roots", json!({})).await;
    let req = next_request(&mut rx).await;
    let refusal = RpcError {
        code: -32601,
        message: "no roots here".into(),
        data: None,
    };
    answer(&h, &s, &req, Err(refusal)).await;
    let r = finished(task).await;
    assert_eq!(r["result"]["isError"], true);
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("-32601") && text.contains("no roots here"),
        "{text}"
    );
    // A late or unknown answer is dropped quietly.
    assert!(!s.deliver(Some(&RequestId::Number(999)), Ok(json!({}))));
}

#[tokio::test]
async fn notify_list_changed_prefers_the_standalone_stream() {
    let (_h, _s, mut rx, task) =
        legacy_call(json!({}), "notify_list_changed", json!({"list": "prompts"})).await;
    let note = next_request(&mut rx).await;
    assert_eq!(note["method"], "notifications/prompts/list_changed");
    assert_eq!(finished(task).await["result"]["content"][0]["text"], "sent");

    let h = handler();
    let s = initialized(&h, "2025-11-25").await;
    let (standalone, mut unrelated) = mpsc::unbounded_channel();
    assert!(s.open_standalone(standalone.clone()));
    assert!(!s.open_standalone(standalone), "one standalone stream");
    let (tx, mut related) = mpsc::unbounded_channel();
    let msg = Incoming::Request {
        id: RequestId::Number(1),
        method: "tools/call".into(),
        params: Some(json!({"name": "notify_list_changed"})),
    };
    h.handle(&s, msg, &Notifier::new(tx)).await.expect("reply");
    let note: Value =
        serde_json::from_slice(&unrelated.try_recv().expect("on standalone")).expect("json");
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert!(related.try_recv().is_err());

    let bad = call(
        &h,
        &s,
        "tools/call",
        json!({"name": "notify_list_changed", "arguments": {"list": "roots"}}),
    )
    .await;
    assert_eq!(error_code(&bad), -32602);
    let m = call(
        &h,
        &Session::new(),
        "tools/call",
        modern(json!({"name": "notify_list_changed"}), json!({})),
    )
    .await;
    assert_eq!(m["result"]["resultType"], "complete");
    assert!(m["result"].get("isError").is_none());
}

#[tokio::test(start_paused = true)]
async fn the_capacity_knob_holds_handshakes_only() {
    let h = Handler::new(&ServerOptions {
        capacity: Some((1, Duration::from_millis(50))),
        ..ServerOptions::default()
    });
    let t0 = tokio::time::Instant::now();
    let s = initialized(&h, "2025-06-18").await;
    assert_eq!(t0.elapsed(), Duration::from_millis(50), "initialize waits");
    let t1 = tokio::time::Instant::now();
    let r = call(&h, &s, "tools/list", json!({})).await;
    assert!(r.get("result").is_some(), "{r}");
    assert_eq!(t1.elapsed(), Duration::ZERO, "other requests do not");
    let plain = handler();
    let t2 = tokio::time::Instant::now();
    initialized(&plain, "2025-06-18").await;
    assert_eq!(t2.elapsed(), Duration::ZERO, "no knob, no wait");
}
