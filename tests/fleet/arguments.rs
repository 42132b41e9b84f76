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
