//! A ceiling search over shards: `ceiling --processes 2` finds the knob server's ceiling
//! from two generator processes whose merged steps decide; `--shard 0/2` and `--shard
//! 1/2`, started apart with one `--out`, climb together; a shard that never comes, that
//! dies, or a leader that never orders, stops the search with the shard named (exit 2),
//! never a hang.

use super::ceiling::{first_step_written, said_low, ONE_AT_A_TIME};
use super::signals::{exit_within, signal};
use super::support::{fleet_command, Served};
use mcp_fleet::ceiling::file::CeilingFile;
use mcp_fleet::ceiling::verdict::BoundKind;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A short search of the knob server (4 workers × 20 ms: 200 handshakes a second).
fn search(served: &Served, out: &Path) -> Command {
    search_with(served, out, "p99(initialize) < 200ms")
}

/// The same search with another SLO.
fn search_with(served: &Served, out: &Path, slo: &str) -> Command {
    let mut c = fleet_command();
    c.arg("ceiling")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/handshake.toml"
        ))
        .args(["--target", &served.url()])
        .args(["--server-pid", &served.pid().to_string()])
        .args(["--slo", slo, "--seed", "1"])
        .args(["--from", "50/s", "--to", "800/s", "--factor", "2"])
        .args([
            "--step",
            "2s",
            "--step-warmup",
            "300ms",
            "--resolution",
            "10%",
        ])
        .arg("--out")
        .arg(out);
    c
}

/// Shard `shard` of a search into `out`, waiting at most `wait` for the others.
fn spawn_shard(served: &Served, out: &Path, shard: &str, wait: &str) -> Child {
    search(served, out)
        .args(["--shard", shard, "--shard-wait", wait, "--quiet"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns")
}

/// The answer's checks shared by the sharded searches: near 200/s, queueing (or a
/// generator lower bound on a loaded machine), each step merged from both shards.
fn assert_found(out: &Path) -> CeilingFile {
    let f = CeilingFile::read(out).expect("ceiling.json");
    let a = f.answer.clone().expect("an answer");
    assert!(f.complete, "{f:?}");
    assert_eq!(f.settings.shards, Some(2));
    assert_ne!(a.bound, BoundKind::ServerCpu, "{}", a.why);
    let ceiling = a.ceiling_per_s.unwrap_or_default();
    let band = if said_low(&a) {
        0.0..=240.0
    } else {
        assert_eq!(a.bound, BoundKind::Queueing, "{}", a.why);
        120.0..=240.0
    };
    assert!(band.contains(&ceiling), "ceiling {ceiling}: {:#?}", f.steps);
    for s in &f.steps {
        let dir = out.join(&s.dir);
        for part in ["shard-0", "shard-1"] {
            assert!(
                dir.join(part).join("summary.json").is_file(),
                "{}/{part}",
                s.dir
            );
        }
        assert!(dir.join("summary.json").is_file() && dir.join("initialize.hlog").is_file());
        assert!(!dir.join("warmup").exists(), "the warm-ups are not kept");
        // The two shards together offered the step's rate, not each of them.
        let offered = s.offered_per_s * 2.0;
        assert!(
            (s.started as f64) > offered * 0.9 && (s.started as f64) < offered * 1.1,
            "{} started at {} for 2 s",
            s.started,
            s.offered_per_s
        );
        assert!(s.server.cpu_cores.is_some(), "the server was watched");
    }
    f
}

#[test]
fn two_local_processes_find_the_knob_servers_ceiling_together() {
    let _one = ONE_AT_A_TIME.blocking_lock();
    let served = Served::start(&["--workers", "4", "--service-time", "20ms"]);
    let out = tempfile::tempdir().expect("tempdir");
    let mut child = search(&served, out.path())
        .args(["--processes", "2", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let code = exit_within(&mut child, Duration::from_secs(180));
    let output = child.wait_with_output().expect("output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let file = CeilingFile::read(out.path());
    // Exit 1 (even the lowest step failed) only when a loaded machine held the
    // generators back there, and the answer says it is a lower bound.
    let lower_bound = file
        .as_ref()
        .ok()
        .and_then(|f| f.answer.as_ref())
        .is_some_and(|a| a.lower_bound);
    assert!(
        code == Some(0) || (code == Some(1) && lower_bound),
        "{code:?}: {}\n{:#?}",
        String::from_utf8_lossy(&output.stderr),
        file.map(|f| f.steps)
    );
    // --quiet: only the folder, once (the leader's line; the parent adds nothing).
    assert_eq!(stdout.trim(), out.path().display().to_string());
    assert_found(out.path());
    assert!(out.path().join("shard-1.log").is_file());
}

#[test]
fn shards_started_apart_climb_together_and_a_missing_one_is_named() {
    let _one = ONE_AT_A_TIME.blocking_lock();
    let served = Served::start(&["--workers", "4", "--service-time", "20ms"]);
    let out = tempfile::tempdir().expect("tempdir");
    let spawn = |shard: &str| spawn_shard(&served, out.path(), shard, "20s");
    // The follower first: the leader waits for it, and it for the leader's orders.
    let mut follower = spawn("1/2");
    std::thread::sleep(Duration::from_millis(500));
    let mut leader = spawn("0/2");
    let code = exit_within(&mut leader, Duration::from_secs(180));
    assert_eq!(exit_within(&mut follower, Duration::from_secs(30)), Some(0));
    let f = assert_found(out.path());
    let lower_bound = f.answer.is_some_and(|a| a.lower_bound);
    assert!(
        code == Some(0) || (code == Some(1) && lower_bound),
        "{code:?}"
    );

    // A leader whose second shard never comes stops within its wait, naming it.
    let alone = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let lonely = search(&served, alone.path())
        .args(["--shard", "0/2", "--shard-wait", "2s"])
        .output()
        .expect("runs");
    assert_eq!(lonely.status.code(), Some(2));
    let err = String::from_utf8_lossy(&lonely.stderr);
    assert!(
        err.contains("shard 1/2 of the ceiling search did not report within 2 s"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    // A follower whose leader never orders gives up too, naming it.
    let lost = tempfile::tempdir().expect("tempdir");
    let orphan = search(&served, lost.path())
        .args(["--shard", "1/2", "--shard-wait", "1s"])
        .output()
        .expect("runs");
    assert_eq!(orphan.status.code(), Some(2));
    let err = String::from_utf8_lossy(&orphan.stderr);
    assert!(
        err.contains("the leading shard (0/2) gave no order within"),
        "{err}"
    );
    // The folder of a search that began is no other search's.
    let reused = search(&served, out.path())
        .args(["--shard", "1/2", "--shard-wait", "1s"])
        .output()
        .expect("runs");
    assert_eq!(reused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&reused.stderr).contains("another ceiling search"));
}

#[test]
fn a_shard_that_dies_mid_search_stops_it_and_the_steps_so_far_stay() {
    let _one = ONE_AT_A_TIME.blocking_lock();
    let served = Served::start(&["--workers", "4", "--service-time", "20ms"]);
    let out = tempfile::tempdir().expect("tempdir");
    let spawn = |shard: &str| spawn_shard(&served, out.path(), shard, "3s");
    let mut leader = spawn("0/2");
    let mut follower = spawn("1/2");
    first_step_written(out.path());
    follower.kill().expect("kill");
    let _ = follower.wait();
    // Within its part's length, the grace (5 s) and the wait (3 s).
    assert_eq!(exit_within(&mut leader, Duration::from_secs(40)), Some(2));
    let output = leader.wait_with_output().expect("output");
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("shard 1/2 of the ceiling search did not report"),
        "{err}"
    );
    let f = CeilingFile::read(out.path()).expect("ceiling.json");
    assert!(!f.complete && !f.steps.is_empty(), "{f:?}");
}

#[test]
fn a_sharded_search_needs_a_shared_folder_and_a_target() {
    let no_out = fleet_command()
        .args([
            "ceiling",
            "--shard",
            "0/2",
            "--target",
            "http://127.0.0.1:9/mcp",
        ])
        .output()
        .expect("runs");
    assert_eq!(no_out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_out.stderr).contains("needs --out"));
    let dir = tempfile::tempdir().expect("tempdir");
    let no_target = fleet_command()
        .args(["ceiling", "--shard", "1/2", "--out"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(no_target.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_target.stderr).contains("needs a server every shard loads"));
    let both = fleet_command()
        .args(["ceiling", "--shard", "0/2", "--processes", "2"])
        .output()
        .expect("runs");
    assert_eq!(both.status.code(), Some(2));
    // A bad option stops `--processes` before any shard or folder exists, said once.
    let out = dir.path().join("never");
    for bad in [["--from", "fast"], ["--slo", "p99(initialize) <"]] {
        let refused = fleet_command()
            .args([
                "ceiling",
                "--processes",
                "2",
                "--target",
                "http://127.0.0.1:9/mcp",
            ])
            .args(bad)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("runs");
        assert_eq!(refused.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(err.matches("error:").count(), 1, "said once: {err}");
        assert!(
            !out.exists(),
            "no results folder for a search that never started"
        );
    }
}

#[test]
fn ctrl_c_reaches_every_local_shard_and_the_steps_so_far_are_written() {
    let _one = ONE_AT_A_TIME.blocking_lock();
    let served = Served::start(&["--workers", "4", "--service-time", "20ms"]);
    let out = tempfile::tempdir().expect("tempdir");
    let logs = tempfile::tempdir().expect("tempdir");
    // Lenient: the first steps pass even on a loaded machine, so the search is still
    // climbing when the signal comes.
    let mut child = search_with(&served, out.path(), "p99(session) < 10s")
        .args(["--processes", "2", "--quiet"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(logs.path().join("err")).expect("err file"))
        .spawn()
        .expect("spawns");
    first_step_written(out.path());
    signal(&child, nix::sys::signal::Signal::SIGINT);
    let code = exit_within(&mut child, Duration::from_secs(40));
    let err = std::fs::read_to_string(logs.path().join("err")).unwrap_or_default();
    let log = std::fs::read_to_string(out.path().join("shard-1.log")).unwrap_or_default();
    assert_eq!(code, Some(130), "{err}\nshard 1: {log}");
    let f = CeilingFile::read(out.path()).expect("ceiling.json");
    assert!(
        !f.complete && f.answer.is_some() && !f.steps.is_empty(),
        "{f:?}"
    );
    // The parent ends after all its shards (it waits for each): none is left.
}
