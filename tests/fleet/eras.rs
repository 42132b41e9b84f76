//! Both protocol eras and a client that answers the server: modern discover, version
//! negotiation, MRTR, caching, the auto probe against servers of each era; legacy
//! server requests over every transport; re-initialization after 404, SSE resumption,
//! list_changed handling. All against the built-in server, with its era and fault
//! switches.

use crate::support::{builtin_http, check_schema, count, run_profile, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::{Eras, ServerOptions};
use serde_json::{json, Value};
use std::path::PathBuf;

/// Run the profile `text` against `target` (None: the built-in server); its summary.json,
/// checked against the schema.
#[tokio::test]
async fn the_version_mix_runs_every_transport_and_both_eras_at_once() {
    let json = FleetRun::new(RunArgs {
        profile: Some(PathBuf::from("profiles/version-mix.toml")),
        overrides: mcp_fleet::cli::Overrides {
            sessions: Some(240),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    check_schema(&json);
    assert_eq!(
        json["sessions"]["completed"], 240,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["failures"], json!({}));
    for t in ["http", "sse", "ws", "stdio"] {
        assert!(
            json["transports"][t]["session"]["count"].as_u64() > Some(0),
            "{t}"
        );
    }
    for e in ["legacy", "modern"] {
        assert!(
            json["eras"][e]["session"]["count"].as_u64() > Some(0),
            "{e}"
        );
    }
    assert_eq!(json["personas"].as_object().map(|m| m.len()), Some(7));
    // The ask_* tools were answered well enough for the server's schema checks.
    for tool in ["ask_elicitation", "ask_sampling", "ask_roots"] {
        assert!(json["tools"][tool]["count"].as_u64() > Some(0), "{tool}");
        assert_eq!(json["tools"][tool]["tool_errors"], 0, "{tool}");
    }
    assert!(count(&json, "answer") > 0);
    assert!(
        json["counters"]["input_rounds"].as_u64() > Some(0),
        "MRTR used"
    );
    assert!(json["counters"]["get_stream_opened"].as_u64() > Some(0));
}

const ASKING: &str = r#"
[load]
clients = 2
sessions = 8
[[persona]]
name = "answers-everything"
capabilities = { sampling = {}, elicitation = {}, roots = { listChanged = true } }
sampling = { text = "canned", delay = "2ms" }
roots = [{ uri = "file:///a" }, { uri = "file:///b" }]
[[scenario]]
name = "ask"
steps = [
  { op = "tools/call", tool = "ask_sampling", arguments = { prompt = "p" } },
  { op = "tools/call", tool = "ask_elicitation" },
  { op = "tools/call", tool = "ask_roots" },
]
"#;

#[tokio::test]
async fn server_requests_are_answered_over_every_transport_and_in_both_eras() {
    for (transport, era) in [
        ("http", "legacy"),
        ("stdio", "legacy"),
        ("ws", "legacy"),
        ("sse", "legacy"),
        ("http", "modern"),
        ("stdio", "modern"),
    ] {
        let text = ASKING.replace(
            "name = \"answers-everything\"",
            &format!("name = \"answers-everything\"\ntransport = \"{transport}\"\nera = \"{era}\""),
        );
        let json = run_profile(&text, None).await;
        let what = format!("{transport}/{era}");
        assert_eq!(
            json["sessions"]["completed"], 8,
            "{what}: {:#}",
            json["failure_examples"]
        );
        assert_eq!(count(&json, "tools/call"), 24, "{what}");
        assert_eq!(json["phases"]["tools/call"]["tool_errors"], 0, "{what}");
        // Every ask was answered by the persona, and timed as `answer`.
        assert_eq!(count(&json, "answer"), 24, "{what}");
        if era == "legacy" {
            for m in ["sampling/createMessage", "elicitation/create", "roots/list"] {
                assert_eq!(json["server_messages"][m], 8, "{what} {m}");
            }
        } else {
            assert_eq!(
                json["counters"]["input_rounds"], 24,
                "{what}: one round per ask"
            );
        }
    }
}

#[tokio::test]
async fn undeclared_capabilities_are_not_answered() {
    // The server refuses to ask a client that declared nothing: the tool reports an
    // error (legacy) or the request fails with -32021 (modern).
    let text = ASKING
        .replace(
            "capabilities = { sampling = {}, elicitation = {}, roots = { listChanged = true } }\n",
            "",
        )
        .replace("sampling = { text = \"canned\", delay = \"2ms\" }\n", "")
        .replace(
            "roots = [{ uri = \"file:///a\" }, { uri = \"file:///b\" }]\n",
            "",
        );
    let json = run_profile(&text, None).await;
    assert_eq!(json["phases"]["tools/call"]["tool_errors"], 24);
    assert_eq!(count(&json, "answer"), 0);
    let modern = text.replace(
        "name = \"answers-everything\"",
        "name = \"m\"\nera = \"modern\"",
    );
    let json = run_profile(&modern, None).await;
    assert_eq!(
        json["phases"]["tools/call"]["failures"]["rpc_error:-32021"],
        24
    );
}

#[tokio::test]
async fn a_forgotten_session_is_reinitialized_and_the_request_retried() {
    let s = builtin_http(ServerOptions {
        expire_sessions_after: Some(3),
        ..Default::default()
    })
    .await;
    let text = r#"
[load]
clients = 2
sessions = 6
[[scenario]]
name = "long"
steps = [
  { op = "tools/list" }, { op = "prompts/list" }, { op = "ping" }, { op = "ping" },
  { op = "ping" }, { op = "ping" }, { op = "ping" },
]
"#;
    let json = run_profile(text, Some(s.url())).await;
    s.shutdown().await;
    assert_eq!(
        json["sessions"]["completed"], 6,
        "{:#}",
        json["failure_examples"]
    );
    let expired = json["counters"]["session_expired"].as_u64().unwrap_or(0);
    assert!(
        expired >= 6,
        "every session outlived its server session: {expired}"
    );
    assert_eq!(count(&json, "reinitialize"), expired);
    assert_eq!(
        count(&json, "ping"),
        30,
        "every ping answered after re-init"
    );
}

#[tokio::test]
async fn a_dropped_sse_stream_is_resumed_with_last_event_id() {
    let s = builtin_http(ServerOptions {
        sse_drop_after: Some(1),
        ..Default::default()
    })
    .await;
    let text = r#"
[load]
clients = 2
sessions = 6
[[scenario]]
name = "streamed"
steps = [{ op = "tools/call", tool = "progress", arguments = { steps = 3 } }]
"#;
    let json = run_profile(text, Some(s.url())).await;
    s.shutdown().await;
    assert_eq!(
        json["sessions"]["completed"], 6,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["counters"]["sse_resumptions"], 6);
}

#[tokio::test]
async fn list_changed_is_refetched_or_ignored_as_the_persona_says() {
    let text = r#"
[load]
clients = 1
sessions = 4
[[persona]]
name = "p"
get_stream = true
[[scenario]]
name = "change"
steps = [{ op = "tools/list" }, { op = "tools/call", tool = "notify_list_changed", generate = false }, { op = "ping" }]
"#;
    let json = run_profile(text, None).await;
    assert_eq!(
        json["sessions"]["completed"], 4,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["counters"]["list_refetch"], 4);
    assert_eq!(count(&json, "tools/list"), 8, "listed, then listed again");
    assert_eq!(json["counters"]["get_stream_opened"], 4);
    assert_eq!(
        json["server_messages"]["notifications/tools/list_changed"],
        4
    );

    let ignoring = text.replace("get_stream = true", "list_changed = \"ignore\"");
    let json = run_profile(&ignoring, None).await;
    assert_eq!(json["counters"]["list_changed_ignored"], 4);
    assert_eq!(count(&json, "tools/list"), 4);
}

#[tokio::test]
async fn modern_negotiation_caching_and_the_auto_probe() {
    // An unknown modern version is refused with -32022 and retried at 2026-07-28.
    let text = r#"
[load]
clients = 1
sessions = 5
[[persona]]
name = "future"
era = "modern"
protocol_version = "2099-01-01"
cache = true
"#;
    let json = run_profile(text, None).await;
    assert_eq!(
        json["sessions"]["completed"], 5,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(count(&json, "discover"), 5);
    assert_eq!(count(&json, "initialize"), 0);
    // One client, five sessions: discovery after the first is served from the cache.
    assert_eq!(count(&json, "tools/list"), 1);
    assert!(json["counters"]["cache_hit"].as_u64() >= Some(4));

    // auto against a legacy-only server: the probe says legacy, initialize follows.
    let legacy = builtin_http(ServerOptions {
        eras: Eras::Legacy,
        ..Default::default()
    })
    .await;
    let auto = "[load]\nclients = 2\nsessions = 6\n[[persona]]\nname = \"a\"\nera = \"auto\"\n";
    let json = run_profile(auto, Some(legacy.url())).await;
    assert_eq!(
        json["sessions"]["completed"], 6,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["counters"]["era_legacy"], 6);
    assert_eq!(count(&json, "probe"), 6);
    assert_eq!(count(&json, "initialize"), 6);
    assert_eq!(json["eras"]["legacy"]["session"]["count"], 6);

    // A modern-only persona cannot talk to it.
    let modern = auto.replace("era = \"auto\"", "era = \"modern\"");
    let json = run_profile(&modern, Some(legacy.url())).await;
    legacy.shutdown().await;
    assert_eq!(json["sessions"]["failed"], 6);
    assert_eq!(json["phases"]["discover"]["errors"], 6);

    // auto against a modern-only server: modern, no initialize.
    let modern_only = builtin_http(ServerOptions {
        eras: Eras::Modern,
        ..Default::default()
    })
    .await;
    let json = run_profile(auto, Some(modern_only.url())).await;
    assert_eq!(json["counters"]["era_modern"], 6);
    assert_eq!(count(&json, "initialize"), 0);
    // And a legacy persona is refused by it, as a counted failure.
    let json = run_profile(
        "[load]\nclients = 1\nsessions = 2\n",
        Some(modern_only.url()),
    )
    .await;
    modern_only.shutdown().await;
    assert_eq!(json["sessions"]["failed"], 2);
    assert_eq!(phase_errors(&json, "initialize"), 2);
}

fn phase_errors(json: &Value, phase: &str) -> u64 {
    json["phases"][phase]["errors"].as_u64().unwrap_or(0)
}

#[tokio::test]
async fn modern_tool_calls_mirror_x_mcp_header_arguments() {
    // The built-in `echo` marks `message` with x-mcp-header; the server rejects a call
    // whose Mcp-Param-Message does not match (-32020). Listed first: the header is sent
    // (base64 for non-ASCII). Not listed (exact arguments:
    // nothing needs the schema): the -32020 makes the client re-list and retry.
    let text = r#"
[load]
clients = 1
sessions = 3
[[persona]]
name = "modern"
era = "modern"
[[scenario]]
name = "listed"
weight = 1
steps = [{ op = "tools/list" }, { op = "tools/call", tool = "echo", arguments = { message = "Grüße aus Zürich" }, generate = false }]
"#;
    let json = run_profile(text, None).await;
    assert_eq!(
        json["sessions"]["completed"], 3,
        "{:#}",
        json["failure_examples"]
    );
    assert!(json["counters"]["tools_relisted"].is_null());
    let unlisted = text.replace("steps = [{ op = \"tools/list\" }, ", "steps = [");
    let json = run_profile(&unlisted, None).await;
    assert_eq!(
        json["sessions"]["completed"], 3,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["counters"]["tools_relisted"], 3);
}

/// The built-in server over stdio (`serve --stdio ARGS`), whose first process starts
/// slowly — a cold start, as `npx` or `uvx` downloading the package — and the next ones at
/// once (the mark file in `dir` says it started before).
fn cold_start(dir: &std::path::Path, args: &str) -> String {
    let mark = dir.join("started");
    format!(
        "sh -c 'test -e {m} || {{ : > {m}; sleep 1.5; }}; exec {fleet} serve --stdio {args}'",
        m = mark.display(),
        fleet = crate::support::fleet_program()
    )
}

/// `auto` personas against `command`, requests timing out after 1 s: three sessions.
async fn auto_over_stdio(command: &str) -> Value {
    let text = format!(
        "[target]\ncommand = {command:?}\ntimeout = \"1s\"\n[load]\nclients = 1\nsessions = 3\n\
         [[persona]]\nname = \"auto\"\nera = \"auto\"\n"
    );
    run_profile(&text, None).await
}

#[tokio::test]
async fn an_unanswered_stdio_probe_falls_back_on_a_fresh_process() {
    // A server of both eras that fixes a connection's era by its first request: the
    // probe of the first session times out (the server is still starting), and the
    // legacy fallback's initialize goes to a fresh process; read by the slow one, the
    // late probe would lock it to the modern era and the initialize be refused (-32022).
    let dir = tempfile::tempdir().expect("tempdir");
    let command = cold_start(dir.path(), "--fault era-lock");
    let json = auto_over_stdio(&command).await;
    assert_eq!(
        json["sessions"]["completed"], 3,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["failures"], json!({}));
    assert!(
        json["diagnosis"]["cause"].is_null(),
        "{}",
        json["diagnosis"]
    );
    // The first session is legacy (its fallback), the others, started warm, modern.
    assert_eq!(json["counters"]["era_legacy"], 1, "{}", json["counters"]);
    assert_eq!(json["counters"]["era_modern"], 2, "{}", json["counters"]);
    assert_eq!(count(&json, "initialize"), 1);
    // Warm from the start: every probe answered, no fallback, no fresh process.
    let json = auto_over_stdio(&command).await;
    assert_eq!(json["counters"]["era_modern"], 3, "{}", json["counters"]);
    assert!(
        json["counters"]["era_legacy"].is_null(),
        "{}",
        json["counters"]
    );
    assert_eq!(count(&json, "initialize"), 0);
}

#[tokio::test]
async fn a_32022_to_the_fallback_initialize_is_modern_evidence() {
    // A modern-only server refusing initialize with -32022: the first session's probe
    // times out, the fallback is refused so, and a second probe finds the modern era
    // instead of failing the session on a version problem.
    let dir = tempfile::tempdir().expect("tempdir");
    let command = cold_start(dir.path(), "--era modern --fault era-lock");
    let json = auto_over_stdio(&command).await;
    assert_eq!(
        json["sessions"]["completed"], 3,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["failures"], json!({}));
    assert!(
        json["diagnosis"]["cause"].is_null(),
        "{}",
        json["diagnosis"]
    );
    assert_eq!(count(&json, "initialize"), 0);
    // Four probes: the unanswered one, the one after -32022, one per warm session.
    assert_eq!(count(&json, "probe"), 4);
    assert_eq!(json["eras"]["modern"]["session"]["count"], 3);
}
