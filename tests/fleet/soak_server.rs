//! The reference server's soak switches, measured from outside as a watcher would: a
//! `serve --fault leak` child grows by one descriptor and ~256 KiB of RSS per session
//! (read from /proc/PID), a healthy one does not; and the soak verdicts of a run land in
//! `summary.json`.

use crate::support::{FleetRun, Served};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::plan::Overrides;

/// (RSS bytes, open descriptors) of a process.
fn resources(pid: u32) -> (u64, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS");
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd dir")
        .count();
    (kib * 1024, fds)
}

async fn sessions_against(url: &str, sessions: u64) {
    let args = RunArgs {
        overrides: Overrides {
            target: Some(url.to_string()),
            sessions: Some(sessions),
            clients: Some(4),
            ..Default::default()
        },
        ..Default::default()
    };
    let run = FleetRun::new(args).run().await;
    assert_eq!(run.json["sessions"]["completed"], sessions);
}

#[tokio::test]
async fn a_leaking_server_keeps_a_descriptor_and_memory_per_session() {
    const SESSIONS: u64 = 200;
    let leaky = Served::start(&["--fault", "leak"]);
    let healthy = Served::start(&[]);
    let before = (resources(leaky.pid()), resources(healthy.pid()));
    sessions_against(&leaky.url(), SESSIONS).await;
    sessions_against(&healthy.url(), SESSIONS).await;
    let after = (resources(leaky.pid()), resources(healthy.pid()));
    let leaked_fds = after.0 .1.saturating_sub(before.0 .1) as u64;
    let leaked_rss = after.0 .0.saturating_sub(before.0 .0);
    assert!(
        leaked_fds >= SESSIONS,
        "{leaked_fds} descriptors for {SESSIONS} sessions"
    );
    assert!(
        leaked_rss >= SESSIONS * 256 * 1024 * 9 / 10,
        "{leaked_rss} bytes for {SESSIONS} sessions"
    );
    // The sessions were deleted: a healthy server keeps neither.
    let kept_fds = after.1 .1.saturating_sub(before.1 .1) as u64;
    assert!(
        kept_fds < SESSIONS / 4,
        "a healthy server kept {kept_fds} descriptors"
    );
}

#[tokio::test]
async fn a_run_has_its_steady_part_and_drift_in_the_summary() {
    let run = FleetRun::new(RunArgs {
        overrides: Overrides {
            interval: Some("100ms".into()),
            warmup: Some("1s".into()),
            drift_window: Some("500ms".into()),
            thresholds: vec!["drift(p99(initialize)) < 10000%".into()],
            ..Default::default()
        },
        ..Default::default()
    })
    // The shortest run with soak verdicts: 10 s after the warm-up.
    .profile("[load]\nclients = 2\nduration = \"11s\"\n")
    .run()
    .await;
    let soak = &run.json["soak"];
    let (from, to) = (soak["steady_from_s"].as_f64(), soak["steady_to_s"].as_f64());
    assert_eq!(from, Some(1.0), "{soak}");
    assert!(to.is_some_and(|t| t >= 10.9), "{soak}");
    assert!(soak.get("too_short").is_none(), "{soak}");
    let init = soak["drift"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["phase"] == "initialize"))
        .unwrap_or_else(|| panic!("initialize drift in {soak}"));
    assert!(init["first"]["count"].as_u64() > Some(0), "{init}");
    assert!(init["last"]["p99_us"].as_u64().is_some(), "{init}");
    let t = &run.json["thresholds"][0];
    assert_eq!(t["passed"], true, "{t}");
    // `report DIR` rebuilds the same verdicts from the folder's files.
    let rebuilt = mcp_fleet::report::regenerate(run.dir.path()).expect("rebuilds");
    assert_eq!(rebuilt.soak.steady_from_s, run.summary.soak.steady_from_s);
    assert_eq!(
        serde_json::to_value(&rebuilt.soak.drift).expect("json"),
        serde_json::to_value(&run.summary.soak.drift).expect("json"),
        "drift from intervals.csv + .hlog equals the run's"
    );
    assert!(rebuilt.thresholds[0].passed);
    // A warm-up of the whole run is refused before the run.
    let err = FleetRun::new(RunArgs {
        overrides: Overrides {
            warmup: Some("100%".into()),
            ..Default::default()
        },
        ..Default::default()
    })
    .error()
    .await;
    assert!(err.to_string().contains("soak.warmup"), "{err:#}");
}
