//! The compressed soak: the same traffic against a healthy reference server and one that
//! leaks (`serve --fault leak`: memory and a descriptor kept per session), each in its own
//! process, watched by pid and scraped, with abandoned sessions the healthy server must
//! clean up (`--session-ttl`). The leak verdicts must call the leak on the one and not on
//! the other, and the exit code must say so. The real binary runs both ends, as a user
//! runs them before a release.

use crate::support::{check_schema, fleet_program, Served};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Ten seconds of churn: four clients, a tool call per session, one session in five
/// abandoned without a DELETE.
const SOAK: &str = r#"
name = "compressed-soak"
seed = 11
thresholds = [
  "slope(server.fds) < 300/min",
  "slope(server.rss) < 1GiB/h",
  "max(server.rss) < 2GiB",
]

[load]
clients = 4
duration = "10s"
think = "50ms"
checkpoint = "2s"

[soak]
warmup = "25%"

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
        .args(["--interval", "250ms", "--out"])
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

#[test]
fn a_compressed_soak_calls_the_leak_on_the_leaking_server_only() {
    let healthy = serve(&[]);
    let leaking = serve(&["--fault", "leak"]);

    let (code, stdout, json) = soak(&healthy);
    let sessions = json["sessions"]["completed"].as_u64().unwrap_or(0);
    assert!(sessions > 100, "enough churn to judge: {sessions}");
    assert!(json["counters"]["abandoned"].as_u64().unwrap_or(0) > 0);
    assert_eq!(code, 0, "no leak on the healthy server: {stdout}");
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
    assert!(stdout.contains("soak (steady"), "{stdout}");

    let (code, stdout, json) = soak(&leaking);
    assert_eq!(code, 1, "the leak fails the run: {stdout}");
    let failed: Vec<String> = verdicts(&json)
        .into_iter()
        .filter(|(_, ok)| !ok)
        .map(|(e, _)| e)
        .collect();
    assert!(
        failed.iter().any(|e| e.starts_with("slope(server.fds)"))
            && failed.iter().any(|e| e.starts_with("slope(server.rss)")),
        "{failed:?}"
    );
    // About one descriptor per session: the fit sees the leak and is sure of it.
    let fds = slope(&json, "server.fds");
    assert!(fds["r2"].as_f64().unwrap_or(0.0) > 0.9, "{fds}");
    assert!(fds["ci95_per_s"][0].as_f64().unwrap_or(0.0) > 0.0, "{fds}");
    assert!(stdout.contains("FDs +"), "{stdout}");
}
