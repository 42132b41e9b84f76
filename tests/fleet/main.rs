//! Integration tests: the whole pipeline against real servers on 127.0.0.1:0 and real
//! processes — the built-in reference server over Streamable HTTP and stdio, and an
//! independent server built with the official Rust SDK (rmcp). Assertions are on the
//! numbers in `summary.json`. Every test starts from `support` (a run in its own results
//! folder, the built-in server); the tests here are the core runs, the other modules one
//! area each.

use mcp_fleet::cli::{ClientArgs, RunArgs};
use mcp_fleet::server::ServerOptions;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use support::{builtin_http, builtin_stdio, check_schema, count, phase, Finished, FleetRun};

#[tokio::test]
async fn quickstart_against_the_built_in_server() {
    let Finished { summary, json, dir } = FleetRun::default().run().await;
    check_schema(&json);
    assert_eq!(json["sessions"]["started"], 400);
    assert_eq!(json["sessions"]["completed"], 400);
    assert_eq!(json["sessions"]["failed"], 0);
    assert_eq!(json["failures"], serde_json::json!({}));
    for p in ["connect", "initialize", "initialized", "close", "session"] {
        assert_eq!(count(&json, p), 400, "{p}");
        assert_eq!(phase(&json, p)["errors"], 0, "{p}");
    }
    // Every session lists tools and prompts; resources/list needs 3 pages of 10 for 25
    // resources, and only the browse scenario lists resources.
    assert_eq!(count(&json, "tools/list"), 400);
    assert_eq!(count(&json, "prompts/list"), 400);
    let browse = count(&json, "resources/read");
    assert!(browse > 0 && browse < 400, "both scenarios ran: {browse}");
    assert_eq!(count(&json, "resources/list"), 3 * browse);
    assert_eq!(count(&json, "tools/call"), 2 * browse + (400 - browse));
    // The `fail` tool answers isError: a successful RPC, counted apart from errors.
    assert_eq!(json["tools"]["fail"]["tool_errors"], 400 - browse);
    assert_eq!(json["tools"]["fail"]["errors"], 0);
    // Both personas ran, split by weight (3:1) within reason.
    let ts = json["personas"]["ts-sdk-v1"]["sessions"]
        .as_u64()
        .unwrap_or(0);
    let old = json["personas"]["legacy-2025-03"]["sessions"]
        .as_u64()
        .unwrap_or(0);
    assert_eq!(ts + old, 400);
    assert!(ts > 2 * old, "weights 3:1 gave {ts}:{old}");
    // Latency figures are real and ordered.
    let init = phase(&json, "initialize");
    let (p50, p99, max) = (
        init["p50_us"].as_u64().unwrap_or(0),
        init["p99_us"].as_u64().unwrap_or(0),
        init["max_us"].as_u64().unwrap_or(0),
    );
    assert!(p50 > 0 && p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
    assert_eq!(summary.run.seed, 1, "--seed overrides the profile");
    assert!(dir.path().join("profile.toml").is_file());
    assert!(dir.path().join("summary.txt").is_file());
}

#[tokio::test]
async fn same_seed_same_choices() {
    let twice = || {
        FleetRun::new(RunArgs {
            overrides: mcp_fleet::cli::Overrides {
                clients: Some(1),
                sessions: Some(40),
                seed: Some(7),
                ..Default::default()
            },
            ..RunArgs::default()
        })
    };
    let ja = twice().run().await.json;
    let jb = twice().run().await.json;
    for key in ["ts-sdk-v1", "legacy-2025-03"] {
        assert_eq!(
            ja["personas"][key]["sessions"],
            jb["personas"][key]["sessions"]
        );
    }
    assert_eq!(count(&ja, "resources/read"), count(&jb, "resources/read"));
}

#[tokio::test]
async fn handshake_and_discovery_over_stdio_against_the_built_in_server() {
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(builtin_stdio(&[])),
            clients: Some(4),
            sessions: Some(20),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    check_schema(&json);
    assert_eq!(json["run"]["transport"], "stdio");
    assert_eq!(json["sessions"]["completed"], 20);
    assert_eq!(json["sessions"]["failed"], 0);
    // Target without a profile: handshake and discovery only, no tool calls.
    assert_eq!(count(&json, "tools/call"), 0);
    assert_eq!(count(&json, "tools/list"), 20);
    assert_eq!(count(&json, "resources/list"), 60);
    assert_eq!(count(&json, "prompts/list"), 20);
    assert_eq!(count(&json, "close"), 20);
}

#[tokio::test]
async fn quickstart_scenario_over_stdio() {
    let json = FleetRun::new(RunArgs {
        profile: Some(PathBuf::from("profiles/quickstart.toml")),
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(builtin_stdio(&[])),
            clients: Some(4),
            sessions: Some(24),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["completed"], 24);
    assert_eq!(json["failures"], serde_json::json!({}));
    assert!(count(&json, "tools/call") >= 24);
    assert!(count(&json, "ping") > 0);
}

#[tokio::test]
async fn sse_responses_are_parsed() {
    let server = builtin_http(ServerOptions {
        sse_responses: true,
        ..Default::default()
    })
    .await;
    let json = FleetRun::new(RunArgs {
        profile: Some(PathBuf::from("profiles/quickstart.toml")),
        overrides: mcp_fleet::cli::Overrides {
            target: Some(server.url()),
            clients: Some(4),
            sessions: Some(40),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    server.shutdown().await;
    assert_eq!(json["sessions"]["completed"], 40);
    assert_eq!(json["failures"], serde_json::json!({}));
    assert_eq!(json["malformed_messages"], 0);
}

#[tokio::test]
async fn a_tool_answered_as_an_sse_stream_completes() {
    // The reference server always streams the `progress` tool's answer as SSE (with a
    // priming event), whatever the server-wide response mode.
    let fleet = FleetRun::default().profile(
        r#"
[load]
clients = 2
sessions = 6
[[scenario]]
name = "progress"
steps = [{ op = "tools/call", tool = "progress", arguments = { steps = 4 } }, { op = "ping" }]
"#,
    );
    let json = fleet.run().await.json;
    assert_eq!(json["sessions"]["completed"], 6);
    assert_eq!(count(&json, "tools/call"), 6);
    assert_eq!(count(&json, "ping"), 6);
    assert_eq!(json["failures"], serde_json::json!({}));
}

#[tokio::test]
async fn a_version_the_persona_does_not_accept_fails_the_session() {
    // The server echoes 2025-11-25, which this persona refuses.
    let fleet = FleetRun::default().profile(
        r#"
[load]
clients = 2
sessions = 5
[[persona]]
name = "picky"
protocol_version = "2025-11-25"
accept_versions = ["2024-11-05"]
"#,
    );
    let json = fleet.run().await.json;
    check_schema(&json);
    assert_eq!(json["sessions"]["failed"], 5);
    assert_eq!(json["failures"]["version_rejected"], 5);
    assert_eq!(
        phase(&json, "initialize")["failures"]["version_rejected"],
        5
    );
    // The session never sent notifications/initialized, but it still closed.
    assert_eq!(count(&json, "initialized"), 0);
    assert_eq!(count(&json, "close"), 5);
    let example = json["failure_examples"]["version_rejected"][0]
        .as_str()
        .unwrap_or_default();
    assert!(example.contains("\"2025-11-25\""), "{example}");
}

#[tokio::test]
async fn an_unknown_version_gets_the_servers_counter_offer() {
    let fleet = FleetRun::default().profile(
        r#"
[load]
clients = 1
sessions = 3
[[persona]]
name = "from-the-future"
protocol_version = "2099-01-01"
"#,
    );
    let json = fleet.run().await.json;
    // The server answers 2025-11-25, which the default accept list includes.
    assert_eq!(json["sessions"]["completed"], 3);
}

#[tokio::test]
async fn a_slow_tool_times_out_and_the_run_goes_on() {
    let fleet = FleetRun::default().profile(
        r#"
[target]
timeout = "200ms"
[load]
clients = 2
sessions = 4
[[scenario]]
name = "slow"
steps = [{ op = "tools/call", tool = "sleep", arguments = { ms = 2000 } }]
"#,
    );
    let started = std::time::Instant::now();
    let json = fleet.run().await.json;
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    assert_eq!(json["sessions"]["failed"], 4);
    assert_eq!(json["failures"]["timeout"], 4);
    assert_eq!(phase(&json, "tools/call")["failures"]["timeout"], 4);
}

#[tokio::test]
async fn unknown_tools_end_the_session_only_when_told() {
    // (on_error, pings made, sessions failed): by default the scenario goes on and the
    // session is not failed by the call's error; told to, the error ends it, failed.
    // The tool is not in the server's tools/list: `unknown_tool`, not `rpc_error`.
    for (on_error, pings, failed) in [("continue", 2, 0), ("end-session", 0, 2)] {
        let fleet = FleetRun::default().profile(&format!(
            r#"
[load]
clients = 1
sessions = 2
[[scenario]]
name = "typo"
on_error = "{on_error}"
steps = [{{ op = "tools/call", tool = "no-such-tool" }}, {{ op = "ping" }}]
"#
        ));
        let json = fleet.run().await.json;
        assert_eq!(json["failures"]["unknown_tool"], 2, "{on_error}");
        assert_eq!(count(&json, "ping"), pings, "{on_error}");
        assert_eq!(json["sessions"]["failed"], failed, "{on_error}");
        assert_eq!(json["sessions"]["completed"], 2 - failed, "{on_error}");
    }
}

#[tokio::test]
async fn a_duration_stops_the_run() {
    let fleet = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            clients: Some(2),
            duration: Some("700ms".into()),
            sessions: None,
            ..Default::default()
        },
        ..RunArgs::default()
    });
    let started = std::time::Instant::now();
    let json = fleet.run().await.json;
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(json["run"]["stopped_by"], "duration");
    assert!(json["sessions"]["completed"].as_u64().unwrap_or(0) > 0);
}

#[tokio::test]
async fn an_unreachable_target_is_an_error_before_the_run() {
    // Bind then drop to get a port that nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let e = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(format!("http://127.0.0.1:{port}/mcp")),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .error()
    .await;
    assert!(e.to_string().contains("cannot reach 127.0.0.1:"), "{e}");
}

#[tokio::test]
async fn a_missing_program_is_an_error_before_the_run() {
    let e = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some("/nonexistent/mcp-server --flag".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .error()
    .await;
    assert!(e.to_string().contains("cannot find the program"), "{e}");
}

#[tokio::test]
async fn a_server_that_dies_or_talks_garbage_is_counted_not_fatal() {
    // Exits at once: the handshake sees the transport close.
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some("sh -c 'echo starting >&2; exit 3'".into()),
            clients: Some(2),
            sessions: Some(4),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["failed"], 4);
    assert_eq!(json["failures"]["transport_closed"], 4);
    let example = json["failure_examples"]["transport_closed"][0]
        .as_str()
        .unwrap_or_default();
    assert!(example.contains("starting"), "stderr is kept: {example}");

    // Prints garbage and never answers: malformed lines are counted, and the request
    // they stand in for fails at once as a protocol violation (no timeout to wait for).
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some("sh -c 'echo not-json; echo [1,2]; sleep 30'".into()),
            clients: Some(2),
            sessions: Some(2),
            client: ClientArgs {
                timeout: Some("300ms".into()),
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    assert_eq!(json["failures"]["protocol_violation"], 2, "{json:#}");
    assert_eq!(json["failures"].get("timeout"), None);
    assert!(json["malformed_messages"].as_u64() >= Some(2));
}

/// No server process outlives its session: after a run, none of the children we
/// spawned (marked by a unique argument) is still alive.
#[tokio::test]
async fn stdio_children_are_reaped() {
    let marker = format!("mcp-fleet-test-{}", std::process::id());
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(format!("sh -c 'sleep 30 & exec sleep 30' {marker}")),
            clients: Some(3),
            sessions: Some(3),
            client: ClientArgs {
                timeout: Some("200ms".into()),
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    assert_eq!(json["failures"]["timeout"], 3);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ps = std::process::Command::new("ps")
        .args(["-eo", "pid,args"])
        .stdout(Stdio::piped())
        .output()
        .expect("ps");
    let listing = String::from_utf8_lossy(&ps.stdout);
    let left: Vec<&str> = listing.lines().filter(|l| l.contains(&marker)).collect();
    assert!(left.is_empty(), "processes left behind: {left:#?}");
}

mod abort_on_fail;
mod arguments;
mod auth;
mod busy_machine;
mod ceiling;
mod ceiling_shards;
mod checkpoints;
mod cli;
mod client_faults;
mod conformance;
mod dashboard;
mod eras;
mod extensions;
mod failure_rule;
mod failures;
mod figures;
mod first_run;
mod html_report;
mod inspect;
mod list_results;
mod listen;
mod load;
mod merge;
mod push;
mod readme;
mod record;
mod replay;
mod reports;
mod request_steps;
mod requests;
mod results_folder;
mod rmcp_peer;
mod scripted_server;
mod sdk_matrix;
mod secrets;
mod shards;
mod signals;
mod soak;
mod soak_report;
mod soak_server;
mod step_checks;
mod support;
mod tasks;
mod terminal;
mod traffic;
mod transports;
mod unreachable;
mod watch;
mod wild_mix;
