//! Every failed session is counted: over every fault the built-in server can commit
//! (`serve --fault`), every transport and response mode, and scripted servers, a run
//! whose sessions failed shows failures in the phases where they happened, in
//! `error_rate`, the terminal summary and the HTML report. And the same wire fault is
//! the same failure kind on every transport, at once rather than after `--timeout`.

use crate::support::{builtin_http, builtin_stdio, check_schema, Finished, FleetRun};
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use mcp_fleet::cli::{ClientArgs, Overrides, RunArgs};
use mcp_fleet::server::{Fault, HttpServer, ServerOptions};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a run reaches the built-in server, and how it answers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Via {
    /// Streamable HTTP, JSON bodies.
    Http,
    /// Streamable HTTP, every answer on an SSE stream.
    HttpSse,
    /// Legacy HTTP+SSE.
    Sse,
    Ws,
    Stdio,
}

const EVERY_VIA: [Via; 5] = [Via::Http, Via::HttpSse, Via::Sse, Via::Ws, Via::Stdio];

/// Discovery, a working call, a failing tool and a missing prompt: enough steps for
/// most faults to show.
const BUSY: &str = r#"
name = "busy"
[[scenario]]
name = "busy"
steps = [
  { op = "tools/list" },
  { op = "resources/list" },
  { op = "prompts/list" },
  { op = "tools/call", tool = "add", arguments = { a = 1, b = 2 } },
  { op = "tools/call", tool = "fail", arguments = {} },
  { op = "ping" },
]
"#;

async fn server(faults: &[Fault], via: Via) -> HttpServer {
    builtin_http(ServerOptions {
        faults: faults.to_vec(),
        sse_responses: via == Via::HttpSse,
        ..ServerOptions::default()
    })
    .await
}

fn args(via: Via, srv: &HttpServer, faults: &[Fault], timeout: &str) -> RunArgs {
    let mut a = RunArgs {
        overrides: Overrides {
            clients: Some(1),
            sessions: Some(2),
            thresholds: vec!["error_rate < 0.0001%".into()],
            client: ClientArgs {
                timeout: Some(timeout.into()),
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    };
    match via {
        Via::Http | Via::HttpSse => a.overrides.target = Some(srv.url()),
        Via::Sse => {
            a.overrides.target = Some(format!("http://{}/sse", srv.addr));
            a.overrides.client.transport = mcp_fleet::protocol::TransportKind::from_name("sse");
        }
        Via::Ws => a.overrides.target = Some(format!("ws://{}/ws", srv.addr)),
        Via::Stdio => a.overrides.stdio = Some(builtin_stdio(faults)),
    }
    a
}

/// The sum of failures over every phase but `session`, and the error rate over them.
fn phase_failures(json: &Value) -> (u64, f64) {
    let (mut errors, mut count) = (0, 0);
    for (name, p) in json["phases"].as_object().into_iter().flatten() {
        if name != "session" && name != "lag" {
            errors += p["errors"].as_u64().unwrap_or(0);
            count += p["count"].as_u64().unwrap_or(0);
        }
    }
    let rate = if count == 0 {
        0.0
    } else {
        errors as f64 / count as f64
    };
    (errors, rate)
}

/// The invariant: a failed session has a failure counted in some phase, and it shows
/// in `failures`, `error_rate` (the threshold), the terminal summary and the report.
fn every_failed_session_is_counted(run: &Finished, what: &str) {
    let json = &run.json;
    check_schema(json);
    let failed = json["sessions"]["failed"].as_u64().unwrap_or(0);
    if failed == 0 {
        return;
    }
    let (errors, rate) = phase_failures(json);
    assert!(
        errors >= failed,
        "{what}: {failed} failed sessions but {errors} phase failures: {:#}",
        json["phases"]
    );
    assert!(rate > 0.0, "{what}: error_rate 0 with failed sessions");
    let by_kind: u64 = json["failures"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, n)| n.as_u64())
        .sum();
    assert_eq!(
        by_kind, errors,
        "{what}: failures by kind {}",
        json["failures"]
    );
    assert_eq!(
        json["thresholds"][0]["passed"], false,
        "{what}: error_rate threshold passed: {}",
        json["thresholds"]
    );
    let text = std::fs::read_to_string(run.dir.path().join("summary.txt")).expect("summary.txt");
    let html = std::fs::read_to_string(run.dir.path().join("report.html")).expect("report.html");
    for kind in json["failures"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        assert!(
            text.contains(kind.as_str()),
            "{what}: {kind} not in summary.txt"
        );
        assert!(
            html.contains(kind.as_str()),
            "{what}: {kind} not in report.html"
        );
    }
}

/// One run of `faults` over `via`: BUSY twice, within the given timeout.
async fn run_faulty(faults: &[Fault], via: Via, timeout: &str) -> Finished {
    let srv = server(faults, via).await;
    FleetRun::new(args(via, &srv, faults, timeout))
        .profile(BUSY)
        .run()
        .await
}

async fn invariant_over_every_fault(via: Via) {
    for fault in Fault::ALL {
        let run = run_faulty(&[fault], via, "2s").await;
        every_failed_session_is_counted(&run, &format!("{} over {via:?}", fault.name()));
    }
}

#[tokio::test]
async fn failures_counted_over_every_fault_http() {
    invariant_over_every_fault(Via::Http).await;
}

#[tokio::test]
async fn failures_counted_over_every_fault_http_sse_responses() {
    invariant_over_every_fault(Via::HttpSse).await;
}

#[tokio::test]
async fn failures_counted_over_every_fault_legacy_sse() {
    invariant_over_every_fault(Via::Sse).await;
}

#[tokio::test]
async fn failures_counted_over_every_fault_ws() {
    invariant_over_every_fault(Via::Ws).await;
}

#[tokio::test]
async fn failures_counted_over_every_fault_stdio() {
    invariant_over_every_fault(Via::Stdio).await;
}

/// A wire fault in an answer: protocol_violation on every transport and response mode,
/// well before the (long) timeout, with its finding.
async fn wire_fault_is_a_protocol_violation(fault: Fault, finding: &str, vias: &[Via]) {
    for &via in vias {
        let t = Instant::now();
        let run = run_faulty(&[fault], via, "20s").await;
        let what = format!("{} over {via:?}", fault.name());
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{what}: waited for the timeout"
        );
        let json = &run.json;
        every_failed_session_is_counted(&run, &what);
        assert_eq!(
            json["sessions"]["failed"], 2,
            "{what}: {:#}",
            json["failures"]
        );
        let failures = json["failures"].as_object().cloned().unwrap_or_default();
        assert!(
            failures.get("protocol_violation").and_then(Value::as_u64) >= Some(2),
            "{what}: {failures:?}"
        );
        assert!(!failures.contains_key("timeout"), "{what}: {failures:?}");
        let codes: Vec<&str> = json["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["code"].as_str())
            .collect();
        assert!(codes.contains(&finding), "{what}: findings {codes:?}");
    }
}

#[tokio::test]
async fn failures_wrong_jsonrpc_version_is_a_protocol_violation_everywhere() {
    wire_fault_is_a_protocol_violation(Fault::WrongJsonrpc, "jsonrpc.wrong-version", &EVERY_VIA)
        .await;
}

#[tokio::test]
async fn failures_result_and_error_fails_at_once_everywhere() {
    wire_fault_is_a_protocol_violation(
        Fault::ResultAndError,
        "jsonrpc.result-and-error",
        &EVERY_VIA,
    )
    .await;
}

#[tokio::test]
async fn failures_unknown_id_is_a_protocol_violation_everywhere() {
    wire_fault_is_a_protocol_violation(Fault::WrongId, "jsonrpc.unknown-id", &EVERY_VIA).await;
}

#[tokio::test]
async fn failures_not_json_is_a_protocol_violation_everywhere() {
    // Over Streamable HTTP the garbage comes as an SSE event (sse_responses).
    wire_fault_is_a_protocol_violation(
        Fault::SseGarbage,
        "sse.invalid-event",
        &[Via::HttpSse, Via::Sse],
    )
    .await;
    wire_fault_is_a_protocol_violation(
        Fault::SseGarbage,
        "jsonrpc.not-json",
        &[Via::Ws, Via::Stdio],
    )
    .await;
}

/// What a scripted Streamable HTTP server does to `tools/list`.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Script {
    /// A new cursor on every page, for ever.
    EndlessPages,
    /// A 200 `application/json` body that is not JSON.
    NotJsonBody,
    /// `"error": "bad"` under the right id.
    ErrorNotObject,
    /// Neither `result` nor `error` under the right id.
    Neither,
}

async fn scripted(script: Script) -> (String, tokio::task::JoinHandle<()>) {
    let pages = Arc::new(AtomicU64::new(0));
    let app = axum::Router::new().route(
        "/mcp",
        post(move |body: Bytes| {
            let pages = pages.clone();
            async move { answer(script, &pages, &body) }
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

fn answer(script: Script, pages: &AtomicU64, body: &[u8]) -> Response {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let json = |v: Value| ([("content-type", "application/json")], v.to_string()).into_response();
    let id = body["id"].clone();
    match body["method"].as_str().unwrap_or_default() {
        "initialize" => json(json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "0"}}})),
        "tools/list" => match script {
            Script::EndlessPages => {
                let n = pages.fetch_add(1, Ordering::Relaxed);
                json(json!({"jsonrpc": "2.0", "id": id,
                    "result": {"tools": [], "nextCursor": format!("page-{n}")}}))
            }
            Script::NotJsonBody => {
                ([("content-type", "application/json")], "<html>oops</html>").into_response()
            }
            Script::ErrorNotObject => json(json!({"jsonrpc": "2.0", "id": id, "error": "bad"})),
            Script::Neither => json(json!({"jsonrpc": "2.0", "id": id})),
        },
        _ if id.is_null() => axum::http::StatusCode::ACCEPTED.into_response(),
        _ => json(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
    }
}

async fn run_scripted(script: Script, timeout: &str) -> Finished {
    let (url, task) = scripted(script).await;
    let run = FleetRun::new(RunArgs {
        overrides: Overrides {
            target: Some(url),
            clients: Some(1),
            sessions: Some(1),
            thresholds: vec!["error_rate < 0.0001%".into()],
            client: ClientArgs {
                timeout: Some(timeout.into()),
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await;
    task.abort();
    run
}

#[tokio::test]
async fn failures_pagination_that_never_ends_fails_tools_list() {
    let run = run_scripted(Script::EndlessPages, "5s").await;
    let json = &run.json;
    every_failed_session_is_counted(&run, "endless pages");
    assert_eq!(json["sessions"]["failed"], 1);
    assert_eq!(
        json["phases"]["tools/list"]["errors"], 1,
        "{:#}",
        json["phases"]
    );
    assert_eq!(json["failures"]["protocol_violation"], 1);
    let example = json["failure_examples"]["protocol_violation"][0]
        .as_str()
        .unwrap_or_default();
    assert!(example.contains("pages"), "{example}");
}

#[tokio::test]
async fn failures_pagination_loop_fails_tools_list() {
    let run = run_faulty(&[Fault::PaginationLoop], Via::Http, "5s").await;
    let json = &run.json;
    every_failed_session_is_counted(&run, "pagination loop");
    assert_eq!(json["sessions"]["failed"], 2);
    assert_eq!(
        json["phases"]["tools/list"]["errors"], 2,
        "{:#}",
        json["phases"]
    );
}

#[tokio::test]
async fn failures_malformed_answers_over_http_fail_at_once() {
    for (script, finding) in [
        (Script::NotJsonBody, "jsonrpc.not-json"),
        (Script::ErrorNotObject, "jsonrpc.bad-error"),
        (Script::Neither, "jsonrpc.result-and-error"),
    ] {
        let t = Instant::now();
        let run = run_scripted(script, "20s").await;
        let json = &run.json;
        let what = format!("{script:?}");
        assert!(t.elapsed() < Duration::from_secs(10), "{what}: waited");
        every_failed_session_is_counted(&run, &what);
        assert_eq!(
            json["failures"]["protocol_violation"], 1,
            "{what}: {json:#}"
        );
        let codes: Vec<&str> = json["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["code"].as_str())
            .collect();
        assert!(codes.contains(&finding), "{what}: {codes:?}");
        // The code follows the content: a JSON body is not an SSE event.
        assert!(!codes.contains(&"sse.invalid-event"), "{what}: {codes:?}");
    }
}

#[tokio::test]
async fn failures_tool_errors_keep_what_the_tool_said() {
    let srv = server(&[], Via::Http).await;
    let run = FleetRun::new(args(Via::Http, &srv, &[], "5s"))
        .profile(BUSY)
        .run()
        .await;
    let json = &run.json;
    check_schema(json);
    assert_eq!(json["sessions"]["failed"], 0, "{json:#}");
    assert_eq!(json["tools"]["fail"]["tool_errors"], 2);
    let said = "The fail tool always fails, on purpose.";
    assert_eq!(json["tool_error_examples"]["fail"], json!([said]));
    assert!(json["tool_error_examples"].get("add").is_none());
    let fail = &json["tool_acceptance"]["fail"];
    assert_eq!(
        (&fail["calls"], &fail["accepted"]),
        (&json!(2), &json!(0)),
        "{json:#}"
    );
    assert_eq!(fail["tool_errors"], 2, "{json:#}");
    let add = &json["tool_acceptance"]["add"];
    assert_eq!(add["accepted"], add["calls"], "{json:#}");
    let text = std::fs::read_to_string(run.dir.path().join("summary.txt")).expect("summary.txt");
    assert!(
        text.contains("tool calls (did the server accept them?)"),
        "{text}"
    );
    assert!(text.contains(said), "{text}");
    let html = std::fs::read_to_string(run.dir.path().join("report.html")).expect("report.html");
    assert!(html.contains(said));
}

#[tokio::test]
async fn a_failed_session_cut_short_in_its_close_is_failed_not_interrupted() {
    // The server ignores stdin EOF and SIGTERM (a wrapper that lingers), so a session's
    // close takes the stdio transport's two waits; the run's grace ends before that. The
    // sessions had already failed (a call timed out): the first failure decides, and
    // close is cleanup. Before, they were counted interrupted beside "timeout 2".
    let command = format!(
        "sh -c 'trap \"\" TERM; {} serve --stdio; sleep 30'",
        crate::support::fleet_program()
    );
    let fleet = FleetRun::default().profile(&format!(
        r#"
[target]
command = {command:?}
timeout = "300ms"
[load]
clients = 2
sessions = 2
duration = "1s"
grace = "500ms"
[[scenario]]
name = "slow"
steps = [{{ op = "tools/call", tool = "sleep", arguments = {{ ms = 5000 }} }}]
"#
    ));
    let json = fleet.run().await.json;
    check_schema(&json);
    let sessions = &json["sessions"];
    assert_eq!(sessions["started"], 2, "{json:#}");
    assert_eq!(sessions["failed"], 2, "{json:#}");
    assert_eq!(sessions["interrupted"], 0, "{json:#}");
    assert_eq!(json["failures"]["timeout"], 2, "{json:#}");
    assert_eq!(
        crate::support::phase(&json, "session")["failures"]["timeout"],
        2,
        "{json:#}"
    );
}

#[tokio::test]
async fn a_websocket_url_to_a_non_websocket_endpoint_fails_its_sessions() {
    // The server answered the upgrade (405 on /mcp): the sessions reached it and failed.
    // Before, they were "unreachable", and the summary said "0 failed" beside "most
    // sessions failed: 11 of 11".
    let srv = builtin_http(ServerOptions::default()).await;
    let run = FleetRun::new(RunArgs {
        overrides: Overrides {
            target: Some(format!("ws://{}/mcp", srv.addr)),
            sessions: Some(6),
            ..Overrides::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await;
    let json = &run.json;
    assert_eq!(json["sessions"]["failed"], 6, "{json:#}");
    assert_eq!(json["sessions"]["unreachable"], 0, "{json:#}");
    assert_eq!(json["failures"]["http_status:405"], 6, "{json:#}");
    assert_eq!(json["diagnosis"]["cause"], "wrong_transport", "{json:#}");
}
