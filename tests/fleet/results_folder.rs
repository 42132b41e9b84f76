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
