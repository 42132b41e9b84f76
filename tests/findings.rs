//! Findings a default run must not miss, against the built-in server committing the
//! fault (`serve --fault NAME`) and against the healthy server: a forgotten capability
//! probed once per run, what a Streamable HTTP server answers to POSTed notifications
//! and responses, capabilities that change between sessions of one client, and
//! `--era modern` against a server that does not speak it, over every transport.

use mcp_fleet::cli::{ClientArgs, InspectArgs, Overrides, RunArgs};
use mcp_fleet::server::{spawn_http, Eras, Fault, HttpServer, ServerOptions};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Upper bound on any one run here; a hang fails the test instead of CI.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Where a test's server is reached.
#[derive(Clone, Copy, Debug)]
enum Via {
    Http,
    Sse,
    Ws,
    Stdio,
}

const EVERY_VIA: [Via; 4] = [Via::Http, Via::Sse, Via::Ws, Via::Stdio];

async fn server(faults: &[Fault], eras: Eras) -> HttpServer {
    spawn_http(
        "127.0.0.1:0".parse().expect("addr"),
        ServerOptions {
            faults: faults.to_vec(),
            eras,
            ..ServerOptions::default()
        },
    )
    .await
    .expect("server starts")
}

fn args(out: &Path, sessions: u64) -> RunArgs {
    RunArgs {
        out: Some(out.to_path_buf()),
        quiet: true,
        // The built-in server over stdio must be the mcp-fleet binary, not this test binary.
        builtin_program: Some(env!("CARGO_BIN_EXE_mcp-fleet").into()),
        overrides: Overrides {
            seed: Some(1),
            clients: Some(2),
            sessions: Some(sessions),
            client: ClientArgs {
                timeout: Some("2s".into()),
                ..ClientArgs::default()
            },
            ..Overrides::default()
        },
        ..RunArgs::default()
    }
}

/// Point `a` at `server` (or a stdio child with the same faults and `serve_args`).
fn target(a: &mut RunArgs, via: Via, server: &HttpServer, faults: &[Fault], serve_args: &str) {
    match via {
        Via::Http => a.overrides.target = Some(server.url()),
        Via::Sse => {
            a.overrides.target = Some(format!("http://{}/sse", server.addr));
            a.overrides.client.transport = mcp_fleet::protocol::TransportKind::from_name("sse");
        }
        Via::Ws => a.overrides.target = Some(format!("ws://{}/ws", server.addr)),
        Via::Stdio => {
            let mut cmd = format!(
                "{} serve --stdio {serve_args}",
                env!("CARGO_BIN_EXE_mcp-fleet")
            );
            for f in faults {
                cmd.push_str(&format!(" --fault {}", f.name()));
            }
            a.overrides.stdio = Some(cmd);
        }
    }
}

async fn run(args: RunArgs) -> Value {
    let out = args.out.clone().expect("tests always set --out");
    tokio::time::timeout(RUN_LIMIT, mcp_fleet::run(args))
        .await
        .expect("the run finished in time")
        .expect("the run could be done");
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json written");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// Run `sessions` sessions over HTTP against a server with `faults`.
async fn run_http(faults: &[Fault], sessions: u64) -> Value {
    let srv = server(faults, Eras::Both).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut a = args(dir.path(), sessions);
    target(&mut a, Via::Http, &srv, faults, "");
    let json = run(a).await;
    srv.shutdown().await;
    json
}

/// The findings of a summary, code → (count, example).
fn findings(json: &Value) -> Vec<(String, u64, String)> {
    json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_string(),
                f["count"].as_u64().unwrap_or(0),
                f["example"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn codes(json: &Value) -> Vec<String> {
    findings(json).into_iter().map(|(c, _, _)| c).collect()
}

#[tokio::test]
async fn a_default_run_probes_undeclared_tools_once_per_target() {
    let json = run_http(&[Fault::UndeclaredTools], 6).await;
    let found = findings(&json);
    let (_, count, example) = found
        .iter()
        .find(|(c, _, _)| c == "capability.undeclared-but-works")
        .unwrap_or_else(|| panic!("no finding: {found:?}"));
    assert_eq!(*count, 1, "once per run and target, not per session");
    assert!(
        example.contains("tools/list") && example.contains("\"tools\": {}"),
        "{example}"
    );
    assert_eq!(json["sessions"]["failed"], 0, "the probe costs no session");
    // Prompts too, and nothing is probed on a healthy server.
    let json = run_http(&[Fault::UndeclaredPrompts], 4).await;
    assert_eq!(codes(&json), ["capability.undeclared-but-works"]);
    let json = run_http(&[], 4).await;
    assert!(codes(&json).is_empty(), "{:#}", json["findings"]);
}

#[tokio::test]
async fn a_default_run_reports_no_wrong_error_for_undeclared_capabilities() {
    // Only `--probe-undeclared` judges the error an undeclared method answers.
    let json = run_http(&[Fault::UndeclaredResourcesError], 3).await;
    assert!(codes(&json).is_empty(), "{:#}", json["findings"]);
}

#[tokio::test]
async fn posted_notifications_must_get_a_bare_202() {
    let json = run_http(&[Fault::RespondToNotification], 3).await;
    let mut got = codes(&json);
    got.sort();
    assert_eq!(
        got,
        [
            "http.post-status-not-202",
            "jsonrpc.response-to-notification"
        ]
    );
    let json = run_http(&[Fault::NotificationStatus200], 3).await;
    let found = findings(&json);
    assert_eq!(codes(&json), ["http.post-status-not-202"]);
    assert!(found[0].2.contains("HTTP 200"), "{found:?}");
    assert_eq!(json["sessions"]["failed"], 0, "a warning, not a failure");
}

#[tokio::test]
async fn inspect_raw_shows_what_a_posted_notification_got() {
    let srv = server(&[Fault::RespondToNotification], Eras::Both).await;
    let inspect = InspectArgs {
        target: Some(srv.url()),
        raw: true,
        ..InspectArgs::default()
    };
    let i = mcp_fleet::inspect::inspect(&inspect)
        .await
        .expect("inspects");
    let body = i.transcript.iter().any(|e| {
        serde_json::to_value(e).is_ok_and(|v| {
            v["direction"] == "received"
                && v["message"]["id"].is_null()
                && v["message"]["result"] == serde_json::json!({})
        })
    });
    assert!(body, "the body sent back is in the transcript");
    let text = mcp_fleet::inspect::run(inspect)
        .await
        .expect("renders")
        .text;
    assert!(
        text.contains("HTTP 200 to the POSTed notifications/initialized"),
        "{text}"
    );
    srv.shutdown().await;
}

#[tokio::test]
async fn capabilities_that_change_between_sessions_are_a_warning() {
    let json = run_http(&[Fault::FlappingCapabilities], 4).await;
    let found = findings(&json);
    let (_, _, example) = found
        .iter()
        .find(|(c, _, _)| c == "capability.changed-between-sessions")
        .unwrap_or_else(|| panic!("no finding: {found:?}"));
    assert!(example.contains("completions"), "{example}");
    assert_eq!(codes(&json), ["capability.changed-between-sessions"]);
}

#[tokio::test]
async fn modern_era_against_a_legacy_only_server_fails_the_same_everywhere() {
    let srv = server(&[], Eras::Legacy).await;
    for via in EVERY_VIA {
        for era in ["modern", "auto"] {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut a = args(dir.path(), 4);
            a.overrides.client.era = mcp_fleet::plan::EraMode::from_name(era);
            target(&mut a, via, &srv, &[], "--era legacy");
            let json = run(a).await;
            let what = format!("{via:?} {era}");
            if era == "auto" {
                assert_eq!(json["sessions"]["completed"], 4, "{what}: {json:#}");
                continue;
            }
            assert_eq!(json["sessions"]["failed"], 4, "{what}: {json:#}");
            assert_eq!(
                json["failures"],
                serde_json::json!({"version_rejected": 4}),
                "{what}"
            );
        }
    }
    srv.shutdown().await;
}
