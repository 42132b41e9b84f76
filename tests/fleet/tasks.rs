//! Task-augmented tool calls (protocol 2025-11-25) against the built-in server with
//! `serve --tasks`, over Streamable HTTP, stdio and WebSocket: the task phases and their counts,
//! the cancelled share, each task fault and its finding, and a persona that never uses
//! tasks refused with -32601 by a tool that requires one.

use crate::support::{builtin_http, builtin_stdio, check_schema, codes, count, counter, FleetRun};
use mcp_fleet::cli::{Overrides, RunArgs};
use mcp_fleet::server::{Fault, HttpServer, ServerOptions};
use serde_json::Value;

const PROFILE: &str = r#"
[load]
clients = 2
sessions = 10
[[persona]]
name = "tasker"
protocol_version = "2025-11-25"
tasks = { call = "allowed", cancel = 0.3, ttl = "5s", poll_interval = "20ms" }
[[scenario]]
name = "reports"
steps = [
  { op = "tools/call", tool = "slow_report", arguments = { ms = 200, fail = false } },
  { op = "tools/call", tool = "slow_report", arguments = { ms = 40, fail = false } },
  { op = "tools/call", tool = "quick_report", arguments = { ms = 10, fail = false } },
]
"#;

/// Where the run goes: the built-in server over HTTP (kept alive by the caller) or a
/// stdio command line.
enum Via<'a> {
    Http(&'a HttpServer),
    Ws(&'a HttpServer),
    Stdio(String),
}

async fn run(text: &str, via: Via<'_>) -> Value {
    let overrides = match via {
        Via::Http(s) => Overrides {
            target: Some(format!("http://{}/mcp", s.addr)),
            ..Default::default()
        },
        Via::Ws(s) => Overrides {
            target: Some(format!("ws://{}/ws", s.addr)),
            ..Default::default()
        },
        Via::Stdio(cmd) => Overrides {
            stdio: Some(cmd),
            ..Default::default()
        },
    };
    let json = FleetRun::new(RunArgs {
        overrides,
        ..RunArgs::default()
    })
    .profile(text)
    .run()
    .await
    .json;
    check_schema(&json);
    json
}

fn stdio(faults: &[Fault]) -> String {
    format!("{} --tasks", builtin_stdio(faults))
}

async fn http(faults: &[Fault]) -> HttpServer {
    builtin_http(ServerOptions {
        tasks: true,
        faults: faults.to_vec(),
        ..Default::default()
    })
    .await
}

/// Every task is created by its `tools/call`, then cancelled or fetched.
fn assert_consistent(json: &Value, via: &str) {
    assert_eq!(
        json["sessions"]["completed"], 10,
        "{via}: {:#}",
        json["failure_examples"]
    );
    assert_eq!(json["failures"], serde_json::json!({}), "{via}");
    assert_eq!(count(json, "tools/call"), 30, "{via}");
    assert_eq!(count(json, "task"), 30, "{via}: every call was a task");
    let cancelled = counter(json, "tasks_cancelled");
    assert_eq!(count(json, "tasks/cancel"), cancelled, "{via}");
    assert_eq!(
        count(json, "tasks/result"),
        30 - cancelled,
        "{via}: creates = results + cancelled"
    );
    // 10 checked tasks are never cancelled; 30 % of the other 20 is 6.
    assert!(
        (1..=14).contains(&cancelled),
        "{via}: {cancelled} cancelled"
    );
    assert!(
        count(json, "tasks/get") >= 30,
        "{via}: each task polled at least once"
    );
    let tasks: Vec<String> = codes(json)
        .into_iter()
        .filter(|c| c.starts_with("tasks."))
        .collect();
    assert!(
        tasks.is_empty(),
        "{via}: a correct server has no task findings: {tasks:?}"
    );
}

#[tokio::test]
async fn tasks_are_created_polled_cancelled_and_fetched_over_http_and_stdio() {
    let server = http(&[]).await;
    let json = run(PROFILE, Via::Http(&server)).await;
    assert_consistent(&json, "http");
    let json = run(PROFILE, Via::Stdio(stdio(&[]))).await;
    assert_consistent(&json, "stdio");
    // stdio and WebSocket carry the server's status notifications: one per task at least.
    let notified = |json: &Value| counter(json, "task_status_notifications");
    assert!(notified(&json) >= 30, "{:#}", json["counters"]);
    let json = run(PROFILE, Via::Ws(&server)).await;
    assert_consistent(&json, "ws");
    assert!(notified(&json) >= 30, "{:#}", json["counters"]);
}

#[tokio::test]
async fn each_task_fault_is_its_finding() {
    // A short ttl for the stuck tasks, so that they are given up in under a second.
    for (fault, code, ttl) in [
        (Fault::TaskStuck, "tasks.stuck-working", "300ms"),
        (Fault::TaskStatusRegress, "tasks.status-out-of-order", "5s"),
        (
            Fault::TaskEarlyResult,
            "tasks.result-before-completion",
            "5s",
        ),
    ] {
        let quick = PROFILE
            .replace("sessions = 10", "sessions = 2")
            .replace("ttl = \"5s\"", &format!("ttl = {ttl:?}"))
            .replace("cancel = 0.3", "cancel = 0.0")
            .replace("[load]", "[target]\ntimeout = \"2s\"\n[load]");
        let server = http(&[fault]).await;
        let json = run(&quick, Via::Http(&server)).await;
        assert!(
            codes(&json).contains(&code.to_string()),
            "{fault:?}: {:?}",
            codes(&json)
        );
        let json = run(&quick, Via::Stdio(builtin_stdio(&[fault]))).await;
        assert!(
            codes(&json).contains(&code.to_string()),
            "stdio {fault:?}: {:?}",
            codes(&json)
        );
        if fault == Fault::TaskStuck {
            assert_eq!(
                json["phases"]["task"]["failures"]["timeout"], 6,
                "every task gave up"
            );
        }
    }
}

#[tokio::test]
async fn a_persona_that_never_uses_tasks_is_refused_by_a_tool_that_requires_one() {
    let server = http(&[]).await;
    let never = PROFILE
        .replace("call = \"allowed\"", "call = \"never\"")
        .replace("sessions = 10", "sessions = 2");
    let json = run(&never, Via::Http(&server)).await;
    let call = &json["phases"]["tools/call"];
    assert_eq!(call["failures"]["rpc_error:-32601"], 4, "{call:#}");
    assert_eq!(count(&json, "task"), 0, "no task was created");
    assert_eq!(call["count"], 6, "quick_report ran directly");
    assert!(
        !codes(&json).contains(&"capability.declared-but-missing".to_string()),
        "the refusal is right, not a missing capability: {:?}",
        codes(&json)
    );
}

#[tokio::test]
async fn a_task_longer_than_the_request_timeout_is_polled_to_its_end() {
    // The checked task's wait on tasks/result times out (300 ms < 700 ms): it is not a
    // failure, the task is polled on until it completes.
    let long = PROFILE
        .replace("sessions = 10", "sessions = 2")
        .replace("cancel = 0.3", "cancel = 0.0")
        .replace("ms = 200,", "ms = 700,")
        .replace("[load]", "[target]\ntimeout = \"300ms\"\n[load]");
    let json = run(&long, Via::Stdio(stdio(&[]))).await;
    assert_eq!(
        json["failures"],
        serde_json::json!({}),
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(count(&json, "tasks/result"), 6);
    assert_eq!(count(&json, "task"), 6);
    // The task spans creation → completed: the 700 ms tasks are at least that long.
    let min = json["phases"]["task"]["min_us"].as_u64().unwrap_or(0);
    assert!(min >= 40_000, "{min} µs");
    let max = json["phases"]["task"]["max_us"].as_u64().unwrap_or(0);
    assert!(max >= 700_000, "{max} µs");
    assert!(
        count(&json, "tasks/get") >= 2 * 8,
        "polled on after the wait: {}",
        count(&json, "tasks/get")
    );
}
