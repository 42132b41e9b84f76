//! A scripted Streamable HTTP server (axum, 127.0.0.1:0) that records every POST and
//! misbehaves on cue, to check what the fleet puts on the wire: session and version
//! headers, extra headers, answers to server requests, cancellation after a timeout,
//! and `session_expired` on a 404.

use crate::support::FleetRun;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mcp_fleet::cli::{ClientArgs, RunArgs};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// tools/call answers with an SSE stream carrying server requests before the result.
    Chatty,
    /// Every request after initialize gets 404, as if the server forgot the session.
    Forgetful,
    /// tools/call never answers in time.
    Stalling,
    /// Answers after initialize carry the request's id as a string (`"2"` for `2`).
    StringIds,
    /// A legacy server that refuses an unknown method (`server/discover`) with -32602,
    /// as Python's 1.x SDK does, not -32601.
    Legacy32602,
    /// Answers `server/discover` listing only legacy versions and refuses the modern
    /// version on every other request (-32022), as the Go SDK's stateful sessions do.
    DiscoverLegacyOnly,
}

#[derive(Debug, Clone)]
struct Post {
    session: Option<String>,
    version: Option<String>,
    authorization: Option<String>,
    traceparent: Option<String>,
    body: Value,
}

struct Script {
    mode: Mode,
    posts: Mutex<Vec<Post>>,
}

async fn mcp(State(s): State<Arc<Script>>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let header = |n: &str| {
        headers
            .get(n)
            .and_then(|v| v.to_str().ok())
            .map(String::from)
    };
    s.posts.lock().expect("lock").push(Post {
        session: header("mcp-session-id"),
        version: header("mcp-protocol-version"),
        authorization: header("authorization"),
        traceparent: header("traceparent"),
        body: body.clone(),
    });
    let method = body["method"].as_str().unwrap_or_default().to_string();
    let id = body.get("id").cloned();
    if method == "initialize" {
        let result = json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "0"}}});
        return (
            [
                ("content-type", "application/json"),
                ("mcp-session-id", "s-1"),
            ],
            result.to_string(),
        )
            .into_response();
    }
    if s.mode == Mode::Legacy32602 && method == "server/discover" {
        return (
            [("content-type", "application/json")],
            json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"Invalid request parameters"}}).to_string(),
        )
            .into_response();
    }
    if s.mode == Mode::DiscoverLegacyOnly && method == "server/discover" {
        return (
            [("content-type", "application/json")],
            json!({"jsonrpc":"2.0","id":id,"result":{"resultType":"complete",
                "supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{"tools":{}},
                "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"scripted","version":"0"}}}})
            .to_string(),
        )
            .into_response();
    }
    if s.mode == Mode::DiscoverLegacyOnly
        && headers
            .get("mcp-protocol-version")
            .is_some_and(|v| v == "2026-07-28")
    {
        let error = json!({"code":-32022,"message":"unsupported protocol version",
            "data":{"supported":["2025-11-25","2025-06-18"],"requested":"2026-07-28"}});
        return (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/json")],
            json!({"jsonrpc":"2.0","id":id,"error":error}).to_string(),
        )
            .into_response();
    }
    if s.mode == Mode::Forgetful {
        return (StatusCode::NOT_FOUND, "session not found").into_response();
    }
    let Some(id) = id.filter(|_| !method.is_empty()) else {
        return StatusCode::ACCEPTED.into_response(); // a notification or our answer
    };
    match (method.as_str(), s.mode) {
        ("tools/call", Mode::Stalling) => {
            tokio::time::sleep(std::time::Duration::from_secs(3)).await;
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        ("tools/call", _) => {
            let events = [
                "id: 1\ndata:\n\n".to_string(),
                ": keep-alive comment\n\n".to_string(),
                format!(
                    "event: message\ndata: {}\n\n",
                    json!({"jsonrpc":"2.0","id":"srv-ping","method":"ping"})
                ),
                format!(
                    "data: {}\n\n",
                    json!({"jsonrpc":"2.0","id":77,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}})
                ),
                format!(
                    "data: {}\n\n",
                    json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}})
                ),
                format!(
                    "data: {}\n\n",
                    json!({"jsonrpc":"2.0","id":78,"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer","minimum":3,"maximum":3}},"required":["name"]}}})
                ),
                format!(
                    "data: {}\n\n",
                    json!({"jsonrpc":"2.0","id":79,"method":"roots/list"})
                ),
                format!(
                    "data: {}\ndata: \n\n",
                    json!({"jsonrpc":"2.0","id":id,"result":{"content":[{"type":"text","text":"done"}]}})
                ),
            ];
            (
                [("content-type", "text/event-stream")],
                Body::from(events.concat()),
            )
                .into_response()
        }
        (_, Mode::StringIds) => (
            [("content-type", "application/json")],
            json!({"jsonrpc":"2.0","id":id.to_string(),"result":{"tools":[]}}).to_string(),
        )
            .into_response(),
        _ => (
            [("content-type", "application/json")],
            json!({"jsonrpc":"2.0","id":id,"result":{"tools":[]}}).to_string(),
        )
            .into_response(),
    }
}

/// Start the script; returns its URL, its log, and the server task.
async fn start(mode: Mode) -> (String, Arc<Script>, tokio::task::JoinHandle<()>) {
    let script = Arc::new(Script {
        mode,
        posts: Mutex::new(Vec::new()),
    });
    let app = axum::Router::new()
        .route(
            "/mcp",
            post(mcp).delete(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        )
        .with_state(script.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, script, task)
}

/// One persona at `version`, requests timing out after `timeout`: two sessions that
/// list tools and call one.
fn profile(version: &str, timeout: &str) -> String {
    format!(
        r#"
[target]
timeout = "{timeout}"
[load]
clients = 1
sessions = 2
[[persona]]
name = "p"
protocol_version = "{version}"
[[scenario]]
name = "call"
steps = [{{ op = "tools/list" }}, {{ op = "tools/call", tool = "t" }}]
"#
    )
}

#[tokio::test]
async fn headers_and_answers_to_server_requests_are_right_on_the_wire() {
    let (url, script, task) = start(Mode::Chatty).await;
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            client: ClientArgs {
                headers: vec!["Authorization: Bearer secret".into()],
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&profile("2025-06-18", "5s"))
    .run()
    .await
    .json;
    task.abort();
    assert_eq!(json["sessions"]["completed"], 2, "{json:#}");
    assert_eq!(json["failures"], json!({}));
    // 405 on DELETE is tolerated.
    assert_eq!(json["phases"]["close"]["errors"], 0);
    assert_eq!(json["server_messages"]["ping"], 2);
    assert_eq!(json["server_messages"]["sampling/createMessage"], 2);
    assert_eq!(json["server_messages"]["elicitation/create"], 2);
    assert_eq!(json["server_messages"]["roots/list"], 2);
    assert_eq!(json["server_messages"]["notifications/progress"], 2);

    let posts = script.posts.lock().expect("lock").clone();
    let init = &posts[0];
    assert_eq!(init.body["method"], "initialize");
    assert_eq!(init.session, None, "no session header on initialize");
    assert_eq!(init.version, None, "no version header on initialize");
    assert_eq!(init.authorization.as_deref(), Some("Bearer secret"));
    for p in posts.iter().filter(|p| p.body["method"] != "initialize") {
        assert_eq!(p.session.as_deref(), Some("s-1"), "{:?}", p.body);
        assert_eq!(p.version.as_deref(), Some("2025-06-18"), "{:?}", p.body);
        assert_eq!(p.authorization.as_deref(), Some("Bearer secret"));
    }
    assert!(posts
        .iter()
        .any(|p| p.body["method"] == "notifications/initialized"));
    let pong = posts
        .iter()
        .find(|p| p.body["id"] == "srv-ping")
        .expect("ping answered");
    assert_eq!(pong.body["result"], json!({}));
    for id in [77, 78, 79] {
        let refusal = posts
            .iter()
            .find(|p| p.body["id"] == id)
            .expect("server request answered");
        assert_eq!(
            refusal.body["error"]["code"], -32601,
            "undeclared → method not found"
        );
    }
}

#[tokio::test]
async fn declared_capabilities_get_real_answers_on_the_wire() {
    let (url, script, task) = start(Mode::Chatty).await;
    let text = profile("2025-11-25", "5s").replace(
            "protocol_version = \"2025-11-25\"",
            "protocol_version = \"2025-11-25\"\ncapabilities = { sampling = {}, elicitation = {}, roots = {} }\nsampling = { text = \"canned\", model = \"m1\" }\nroots = [{ uri = \"file:///r\", name = \"r\" }]",
        );
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&text)
    .run()
    .await
    .json;
    task.abort();
    assert_eq!(
        json["sessions"]["completed"], 2,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["phases"]["answer"]["count"], 8, "ping + 3 asks, twice");
    let posts = script.posts.lock().expect("lock").clone();
    let answer = |id: i64| {
        posts
            .iter()
            .find(|p| p.body["id"] == id)
            .map(|p| p.body["result"].clone())
            .expect("answered")
    };
    let sampling = answer(77);
    assert_eq!(sampling["role"], "assistant");
    assert_eq!(
        sampling["content"],
        json!({"type": "text", "text": "canned"})
    );
    assert_eq!(sampling["model"], "m1");
    let elicited = answer(78);
    assert_eq!(elicited["action"], "accept");
    assert!(elicited["content"]["name"].is_string());
    assert_eq!(elicited["content"]["n"], 3, "range respected");
    assert_eq!(
        answer(79),
        json!({"roots": [{"uri": "file:///r", "name": "r"}]})
    );
}

#[tokio::test]
async fn versions_before_2025_06_18_send_no_version_header() {
    let (url, script, task) = start(Mode::Chatty).await;
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&profile("2025-03-26", "5s"))
    .run()
    .await
    .json;
    task.abort();
    assert_eq!(json["sessions"]["completed"], 2);
    let posts = script.posts.lock().expect("lock").clone();
    assert!(posts.iter().all(|p| p.version.is_none()));
    assert!(posts
        .iter()
        .filter(|p| p.body["method"] != "initialize")
        .all(|p| p.session.as_deref() == Some("s-1")));
}

#[tokio::test]
async fn a_404_on_a_live_session_is_session_expired() {
    let (url, _script, task) = start(Mode::Forgetful).await;
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&profile("2025-11-25", "5s"))
    .run()
    .await
    .json;
    task.abort();
    assert_eq!(json["sessions"]["failed"], 2);
    assert_eq!(
        json["phases"]["initialized"]["failures"]["session_expired"],
        2
    );
    assert_eq!(json["failures"]["session_expired"], 2);
}

#[tokio::test]
async fn a_timed_out_request_is_cancelled() {
    let (url, script, task) = start(Mode::Stalling).await;
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&profile("2025-11-25", "300ms"))
    .run()
    .await
    .json;
    task.abort();
    assert_eq!(json["phases"]["tools/call"]["failures"]["timeout"], 2);
    let posts = script.posts.lock().expect("lock").clone();
    let calls: Vec<&Value> = posts
        .iter()
        .filter(|p| p.body["method"] == "tools/call")
        .map(|p| &p.body["id"])
        .collect();
    let cancels: Vec<&Value> = posts
        .iter()
        .filter(|p| p.body["method"] == "notifications/cancelled")
        .map(|p| &p.body["params"]["requestId"])
        .collect();
    assert_eq!(calls, cancels, "each timed-out call is cancelled by its id");
}

#[tokio::test]
async fn a_response_whose_id_changed_type_is_a_protocol_violation() {
    // `"2"` does not answer request `2` (JSON-RPC: the same id); it used to be accepted.
    let (url, _script, task) = start(Mode::StringIds).await;
    let fleet = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&profile("2025-06-18", "2s"));
    let json = fleet.run().await.json;
    task.abort();
    assert_eq!(json["sessions"]["failed"], 2, "{json:#}");
    assert_eq!(json["failures"]["protocol_violation"], 2, "{json:#}");
    assert!(
        crate::support::codes(&json).contains(&"jsonrpc.unknown-id".to_string()),
        "{json:#}"
    );
    let text = json.to_string();
    assert!(
        text.contains("JSON-RPC requires the same id, of the same type"),
        "{json:#}"
    );
}

#[tokio::test]
async fn modern_against_a_legacy_server_is_version_rejected_whatever_code_refuses_discover() {
    // Not keyed on -32601: Python's 1.x SDK answers -32602. Before, this was rpc_error
    // with no hint.
    let (url, _script, task) = start(Mode::Legacy32602).await;
    let mut args = RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            ..Default::default()
        },
        ..RunArgs::default()
    };
    args.overrides.client.era = mcp_fleet::plan::EraMode::from_name("modern");
    let json = FleetRun::new(args)
        .profile("[load]\nclients = 1\nsessions = 2\n")
        .run()
        .await
        .json;
    task.abort();
    assert_eq!(json["failures"]["version_rejected"], 2, "{json:#}");
    assert!(
        json.to_string().contains("use --era auto or legacy"),
        "{json:#}"
    );
}

#[tokio::test]
async fn a_discover_listing_only_legacy_versions_falls_back_to_initialize() {
    // The Go SDK's stateful Streamable HTTP answers server/discover with its legacy
    // versions only; the fleet took that for a modern server and every request after it
    // drew -32022. Probed or forced, the session now falls back to the handshake (§4.3).
    for era in ["auto", "modern"] {
        let (url, script, task) = start(Mode::DiscoverLegacyOnly).await;
        let mut args = RunArgs {
            overrides: mcp_fleet::cli::Overrides {
                target: Some(url),
                ..Default::default()
            },
            ..RunArgs::default()
        };
        args.overrides.client.era = mcp_fleet::plan::EraMode::from_name(era);
        let json = FleetRun::new(args)
            .profile("[load]\nclients = 1\nsessions = 2\n[[scenario]]\nname = \"l\"\nsteps = [{ op = \"tools/list\" }]\n")
            .run()
            .await
            .json;
        task.abort();
        assert_eq!(json["sessions"]["completed"], 2, "{era}: {json:#}");
        assert_eq!(json["failures"], json!({}), "{era}");
        assert_eq!(json["counters"]["era_legacy"], 2, "{era}: {json:#}");
        assert!(json["counters"].get("era_modern").is_none(), "{era}");
        let posts = script.posts.lock().expect("lock").clone();
        let listed = posts.iter().filter(|p| p.body["method"] == "tools/list");
        assert!(listed.clone().count() >= 2, "{era}");
        assert!(
            listed
                .into_iter()
                .all(|p| p.version.as_deref() == Some("2025-11-25")),
            "{era}: tools/list at the negotiated legacy version"
        );
    }
}

#[tokio::test]
async fn a_traced_persona_sends_trace_context_and_names_its_slowest_requests() {
    let (url, script, task) = start(Mode::Chatty).await;
    let text = profile("2025-11-25", "5s").replace(
        "protocol_version = \"2025-11-25\"",
        "protocol_version = \"2025-11-25\"\ntrace = true",
    );
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&text)
    .run()
    .await
    .json;
    task.abort();
    crate::support::check_schema(&json);
    assert_eq!(json["sessions"]["completed"], 2, "{json:#}");
    let posts = script.posts.lock().expect("lock").clone();
    let requests: Vec<&Post> = posts
        .iter()
        .filter(|p| p.body.get("method").is_some() && p.body.get("id").is_some())
        .collect();
    assert!(requests.len() >= 6, "initialize, tools/list, tools/call ×2");
    let mut traces = std::collections::BTreeSet::new();
    let mut spans = std::collections::BTreeSet::new();
    for p in &requests {
        let in_meta = p.body["params"]["_meta"]["traceparent"].as_str();
        assert_eq!(
            p.traceparent.as_deref(),
            in_meta,
            "header = _meta: {:?}",
            p.body
        );
        let tp = in_meta.unwrap_or_else(|| panic!("no traceparent: {:?}", p.body));
        assert_eq!(
            p.body["params"]["_meta"]["tracestate"],
            "mcp-fleet=persona:0"
        );
        traces.insert(tp[3..35].to_string());
        assert!(
            spans.insert(tp[36..52].to_string()),
            "a span per request: {tp}"
        );
    }
    assert_eq!(traces.len(), 2, "one trace per session: {traces:?}");
    // Notifications and answers to the server's requests carry none.
    for p in posts
        .iter()
        .filter(|p| p.body.get("id").is_none() || p.body.get("method").is_none())
    {
        assert_eq!(p.traceparent, None, "{:?}", p.body);
    }
    let slow = &json["slowest_traces"]["tools/call"];
    let slow = slow.as_array().expect("the slowest tools/call named");
    assert_eq!(slow.len(), 2, "both calls kept: {slow:?}");
    assert!(slow[0]["latency_us"].as_u64() >= slow[1]["latency_us"].as_u64());
    for s in slow {
        assert!(
            traces.contains(s["trace_id"].as_str().unwrap_or_default()),
            "{s}"
        );
    }
    assert!(json["slowest_traces"]["initialize"].is_array());
}
