//! List results clients cannot use: a `tools/list` of `[1,2,3]` or `{"tools":{"echo":{}}}`,
//! a resource without `name`, a `nextCursor` that is not a string … fail their list
//! phase as `invalid_result` with the finding `list.invalid-result`, and no tool is
//! called from them; an undeclared list answered `{}` does not "work".

use crate::support::{check_schema, count, phase, FleetRun};
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mcp_fleet::cli::{Overrides, RunArgs};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Good answers to every list, with `bent` (method → result) instead where given;
/// `capabilities` as declared.
async fn server(
    bent: Map<String, Value>,
    capabilities: Value,
) -> (String, tokio::task::JoinHandle<()>) {
    let state = Arc::new((bent, capabilities));
    let app = axum::Router::new().route(
        "/mcp",
        post(move |body: Bytes| {
            let state = state.clone();
            async move { answer(&state.0, &state.1, &body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/mcp"), task)
}

fn answer(bent: &Map<String, Value>, capabilities: &Value, body: &[u8]) -> Response {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    let method = body["method"].as_str().unwrap_or_default();
    let good = match method {
        "initialize" => json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": capabilities,
            "serverInfo": {"name": "scripted", "version": "0"}}),
        "tools/list" => json!({"tools": [{"name": "echo",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]}),
        "resources/list" => json!({"resources": [{"uri": "a://1", "name": "one"}]}),
        "resources/templates/list" => {
            json!({"resourceTemplates": [{"uriTemplate": "a://{id}", "name": "a"}]})
        }
        "prompts/list" => json!({"prompts": [{"name": "greeting"}]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "hi"}]}),
        _ if id.is_null() => return axum::http::StatusCode::ACCEPTED.into_response(),
        _ => json!({}),
    };
    let result = bent.get(method).cloned().unwrap_or(good);
    let v = json!({"jsonrpc": "2.0", "id": id, "result": result});
    ([("content-type", "application/json")], v.to_string()).into_response()
}

const EVERY_LIST: &str = r#"
[load]
clients = 1
sessions = 2
[[scenario]]
name = "lists"
steps = [
  { op = "tools/list" },
  { op = "resources/list" },
  { op = "resources/templates/list" },
  { op = "prompts/list" },
  { op = "tools/call", tool = "echo" },
]
"#;

fn declared() -> Value {
    json!({"tools": {}, "resources": {}, "prompts": {}})
}

async fn run(bent: Map<String, Value>, capabilities: Value, profile: &str, probe: bool) -> Value {
    let (url, task) = server(bent, capabilities).await;
    let json = FleetRun::new(RunArgs {
        overrides: Overrides {
            target: Some(url),
            ..Default::default()
        },
        probe_undeclared: probe,
        ..RunArgs::default()
    })
    .profile(profile)
    .run()
    .await
    .json;
    task.abort();
    check_schema(&json);
    json
}

fn codes(json: &Value) -> Vec<String> {
    json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn list_results_clients_cannot_use_are_invalid_results() {
    let cases = [
        (
            "tools/list",
            json!([1, 2, 3]),
            "the result [1,2,3] is not an object",
        ),
        (
            "tools/list",
            json!({"tools": {"echo": {}}}),
            "\"tools\" is {\"echo\":{}}, not an array",
        ),
        (
            "tools/list",
            json!({"tools": [{"name": "echo"}]}),
            "tools[0] has no \"inputSchema\" that is an object",
        ),
        (
            "resources/list",
            json!({"resources": [{"uri": "a://1"}]}),
            "resources[0] has no \"name\" that is a string",
        ),
        (
            "resources/templates/list",
            json!({"resourceTemplates": [{"uri": "a://1", "name": "a"}]}),
            "resourceTemplates[0] has no \"uriTemplate\" that is a string",
        ),
        (
            "prompts/list",
            json!({}),
            "the result has no \"prompts\" array",
        ),
        (
            "prompts/list",
            json!({"prompts": [], "nextCursor": 2}),
            "\"nextCursor\" is 2, not a string",
        ),
    ];
    for (method, result, said) in cases {
        let what = format!("{method} {result}");
        let mut bent = Map::new();
        bent.insert(method.into(), result);
        let json = run(bent, declared(), EVERY_LIST, false).await;
        assert_eq!(json["sessions"]["failed"], 2, "{what}: {json:#}");
        assert_eq!(json["failures"], json!({"invalid_result": 2}), "{what}");
        assert_eq!(
            phase(&json, method)["failures"]["invalid_result"],
            2,
            "{what}"
        );
        assert_eq!(count(&json, "tools/call"), 0, "{what}: no call after it");
        let example = json["failure_examples"]["invalid_result"][0]
            .as_str()
            .unwrap_or_default();
        assert_eq!(example, format!("{method}: {said}"), "{what}");
        assert_eq!(codes(&json), ["list.invalid-result"], "{what}");
    }
}

#[tokio::test]
async fn list_results_with_their_fields_pass() {
    let json = run(Map::new(), declared(), EVERY_LIST, false).await;
    assert_eq!(json["sessions"]["completed"], 2, "{json:#}");
    assert_eq!(json["failures"], json!({}));
    assert_eq!(count(&json, "tools/call"), 2);
    assert!(codes(&json).is_empty(), "{:?}", codes(&json));
}

#[tokio::test]
async fn an_undeclared_list_answered_with_an_empty_object_does_not_work() {
    // Only tools declared; every list answers `{}`: the probe of the undeclared
    // resources and prompts must not call them working.
    let mut bent = Map::new();
    bent.insert("resources/list".into(), json!({}));
    bent.insert("prompts/list".into(), json!({}));
    let handshake = "[load]\nclients = 1\nsessions = 1\n";
    for probe in [false, true] {
        let json = run(bent.clone(), json!({"tools": {}}), handshake, probe).await;
        let codes = codes(&json);
        assert!(
            !codes.contains(&"capability.undeclared-but-works".to_string()),
            "probe {probe}: {codes:?}"
        );
        // Probing every session, the answer is said to be wrong.
        let wrong = if probe {
            vec!["list.invalid-result".to_string()]
        } else {
            vec![]
        };
        assert_eq!(codes, wrong, "probe {probe}");
    }
    // The same probe of a list that works says so.
    bent.insert("prompts/list".into(), json!({"prompts": []}));
    let json = run(bent, json!({"tools": {}}), handshake, false).await;
    assert!(
        codes(&json).contains(&"capability.undeclared-but-works".to_string()),
        "{:?}",
        codes(&json)
    );
}
