//! The fleet against an independent implementation: a server built with the official
//! Rust SDK, rmcp (`peers/rmcp-server`), over stdio and Streamable HTTP (stateful, and
//! stateless). It answers every POST as SSE with a priming event, returns 202 for
//! DELETE and handles requests concurrently — good tests of our client side.

use crate::support::{check_schema, count, fleet_program, FleetRun};
use mcp_fleet::cli::{ClientArgs, RunArgs};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::AsyncBufReadExt;

/// The peer binary, (re)built once per test run so a plain `cargo test` works too and a
/// stale binary is never used (cargo makes this a no-op when it is fresh).
fn peer_binary() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let fleet = PathBuf::from(fleet_program());
            let dir = fleet.parent().expect("target dir").to_path_buf();
            let status = std::process::Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "rmcp-peer"])
                .env("CARGO_TARGET_DIR", dir.parent().expect("target root"))
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building rmcp-peer failed");
            dir.join("rmcp-peer")
        })
        .clone()
}

/// An rmcp HTTP server on 127.0.0.1:0; killed when dropped.
struct HttpPeer {
    child: tokio::process::Child,
    url: String,
}

impl HttpPeer {
    async fn start(extra: &[&str]) -> HttpPeer {
        let mut child = tokio::process::Command::new(peer_binary())
            .args(["--http", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("rmcp-peer starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line())
            .await
            .expect("rmcp-peer announces itself in time")
            .expect("read")
            .expect("a line");
        let url = line
            .strip_prefix("listening on ")
            .expect("listening line")
            .to_string();
        HttpPeer { child, url }
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

const PEER_PROFILE: &str = r#"
[load]
clients = 4
sessions = 40
[[persona]]
name = "ts-like"
weight = 1
protocol_version = "2025-11-25"
[[persona]]
name = "old"
weight = 1
protocol_version = "2025-03-26"
accept_versions = ["2025-03-26"]
[[scenario]]
name = "calls"
steps = [
  { op = "tools/list" },
  { op = "prompts/list" },
  { op = "resources/list" },
  { op = "tools/call", tool = "echo", arguments = { message = "hi" } },
  { op = "tools/call", tool = "add", arguments = { a = 1, b = 2 } },
  { op = "tools/call", tool = "fail" },
  { op = "ping" },
]
"#;

fn assert_clean_run(json: &serde_json::Value, sessions: u64) {
    check_schema(json);
    assert_eq!(json["sessions"]["completed"], sessions, "{json:#}");
    assert_eq!(
        json["sessions"]["failed"], 0,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["failures"], serde_json::json!({}));
    // An independent, correct server: no false conformance findings.
    assert_eq!(
        json["findings"],
        serde_json::json!([]),
        "{:#}",
        json["findings"]
    );
    assert_eq!(count(json, "tools/call"), 3 * sessions);
    assert_eq!(json["tools"]["fail"]["tool_errors"], sessions);
    assert_eq!(count(json, "ping"), sessions);
}

#[tokio::test]
async fn rmcp_over_stdio() {
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(peer_binary().display().to_string() + " --stdio"),
            clients: Some(4),
            sessions: Some(16),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(PEER_PROFILE)
    .run()
    .await
    .json;
    assert_clean_run(&json, 16);
}

#[tokio::test]
async fn rmcp_over_streamable_http() {
    let peer = HttpPeer::start(&[]).await;
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(peer.url.clone()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(PEER_PROFILE)
    .run()
    .await
    .json;
    assert_clean_run(&json, 40);
    assert_eq!(
        count(&json, "close"),
        40,
        "DELETE answered 202 is a clean close"
    );
}

#[tokio::test]
async fn rmcp_stateless_streamable_http() {
    for extra in [
        &["--stateless"][..],
        &["--stateless", "--json-response"][..],
    ] {
        let peer = HttpPeer::start(extra).await;
        let json = FleetRun::new(RunArgs {
            overrides: mcp_fleet::cli::Overrides {
                target: Some(peer.url.clone()),
                ..Default::default()
            },
            ..RunArgs::default()
        })
        .profile(PEER_PROFILE)
        .run()
        .await
        .json;
        assert_clean_run(&json, 40);
    }
}

/// rmcp 3.11 serves the 2026-07-28 era too: modern and auto personas over stdio and
/// Streamable HTTP (stateful and stateless) must complete without falling back.
#[tokio::test]
async fn rmcp_in_the_modern_era() {
    let peers = [
        HttpPeer::start(&[]).await,
        HttpPeer::start(&["--stateless"]).await,
    ];
    for era in ["modern", "auto"] {
        let targets = [
            (None, Some(peer_binary().display().to_string() + " --stdio")),
            (Some(peers[0].url.clone()), None),
            (Some(peers[1].url.clone()), None),
        ];
        for (target, stdio) in targets {
            let json = FleetRun::new(RunArgs {
                overrides: mcp_fleet::cli::Overrides {
                    target: target.clone(),
                    stdio: stdio.clone(),
                    client: ClientArgs {
                        era: mcp_fleet::plan::EraMode::from_name(era),
                        protocol_version: Some("2026-07-28".into()),
                        ..Default::default()
                    },
                    clients: Some(2),
                    sessions: Some(8),
                    ..Default::default()
                },
                ..RunArgs::default()
            })
            .profile(PEER_PROFILE)
            .run()
            .await
            .json;
            check_schema(&json);
            let what = format!("{era} {target:?} {stdio:?}");
            assert_eq!(
                json["sessions"]["completed"], 8,
                "{what}: {:#}",
                json["failure_examples"]
            );
            assert_eq!(json["counters"]["era_modern"], 8, "{what}");
            assert_eq!(count(&json, "initialize"), 0, "{what}: no handshake");
            let phase = if era == "auto" { "probe" } else { "discover" };
            assert_eq!(count(&json, phase), 8, "{what}");
            // `ping` does not exist in the modern era: skipped, not sent.
            assert_eq!(count(&json, "tools/call"), 24, "{what}");
            assert_eq!(json["phases"]["ping"]["skipped"], 8, "{what}");
            assert_eq!(count(&json, "ping"), 0, "{what}");
            assert_eq!(json["eras"]["modern"]["session"]["count"], 8, "{what}");
        }
    }
}

#[tokio::test]
async fn rmcp_answers_a_method_it_lacks_with_an_error_of_that_request_phase_only() {
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(peer_binary().display().to_string() + " --stdio"),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(
        r#"
[load]
clients = 2
sessions = 8
[[scenario]]
name = "s"
steps = [
  { op = "request", method = "logging/setLevel", phase = "set-level", params = { level = "info" } },
  { op = "tools/call", tool = "echo", arguments = { message = "hi" } },
]
"#,
    )
    .run()
    .await
    .json;
    check_schema(&json);
    // rmcp has no logging: -32601, counted in the step's phase; the sessions go on.
    assert_eq!(json["sessions"]["completed"], 8, "{json:#}");
    assert_eq!(json["requests"]["set-level"]["errors"], 8);
    assert_eq!(json["failures"]["rpc_error:-32601"], 8);
    assert_eq!(count(&json, "tools/call"), 8);
}
