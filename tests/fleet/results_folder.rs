//! A run never writes into another run's folder: `--out` into an earlier results folder
//! clears it first, a folder holding anything else is refused untouched, and a run that
//! cannot start (a busy `--metrics-listen` port) leaves no folder behind.

use mcp_fleet::cli::{Overrides, RunArgs};
use std::path::Path;

fn hlogs(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("results folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".hlog"))
        .collect();
    names.sort();
    names
}

fn run_into(out: &Path, profile: Option<&str>) -> anyhow::Result<mcp_fleet::RunOutcome> {
    let dir = out.parent().expect("parent");
    let mut args = RunArgs {
        overrides: Overrides {
            sessions: Some(4),
            seed: Some(1),
            ..Overrides::default()
        },
        out: Some(out.to_path_buf()),
        quiet: true,
        builtin_program: Some(crate::support::fleet_program().into()),
        ..RunArgs::default()
    };
    if let Some(text) = profile {
        args.profile = Some(crate::support::write_profile(dir, text));
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(mcp_fleet::run(args))
}

#[test]
fn a_second_run_into_the_same_folder_leaves_none_of_the_first_runs_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    run_into(&out, None).expect("the quickstart");
    assert!(hlogs(&out).contains(&"tools_call.hlog".to_string()));
    // Handshake only: no tools/call, so no tools_call.hlog may be left from the first.
    let handshake = "[load]\nclients = 1\n[[scenario]]\nname = \"hello\"\nsteps = []\n";
    run_into(&out, Some(handshake)).expect("the second run");
    let left = hlogs(&out);
    assert!(!left.contains(&"tools_call.hlog".to_string()), "{left:?}");
    assert!(left.contains(&"initialize.hlog".to_string()), "{left:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).expect("read"))
            .expect("json");
    assert_eq!(json["sessions"]["started"], 4);
}

#[test]
fn a_folder_that_holds_other_files_is_refused_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("mine");
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("notes.md"), "keep me").expect("write");
    let e = run_into(&out, None).expect_err("refused");
    assert!(format!("{e:#}").contains("notes.md"), "{e:#}");
    let names: Vec<_> = std::fs::read_dir(&out).expect("read").flatten().collect();
    assert_eq!(names.len(), 1, "nothing written beside notes.md");
}

#[test]
fn a_run_that_cannot_start_leaves_no_folder() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let mut args = RunArgs {
        out: Some(out.clone()),
        quiet: true,
        metrics_listen: Some(busy.local_addr().expect("addr")),
        builtin_program: Some(crate::support::fleet_program().into()),
        ..RunArgs::default()
    };
    args.overrides.sessions = Some(2);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let e = runtime
        .block_on(mcp_fleet::run(args))
        .expect_err("the port is busy");
    assert!(format!("{e:#}").contains("cannot listen"), "{e:#}");
    assert!(
        !out.exists(),
        "no results folder for a run that never started"
    );
}

/// The results folders `results/` in `cwd` holds, by name.
fn folders(cwd: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cwd.join("results"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn two_runs_started_at_once_write_two_folders_named_for_what_they_ran() {
    let dir = tempfile::tempdir().expect("tempdir");
    // No name and no target: the built-in server over Streamable HTTP.
    let profile = crate::support::write_profile(dir.path(), "[load]\nclients = 1\n");
    let start = || {
        crate::support::fleet_command()
            .current_dir(dir.path())
            .args(["run", "--quiet", "--sessions", "2", "--seed", "1"])
            .arg(&profile)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("starts")
    };
    let (mut a, mut b) = (start(), start());
    assert!(a.wait().expect("waits").success());
    assert!(b.wait().expect("waits").success());
    let made = folders(dir.path());
    assert_eq!(made.len(), 2, "{made:?}");
    for name in &made {
        assert!(name.starts_with("builtin-http-"), "{made:?}");
        let summary = dir.path().join("results").join(name).join("summary.json");
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(summary).expect("summary.json"))
                .expect("json");
        assert_eq!(
            json["sessions"]["started"], 2,
            "one run's summary per folder"
        );
    }
}

#[test]
fn a_run_against_a_url_is_named_for_its_host_and_leaks_no_secret() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime.block_on(crate::support::builtin_http(Default::default()));
    let port = server.addr.port();
    let url = format!("http://agent:hunter2@127.0.0.1:{port}/mcp?api_key=sekrit");
    let status = crate::support::fleet_command()
        .current_dir(dir.path())
        .args(["run", "--quiet", "--sessions", "2", "--target", &url])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("runs");
    assert!(status.success());
    let made = folders(dir.path());
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(
        made[0].starts_with(&format!("127.0.0.1-{port}-")),
        "{made:?}"
    );
    for secret in ["agent", "hunter2", "sekrit", "api_key", "mcp"] {
        assert!(!made[0].contains(secret), "{secret} in {made:?}");
    }
    drop(server);
}
