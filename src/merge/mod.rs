//! `mcp-fleet merge DIR... --out DIR`: the exact report of a sharded run. Every run
//! writes its raw state ([`STATE_FILE`], see [`state`]: HdrHistograms of every slice,
//! counts, examples, findings, the plan's hash, its shard and start); `merge` checks that
//! the shards belong to one run and are all there once, adds them, adds their intervals
//! ([`intervals`]), and writes a normal results folder through the run's own writers,
//! whose figures equal what one process reports for the same samples.
//!
//! What is not added: examples are kept in shard order up to the collector's bounds
//! (one process keeps the first in time); the resource series, soak outages and storms
//! and the generator's load are shard 0's (every shard watches the same server; each
//! shard's own generator figures stay in its folder), but the fleet's running totals
//! that per-session slopes divide by are every shard's.

pub mod intervals;
pub mod state;

use crate::cli::MergeArgs;
use crate::report::{self, assemble::RunFacts};
use anyhow::{bail, Context};
use state::{Part, State};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Shard 0's resource series, with the fleet's running totals (`fleet.sessions`,
/// `fleet.abandoned`, `fleet.calls`) summed over every shard at shard 0's sample times
/// (each shard's value at or before that time): the server's memory is the whole fleet's
/// doing, so its growth per session is per session of the whole fleet.
fn totals_of_all<'a>(
    first: &[crate::metrics::Series],
    all: impl Iterator<Item = &'a [crate::metrics::Series]> + Clone,
) -> Vec<crate::metrics::Series> {
    use crate::report::soak::shape::{ABANDONED, CALLS, SESSIONS};
    let mut out = first.to_vec();
    for s in out
        .iter_mut()
        .filter(|s| [SESSIONS, ABANDONED, CALLS].contains(&s.name.as_str()))
    {
        for p in &mut s.points {
            p[1] = all
                .clone()
                .filter_map(|series| series.iter().find(|x| x.name == s.name))
                .map(|x| {
                    x.points
                        .iter()
                        .take_while(|q| q[0] <= p[0] + 1e-6)
                        .last()
                        .map_or(0.0, |q| q[1])
                })
                .sum();
        }
    }
    out
}

/// The raw state of a run, in its results folder.
pub const STATE_FILE: &str = "state.json";

/// What `merge` made.
#[derive(Debug)]
pub struct Merged {
    pub summary: crate::summary::Summary,
    pub dir: PathBuf,
    /// The spread of the shards' start lateness (how late after `--start-at` each
    /// schedule began): the run's start skew.
    pub start_skew: Duration,
}

/// The shards of one run, in index order, checked: one version, one plan, one count,
/// one start, every index once.
fn check(shards: Vec<(PathBuf, State)>) -> anyhow::Result<Vec<(PathBuf, State)>> {
    let Some((first_dir, first)) = shards.first() else {
        bail!("no results folder to merge\nfix: give the shards' folders: mcp-fleet merge DIR... --out DIR");
    };
    for (dir, s) in &shards {
        let d = dir.display();
        if s.part().is_none() {
            bail!(
                "{d} is a merged report, not a shard\nfix: merge the shards' own folders (all of them at once)"
            );
        }
        if s.mcp_fleet != first.mcp_fleet {
            bail!(
                "{d} was written by mcp-fleet {}, {} by {}: the shards of one run are run by one version\nfix: run every shard with the same mcp-fleet",
                s.mcp_fleet,
                first_dir.display(),
                first.mcp_fleet
            );
        }
        if s.plan_hash != first.plan_hash {
            bail!(
                "{d} is a shard of another run than {}: their plans differ (profile, overrides or seed)\nfix: give the shards of one run: the same profile, overrides and --seed",
                first_dir.display()
            );
        }
        if s.shards != first.shards {
            bail!(
                "{d} is one of {} shards, {} one of {}: not the same run\nfix: give the shards of one run",
                s.shards,
                first_dir.display(),
                first.shards
            );
        }
        if s.stats.interval_s != first.stats.interval_s {
            bail!(
                "{d} has intervals of {}s, {} of {}s: their intervals do not add up\nfix: run every shard with the same --interval",
                s.stats.interval_s,
                first_dir.display(),
                first.stats.interval_s
            );
        }
        if s.started_at_ns != first.started_at_ns {
            bail!(
                "{d} started at {}, {} at {}: the shards of one run share their start\nfix: start every shard with the same --start-at",
                humantime::format_rfc3339_nanos(state::time_of(s.started_at_ns)),
                first_dir.display(),
                humantime::format_rfc3339_nanos(state::time_of(first.started_at_ns))
            );
        }
    }
    let n = first.shards;
    let mut by_index: Vec<Vec<(PathBuf, State)>> = (0..n).map(|_| Vec::new()).collect();
    for (dir, s) in shards {
        let index = s.part().map_or(0, |p| p.index);
        match by_index.get_mut(index as usize) {
            Some(list) => list.push((dir, s)),
            None => bail!("{} says it is shard {index} of {n}", dir.display()),
        }
    }
    let mut out = Vec::new();
    for (i, mut list) in by_index.into_iter().enumerate() {
        match list.len() {
            0 => bail!(
                "shard {i}/{n} is missing\nfix: give every shard's results folder (shards 0 to {})",
                n - 1
            ),
            1 => out.extend(list.pop()),
            _ => {
                let dirs: Vec<String> = list.iter().map(|(d, _)| d.display().to_string()).collect();
                bail!(
                    "shard {i}/{n} is given twice: {}\nfix: give each shard's folder once",
                    dirs.join(", ")
                );
            }
        }
    }
    Ok(out)
}

/// Why the merged run ended: the first shard's reason that is not the plan's own end
/// (a signal, an unreachable target), else shard 0's.
/// The merged run's target: the shards' one, or, when they targeted different servers
/// (each its own built-in server, say), the first and how many there were.
fn target_of(shards: &[(PathBuf, State)]) -> String {
    let first = &shards[0].1.run.target;
    let distinct = shards
        .iter()
        .map(|(_, s)| &s.run.target)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if distinct == 1 {
        first.clone()
    } else {
        let others = distinct - 1;
        let s = if others == 1 { "" } else { "s" };
        format!("{first} and {others} other target{s}, one per shard")
    }
}

fn stopped_by(shards: &[(PathBuf, State)]) -> String {
    let planned = ["sessions", "duration"];
    shards
        .iter()
        .map(|(_, s)| &s.run.stopped_by)
        .find(|r| !planned.contains(&r.as_str()))
        .or_else(|| shards.first().map(|(_, s)| &s.run.stopped_by))
        .cloned()
        .unwrap_or_default()
}

/// Merge the shards' results folders `dirs` into `out`. An error (exit 2) when they do
/// not make one whole run.
pub fn merge_dirs(dirs: &[PathBuf], out: &Path) -> anyhow::Result<Merged> {
    let read: Vec<(PathBuf, State)> = dirs
        .iter()
        .map(|d| Ok((d.clone(), State::read(d)?)))
        .collect::<anyhow::Result<_>>()?;
    let shards = check(read)?;
    std::fs::create_dir_all(out)
        .with_context(|| format!("creating the results folder {}", out.display()))?;
    let out_real = out.canonicalize().unwrap_or_else(|_| out.to_path_buf());
    for (dir, _) in &shards {
        if dir.canonicalize().is_ok_and(|d| d == out_real) {
            bail!(
                "--out {} is one of the shards' folders\nfix: merge into a folder of its own",
                out.display()
            );
        }
    }
    // A folder merged into before keeps no interval log of a phase this merge lacks.
    for phase in crate::metrics::Phase::ALL {
        let stale = out.join(report::hlog::file_name(phase));
        if stale.is_file() {
            std::fs::remove_file(&stale)
                .with_context(|| format!("removing {}", stale.display()))?;
        }
    }
    let (first_dir, first) = &shards[0];
    let mut stats = first
        .stats
        .stats()
        .with_context(|| format!("{}/{STATE_FILE}", first_dir.display()))?;
    for (dir, s) in &shards[1..] {
        let theirs = s
            .stats
            .stats()
            .with_context(|| format!("{}/{STATE_FILE}", dir.display()))?;
        stats.merge(&theirs);
    }
    let started_at = state::time_of(first.started_at_ns);
    let files: Vec<intervals::ShardFiles> = shards
        .iter()
        .map(|(dir, s)| intervals::ShardFiles {
            dir: dir.clone(),
            until_s: s
                .checkpoint
                .then(|| Duration::from_nanos(s.duration_ns).as_secs_f64()),
        })
        .collect();
    let every_s = first.stats.interval_s;
    let timeline = if every_s > 0.0 {
        intervals::merge(&files, out, started_at, every_s)?
    } else {
        Vec::new()
    };
    stats.timeline = timeline;
    let finished_ns = shards
        .iter()
        .map(|(_, s)| s.finished_at_ns)
        .max()
        .unwrap_or(0);
    let duration_ns = shards.iter().map(|(_, s)| s.duration_ns).max().unwrap_or(0);
    let checkpoint = shards.iter().any(|(_, s)| s.checkpoint);
    let facts = RunFacts {
        started_at,
        finished_at: state::time_of(finished_ns),
        duration: Duration::from_nanos(duration_ns),
        target: target_of(&shards),
        transport: first.run.transport.clone(),
        stopped_by: if checkpoint {
            "running".into()
        } else {
            stopped_by(&shards)
        },
        // Each shard's own summary says which threshold stopped it.
        stopped_because: None,
        resources: totals_of_all(
            &first.run.resources,
            shards.iter().map(|(_, s)| s.run.resources.as_slice()),
        ),
        soak: first.run.soak.clone(),
        checkpoint_at: checkpoint.then(|| state::time_of(finished_ns)),
        shard: None,
        shards: Some(first.shards),
        outputs: Vec::new(),
    };
    let thresholds = first
        .plan
        .thresholds
        .iter()
        .map(|t| crate::plan::Threshold::parse_in(t, &first.plan.requests))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{}/{STATE_FILE}: a threshold: {e}", first_dir.display()))?;
    let mut summary = report::assemble::summary_from(&first.plan, &thresholds, &stats, &facts);
    let profile_toml = std::fs::read_to_string(first_dir.join("profile.toml")).unwrap_or_default();
    // The soak verdicts (drift) read the merged interval files, as `report DIR` does.
    report::soak::refresh(&mut summary, out, &stats.timeline, Some(&profile_toml));
    let histograms = stats
        .phases
        .active()
        .map(|(p, s)| (p.name().to_string(), s.service.clone()))
        .collect();
    report::write_results(out, &summary, &profile_toml, &stats.timeline, histograms)
        .with_context(|| format!("writing results to {}", out.display()))?;
    let mut merged = State {
        shard: Part::Merged(state::MERGED.into()),
        finished_at_ns: finished_ns,
        duration_ns,
        checkpoint,
        stats: state::StatsState::of(&stats)?,
        ..first.clone()
    };
    merged.run.stopped_by = facts.stopped_by.clone();
    let lates = shards.iter().map(|(_, s)| s.run.start_late_us);
    let (earliest, latest) = lates.fold((u64::MAX, 0), |(lo, hi), l| (lo.min(l), hi.max(l)));
    merged.run.start_late_us = latest;
    merged.write(out)?;
    Ok(Merged {
        summary,
        dir: out.to_path_buf(),
        start_skew: Duration::from_micros(latest.saturating_sub(earliest)),
    })
}

/// `mcp-fleet merge`: merge, print the summary; false when a threshold failed.
pub fn run(args: &MergeArgs) -> anyhow::Result<bool> {
    let merged = merge_dirs(&args.dirs, &args.out)?;
    print(&merged, args.quiet, &args.view);
    Ok(merged.summary.passed())
}

/// Print a merged run as `run` prints one (`quiet`: only its folder), with the start
/// skew between its shards.
pub fn print(merged: &Merged, quiet: bool, view: &crate::cli::ViewArgs) {
    if quiet {
        crate::console::outln(format_args!("{}", merged.dir.display()));
        return;
    }
    crate::console::outln(format_args!(
        "{}",
        crate::report::text::render_view(&merged.summary, view.summary_view())
    ));
    crate::console::outln(format_args!(
        "start skew between the shards: {:.3} ms",
        merged.start_skew.as_secs_f64() * 1e3
    ));
    crate::console::outln(format_args!("results: {}", merged.dir.display()));
}

#[cfg(test)]
mod tests;
