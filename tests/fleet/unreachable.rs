//! A dead target is not a benchmark: a server killed mid-run (or a stdio program gone)
//! shows as `unreachable` sessions, apart from the ones that reached it, which alone make
//! sessions per second; clients back off instead of reconnecting in a tight loop;
//! `error_rate(sessions)` still fails; `--abort-on-unreachable` stops the run with exit 2
//! after writing the results. And a load that can start no session is refused.

use crate::support::{builtin_http, builtin_stdio, check_schema, count, fleet_command, FleetRun};
use mcp_fleet::cli::{Overrides, RunArgs};
use mcp_fleet::server::ServerOptions;
use serde_json::Value;
use std::time::Duration;

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// Every started session ended one way, and the throughput figures count only the ones
/// that reached the server.
fn check_session_counts(json: &Value) {
    let s = &json["sessions"];
    let (completed, failed) = (n(&s["completed"]), n(&s["failed"]));
    let ended = completed + failed + n(&s["interrupted"]) + n(&s["unreachable"]);
    assert_eq!(n(&s["started"]), ended, "{s}");
    // No `session` sample for a session that never reached the server.
    assert_eq!(count(json, "session"), completed + failed, "{s}");
    let secs = json["run"]["duration_s"].as_f64().unwrap_or(0.0);
    let rate = s["rate_per_s"].as_f64().unwrap_or(-1.0);
    let reached = (completed + failed) as f64 / secs;
    assert!((rate - reached).abs() < 0.01, "{rate} vs {reached}");
}

#[tokio::test]
async fn a_killed_server_is_counted_as_unreachable_and_clients_back_off() {
    let server = builtin_http(ServerOptions::default()).await;
    let run = FleetRun::new(RunArgs {
        overrides: Overrides {
            target: Some(server.url()),
            clients: Some(2),
            duration: Some("4s".into()),
            think: Some("20ms".into()),
            reconnect_backoff: Some("200ms..1s".into()),
            thresholds: vec!["error_rate(sessions) < 1%".into()],
            ..Default::default()
        },
        ..RunArgs::default()
    });
    let kill = async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        server.shutdown().await;
    };
    let (finished, ()) = tokio::join!(run.run(), kill);
    let json = &finished.json;
    check_schema(json);
    check_session_counts(json);
    let s = &json["sessions"];
    let unreachable = n(&s["unreachable"]);
    assert!(n(&s["completed"]) > 0, "{s}");
    assert!(unreachable > 0, "{s}");
    // 2 clients over about 2.5 s of a dead target (a little more if the run started
    // late), waiting 100–200, 200–400, 400–800 ms, then 0.5–1 s: 7 tries each, 10 even
    // with 3 s of it. Without the backoff: thousands.
    assert!(unreachable <= 20, "{s}");
    // Each one is a failed connect, counted where it happened. (A session that had
    // connected and then needed a new connection for a request fails later, as a
    // session that reached the server.)
    assert_eq!(n(&json["phases"]["connect"]["errors"]), unreachable);
    assert!(n(&json["failures"]["connect_failed"]) >= unreachable);
    // A dead target never passes an error-rate threshold.
    assert_eq!(
        json["thresholds"][0]["passed"], false,
        "{}",
        json["thresholds"]
    );
    let text = mcp_fleet::report::text::render(&finished.summary);
    assert!(
        text.contains(&format!(
            "unreachable: {unreachable} sessions never reached"
        )),
        "{text}"
    );
}

#[tokio::test]
async fn a_stdio_program_that_disappears_is_unreachable_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("server.sh");
    std::fs::write(&script, format!("#!/bin/sh\nexec {}\n", builtin_stdio(&[])))
        .expect("write script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let run = FleetRun::new(RunArgs {
        overrides: Overrides {
            stdio: Some(script.display().to_string()),
            clients: Some(2),
            duration: Some("3s".into()),
            think: Some("20ms".into()),
            reconnect_backoff: Some("100ms..500ms".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    });
    let remove = async {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        std::fs::remove_file(&script).expect("remove the program");
    };
    let (finished, ()) = tokio::join!(run.run(), remove);
    let json = &finished.json;
    check_session_counts(json);
    let unreachable = n(&json["sessions"]["unreachable"]);
    // About 2 s of it, waiting 50–100, 100–200, then 250–500 ms: 10 tries per client,
    // 12 with 2.5 s. Spawning a missing program fails in microseconds: without the
    // backoff, thousands.
    assert!(
        unreachable > 0 && unreachable <= 2 * 14,
        "{}",
        json["sessions"]
    );
    assert_eq!(n(&json["failures"]["spawn_failed"]), unreachable);
}

#[tokio::test]
async fn abort_on_unreachable_stops_the_run_with_exit_2_and_results_written() {
    let server = builtin_http(ServerOptions::default()).await;
    let out = tempfile::tempdir().expect("tempdir");
    let mut child = tokio::process::Command::new(crate::support::fleet_program())
        .args([
            "run",
            "--target",
            &server.url(),
            "--clients",
            "2",
            "--think",
            "20ms",
        ])
        .args(["--duration", "60s", "--abort-on-unreachable", "1s"])
        .args(["--reconnect-backoff", "100ms..200ms", "--quiet", "--out"])
        .arg(out.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawns");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.shutdown().await;
    let output = tokio::time::timeout(Duration::from_secs(30), async {
        let mut stderr = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut e, &mut stderr).await;
        }
        (child.wait().await.expect("waits"), stderr)
    })
    .await
    .expect("the run gave up well before its 60 s");
    let (status, stderr) = output;
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("stayed unreachable"), "{stderr}");
    let text = std::fs::read_to_string(out.path().join("summary.json")).expect("results written");
    let json: Value = serde_json::from_str(&text).expect("json");
    check_schema(&json);
    assert_eq!(json["run"]["stopped_by"], "unreachable");
    assert!(n(&json["sessions"]["completed"]) > 0);
    assert!(n(&json["sessions"]["unreachable"]) > 0);
    assert!(json["run"]["duration_s"].as_f64().unwrap_or(60.0) < 30.0);
    assert!(out.path().join("report.html").is_file());
}

#[test]
fn a_load_that_can_start_no_session_exits_2_naming_the_key() {
    for args in [
        vec!["--ramp", "0:1s"],
        vec!["--ramp", "0:1s,0:2s", "--duration", "1s"],
    ] {
        let out = fleet_command()
            .arg("run")
            .args(&args)
            .arg("--quiet")
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("`load.stages`") && stderr.contains("nothing would run"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("fix: "), "{stderr}");
    }
}
