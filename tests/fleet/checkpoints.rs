//! Runs that are killed hard (SIGKILL, the OOM killer, a reboot): checkpoints leave a
//! results folder at most one checkpoint old, its interval files are readable, and
//! `mcp-fleet report DIR` rebuilds the views from it and says the run did not finish.

use crate::support::{check_schema, fleet_command};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn summary(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("summary.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn files_ending(dir: &Path, end: &str) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .expect("results folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(end))
        .collect()
}

#[test]
fn a_run_killed_hard_leaves_its_last_checkpoint_and_report_rebuilds_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("run");
    let profile = tmp.path().join("p.toml");
    std::fs::write(
        &profile,
        "[load]\nclients = 4\nduration = \"20s\"\nthink = \"20ms\"\n",
    )
    .expect("write");
    let mut child = fleet_command()
        .arg("run")
        .arg(&profile)
        .args(["--quiet", "--checkpoint", "1s", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns");
    // Wait for a checkpoint with sessions in it, then a little more: about 4 s in.
    let up = Instant::now();
    while up.elapsed() < Duration::from_secs(15) {
        let seen = summary(&out).is_some_and(|j| j["sessions"]["started"].as_u64() > Some(0));
        if seen && up.elapsed() > Duration::from_secs(4) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();

    let json = summary(&out).expect("a checkpoint's summary.json parses");
    check_schema(&json);
    assert_eq!(json["run"]["complete"], false);
    assert_eq!(json["run"]["stopped_by"], "running");
    assert!(json["run"]["checkpoint_at"].is_string());
    assert!(json["sessions"]["started"].as_u64() > Some(0), "{json}");
    assert!(json["phases"]["initialize"]["count"].as_u64() > Some(0));
    let hlogs = files_ending(&out, ".hlog");
    assert!(!hlogs.is_empty(), "the hlogs are under their final names");
    for log in &hlogs {
        let intervals = mcp_fleet::report::hlog::read_log(log).expect("the hlog parses");
        assert!(!intervals.is_empty(), "{}", log.display());
    }

    std::fs::remove_file(out.join("report.html")).expect("written by a checkpoint");
    let o = fleet_command()
        .arg("report")
        .arg(&out)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("this run did not finish"), "{text}");
    assert!(out.join("report.html").is_file());
    assert!(files_ending(&out, ".tmp").is_empty(), "no temporary left");

    // The checkpoint's raw state merges too (a shard killed hard): not finished either,
    // and its intervals are those the checkpoint's figures hold.
    assert!(out.join("state.json").is_file(), "written by a checkpoint");
    let merged = tmp.path().join("merged");
    let o = fleet_command()
        .arg("merge")
        .arg(&out)
        .arg("--out")
        .arg(&merged)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("this run did not finish"), "{text}");
    let m = summary(&merged).expect("merged summary");
    check_schema(&m);
    assert_eq!(m["run"]["complete"], false);
    // The state is written first: it is the checkpoint's summary's, or a later one's.
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("state.json")).expect("state.json"))
            .expect("JSON");
    assert_eq!(
        m["sessions"]["started"], state["stats"]["sessions"]["started"],
        "the state's figures"
    );
    let started = |j: &serde_json::Value| j["sessions"]["started"].as_u64().unwrap_or(0);
    assert!(
        started(&m) >= started(&json),
        "never older than the summary"
    );
    let rows = mcp_fleet::report::csv::read(&merged.join("intervals.csv")).expect("csv");
    let last = rows.iter().map(|r| r.start_s + r.len_s).fold(0.0, f64::max);
    let duration = m["run"]["duration_s"].as_f64().unwrap_or(0.0);
    assert!(last <= duration + 0.002, "{last} > {duration}");
}

#[test]
fn report_on_a_run_killed_before_its_first_checkpoint_says_what_is_missing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        tmp.path().join("intervals.csv"),
        "time_s,length_s,phase,count,errors,p50_us,p90_us,p99_us,max_us\n",
    )
    .expect("write");
    let o = fleet_command()
        .arg("report")
        .arg(tmp.path())
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no summary.json") && err.contains("--checkpoint"),
        "{err}"
    );
}
