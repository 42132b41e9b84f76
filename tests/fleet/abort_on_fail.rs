//! Stop early when a threshold is already lost (k6's `abortOnFail`): on a server made
//! slow with `serve --fault slow` the run stops, writes every result, says which
//! threshold and when, and exits 1; on a healthy server it runs to its end.

use crate::support::{builtin_stdio, check_schema, fleet_command, write_profile, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::Fault;

/// A run planned for 60 s that a lost threshold cuts short: a median, so a healthy
/// server on a busy machine does not lose it (the slow one answers 200 ms late).
const PROFILE: &str = r#"
thresholds = [
  { threshold = "p50(tools/call) < 100ms", abort_on_fail = true, delay = "1s" },
  "error_rate < 1%",
]
[load]
clients = 2
duration = "60s"
[[scenario]]
name = "s"
steps = [{ op = "tools/call", tool = "echo", arguments = { message = "hi" } }]
"#;

fn against(faults: &[Fault], duration: Option<&str>) -> RunArgs {
    RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(builtin_stdio(faults)),
            duration: duration.map(Into::into),
            ..Default::default()
        },
        ..RunArgs::default()
    }
}

#[tokio::test]
async fn a_lost_threshold_stops_the_run_and_says_which_and_when() {
    let run = FleetRun::new(against(&[Fault::Slow], None))
        .profile(PROFILE)
        .run()
        .await;
    let json = &run.json;
    check_schema(json);
    assert_eq!(json["run"]["stopped_by"], "threshold");
    let why = json["run"]["stopped_because"].as_str().unwrap_or_default();
    assert!(
        why.starts_with("threshold `p50(tools/call) < 100ms` lost at "),
        "{why}"
    );
    // Stopped, not run to its planned minute; every result written.
    assert!(
        json["run"]["duration_s"].as_f64() < Some(55.0),
        "{:#}",
        json["run"]
    );
    for f in ["summary.txt", "report.html", "thresholds.xml", "state.json"] {
        assert!(run.dir.path().join(f).is_file(), "{f}");
    }
    let text = std::fs::read_to_string(run.dir.path().join("summary.txt")).expect("summary");
    assert!(text.contains(&format!("stopped: {why}")), "{text}");
}

#[tokio::test]
async fn a_healthy_server_runs_to_its_end() {
    let json = FleetRun::new(against(&[], Some("3s")))
        .profile(PROFILE)
        .run()
        .await
        .json;
    check_schema(&json);
    assert_eq!(json["run"]["stopped_by"], "duration", "{:#}", json["run"]);
    assert!(json["run"].get("stopped_because").is_none());
    assert!(
        json["thresholds"][0]["passed"] == true,
        "{:#}",
        json["thresholds"]
    );
}

#[test]
fn the_command_line_flag_stops_the_run_and_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = "[load]\nclients = 2\nduration = \"60s\"\n[[scenario]]\nname = \"s\"\n\
                   steps = [{ op = \"tools/call\", tool = \"echo\" }]\n";
    let path = write_profile(dir.path(), profile);
    let out = dir.path().join("results");
    let done = fleet_command()
        .arg("run")
        .arg(&path)
        .args(["--stdio", &builtin_stdio(&[Fault::Slow])])
        .args([
            "--threshold",
            "p99(tools/call) < 50ms",
            "--abort-on-fail=1s",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stopped: threshold `p99(tools/call) < 50ms` lost at "),
        "{stderr}"
    );
    assert!(out.join("summary.json").is_file());
}
