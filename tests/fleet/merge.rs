//! `mcp-fleet merge` as a user runs it: a real run's results folder (with its
//! `state.json`) made into the shards of a run by hand (its state says `I/N`), since a
//! real `run --shard` splits the work only once part A of issue 12 is in. Folders that
//! are not one whole run exit 2 and say which shard is wrong; thresholds are evaluated
//! on the merged figures (exit 1); the merged folder is a results folder like any other.
//! (The exactness of the merged figures is tested on the collector: `merge::tests`.)

use crate::support::{check_schema, fleet_command, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::plan::Overrides;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A short quickstart run with `seed` and `thresholds`; its results folder.
async fn a_run(seed: u64, thresholds: &[&str]) -> tempfile::TempDir {
    let args = RunArgs {
        overrides: Overrides {
            seed: Some(seed),
            sessions: Some(20),
            thresholds: thresholds.iter().map(|t| t.to_string()).collect(),
            ..Overrides::default()
        },
        ..RunArgs::default()
    };
    FleetRun::new(args).run().await.dir
}

/// `from` copied to `to`, its state saying it is shard `index` of `count`.
fn as_shard(from: &Path, to: &Path, index: u32, count: u32) -> PathBuf {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("results folder").flatten() {
        if entry.path().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
        }
    }
    let path = to.join("state.json");
    let mut state: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("state.json")).expect("JSON");
    state["shard"] = serde_json::json!({ "index": index, "count": count });
    state["shards"] = count.into();
    std::fs::write(&path, state.to_string()).expect("write");
    to.to_path_buf()
}

fn merge(dirs: &[&Path], out: &Path) -> Output {
    fleet_command()
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .output()
        .expect("mcp-fleet merge runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[tokio::test]
async fn a_missing_a_duplicate_or_a_foreign_shard_is_exit_2_and_named() {
    let run = a_run(1, &[]).await;
    let other = a_run(2, &[]).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let s0 = as_shard(run.path(), &tmp.path().join("s0"), 0, 3);
    let s1 = as_shard(run.path(), &tmp.path().join("s1"), 1, 3);
    let s2 = as_shard(run.path(), &tmp.path().join("s2"), 2, 3);
    let foreign = as_shard(other.path(), &tmp.path().join("x2"), 2, 3);
    let out = tmp.path().join("merged");

    let o = merge(&[&s0, &s2], &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("shard 1/3 is missing"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("fix:"), "{}", stderr(&o));

    let o = merge(&[&s0, &s1, &s1, &s2], &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let twice = format!(
        "shard 1/3 is given twice: {}, {}",
        s1.display(),
        s1.display()
    );
    assert!(stderr(&o).contains(&twice), "{}", stderr(&o));

    let o = merge(&[&s0, &s1, &foreign], &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{} is a shard of another run", foreign.display())),
        "{}",
        stderr(&o)
    );

    let o = merge(&[&s0, &s1, tmp.path()], &out);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("has no state.json"), "{}", stderr(&o));
    assert!(!out.join("summary.json").exists(), "nothing merged");
}

#[tokio::test]
async fn thresholds_fail_on_the_merged_figures_and_the_merged_folder_is_a_report() {
    // 20 sessions a shard pass `< 30`; the two shards' 40 do not.
    let run = a_run(1, &["count(sessions) < 30"]).await;
    let json = |d: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).expect("summary"))
            .expect("JSON")
    };
    assert_eq!(json(run.path())["sessions"]["started"], 20);
    let tmp = tempfile::tempdir().expect("tempdir");
    let s0 = as_shard(run.path(), &tmp.path().join("s0"), 0, 2);
    let s1 = as_shard(run.path(), &tmp.path().join("s1"), 1, 2);
    let out = tmp.path().join("merged");
    let o = merge(&[&s1, &s0], &out);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("merged from 2 shards"), "{text}");

    let merged = json(&out);
    check_schema(&merged);
    assert_eq!(merged["run"]["shards"], 2);
    assert_eq!(merged["sessions"]["started"], 40);
    let one = json(run.path());
    for phase in ["initialize", "tools/list"] {
        assert_eq!(
            merged["phases"][phase]["count"].as_u64(),
            one["phases"][phase]["count"].as_u64().map(|n| 2 * n),
            "{phase}"
        );
        // The same samples twice: the same percentiles, exactly.
        assert_eq!(
            merged["phases"][phase]["p99_us"],
            one["phases"][phase]["p99_us"]
        );
    }
    let failed: Vec<&Value> = merged["thresholds"]
        .as_array()
        .expect("thresholds")
        .iter()
        .filter(|t| t["passed"] == false)
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["expression"], "count(sessions) < 30");
    for file in [
        "intervals.csv",
        "report.html",
        "thresholds.xml",
        "profile.toml",
        "state.json",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }

    let report = fleet_command()
        .arg("report")
        .arg(&out)
        .output()
        .expect("mcp-fleet report runs");
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    assert!(String::from_utf8_lossy(&report.stdout).contains("merged from 2 shards"));

    // A merged folder is not a shard to merge again.
    let o = merge(&[&out, &s1], &tmp.path().join("again"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a merged report, not a shard"),
        "{}",
        stderr(&o)
    );
}
