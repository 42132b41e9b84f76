//! The compressed soak: the same traffic against a reference server that reclaims the
//! sessions clients abandon (`--session-ttl 1s`: its memory climbs while the first
//! abandoned sessions wait out their TTL, then levels off) and one that leaks (`serve
//! --fault leak`: memory and a descriptor kept per session), each in its own process,
//! watched by pid and scraped. The verdicts must call the leak, per session, on the one
//! and not on the other, and the exit code must say so; and a run too short to judge
//! has no slopes. The real binary runs both ends, as a user runs them before a release.

use crate::support::{check_schema, fleet_program, Served};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Sixteen seconds of churn: four clients, a tool call per session, one session in five
/// abandoned without a DELETE. The gates are per session, so they do not scale with the
/// load: the leak keeps 256 KiB and a descriptor per session, the healthy server none.
const SOAK: &str = r#"
name = "compressed-soak"
seed = 11
thresholds = [
  "slope(server.rss, per=session) < 16KiB",
  "slope(server.fds, per=session) < 0.1",
  "slope(server.fds) < 300/min",
  "max(server.rss) < 2GiB",
]

[load]
clients = 4
duration = "16s"
think = "50ms"
checkpoint = "2s"

[soak]
warmup = "2s"

[watch]
series = ["mcp_active_sessions"]

[[persona]]
name = "host"
abandon = 0.2

[[scenario]]
name = "call"
steps = [{ op = "tools/list" }, { op = "tools/call", tool = "echo", arguments = { message = "hi" } }]
"#;

fn serve(args: &[&str]) -> Served {
    let mut all = vec!["--session-ttl", "1s"];
    all.extend_from_slice(args);
    Served::start(&all)
}

/// Run the soak against `server`; the exit code, stdout and `summary.json`.
fn soak(server: &Served) -> (i32, String, Value) {
    soak_for(server, None)
}

/// [`soak`], with `--duration` when given.
fn soak_for(server: &Served, duration: Option<&str>) -> (i32, String, Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("soak.toml");
    std::fs::write(&profile, SOAK).expect("profile");
    let out = dir.path().join("results");
    let started = Instant::now();
    let run = Command::new(fleet_program())
        .arg("run")
        .arg(&profile)
        .args(["--target", &server.url()])
        .args(["--server-pid", &server.pid().to_string()])
        .args([
            "--server-metrics",
            &format!("http://{}/metrics", server.addr),
        ])
        .args(["--interval", "250ms"])
        .args(duration.map(|d| ["--duration", d]).into_iter().flatten())
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("runs");
    assert!(started.elapsed() < Duration::from_secs(60), "bounded");
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary");
    let json: Value = serde_json::from_str(&text).expect("json");
    check_schema(&json);
    assert!(out.join("resources.csv").is_file());
    (
        run.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&run.stdout).into_owned(),
        json,
    )
}

fn slope<'a>(json: &'a Value, series: &str) -> &'a Value {
    json["soak"]["slopes"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["series"] == series))
        .unwrap_or_else(|| panic!("no slope of {series}: {:#}", json["soak"]))
}

fn verdicts(json: &Value) -> Vec<(String, bool)> {
    json["thresholds"]
        .as_array()
        .expect("thresholds")
        .iter()
        .map(|t| {
            (
                t["expression"].as_str().unwrap_or_default().to_string(),
                t["passed"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

fn peak(json: &Value, series: &str) -> f64 {
    json["resources"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == series))
        .and_then(|s| s["points"].as_array())
        .map(|ps| ps.iter().filter_map(|p| p[1].as_f64()).fold(0.0, f64::max))
        .unwrap_or_else(|| panic!("no series {series}"))
}

fn trend<'a>(json: &'a Value, series: &str) -> &'a str {
    slope(json, series)["trend"].as_str().unwrap_or("none")
}

/// The figure per session of a series' slope: (value, low, high).
fn per_session(json: &Value, series: &str) -> (f64, f64, f64) {
    let s = slope(json, series);
    let p = s["per"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["per"] == "session"))
        .unwrap_or_else(|| panic!("no per-session figure of {series}: {s:#}"));
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    (f(&p["value"]), f(&p["ci95"][0]), f(&p["ci95"][1]))
}

#[test]
fn a_compressed_soak_calls_the_leak_on_the_leaking_server_only() {
    let healthy = serve(&[]);
    let leaking = serve(&["--fault", "leak"]);
    // Both at once: the same machine, the same moment.
    let ((code, stdout, json), (leak_code, leak_stdout, leak_json)) = std::thread::scope(|s| {
        let a = s.spawn(|| soak(&healthy));
        let b = s.spawn(|| soak(&leaking));
        (
            a.join().expect("healthy run"),
            b.join().expect("leaking run"),
        )
    });

    let sessions = json["sessions"]["completed"].as_u64().unwrap_or(0);
    assert!(sessions > 100, "enough churn to judge: {sessions}");
    assert!(json["counters"]["abandoned"].as_u64().unwrap_or(0) > 0);
    assert_eq!(code, 0, "no leak on the reclaiming server: {stdout}");
    assert!(
        verdicts(&json).iter().all(|(_, ok)| *ok),
        "{:?}",
        verdicts(&json)
    );
    // Abandoned sessions were swept by the TTL instead of piling up in the server.
    let live = peak(&json, "scrape.mcp_active_sessions");
    assert!(
        live < sessions as f64 / 4.0,
        "{live} of {sessions} live at once"
    );
    for series in ["server.rss", "server.fds"] {
        let t = trend(&json, series);
        assert!(
            t == "warm_up" || t == "no_trend",
            "{series} of the reclaiming server is {t}: {:#}",
            slope(&json, series)
        );
    }
    let (rss, _, high) = per_session(&json, "server.rss");
    assert!(
        rss.abs() < 16.0 * 1024.0 && high < 64.0 * 1024.0,
        "{rss} … {high} B per session"
    );
    assert!(stdout.contains("soak (steady"), "{stdout}");

    assert_eq!(leak_code, 1, "the leak fails the run: {leak_stdout}");
    let failed: Vec<String> = verdicts(&leak_json)
        .into_iter()
        .filter(|(_, ok)| !ok)
        .map(|(e, _)| e)
        .collect();
    assert!(
        failed
            .iter()
            .any(|e| e.starts_with("slope(server.rss, per=session)"))
            && failed
                .iter()
                .any(|e| e.starts_with("slope(server.fds, per=session)")),
        "{failed:?}"
    );
    assert_eq!(trend(&leak_json, "server.rss"), "leak");
    assert_eq!(trend(&leak_json, "server.fds"), "leak");
    // 256 KiB and one descriptor per session, within the interval the fit gives.
    let (rss, low, high) = per_session(&leak_json, "server.rss");
    assert!(
        low > 128.0 * 1024.0 && high > 200.0 * 1024.0,
        "{rss} ({low} … {high}) B per session"
    );
    let (fds, low, _) = per_session(&leak_json, "server.fds");
    assert!(
        low > 0.5 && fds < 1.5,
        "{fds} (from {low}) descriptors per session"
    );
    assert!(leak_stdout.contains("FDs: leak — +"), "{leak_stdout}");
    assert!(leak_stdout.contains("per session"), "{leak_stdout}");
}

#[test]
fn a_run_too_short_to_judge_has_no_slopes_and_says_how_long_it_needs() {
    let leaking = serve(&["--fault", "leak"]);
    let (code, stdout, json) = soak_for(&leaking, Some("4s"));
    let why = json["soak"]["too_short"].as_str().unwrap_or_default();
    assert!(why.contains("run 12s or longer"), "{:#}", json["soak"]);
    assert_eq!(json["soak"]["slopes"], Value::Array(Vec::new()));
    assert_eq!(json["soak"]["drift"], Value::Array(Vec::new()));
    // The slope gates fail with the reason (no data is no pass), the others hold.
    assert_eq!(code, 1, "{stdout}");
    for (expression, passed) in verdicts(&json) {
        assert_eq!(passed, !expression.starts_with("slope("), "{expression}");
    }
    assert!(
        stdout.contains("soak: no verdicts: the steady part was"),
        "{stdout}"
    );
    assert!(!stdout.contains("soak (steady"), "{stdout}");
}

#[test]
fn the_shipped_soak_profile_runs_short_with_its_storm_scaled_into_the_run() {
    // profiles/soak.toml is an hour; its storm and windows are shares of the run, so
    // `--duration 6s` puts the storm at 42 % of six seconds instead of refusing the run.
    let server = serve(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("results");
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/soak.toml");
    let run = Command::new(fleet_program())
        .args(["run", profile, "--target", &server.url()])
        .args(["--server-pid", &server.pid().to_string()])
        .args(["--duration", "6s", "--clients", "12", "--quiet"])
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    // Six seconds are too short for slopes: those gates fail (1), the run is not refused (2).
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary");
    let json: Value = serde_json::from_str(&text).expect("json");
    let storms = json["soak"]["storms"].as_array().expect("storms");
    assert_eq!(storms.len(), 1, "{:#}", json["soak"]);
    let at = storms[0]["at_s"].as_f64().expect("at_s");
    assert!((2.0..3.5).contains(&at), "the storm at 42 % of 6 s: {at}");
    assert!(json["sessions"]["completed"].as_u64() > Some(0));
}
