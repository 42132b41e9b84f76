//! `ceiling --processes N`: a sharded search on one machine. This process starts the
//! built-in server when no target is given, then N copies of this program as
//! `ceiling --shard I/N --out DIR` with the same options ([`super::shards`]): shard 0
//! leads and prints the ladder and the verdict on this terminal, the others log to
//! `DIR/shard-I.log`. Ctrl-C and SIGTERM are passed on to all of them; the search's
//! answer is read back from `DIR/ceiling.json`.

use super::{server, CeilingOutcome};
use crate::cli::CeilingArgs;
use crate::console;
use crate::processes;
use crate::shard::Shard;
use crate::summary::ceiling::CeilingFile;
use anyhow::{bail, Context};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The options this process decides for each shard.
const REPLACED_WITH_VALUE: [&str; 3] = ["--processes", "--out", "--shard"];
// `-q` is the iteration rate (a value of its own), `--quiet` has no short form.
const REPLACED_FLAGS: [&str; 1] = ["--quiet"];

/// The command line of shard `shard`: this command's `argv` (after `ceiling`) less the
/// options decided here, plus the built-in server's address (`extra`), its shard and the
/// shared folder; all but the leader quiet.
pub fn shard_args(
    argv: &[OsString],
    extra: &[OsString],
    shard: Shard,
    out: &Path,
    quiet: bool,
) -> Vec<OsString> {
    let mut args = processes::strip(argv, &REPLACED_WITH_VALUE, &REPLACED_FLAGS);
    args.extend(extra.iter().cloned());
    args.extend([
        OsString::from("--shard"),
        OsString::from(shard.to_string()),
        OsString::from("--out"),
        out.as_os_str().to_owned(),
    ]);
    if quiet || shard.index > 0 {
        args.push(OsString::from("--quiet"));
    }
    args
}

/// `ceiling --processes N`.
/// `plan`: a step's, from the options the caller checked (a bad one fails there, once,
/// not in N shards).
pub async fn run(
    args: &CeilingArgs,
    n: u32,
    plan: &crate::plan::Plan,
) -> anyhow::Result<CeilingOutcome> {
    processes::check(n, args.shard.is_some())?;
    let dir = crate::results::folder::choose("ceiling", args.out.as_deref(), args.quiet)?;
    let builtin = if plan.soak.server_inside {
        Some(
            server::BuiltIn::start(args.builtin_program.as_deref(), &super::builtin_flags(plan))
                .await?,
        )
    } else {
        None
    };
    let extra: Vec<OsString> = builtin
        .as_ref()
        .map(|b| {
            ["--target", &b.url, "--server-pid", &b.pid.to_string()]
                .into_iter()
                .map(OsString::from)
                .collect()
        })
        .unwrap_or_default();
    let result = shards(args, n, &dir, &extra).await;
    if let Some(b) = builtin {
        b.stop().await;
    }
    result
}

/// Start the N shards, wait for them, read the answer.
async fn shards(
    args: &CeilingArgs,
    n: u32,
    dir: &Path,
    extra: &[OsString],
) -> anyhow::Result<CeilingOutcome> {
    let program = match &args.builtin_program {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("finding this program to start the shards")?,
    };
    let argv: Vec<OsString> = std::env::args_os()
        .skip(1)
        .skip_while(|a| a != "ceiling")
        .skip(1)
        .collect();
    if !args.quiet {
        console::errln(format_args!(
            "{n} shard processes; shard 0 leads, the others log to {}",
            dir.join("shard-I.log").display()
        ));
    }
    let mut children = Vec::new();
    for index in 0..n {
        let shard = Shard { index, count: n };
        let log: PathBuf = dir.join(format!("shard-{index}.log"));
        let (stderr, stdout) = if index == 0 {
            (Stdio::inherit(), Stdio::inherit())
        } else {
            let file = std::fs::File::create(&log)
                .with_context(|| format!("creating {}", log.display()))?;
            (file.into(), Stdio::null())
        };
        let child_args = shard_args(&argv, extra, shard, dir, args.quiet);
        let child = processes::spawn(&program, "ceiling", &child_args, stderr, stdout)
            .with_context(|| format!("starting shard {shard} ({})", program.display()))?;
        children.push((shard, child, log));
    }
    let forwarded = processes::wait_all(&mut children).await?;
    let mut leader_code = None;
    for (shard, child, log) in &mut children {
        let status = child.wait().await.context("waiting for a shard")?;
        let code = status.code();
        if shard.index == 0 {
            leader_code = code;
        }
        let ours = forwarded.is_some_and(|s| code == Some(i32::from(s.exit_code())));
        match code {
            Some(0) => {}
            Some(1) if shard.index == 0 => {}
            _ if ours => {}
            _ if shard.index == 0 => bail!(
                "the leading shard (0/{n}) of the ceiling search failed ({status}); its error is above\nfix: the other shards' logs are in {}",
                dir.display()
            ),
            _ => bail!(
                "shard {shard} of the ceiling search failed ({status}); its log: {}\nfix: read the log",
                log.display()
            ),
        }
    }
    let file = CeilingFile::read(dir).with_context(|| {
        format!("the leading shard ended ({leader_code:?}) without a ceiling.json")
    })?;
    Ok(CeilingOutcome {
        file,
        dir: dir.to_path_buf(),
        signal: forwarded,
        unreachable: false,
    })
}
