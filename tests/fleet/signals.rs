//! Stops from outside, as `timeout`, CI cancellation, `docker stop` and a closed terminal
//! send them: every signal writes the results, reaps every stdio process group and exits
//! 128 + its number; a second signal abandons the grace.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn fleet() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp-fleet"))
}

fn start(profile: &Path, out: &Path) -> Child {
    fleet()
        .arg("run")
        .arg(profile)
        .args(["--quiet", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawns")
}

pub fn signal(child: &Child, signal: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(pid, signal).expect("signal");
}

/// Wait for the child to exit, at most `limit`; its exit code.
pub fn exit_within(child: &mut Child, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return s.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn summary(out: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join("summary.json")).expect("results written");
    serde_json::from_str(&text).expect("json")
}

/// The `sleep MARKER` helpers running now. Only the helper itself counts: the `sh`
/// that starts it carries the marker in its own command line until it execs the
/// server, and a forked shell does too until it execs `sleep`.
fn processes_with(marker: &str) -> usize {
    pids_with(marker).len()
}

/// The pids of the `sleep MARKER` processes running now.
fn pids_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("procfs").flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let mut args = cmd.split(|b| *b == 0);
            let program = args.next().unwrap_or_default();
            let first = args.next().unwrap_or_default();
            if program.ends_with(b"sleep") && first == marker.as_bytes() {
                pids.extend(
                    entry
                        .file_name()
                        .to_str()
                        .and_then(|p| p.parse::<i32>().ok()),
                );
            }
        }
    }
    pids
}

#[test]
fn sigterm_writes_the_results_reaps_stdio_servers_and_exits_143() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    // Each stdio server leaves a helper behind that ignores SIGTERM, as wrappers do.
    let marker = format!("297.{}", std::process::id());
    let command = format!(
        "sh -c 'trap \"\" TERM; sleep {marker} & exec {} serve --stdio'",
        env!("CARGO_BIN_EXE_mcp-fleet")
    );
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!(
            "[target]\ncommand = {command:?}\n[load]\nclients = 3\nduration = \"60s\"\ngrace = \"1s\"\n\
             [[persona]]\nname = \"host\"\nshape = \"long-lived\"\n"
        ),
    )
    .expect("write");
    let mut child = start(&profile, &out);
    let up = Instant::now();
    while processes_with(&marker) < 3 && up.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_with(&marker), 3, "three sessions up");
    signal(&child, nix::sys::signal::Signal::SIGTERM);
    assert_eq!(exit_within(&mut child, Duration::from_secs(15)), Some(143));
    let json = summary(&out);
    assert_eq!(json["run"]["stopped_by"], "terminated");
    assert_eq!(json["sessions"]["started"], 3);
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .expect("results folder")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    for name in [
        "summary.txt",
        "report.html",
        "thresholds.xml",
        "intervals.csv",
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(processes_with(&marker), 0, "no stdio process left behind");
}

#[test]
fn a_sigkilled_generator_leaves_no_stdio_process_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    // Each server ignores stdin EOF and SIGTERM (a `sleep` in its place) and has started
    // a helper of its own, in its process group, as wrappers do.
    let helper = format!("298.{}", std::process::id());
    let server = format!("299.{}", std::process::id());
    let command = format!("sh -c 'trap \"\" TERM; sleep {helper} & exec sleep {server}'");
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!(
            "[target]\ncommand = {command:?}\ntimeout = \"60s\"\n\
             [load]\nclients = 3\nduration = \"60s\"\n"
        ),
    )
    .expect("write");
    let mut child = start(&profile, &out);
    let up = Instant::now();
    while (processes_with(&helper) < 3 || processes_with(&server) < 3)
        && up.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_with(&server), 3, "three servers up");
    assert_eq!(processes_with(&helper), 3, "three helpers up");
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    let killed = Instant::now();
    let mut left = pids_with(&helper);
    left.extend(pids_with(&server));
    while !left.is_empty() && killed.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
        left = pids_with(&helper);
        left.extend(pids_with(&server));
    }
    for pid in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(
        left.is_empty(),
        "left behind by a SIGKILLed generator: {left:?}"
    );
}

#[test]
fn sighup_stops_like_ctrl_c_and_exits_129() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let profile = dir.path().join("p.toml");
    std::fs::write(&profile, "[load]\nclients = 2\nduration = \"60s\"\n").expect("write");
    let mut child = start(&profile, &out);
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, nix::sys::signal::Signal::SIGHUP);
    assert_eq!(exit_within(&mut child, Duration::from_secs(15)), Some(129));
    assert_eq!(summary(&out)["run"]["stopped_by"], "hangup");
}

#[test]
fn a_second_signal_abandons_the_grace_and_still_writes_the_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let profile = dir.path().join("p.toml");
    // Sessions in a 20 s tool call and 30 s of grace: only the second signal ends it soon.
    std::fs::write(
        &profile,
        "[target]\ntimeout = \"40s\"\n[load]\nclients = 2\nduration = \"60s\"\ngrace = \"30s\"\n\
         [[scenario]]\nname = \"slow\"\nsteps = [{ op = \"tools/call\", tool = \"sleep\", arguments = { ms = 20000 } }]\n",
    )
    .expect("write");
    let mut child = start(&profile, &out);
    std::thread::sleep(Duration::from_millis(1500));
    signal(&child, nix::sys::signal::Signal::SIGINT);
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().expect("wait").is_none(), "the grace holds");
    signal(&child, nix::sys::signal::Signal::SIGINT);
    assert_eq!(exit_within(&mut child, Duration::from_secs(10)), Some(130));
    let json = summary(&out);
    assert_eq!(json["run"]["stopped_by"], "interrupted");
    assert_eq!(json["sessions"]["interrupted"], 2);
}
