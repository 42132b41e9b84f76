//! Tool calls that real servers accept: arguments generated from every schema feature,
//! pinned values, `[data]` pools, captures and discovery values, destructive tools left
//! out, `on_error` — end to end against the built-in server's application tools
//! (`serve --app-tools`), which check their arguments as strictly as an SDK does.

use crate::support::{count, phase};
use mcp_fleet::server::ServerOptions;
use serde_json::Value;

async fn app_server() -> mcp_fleet::server::HttpServer {
    crate::support::builtin_http(ServerOptions {
        app_tools: true,
        ..ServerOptions::default()
    })
    .await
}

async fn run(text: &str, url: String) -> Value {
    crate::support::run_profile(text, Some(url)).await
}

fn acceptance<'a>(json: &'a Value, tool: &str) -> &'a Value {
    &json["tool_acceptance"][tool]
}

#[tokio::test]
async fn generated_arguments_are_accepted_for_every_schema_feature() {
    let server = app_server().await;
    let features = [
        "feature_ref",
        "feature_pattern",
        "feature_formats",
        "feature_numbers",
        "feature_lengths",
        "feature_choice",
        "feature_objects",
    ];
    let calls: Vec<String> = features
        .iter()
        .map(|f| format!("{{ tool = \"{f}\" }}"))
        .collect();
    let text = format!(
        "[load]\nclients = 2\nsessions = 6\n[[scenario]]\nname = \"features\"\n\
         steps = [{{ op = \"mix\", count = 70, parallel = 4, calls = [{}] }}]\n",
        calls.join(", ")
    );
    let json = run(&text, server.url()).await;
    server.shutdown().await;
    assert_eq!(
        json["sessions"]["completed"], 6,
        "{:#}",
        json["failure_examples"]
    );
    let mut total = 0;
    for f in features {
        let a = acceptance(&json, f);
        let calls = a["calls"].as_u64().unwrap_or(0);
        total += calls;
        assert!(calls > 0, "{f} was called: {a}");
        assert_eq!(
            a["accepted"], a["calls"],
            "{f}: {a} {:#}",
            json["tool_error_examples"][f]
        );
        assert_eq!(a["generated"], a["calls"], "{f}: every call generated");
        assert_eq!(a["generated_accepted"], a["calls"]);
    }
    assert_eq!(total, 6 * 70);
    assert!(json["diagnosis"].is_null(), "{}", json["diagnosis"]);
}

#[tokio::test]
async fn pins_pools_captures_and_discovery_values_make_a_working_flow() {
    let server = app_server().await;
    let data = tempfile::tempdir().expect("tempdir");
    let titles = data.path().join("titles.csv");
    std::fs::write(
        &titles,
        "title,body\nGroceries,\"milk, eggs\"\nTrip,Lisbon in May\nBooks,\"Dune, Emma\"\n",
    )
    .expect("write the pool");
    let text = format!(
        r#"
[load]
clients = 3
sessions = 9
[data.notes]
file = "{}"
order = "sequential"
[[scenario]]
name = "notes"
steps = [
  {{ op = "tools/call", tool = "note_create", arguments = {{ title = "${{pool.notes}}", body = "${{pool.notes.body}}" }},
     capture = {{ note = "/id" }} }},
  {{ op = "tools/call", tool = "note_get", arguments = {{ id = "${{note}}" }} }},
  {{ op = "tools/call", tool = "note_list", capture = {{ listed = {{ regex = "\\[NOTE\\] (n-\\d+)", pick = "random" }} }} }},
  {{ op = "tools/call", tool = "note_get", arguments = {{ id = "${{listed}}" }} }},
  {{ op = "resources/read", uri = "${{resource.uri}}" }},
  {{ op = "tools/call", tool = "note_delete", arguments = {{ id = "${{note}}" }}, generate = false }},
]
"#,
        titles.display()
    );
    let json = run(&text, server.url()).await;
    server.shutdown().await;
    assert_eq!(
        json["sessions"]["completed"], 9,
        "{:#}",
        json["failure_examples"]
    );
    assert!(
        json["failures"].as_object().is_none_or(|f| f.is_empty()),
        "{:#}",
        json["failures"]
    );
    let get = acceptance(&json, "note_get");
    assert_eq!(get["calls"], 18, "{get}");
    assert_eq!(
        get["accepted"], 18,
        "captured ids are real: {:#}",
        json["tool_error_examples"]
    );
    assert_eq!(acceptance(&json, "note_delete")["accepted"], 9);
    assert_eq!(acceptance(&json, "note_delete")["generated"], 0);
    assert_eq!(count(&json, "resources/read"), 9);
    // Listed once per session for ${resource.uri}, followed over its three pages.
    assert_eq!(count(&json, "resources/list"), 9 * 3);
}

#[tokio::test]
async fn destructive_tools_are_left_out_of_generated_calls_unless_allowed() {
    let server = app_server().await;
    let text = r#"
[load]
clients = 1
sessions = 2
[[scenario]]
name = "cleanup"
steps = [{ op = "mix", count = 20, calls = [{ tool = "note_list" }, { tool = "note_delete" }] }]
"#;
    let json = run(text, server.url()).await;
    let delete = acceptance(&json, "note_delete");
    assert_eq!(delete["calls"].as_u64().unwrap_or(0), 0, "{delete}");
    assert_eq!(delete["left_out"]["destructive"], 2, "{delete}");
    assert_eq!(acceptance(&json, "note_list")["calls"], 40);
    let allowed = format!("[arguments]\nallow_destructive = true\n{text}");
    let json = run(&allowed, server.url()).await;
    server.shutdown().await;
    let delete = acceptance(&json, "note_delete");
    assert!(delete["calls"].as_u64().unwrap_or(0) > 0, "{delete}");
    assert!(delete["left_out"].is_null(), "{delete}");
}

#[tokio::test]
async fn values_that_are_missing_are_counted_and_the_session_goes_on() {
    let server = app_server().await;
    let data = tempfile::tempdir().expect("tempdir");
    let ids = data.path().join("ids.jsonl");
    std::fs::write(&ids, "{\"t\": \"one\"}\n{\"t\": \"two\"}\n").expect("write the pool");
    let text = format!(
        r#"
[load]
clients = 1
sessions = 4
[data.once]
file = "{}"
column = "t"
order = "unique"
[[scenario]]
name = "dry"
steps = [
  {{ op = "tools/call", tool = "note_create", arguments = {{ title = "${{pool.once}}" }}, capture = {{ nothing = "/no/such/field" }} }},
  {{ op = "tools/call", tool = "note_get", arguments = {{ id = "${{nothing}}" }} }},
  {{ op = "tools/call", tool = "note_list" }},
]
"#,
        ids.display()
    );
    let json = run(&text, server.url()).await;
    server.shutdown().await;
    assert_eq!(json["sessions"]["completed"], 4, "on_error = continue");
    let create = acceptance(&json, "note_create");
    assert_eq!(create["accepted"], 2, "two rows, taken once each: {create}");
    assert_eq!(create["other_errors"], 2, "the pool ran dry: {create}");
    assert_eq!(acceptance(&json, "note_get")["other_errors"], 4);
    assert_eq!(phase(&json, "tools/call")["failures"]["no_value"], 6);
    assert_eq!(acceptance(&json, "note_list")["accepted"], 4);
    let examples = json["failure_examples"]["no_value"].to_string();
    assert!(
        examples.contains("used up") && examples.contains("nothing"),
        "{examples}"
    );
}

#[tokio::test]
async fn generated_calls_a_server_mostly_rejects_are_diagnosed() {
    let server = app_server().await;
    // A generated id is never a note that exists: every call is an isError.
    let text = r#"
[load]
clients = 1
sessions = 2
[[scenario]]
name = "guess"
steps = [{ op = "mix", count = 15, calls = [{ tool = "note_get" }] }]
"#;
    let json = run(text, server.url()).await;
    server.shutdown().await;
    let get = acceptance(&json, "note_get");
    assert_eq!(get["generated"], 30, "{get}");
    assert_eq!(get["generated_accepted"], 0, "{get}");
    assert_eq!(
        json["diagnosis"]["cause"], "arguments_rejected",
        "{:#}",
        json["diagnosis"]
    );
    assert!(!json["tool_error_examples"]["note_get"]
        .as_array()
        .is_none_or(Vec::is_empty));
}

/// A Streamable HTTP server with one tool shaped like `mcp-server-git`'s `git_branch`
/// (two required properties, two optional ones) that keeps the arguments of every call.
async fn recording_server() -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
    tokio::task::JoinHandle<()>,
) {
    use axum::response::IntoResponse;
    use serde_json::json;
    let calls = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = calls.clone();
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let id = body["id"].clone();
                let result = match body["method"].as_str().unwrap_or_default() {
                    "initialize" => json!({
                        "protocolVersion": body["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "git-like", "version": "0"}}),
                    "tools/list" => json!({"tools": [{"name": "git_branch", "inputSchema": {
                        "type": "object",
                        "properties": {
                            "repo_path": {"type": "string"},
                            "branch_type": {"type": "string", "enum": ["local", "remote", "all"]},
                            "contains": {"type": "string"},
                            "not_contains": {"type": "string"}},
                        "required": ["repo_path", "branch_type"]}}]}),
                    "tools/call" => {
                        kept.lock()
                            .expect("lock")
                            .push(body["params"]["arguments"].clone());
                        json!({"content": [{"type": "text", "text": "* main"}]})
                    }
                    _ if id.is_null() => {
                        return axum::http::StatusCode::ACCEPTED.into_response();
                    }
                    _ => json!({}),
                };
                let v = json!({"jsonrpc": "2.0", "id": id, "result": result});
                ([("content-type", "application/json")], v.to_string()).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, calls, task)
}

/// The arguments of the 20 `git_branch` calls of one session, made as `call` says
/// (a step's inline table), under `[arguments]` as given.
async fn branch_calls(arguments_section: &str, call: &str) -> Vec<Value> {
    let (url, calls, task) = recording_server().await;
    let text = format!(
        "{arguments_section}\n[load]\nclients = 1\nsessions = 1\n[[scenario]]\nname = \"git\"\n\
         steps = [{{ op = \"mix\", count = 20, calls = [{call}] }}]\n"
    );
    let json = run(&text, url).await;
    task.abort();
    assert_eq!(json["sessions"]["completed"], 1, "{json:#}");
    let calls = calls.lock().expect("lock").clone();
    assert_eq!(calls.len(), 20);
    calls
}

/// How many calls carry the optional `contains`.
fn with_contains(calls: &[Value]) -> usize {
    calls.iter().filter(|a| a.get("contains").is_some()).count()
}

#[tokio::test]
async fn explicit_arguments_gain_no_optional_ones_unless_asked() {
    // Before, half of these calls also sent a generated `contains`, which git refuses.
    let pinned =
        r#"{ tool = "git_branch", arguments = { repo_path = "/r", branch_type = "local" } }"#;
    for a in branch_calls("", pinned).await {
        assert_eq!(
            a,
            serde_json::json!({"repo_path": "/r", "branch_type": "local"})
        );
    }
    // A missing required property is still generated; the optional ones are not.
    let partial = r#"{ tool = "git_branch", arguments = { repo_path = "/r" } }"#;
    for a in branch_calls("", partial).await {
        let keys: Vec<&String> = a
            .as_object()
            .map(|o| o.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["branch_type", "repo_path"], "{a}");
    }
    // Asked for, by the step or by the profile: optional properties too.
    let step = r#"{ tool = "git_branch", arguments = { repo_path = "/r" }, optional = 1 }"#;
    assert_eq!(with_contains(&branch_calls("", step).await), 20);
    let profile = "[arguments]\noptional = 1";
    assert_eq!(with_contains(&branch_calls(profile, partial).await), 20);
}

#[tokio::test]
async fn calls_without_arguments_keep_their_seeded_optional_properties() {
    // Every argument generated, optional ones by the default share of 0.5: with seed 1,
    // the same calls carry `contains` as before explicit arguments changed (the list
    // is what the run made before that change).
    let calls = branch_calls("", r#"{ tool = "git_branch" }"#).await;
    let carrying: Vec<usize> = (0..calls.len())
        .filter(|i| calls[*i].get("contains").is_some())
        .collect();
    assert_eq!(
        carrying,
        [3, 4, 6, 7, 9, 10, 11, 13, 14, 16, 17, 19],
        "{calls:#?}"
    );
}
