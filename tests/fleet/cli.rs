//! The binary as a user runs it: exit codes, error messages, `validate`, Ctrl-C.

use crate::support::fleet_command;
use std::process::Stdio;
use std::time::Duration;

#[test]
fn a_broken_profile_exits_2_and_names_file_key_and_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.toml");
    std::fs::write(&path, "[load]\nclients = 0\n").expect("write");
    let out = fleet_command()
        .args(["run", path.to_str().expect("utf-8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("broken.toml: `load.clients`: is 0"), "{err}");
    assert!(err.contains("fix: set clients = 1 or more"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_missing_profile_and_an_unreachable_target_exit_2() {
    let out = fleet_command()
        .args(["run", "/nonexistent/profile.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot read profile /nonexistent/profile.toml"),
        "{err}"
    );
    // The cause once, not "No such file … (os error 2): No such file … (os error 2)".
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let out = fleet_command()
        .args([
            "run",
            "--target",
            &format!("http://127.0.0.1:{port}/mcp"),
            "--quiet",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot reach"));
}

#[test]
fn validate_prints_the_resolved_plan() {
    let out = fleet_command()
        .args(["validate", "profiles/quickstart.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("plan \"quickstart\"  seed 42"), "{text}");
    assert!(text.contains("persona  ts-sdk-v1"), "{text}");
    assert!(text.contains("75.0%"), "{text}");
    assert!(text.contains("tools/call(echo)"), "{text}");
    let out = fleet_command()
        .args(["validate", "profiles/handshake.toml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn ctrl_c_stops_the_run_and_keeps_the_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let profile = dir.path().join("long.toml");
    std::fs::write(&profile, "[load]\nclients = 4\nduration = \"60s\"\n").expect("write");
    let mut child = fleet_command()
        .arg("run")
        .arg(&profile)
        .args(["--quiet", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    std::thread::sleep(Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("signal");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "stops promptly"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        status.code(),
        Some(130),
        "128 + SIGINT: told apart from a complete run"
    );
    let text = std::fs::read_to_string(out.join("summary.json")).expect("results written");
    let json: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(json["run"]["stopped_by"], "interrupted");
    assert!(json["sessions"]["completed"].as_u64().unwrap_or(0) > 0);
    assert!(json["run"]["duration_s"].as_f64().unwrap_or(99.0) < 10.0);
}

#[test]
fn a_negative_count_says_it_must_be_one_or_more() {
    // Not clap's tip to pass '-1' after '--', which would make it the PROFILE.
    for flag in ["--clients", "--sessions", "--max-in-flight"] {
        let out = fleet_command()
            .args(["run", flag, "-1"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("must be 1 or more"), "{flag}: {err}");
        assert!(!err.contains("'-- -1'"), "{flag}: {err}");
    }
}

/// oha's and k6's short flags: -c clients, -d or -z duration, -r rate, -q iteration rate; no
/// short flag collides in any subcommand (clap's own consistency check).
#[test]
fn short_flags_for_the_common_options() {
    use clap::{CommandFactory, Parser};
    use mcp_fleet::cli::{Cli, Command};
    Cli::command().debug_assert();
    let run = |args: &[&str]| match Cli::try_parse_from(args).expect("parses").command {
        Command::Run(r) => r,
        _ => panic!("not run"),
    };
    let r = run(&["mcp-fleet", "run", "-c", "4", "-z", "2s", "-q", "50/s"]);
    assert_eq!(r.overrides.clients, Some(4));
    assert_eq!(r.overrides.duration.as_deref(), Some("2s"));
    assert_eq!(r.overrides.iteration_rate.as_deref(), Some("50/s"));
    assert!(!r.quiet);
    let r = run(&["mcp-fleet", "run", "-r", "10/s", "-d", "3s"]);
    assert_eq!(r.overrides.rate.as_deref(), Some("10/s"));
    assert_eq!(r.overrides.duration.as_deref(), Some("3s"));
    // --abort-on-fail takes its delay only with `=`: a profile path after it stays one.
    let r = run(&[
        "mcp-fleet",
        "run",
        "--abort-on-fail",
        "profiles/quickstart.toml",
    ]);
    assert_eq!(r.overrides.abort_on_fail.as_deref(), Some("0s"));
    assert!(r.profile.is_some());
}

#[test]
fn a_run_where_no_session_completed_exits_1_and_says_so() {
    let server = crate::support::Served::start(&[]);
    let cwd = tempfile::tempdir().expect("tempdir");
    let run = |path: &str| {
        crate::support::fleet_command()
            .current_dir(cwd.path())
            .args(["run", "--quiet", "--sessions", "4"])
            .args(["--target", &format!("http://{}{path}", server.addr)])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("runs")
    };
    // A path the server does not serve: every session fails.
    let out = run("/no-such-path");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no session completed (4 failed"),
        "{stderr}"
    );
    // Its endpoint: the sessions complete, exit 0 and nothing said.
    let out = run("/mcp");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("no session completed"), "{stderr}");
}
