//! One rule for whether a failure fails the session, whatever the phase: transport and
//! HTTP-status failures fail (and end) it; a JSON-RPC error follows the scenario's
//! `on_error` (default continue), discovery lists included; a scenario tool that the
//! server's `tools/list` lacks is its own kind, `unknown_tool`, said once per run.

use crate::support::{builtin_http, check_schema, count, phase, FleetRun};
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mcp_fleet::cli::{Overrides, RunArgs};
use mcp_fleet::server::{Fault, ServerOptions};
use serde_json::{json, Value};

/// A Streamable HTTP server with one tool, `echo`; with `broken_calls` every
/// `tools/call` gets HTTP 500 with an HTML page, as a crashing web framework answers.
async fn server(broken_calls: bool) -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().route(
        "/mcp",
        post(move |body: Bytes| async move { answer(broken_calls, &body) }),
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

fn answer(broken_calls: bool, body: &[u8]) -> Response {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let id = body["id"].clone();
    let result = |r: Value| {
        let v = json!({"jsonrpc": "2.0", "id": id, "result": r});
        ([("content-type", "application/json")], v.to_string()).into_response()
    };
    match body["method"].as_str().unwrap_or_default() {
        "initialize" => result(json!({
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "0"}})),
        "tools/list" => result(json!({"tools": [{"name": "echo",
            "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}}}]})),
        "tools/call" if broken_calls => (
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            [("content-type", "text/html")],
            "<html><body><h1>500 Internal Server Error</h1></body></html>",
        )
            .into_response(),
        "tools/call" => result(json!({"content": [{"type": "text", "text": "hi"}]})),
        _ if id.is_null() => axum::http::StatusCode::ACCEPTED.into_response(),
        _ => result(json!({})),
    }
}

/// Four sessions of `scenario` against `target`, with `error_rate(sessions) < 1%`.
async fn run(target: String, scenario: &str) -> Value {
    let json = FleetRun::new(RunArgs {
        overrides: Overrides {
            target: Some(target),
            thresholds: vec!["error_rate(sessions) < 1%".into()],
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&format!("[load]\nclients = 2\nsessions = 4\n{scenario}"))
    .run()
    .await
    .json;
    check_schema(&json);
    json
}

const CALL_THEN_PING: &str = r#"
[[scenario]]
name = "call"
steps = [{ op = "tools/call", tool = "echo", arguments = { message = "hi" } }, { op = "ping" }]
"#;

#[tokio::test]
async fn an_http_error_status_on_a_call_fails_the_session() {
    let (url, task) = server(true).await;
    let json = run(url, CALL_THEN_PING).await;
    task.abort();
    assert_eq!(json["sessions"]["failed"], 4, "{json:#}");
    assert_eq!(json["sessions"]["completed"], 0);
    assert_eq!(json["failures"]["http_status:500"], 4, "{json:#}");
    assert_eq!(
        phase(&json, "session")["failures"]["http_status:500"],
        4,
        "the session fails under the call's failure"
    );
    assert_eq!(count(&json, "ping"), 0, "the session ended at the call");
    assert_eq!(json["thresholds"][0]["passed"], false, "{json:#}");
}

#[tokio::test]
async fn a_call_the_server_answers_passes_the_same_threshold() {
    let (url, task) = server(false).await;
    let json = run(url, CALL_THEN_PING).await;
    task.abort();
    assert_eq!(json["sessions"]["completed"], 4, "{json:#}");
    assert_eq!(json["failures"], json!({}));
    assert_eq!(count(&json, "ping"), 4);
    assert_eq!(json["thresholds"][0]["passed"], true, "{json:#}");
}

/// Discovery, then a ping; `on_error` as given.
fn discovery(on_error: &str) -> String {
    format!(
        r#"
[[scenario]]
name = "discovery"
on_error = "{on_error}"
steps = [{{ op = "tools/list" }}, {{ op = "prompts/list" }}, {{ op = "ping" }}]
"#
    )
}

#[tokio::test]
async fn a_json_rpc_error_on_a_list_follows_on_error() {
    // prompts is declared but prompts/list answers -32601: before, every session
    // failed there whatever `on_error` said, while the same error on a call did not.
    let srv = builtin_http(ServerOptions {
        faults: vec![Fault::MissingPrompts],
        ..ServerOptions::default()
    })
    .await;
    let json = run(srv.url(), &discovery("continue")).await;
    assert_eq!(json["sessions"]["completed"], 4, "{json:#}");
    assert_eq!(json["sessions"]["failed"], 0);
    assert_eq!(json["failures"]["rpc_error:-32601"], 4, "{json:#}");
    assert_eq!(
        phase(&json, "prompts/list")["failures"]["rpc_error:-32601"],
        4
    );
    assert_eq!(count(&json, "ping"), 4, "the scenario went on");
    let codes: Vec<&str> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"capability.declared-but-missing"),
        "{codes:?}"
    );

    let json = run(srv.url(), &discovery("end-session")).await;
    srv.shutdown().await;
    assert_eq!(json["sessions"]["failed"], 4, "{json:#}");
    assert_eq!(phase(&json, "session")["failures"]["rpc_error:-32601"], 4);
    assert_eq!(
        count(&json, "ping"),
        0,
        "told to, the error ends the session"
    );
}

#[tokio::test]
async fn a_tool_the_server_does_not_list_is_an_unknown_tool_said_once() {
    let srv = builtin_http(ServerOptions::default()).await;
    let json = run(
        srv.url(),
        r#"
[[scenario]]
name = "typo"
steps = [
  { op = "tools/list" },
  { op = "tools/call", tool = "ecko", arguments = { message = "hi" } },
  { op = "tools/call", tool = "ecko" },
  { op = "tools/call", tool = "add", arguments = { a = "one", b = 2 } },
]
"#,
    )
    .await;
    srv.shutdown().await;
    // Not listed: its own kind, the session goes on (on_error continue) and completes.
    assert_eq!(json["failures"]["unknown_tool"], 8, "{json:#}");
    assert_eq!(json["sessions"]["completed"], 4);
    assert_eq!(
        json["failure_examples"]["unknown_tool"],
        json!([
            "tools/call: tool \"ecko\" is not in the server's tools/list and the call was \
             refused (-32602); check the tool's name in the profile"
        ]),
        "said once per run"
    );
    // What the server said stays with the tool.
    let said = json["tool_error_examples"]["ecko"][0]
        .as_str()
        .unwrap_or_default();
    assert!(said.contains("-32602"), "{said}");
    // A listed tool refused for its arguments stays an rpc_error.
    assert_eq!(json["failures"]["rpc_error:-32602"], 4, "{json:#}");
    // The generated call of an unlisted tool does not list tools again for itself.
    assert_eq!(count(&json, "tools/list"), 4);
}
