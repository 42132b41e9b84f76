//! `run --shard I/N --start-at TIME`: two shard processes of one run, started together
//! against one built-in server, add up to the unsharded run exactly — the same sessions,
//! per-phase, per-persona and per-tool counts (read from the two summary.json; `merge`
//! adds them properly) — and a shard that is late for its start fails before starting.

use crate::support::{builtin_http, fleet_program, write_profile};
use mcp_fleet::server::ServerOptions;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Upper bound on one run here (a 2 s wait and a second of sessions).
const LIMIT: Duration = Duration::from_secs(60);

/// `mcp-fleet run PROFILE --target URL --quiet --out DIR EXTRA…`; its summary.json.
async fn run(profile: &Path, url: &str, out: &Path, extra: &[&str]) -> Value {
    let o = tokio::time::timeout(
        LIMIT,
        tokio::process::Command::new(fleet_program())
            .arg("run")
            .arg(profile)
            .args(["--target", url, "--quiet", "--out"])
            .arg(out)
            .args(extra)
            .output(),
    )
    .await
    .expect("the run finished in time")
    .expect("the run started");
    assert!(
        o.status.success(),
        "{extra:?}: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("JSON")
}

/// The figures that must add up: sessions, and counts per phase, persona and tool.
fn counts(json: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for key in ["started", "completed", "failed"] {
        out.insert(
            format!("sessions.{key}"),
            json["sessions"][key].as_u64().unwrap_or(0),
        );
    }
    let mut each = |section: &str, field: &str| {
        if let Some(map) = json[section].as_object() {
            for (name, v) in map {
                out.insert(
                    format!("{section}.{name}.{field}"),
                    v[field].as_u64().unwrap_or(0),
                );
            }
        }
    };
    each("phases", "count");
    each("phases", "errors");
    each("personas", "sessions");
    each("tools", "count");
    each("tools", "tool_errors");
    out.retain(|_, n| *n > 0);
    out
}

fn add(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut sum = a.clone();
    for (k, v) in b {
        *sum.entry(k.clone()).or_default() += v;
    }
    sum
}

/// Two quickstart personas and scenarios: the seed decides who runs what.
const PROFILE: &str = r#"
name = "shards"
[load]
think = "0s"
[target]
timeout = "10s"
[[persona]]
name = "new"
weight = 3
protocol_version = "2025-11-25"
[[persona]]
name = "old"
weight = 1
protocol_version = "2025-03-26"
accept_versions = ["2025-03-26"]
[[scenario]]
name = "browse"
weight = 2
steps = [
  { op = "tools/list" },
  { op = "tools/call", tool = "echo", arguments = { message = "hi" } },
  { op = "resources/read", uri = "fleet://resources/1" },
]
[[scenario]]
name = "fail"
weight = 1
steps = [{ op = "tools/call", tool = "fail" }, { op = "tools/call", tool = "add", arguments = { a = 1, b = 2 } }]
"#;

/// Run `load` (command-line options) unsharded, then as shards 0/2 and 1/2 together with
/// one `--start-at` 2 s ahead; the shards' counts must add up to the unsharded ones.
async fn shards_add_up(load: &[&str]) {
    let server = builtin_http(ServerOptions::default()).await;
    let url = server.url();
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(dir.path(), PROFILE);
    // One moment for both, as a driver gives it: 2 s from now.
    let at =
        humantime::format_rfc3339_millis(SystemTime::now() + Duration::from_secs(2)).to_string();
    let shard = |i: usize| {
        let mut extra: Vec<&str> = load.to_vec();
        extra.extend(["--shard", ["0/2", "1/2"][i], "--start-at", at.as_str()]);
        let (profile, url, out) = (
            profile.clone(),
            url.clone(),
            dir.path().join(format!("s{i}")),
        );
        async move { run(&profile, &url, &out, &extra).await }
    };
    let (a, b) = tokio::join!(shard(0), shard(1));
    let seed = a["run"]["seed"].as_u64().expect("a seed");
    assert_eq!(
        b["run"]["seed"].as_u64(),
        Some(seed),
        "one seed for every shard"
    );
    // The same run in one process, with that seed (derived from the profile when the
    // command line names none).
    let seed_text = seed.to_string();
    let mut one: Vec<&str> = load.to_vec();
    if !load.contains(&"--seed") {
        one.extend(["--seed", seed_text.as_str()]);
    }
    let whole = run(&profile, &url, &dir.path().join("whole"), &one).await;
    let want = counts(&whole);
    assert!(want["sessions.completed"] > 0, "{want:?}");
    let (ca, cb) = (counts(&a), counts(&b));
    assert!(
        ca["sessions.started"] > 0 && cb["sessions.started"] > 0,
        "both ran"
    );
    assert_eq!(add(&ca, &cb), want, "{load:?}: {ca:?} + {cb:?}");
    // They started together: both anchored on one --start-at, so one start time.
    assert_eq!(a["run"]["started_at"], b["run"]["started_at"], "{a:#}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shards_of_a_closed_budget_add_up_to_one_run() {
    // A budget of one session per client: client j's one session, on shard j mod 2.
    shards_add_up(&["--clients", "12", "--sessions", "12", "--seed", "5"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shards_of_an_open_budget_add_up_to_one_run() {
    // Arrivals 0..30 at 60/s; no seed given: derived from the profile on each shard.
    shards_add_up(&["--rate", "60/s", "--sessions", "30"]).await;
}

#[tokio::test]
async fn a_shard_late_for_its_start_or_a_bad_shard_fails_before_starting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(dir.path(), PROFILE);
    for (extra, says) in [
        (
            ["--shard", "1/2", "--start-at", "2020-01-01T00:00:00Z"],
            "shard 1/2 was ready",
        ),
        (["--shard", "2/2", "--start-at", "+5s"], "--shard \"2/2\""),
        (
            ["--shard", "0/2", "--start-at", "soon"],
            "--start-at \"soon\"",
        ),
    ] {
        let out = dir.path().join("out");
        let o = tokio::process::Command::new(fleet_program())
            .arg("run")
            .arg(&profile)
            .args(["--quiet", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .await
            .expect("runs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(says) && err.contains("fix: "),
            "{extra:?}: {err}"
        );
        assert!(!out.join("summary.json").exists(), "no session ran");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_start_one_shard_each_that_add_up_to_one_run() {
    let server = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(dir.path(), PROFILE);
    let out = dir.path().join("together");
    let o = tokio::time::timeout(
        LIMIT,
        tokio::process::Command::new(fleet_program())
            .arg("run")
            .arg(&profile)
            .args(["--target", &server.url(), "--quiet", "--processes", "2"])
            .args(["--rate", "60/s", "--sessions", "30", "--seed", "3", "--out"])
            .arg(&out)
            .output(),
    )
    .await
    .expect("finished in time")
    .expect("started");
    let err = String::from_utf8_lossy(&o.stderr);
    // Each child ran its shard into DIR/shard-i, its stderr in DIR/shard-i.log.
    let read = |i: usize| -> Value {
        let text = std::fs::read_to_string(out.join(format!("shard-{i}/summary.json")))
            .unwrap_or_else(|e| panic!("shard {i}: {e}; {err}"));
        serde_json::from_str(&text).expect("JSON")
    };
    let (a, b) = (read(0), read(1));
    assert!(out.join("shard-0.log").is_file() && out.join("shard-1.log").is_file());
    assert_eq!(a["run"]["started_at"], b["run"]["started_at"], "one start");
    let whole = run(
        &profile,
        &server.url(),
        &dir.path().join("whole"),
        &["--rate", "60/s", "--sessions", "30", "--seed", "3"],
    )
    .await;
    assert_eq!(add(&counts(&a), &counts(&b)), counts(&whole));
    // Then the parent merged the two into DIR: one report with the figures of one
    // process, that says what it is.
    assert!(o.status.success(), "{err}");
    let merged: Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("summary.json")).expect("merged summary.json"),
    )
    .expect("JSON");
    assert_eq!(counts(&merged), counts(&whole));
    assert_eq!(merged["run"]["shards"], 2);
    assert_eq!(a["run"]["shard"], "0/2");
    assert_eq!(merged["run"]["started_at"], a["run"]["started_at"]);
    server.shutdown().await;
}

#[tokio::test]
async fn ctrl_c_while_waiting_for_the_start_stops_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let mut child = tokio::process::Command::new(fleet_program())
        .args(["run", "--quiet", "--start-at", "+60s", "--out"])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    // Ready (the interval files exist once the instruments run), then waiting.
    let ready = async {
        while !out.join("intervals.csv").exists() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    tokio::time::timeout(LIMIT, ready)
        .await
        .expect("ready in time");
    let pid = child.id().and_then(|p| i32::try_from(p).ok()).expect("pid");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("signal");
    // Well before the 60 s start: the wait is cut short, not sat out.
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("stopped during the wait")
        .expect("waits");
    assert_eq!(status.code(), Some(130));
    let text = std::fs::read_to_string(out.join("summary.json")).expect("results written");
    let json: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(json["sessions"]["started"], 0, "no session started");
    assert_eq!(json["run"]["stopped_by"], "interrupted");
}

#[tokio::test]
async fn shards_whose_parent_is_killed_outright_stop_and_write_their_part() {
    let server = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("orphans");
    let mut parent = tokio::process::Command::new(fleet_program())
        .args([
            "run",
            "--target",
            &server.url(),
            "--quiet",
            "--processes",
            "2",
        ])
        .args(["--rate", "20/s", "--duration", "120s", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starts");
    // Both shards running (their interval files exist once their instruments run).
    let running = async {
        while !(0..2).all(|i| out.join(format!("shard-{i}/intervals.csv")).exists()) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_secs(4)).await;
    };
    tokio::time::timeout(LIMIT, running)
        .await
        .expect("running in time");
    parent.kill().await.expect("SIGKILL");
    // Far before their 120 s: each saw its parent gone and stopped as on SIGTERM,
    // writing its part (a new start could merge them).
    let written = async {
        while !(0..2).all(|i| out.join(format!("shard-{i}/summary.json")).exists()) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), written)
        .await
        .expect("the orphaned shards stopped and wrote their parts");
    for i in 0..2 {
        let text =
            std::fs::read_to_string(out.join(format!("shard-{i}/summary.json"))).expect("summary");
        let json: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(json["run"]["stopped_by"], "terminated", "shard {i}");
        assert!(json["sessions"]["started"].as_u64() > Some(0), "shard {i}");
    }
    server.shutdown().await;
}
