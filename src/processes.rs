//! `run --processes N`: N local shard processes from one command, then one merged
//! results folder, so a run past one process's open-file limit needs no cluster.
//!
//! The parent resolves the plan once (a bad profile fails before anything is spawned),
//! picks one start time [`PREPARE`] ahead, and starts N copies of this program with the
//! same arguments plus `--shard i/N --start-at TIME --out DIR/shard-i --quiet`, each
//! child's stderr in `DIR/shard-i.log` and [`crate::shard::LOCAL_SHARDS`] set so that each takes
//! its part of the source addresses. Ctrl-C and SIGTERM are passed on to the children
//! (who write their results as a run does); when all have ended, their folders are
//! merged into DIR ([`crate::merge::merge_dirs`]). A child that could not do its part
//! fails the whole run (exit 2), naming its shard and its log.

use crate::cli::ViewArgs;
use crate::console;
use crate::merge::Merged;
use crate::plan::Plan;
use crate::shard::{Shard, Start};
use crate::stop::{StopReason, StopSignal};
use anyhow::Context;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, SystemTime};

/// How long the children get to prepare (plan, targets, instruments) before the shared
/// start: longer than a child needs on a busy 2-core machine, short enough not to matter.
pub const PREPARE: Duration = Duration::from_secs(3);

/// The most processes one command starts.
pub const MAX_PROCESSES: u32 = 256;

/// The options the parent sets for each child itself (value-taking ones, then flags).
const REPLACED_WITH_VALUE: [&str; 4] = ["--processes", "--out", "--start-at", "--shard"];
// `-q` is the iteration rate (a value of its own), `--quiet` has no short form.
const REPLACED_FLAGS: [&str; 1] = ["--quiet"];

/// The command line of child `shard`: `argv` (without the program) less the options the
/// parent decides, plus this child's shard, start, folder and `--quiet`.
pub fn child_args(argv: &[OsString], shard: Shard, start_at: &str, out: &Path) -> Vec<OsString> {
    let mut args = strip(argv, &REPLACED_WITH_VALUE, &REPLACED_FLAGS);
    args.extend([
        OsString::from("--shard"),
        OsString::from(shard.to_string()),
        OsString::from("--start-at"),
        OsString::from(start_at),
        OsString::from("--out"),
        out.as_os_str().to_owned(),
        OsString::from("--quiet"),
    ]);
    args
}

/// `argv` without the options in `with_value` (and their values, `--opt V` or
/// `--opt=V`) and the flags in `flags` (a short flag also inside a group: `-qv` → `-v`).
pub fn strip(argv: &[OsString], with_value: &[&str], flags: &[&str]) -> Vec<OsString> {
    let mut args = Vec::with_capacity(argv.len());
    let mut skip_value = false;
    let shorts: Vec<char> = flags
        .iter()
        .filter_map(|f| f.strip_prefix('-').filter(|s| s.len() == 1))
        .filter_map(|s| s.chars().next())
        .collect();
    for a in argv {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let text = a.to_string_lossy();
        if with_value.contains(&text.as_ref()) {
            skip_value = true;
            continue;
        }
        if with_value
            .iter()
            .any(|o| text.starts_with(&format!("{o}=")))
            || flags.contains(&text.as_ref())
        {
            continue;
        }
        // Short flags together (`-qv`): keep the others.
        if text.starts_with('-') && !text.starts_with("--") && text.len() > 2 {
            let kept: String = text[1..].chars().filter(|c| !shorts.contains(c)).collect();
            if kept.len() + 1 < text.len() {
                args.push(OsString::from(format!("-{kept}")));
                continue;
            }
        }
        args.push(a.clone());
    }
    args
}

/// How often a shard process looks whether its parent is still there.
const ORPHAN_CHECK: Duration = Duration::from_millis(500);

/// In a shard process of `--processes` (the parent sets [`crate::shard::LOCAL_SHARDS`]):
/// when the parent is gone (killed outright, so it could pass no signal on), send this
/// process SIGTERM, so that its part stops as on a signal, writing its results, instead
/// of loading the server with no one to merge them. Elsewhere: nothing.
pub fn stop_when_orphaned() {
    if std::env::var_os(crate::shard::LOCAL_SHARDS).is_none() {
        return;
    }
    let parent = nix::unistd::getppid();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(ORPHAN_CHECK).await;
            if nix::unistd::getppid() != parent {
                let me = nix::unistd::getpid();
                let _ = nix::sys::signal::kill(me, nix::sys::signal::Signal::SIGTERM);
                return;
            }
        }
    });
}

/// Whether a child's exit lets the merge go on: 0 or 1 (its own part's thresholds; the
/// merged figures decide), or the signal we passed on (128 + N); anything else is the
/// run's failure, named.
pub fn check_child(
    shard: Shard,
    status: ExitStatus,
    log: &Path,
    forwarded: Option<StopSignal>,
) -> anyhow::Result<()> {
    match status.code() {
        Some(0 | 1) => Ok(()),
        Some(c) if forwarded.is_some_and(|s| i32::from(s.exit_code()) == c) => Ok(()),
        _ => anyhow::bail!(
            "shard {shard} of --processes failed ({status}); its log: {}\nfix: read the log; the other shards' folders are kept beside it",
            log.display()
        ),
    }
}

/// What the shards made together.
#[derive(Debug)]
pub struct Done {
    pub merged: Merged,
    pub stopped_by: StopReason,
    /// The shared start; each shard's own lateness is in its folder.
    pub start: Start,
}

/// What `run --processes N` takes of the command line, read once by `lib` from the flags.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// N: how many shard processes.
    pub count: u32,
    /// `--start-at` as written: the shared start (read when the children are started),
    /// else [`PREPARE`] from then.
    pub start_at: Option<String>,
    /// The program the children run (the library's caller's mcp-fleet binary); `None`:
    /// this program.
    pub program: Option<PathBuf>,
    /// `--quiet`: only the merged folder's path and errors.
    pub quiet: bool,
    /// How the merged summary is printed.
    pub view: ViewArgs,
    /// This command's own arguments after `run`, which every child gets again.
    pub argv: Vec<OsString>,
}

/// `--processes N` with the other options: a count in range, and no `--shard`
/// (`sharded`: one was given).
pub fn check(n: u32, sharded: bool) -> anyhow::Result<()> {
    if n == 0 || n > MAX_PROCESSES {
        anyhow::bail!(
            "--processes {n}: not from 1 to {MAX_PROCESSES}\nfix: e.g. --processes 4 (one per core, or as many as the open-file limit asks for)"
        );
    }
    if sharded {
        anyhow::bail!(
            "--processes and --shard together: --processes makes its own shards\nfix: give one of them (--shard I/N on each machine, --processes N on one)"
        );
    }
    Ok(())
}

/// `run --processes N` of `plan` into `dir`.
pub async fn run(options: &Options, plan: &Plan, dir: &Path) -> anyhow::Result<Done> {
    if let Some(file) = &plan.outputs.requests {
        anyhow::bail!(
            "--requests {} with --processes: every process would write the same file\nfix: run each shard with --shard I/N and its own --requests file",
            file.display()
        );
    }
    let n = options.count;
    let start_at = match options.start_at.as_deref() {
        Some(text) => crate::shard::StartAt::parse(text, SystemTime::now())?.at,
        None => SystemTime::now() + PREPARE,
    };
    let start_text = humantime::format_rfc3339_micros(start_at).to_string();
    let program = match &options.program {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("finding this program to start the shards")?,
    };
    if !options.quiet {
        console::errln(format_args!(
            "{n} shard processes of {:?}, starting at {start_text}; logs in {}",
            plan.name,
            dir.display()
        ));
    }
    let mut children = Vec::new();
    let mut dirs = Vec::new();
    for index in 0..n {
        let shard = Shard { index, count: n };
        let out = dir.join(format!("shard-{index}"));
        let log_path = dir.join(format!("shard-{index}.log"));
        let log = std::fs::File::create(&log_path)
            .with_context(|| format!("creating {}", log_path.display()))?;
        let args = child_args(&options.argv, shard, &start_text, &out);
        let child = spawn(
            &program,
            "run",
            &args,
            log.into(),
            std::process::Stdio::null(),
        )
        .with_context(|| format!("starting shard {shard} ({})", program.display()))?;
        children.push((shard, child, log_path));
        dirs.push(out);
    }
    let forwarded = wait_all(&mut children).await?;
    for (shard, child, log) in &mut children {
        let status = child.wait().await.context("waiting for a shard")?;
        check_child(*shard, status, log, forwarded)?;
    }
    let merged = crate::merge::merge_dirs(&dirs, dir)?;
    crate::merge::print(&merged, options.quiet, &options.view);
    let stopped_by = match forwarded {
        Some(s) => StopReason::Signal(s),
        None if plan.load.sessions.is_some() => StopReason::Sessions,
        None => StopReason::Duration,
    };
    Ok(Done {
        merged,
        stopped_by,
        start: Start {
            at: start_at,
            late: Duration::ZERO,
        },
    })
}

/// Start `program COMMAND ARGS` as a shard process, with that stderr and stdout.
pub fn spawn(
    program: &Path,
    command: &str,
    args: &[OsString],
    stderr: std::process::Stdio,
    stdout: std::process::Stdio,
) -> std::io::Result<tokio::process::Child> {
    tokio::process::Command::new(program)
        .arg(command)
        .args(args)
        .env(crate::shard::LOCAL_SHARDS, "1")
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        // Their own process group: a terminal's Ctrl-C reaches the parent only, which
        // passes it on once (a second SIGINT would abandon their sessions at once).
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
}

/// Wait until every child has ended, passing SIGINT and SIGTERM on to them; the first
/// signal passed on, if any.
pub async fn wait_all(
    children: &mut [(Shard, tokio::process::Child, PathBuf)],
) -> anyhow::Result<Option<StopSignal>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut int = signal(SignalKind::interrupt()).context("installing the signal handlers")?;
    let mut term = signal(SignalKind::terminate()).context("installing the signal handlers")?;
    let mut forwarded = None;
    for i in 0..children.len() {
        loop {
            let sig = tokio::select! {
                _ = children[i].1.wait() => break,
                _ = int.recv() => (StopSignal::Interrupt, nix::sys::signal::Signal::SIGINT),
                _ = term.recv() => (StopSignal::Terminate, nix::sys::signal::Signal::SIGTERM),
            };
            forwarded.get_or_insert(sig.0);
            for (_, child, _) in children.iter() {
                if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig.1);
                }
            }
        }
    }
    Ok(forwarded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn a_child_gets_the_same_arguments_and_its_own_shard_start_and_folder() {
        let argv = os(&[
            "p.toml",
            "--processes",
            "4",
            "--clients=100",
            "--out",
            "res",
            "-q",
            "50/s",
            "--start-at=+10s",
            "--rate",
            "5/s",
            "-v",
            "--quiet",
        ]);
        let got = child_args(
            &argv,
            Shard { index: 2, count: 4 },
            "2026-12-02T10:00:00Z",
            Path::new("res/shard-2"),
        );
        assert_eq!(
            got,
            os(&[
                "p.toml",
                "--clients=100",
                "-q",
                "50/s",
                "--rate",
                "5/s",
                "-v",
                "--shard",
                "2/4",
                "--start-at",
                "2026-12-02T10:00:00Z",
                "--out",
                "res/shard-2",
                "--quiet",
            ])
        );
        let got = child_args(&os(&["--processes=2"]), Shard::ONE, "T", Path::new("d"));
        assert_eq!(
            got,
            os(&["--shard", "0/1", "--start-at", "T", "--out", "d", "--quiet"])
        );
    }

    #[test]
    fn a_failed_child_fails_the_run_and_names_its_shard_and_log() {
        let shard = Shard { index: 1, count: 3 };
        let log = Path::new("out/shard-1.log");
        let exit = |code: i32| ExitStatus::from_raw(code << 8);
        assert!(check_child(shard, exit(0), log, None).is_ok());
        assert!(
            check_child(shard, exit(1), log, None).is_ok(),
            "its part's thresholds"
        );
        let e = check_child(shard, exit(2), log, None).expect_err("could not be done");
        let text = e.to_string();
        assert!(
            text.starts_with("shard 1/3 of --processes failed"),
            "{text}"
        );
        assert!(
            text.contains("out/shard-1.log") && text.contains("\nfix: "),
            "{text}"
        );
        // Stopped by the Ctrl-C we passed on: its results are there to merge.
        let int = Some(StopSignal::Interrupt);
        assert!(check_child(shard, exit(130), log, int).is_ok());
        assert!(
            check_child(shard, exit(130), log, None).is_err(),
            "not ours"
        );
        let killed = ExitStatus::from_raw(9);
        assert!(
            check_child(shard, killed, log, int).is_err(),
            "killed: no results"
        );
    }
}
