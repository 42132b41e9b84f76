//! The commands that play a trace back: `mcp-fleet replay` (the trace as a profile of
//! one persona per recorded session, arriving when it did, run as any run) and
//! `mcp-fleet profile --from-trace` (a profile of the clients seen, written to a file).
//! The shaping is `crate::replay`'s; here are the files, the targets and the run.

use crate::cli::{ProfileArgs, ReplayArgs};
use crate::console;
use crate::plan::quantity::parse_rate;
use crate::plan::{Overrides, Plan};
use crate::profile::Profile;
use crate::replay::{grouped_profile, profile_toml, render, replay_profile, ReplayOptions};
use crate::trace::{Trace, Transport};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// `mcp-fleet replay TRACE`: the run of the trace's replay profile.
pub async fn replay(args: ReplayArgs) -> anyhow::Result<crate::RunOutcome> {
    let ReplayArgs {
        trace: path,
        speed,
        times,
        partial,
        mut run,
    } = args;
    if let Some(p) = &run.profile {
        anyhow::bail!(
            "replay takes one trace, not a profile ({}); fix: to run a profile, `mcp-fleet run PROFILE`",
            p.display()
        );
    }
    let trace = Trace::load(&path, partial)?;
    let o = &mut run.overrides;
    let rate = o
        .rate
        .take()
        .map(|r| parse_rate(&r, "--rate", "the command line"))
        .transpose()?;
    let mut sessions = o.sessions;
    if let (Some(rate), None, Some(d)) = (rate, sessions, o.duration.as_deref()) {
        // Arrivals at a rate for a while: that many sessions.
        let d = crate::plan::quantity::parse_duration(d, "--duration", "the command line")?;
        sessions = Some((rate * d.as_secs_f64()).ceil().max(1.0) as u64);
    }
    let opts = ReplayOptions {
        speed: parse_speed(speed.as_deref())?,
        rate,
        times,
        sessions,
        source: path.display().to_string(),
    };
    let (mut profile, notes) = replay_profile(&trace, &opts)?;
    point_at_target(&mut profile, &trace, o)?;
    if !run.quiet {
        for n in &notes {
            console::errln(format_args!("note: {n}"));
        }
    }
    let file = std::env::temp_dir().join(format!(
        "mcp-fleet-replay-{}-{}.toml",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::write(&file, profile_toml(&profile))
        .with_context(|| format!("cannot write the replay profile {}", file.display()))?;
    run.profile = Some(file.clone());
    // Shard processes (`--processes`) run the profile written here, with the run options
    // (not the replay's own: they are in the profile already).
    let after: Vec<std::ffi::OsString> = std::env::args_os()
        .skip(1)
        .skip_while(|a| a != "replay")
        .skip(1)
        .filter(|a| *a != path.as_os_str())
        .collect();
    let mut child = vec![file.clone().into_os_string()];
    child.extend(crate::processes::strip(
        &after,
        &["--speed", "--times", "--rate"],
        &["--partial"],
    ));
    run.child_argv = Some(child);
    let outcome = crate::run(run).await;
    let _ = std::fs::remove_file(&file);
    outcome
}

/// `--speed 2x`, `2`, `0.5x`.
fn parse_speed(text: Option<&str>) -> anyhow::Result<f64> {
    let Some(text) = text else {
        return Ok(1.0);
    };
    let number = text.trim().trim_end_matches(['x', 'X']);
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => anyhow::bail!("--speed {text:?}: not a positive factor; fix: e.g. --speed 2x (twice as fast) or --speed 0.5x"),
    }
}

/// The replay's target: `--target`, else the recorded upstream (each network persona's
/// `url` is the path its session used, resolved against it); stdio sessions start
/// `--stdio`'s command.
fn point_at_target(profile: &mut Profile, trace: &Trace, o: &mut Overrides) -> anyhow::Result<()> {
    let recorded = (trace.header.mode == "http" && !trace.header.upstream.contains("***"))
        .then(|| trace.header.upstream.clone());
    let network = trace
        .sessions
        .iter()
        .any(|s| s.transport != Transport::Stdio);
    if network && o.target.is_none() {
        match recorded {
            Some(url) => o.target = Some(url),
            None => anyhow::bail!(
                "the trace holds network sessions and records no usable upstream: give --target URL (each session keeps its recorded path)"
            ),
        }
    }
    let stdio = trace
        .sessions
        .iter()
        .any(|s| s.transport == Transport::Stdio);
    if stdio && o.stdio.is_none() && profile.target.command.is_none() {
        anyhow::bail!(
            "the trace holds stdio sessions: say which server to start, e.g. --stdio \"npx -y my-server\""
        );
    }
    if stdio && network {
        // One run has one target: the stdio personas get the command as their own.
        if let Some(cmd) = o.stdio.take() {
            let command = crate::profile::Command::Line(cmd);
            for p in profile
                .personas
                .iter_mut()
                .filter(|p| p.transport.as_deref() == Some("stdio"))
            {
                p.command = Some(command.clone());
            }
        }
    }
    Ok(())
}

/// `mcp-fleet profile --from-trace TRACE --out P.toml`.
pub fn write_profile(args: &ProfileArgs) -> anyhow::Result<()> {
    let trace = Trace::load(&args.from_trace, args.partial)?;
    let source = args.from_trace.display().to_string();
    let derived = grouped_profile(&trace, &source);
    if derived.profile.personas.is_empty() {
        anyhow::bail!(
            "{source}: none of its {} session(s) shows a client that got past connecting: nothing to write",
            trace.sessions.len()
        );
    }
    let folder = args.out.parent().map(Path::to_path_buf).unwrap_or_default();
    if !folder.as_os_str().is_empty() {
        std::fs::create_dir_all(&folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    for (name, contents) in &derived.data {
        let path: PathBuf = folder.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&path, contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let text = render(&derived, &source);
    std::fs::write(&args.out, &text)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    // What was written must be a profile `validate` takes.
    let shown = args.out.display().to_string();
    let profile = Profile::load(&args.out)?;
    Plan::resolve(profile, &Overrides::default(), &shown).with_context(|| {
        format!("{shown} was written but does not resolve (a bug: please report it with the trace)")
    })?;
    let p = &derived.profile;
    console::errln(format_args!(
        "wrote {shown}: {} persona(s), {} scenario(s) from {} session(s){}; run it with `mcp-fleet run {shown} --target …`",
        p.personas.len(),
        p.scenarios.len(),
        trace.sessions.len(),
        if derived.data.is_empty() { String::new() } else { format!(", {} data file(s) beside it", derived.data.len()) }
    ));
    for n in &derived.notes {
        console::errln(format_args!("note: {n}"));
    }
    Ok(())
}
