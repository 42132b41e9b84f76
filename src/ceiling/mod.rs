//! `mcp-fleet ceiling`: the highest session rate a server takes within its SLOs, and
//! what bounds it. A geometric ladder of open-model steps, then a bisection between the
//! last passing and the first failing rate ([`search`]); every step is a `run` of its
//! own through [`crate::run_slice`] — the same fleet, histograms and watchers — kept
//! under `steps/` ([`step`]); the answer and the verdict on what bounds it come from the
//! steps' measurements ([`verdict`]) and go to `ceiling.json` after every step
//! ([`file`]) and to `report.html`. A signal stops the search after writing the steps so
//! far; the exit code then says which signal, as `run`'s does.

pub mod file;
pub mod html;
pub mod local;
pub mod search;
pub mod server;
pub mod shards;
pub mod step;
pub mod verdict;

use crate::cli::{CeilingArgs, RunArgs};
use crate::client::StopSignals;
use crate::console;
use crate::plan::threshold::{Metric, Subject, Threshold};
use crate::plan::{Plan, Source};
use crate::shard::Shard;
use crate::stop::{SignalWatch, StopReason, StopSignal};
use anyhow::{bail, Context};
use file::{CeilingFile, Settings};
use search::Ladder;
use std::path::PathBuf;
use std::time::Duration;
use step::StepRun;

/// The SLOs of a search that names none: sessions (every phase of one) within half a
/// second at p99, and at most 1 % of requests failing.
pub const DEFAULT_SLOS: [&str; 2] = ["p99(session) < 500ms", "error_rate < 1%"];

/// What a finished (or stopped) search hands back to `main` and to tests.
#[derive(Debug)]
pub struct CeilingOutcome {
    pub file: CeilingFile,
    pub dir: PathBuf,
    /// A signal stopped the search (its steps so far are written).
    pub signal: Option<StopSignal>,
    /// A step was stopped because the target stayed unreachable.
    pub unreachable: bool,
}

impl CeilingOutcome {
    /// Passed: a ceiling was found (or every step passed); false when even the lowest
    /// step failed its SLOs.
    pub fn passed(&self) -> bool {
        self.file
            .answer
            .as_ref()
            .is_none_or(|a| a.ceiling_per_s.is_some())
    }

    /// The exit code when the search did not end as planned (as `run`'s).
    pub fn exit_code(&self) -> Option<u8> {
        match (self.signal, self.unreachable) {
            (Some(s), _) => Some(s.exit_code()),
            (None, true) => Some(2),
            (None, false) => None,
        }
    }
}

/// `mcp-fleet ceiling`.
pub async fn run(args: CeilingArgs) -> anyhow::Result<CeilingOutcome> {
    refuse_run_flags(&args)?;
    let shard = match args.shard.as_deref() {
        Some(text) => Some(Shard::parse(text)?).filter(|s| s.is_sharded()),
        None => None,
    };
    let ladder = Ladder {
        whole: args.ladder == "clients",
        retries: args.retries,
        ..Ladder::new(
            search::parse_rate(&args.from, "--from")?,
            search::parse_rate(&args.to, "--to")?,
            args.factor,
            search::parse_share(&args.resolution)?,
        )?
    };
    let slos = slos(&args)?;
    let knee_phase = knee_phase(&slos);
    let mut base = RunArgs {
        profile: args.profile.clone(),
        overrides: args.overrides.clone(),
        builtin_program: args.builtin_program.clone(),
        ..RunArgs::default()
    };
    base.overrides.thresholds = slos.iter().map(|t| t.text.clone()).collect();
    step::refuse_arrivals(&base)?;
    // The plan once, before anything starts: a bad profile or flag stops here (exit 2).
    let plan = step_plan(&base, ladder, args.step)?;
    if let Some(n) = args.processes {
        // Every option is checked above, once, before the shards start.
        return local::run(&args, n, &plan).await;
    }
    if let Some(shard) = shard {
        check_sharded(&args, &plan, shard)?;
    }
    if let Some(shard) = shard.filter(|s| s.index > 0) {
        return follow(&args, ladder, &base, &plan, shard).await;
    }
    let builtin = if plan.soak.server_inside {
        let b =
            server::BuiltIn::start(args.builtin_program.as_deref(), &builtin_flags(&plan)).await?;
        base.overrides.target = Some(b.url.clone());
        base.overrides.server_pids.push(b.pid);
        Some(b)
    } else {
        None
    };
    let result = search(&args, ladder, &base, &slos, knee_phase, shard).await;
    if let Some(b) = builtin {
        b.stop().await;
    }
    result
}

/// The search itself, once the server is up.
async fn search(
    args: &CeilingArgs,
    ladder: Ladder,
    base: &RunArgs,
    slos: &[Threshold],
    knee_phase: String,
    shard: Option<Shard>,
) -> anyhow::Result<CeilingOutcome> {
    let plan = step_plan(base, ladder, args.step)?;
    let dir = match (shard, args.out.as_deref()) {
        // The shards share the folder: nothing in it is cleared, the rounds refuse another
        // search's.
        (Some(_), Some(out)) => shards_folder(out)?,
        _ => crate::results::folder::choose("ceiling", args.out.as_deref(), args.quiet)?,
    };
    let pid = plan.watch.server_pids.first().copied();
    let ctx = verdict::Context {
        server_cores: args
            .server_cores
            .or_else(|| pid.and_then(server::cores_of))
            .or_else(|| {
                plan.watch
                    .server_cgroup
                    .is_some()
                    .then(server::machine_cores)
            }),
        server_fd_limit: pid.and_then(server::fd_limit_of),
        knee_phase,
        clients: ladder.whole,
        shards: shard.map_or(1, |s| s.count),
    };
    let mut file = CeilingFile {
        schema_version: file::SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        settings: Settings {
            from_per_s: ladder.from,
            to_per_s: ladder.to,
            factor: ladder.factor,
            step_s: args.step.as_secs_f64(),
            warmup_s: args.step_warmup.as_secs_f64(),
            resolution: ladder.resolution,
            slos: slos.iter().map(|t| t.text.clone()).collect(),
            target: String::new(),
            server_cores: ctx.server_cores,
            ladder: args.ladder.clone(),
            shards: shard.map(|s| s.count),
            retries: ladder.retries,
        },
        ..CeilingFile::default()
    };
    // Signals between steps (a step's own run sees them too and stops itself).
    let signals = SignalWatch::start(StopSignals::default(), Duration::from_secs(3600), true)
        .context("installing the signal handlers")?;
    if !args.quiet {
        describe(&file.settings, &ctx, &dir);
        console::errln(format_args!(
            "{}",
            file::table_header(&ctx.knee_phase, ladder.whole)
        ));
    }
    let runner = StepRun {
        base,
        warmup: args.step_warmup,
        step: args.step,
        clients: ladder.whole,
    };
    let mut leader = match shard {
        Some(s) => {
            let mut l = shards::Leader {
                rounds: shards::Rounds::open(&dir, s)?,
                grace: plan.load.grace,
                server_inside: plan.soak.server_inside,
                wait: args.shard_wait,
            };
            if let Err(e) = l.start().await {
                l.stop(Some(format!("{e:#}")));
                return Err(e);
            }
            Some(l)
        }
        None => None,
    };
    let climbed = Climb {
        args,
        ladder,
        runner: &runner,
        ctx: &ctx,
        dir: &dir,
        signals: &signals,
    }
    .climb(&mut file, leader.as_mut())
    .await;
    if let Some(l) = leader.as_mut() {
        l.stop(climbed.as_ref().err().map(|e| format!("{e:#}")));
    }
    let (signal, unreachable) = climbed?;
    file.complete = signal.is_none() && !unreachable;
    if file.answer.is_none() {
        file.answer = Some(verdict::answer(&file.steps, &ctx));
    }
    file.write(&dir)?;
    html::write(&file, &dir)?;
    print(&file, &dir, args);
    Ok(CeilingOutcome {
        file,
        dir,
        signal,
        unreachable,
    })
}

/// What the ladder's climb reads.
struct Climb<'a> {
    args: &'a CeilingArgs,
    ladder: Ladder,
    runner: &'a StepRun<'a>,
    ctx: &'a verdict::Context,
    dir: &'a std::path::Path,
    signals: &'a SignalWatch,
}

impl Climb<'_> {
    /// Step up the ladder, then bisect, writing `file` after every step; with a
    /// `leader`, every step runs on all the shards and their merged figures decide.
    /// The signal that stopped the climb, and whether the target stayed unreachable.
    async fn climb(
        &self,
        file: &mut CeilingFile,
        mut leader: Option<&mut shards::Leader>,
    ) -> anyhow::Result<(Option<StopSignal>, bool)> {
        let (args, ladder, dir) = (self.args, self.ladder, self.dir);
        let mut measured: Vec<(f64, bool)> = Vec::new();
        while let Some(rate) = ladder.next(&measured) {
            if let Some(s) = self.signals.received() {
                return Ok((Some(s), false));
            }
            let index = u32::try_from(file.steps.len() + 1).unwrap_or(u32::MAX);
            let rel = step::folder(index, rate);
            let outcome = match leader.as_deref_mut() {
                Some(l) => l.measure(self.runner, &rel, rate).await?,
                None => self.runner.measure(&dir.join(&rel), rate).await?,
            };
            let mut fig = step::figures(
                &outcome.summary,
                rate,
                args.step,
                outcome.stopped_by,
                ladder.whole,
            );
            if let Some(l) = leader.as_deref() {
                let n = l.rounds.shard.count;
                if let Some(g) = shards::worst_generator(&dir.join(&rel), n, l.server_inside) {
                    fig.generator = g;
                }
            }
            fig.index = index;
            fig.stage = if measured.last().is_some_and(|&(r, ok)| r == rate && !ok) {
                "retry"
            } else if measured.iter().all(|(_, ok)| *ok) {
                "ladder"
            } else {
                "bisect"
            }
            .into();
            fig.dir = rel;
            if file.settings.target.is_empty() {
                file.settings.target = outcome.summary.run.target.clone();
            }
            if !args.quiet {
                console::errln(format_args!(
                    "{}",
                    file::table_row(&fig, &self.ctx.knee_phase)
                ));
            }
            if !fig.interrupted {
                measured.push((rate, fig.passed));
            }
            file.steps.push(fig);
            file.answer = Some(verdict::answer(&file.steps, self.ctx));
            file.write(dir)?;
            match outcome.stopped_by {
                StopReason::Signal(s) => return Ok((Some(s), false)),
                StopReason::Unreachable => return Ok((None, true)),
                _ => {}
            }
        }
        Ok((None, false))
    }
}

/// A sharded search's checks: a folder all shards share, and a target all load.
fn check_sharded(args: &CeilingArgs, plan: &Plan, shard: Shard) -> anyhow::Result<()> {
    if args.out.is_none() {
        bail!("ceiling --shard {shard} needs --out: the folder every shard of the search shares (a shared volume)\nfix: e.g. --out /results/ceiling-1 on every shard");
    }
    if plan.soak.server_inside {
        bail!("ceiling --shard {shard} needs a server every shard loads (--target or a profile's [target])\nfix: give --target URL; or, on one machine, ceiling --processes N starts the built-in server for all");
    }
    Ok(())
}

/// The shared folder of a sharded search, created (nothing in it cleared).
fn shards_folder(out: &std::path::Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(out)
        .with_context(|| format!("creating the results folder {}", out.display()))?;
    Ok(out.to_path_buf())
}

/// A shard other than 0: it follows the leader's orders into the shared folder.
async fn follow(
    args: &CeilingArgs,
    ladder: Ladder,
    base: &RunArgs,
    plan: &Plan,
    shard: Shard,
) -> anyhow::Result<CeilingOutcome> {
    let dir = shards_folder(args.out.as_deref().unwrap_or(std::path::Path::new(".")))?;
    let rounds = shards::Rounds::open(&dir, shard)?;
    if !args.quiet {
        console::errln(format_args!(
            "ceiling search: shard {shard}, following shard 0's orders in {}",
            dir.display()
        ));
    }
    let runner = StepRun {
        base,
        warmup: args.step_warmup,
        step: args.step,
        clients: ladder.whole,
    };
    let signal = shards::follow(
        rounds,
        &runner,
        plan.load.grace,
        args.shard_wait,
        args.quiet,
    )
    .await?;
    Ok(CeilingOutcome {
        file: CeilingFile::default(),
        dir,
        signal,
        unreachable: false,
    })
}

/// The built-in server's switches the plan asks for (`[target] app_tools`, `tasks`).
pub(crate) fn builtin_flags(plan: &Plan) -> Vec<&'static str> {
    let mut flags = Vec::new();
    if plan.builtin_app_tools {
        flags.push("--app-tools");
    }
    if plan.builtin_tasks {
        flags.push("--tasks");
    }
    flags
}

/// The flags of `run` a search sets itself.
fn refuse_run_flags(args: &CeilingArgs) -> anyhow::Result<()> {
    let o = &args.overrides;
    let set = [
        ("--rate", o.rate.is_some()),
        ("--duration", o.duration.is_some()),
        ("--sessions", o.sessions.is_some()),
        ("--clients", o.clients.is_some()),
        ("--ramp", o.ramp.is_some()),
    ];
    if let Some((flag, _)) = set.iter().find(|(_, on)| *on) {
        bail!("ceiling sets {flag} itself at every step\nfix: give the rates with --from and --to, and the length of a step with --step");
    }
    if o.iteration_rate.is_some() {
        bail!("ceiling climbs session arrivals (or clients), not --iteration-rate\nfix: leave out -q; for held sessions use --ladder clients with a long-lived profile, or run -q at the rates you want to compare");
    }
    Ok(())
}

/// The SLOs: `--slo`s and `--threshold`s, else [`DEFAULT_SLOS`]; each parsed.
fn slos(args: &CeilingArgs) -> anyhow::Result<Vec<Threshold>> {
    let mut texts: Vec<String> = args.slos.clone();
    texts.extend(args.overrides.thresholds.iter().cloned());
    if texts.is_empty() {
        texts = DEFAULT_SLOS.iter().map(|s| s.to_string()).collect();
    }
    texts
        .iter()
        .map(|t| Threshold::parse(t).with_context(|| format!("--slo {t:?}")))
        .collect()
}

/// The phase whose p99 shows the knee: the first latency SLO's, else `session`.
fn knee_phase(slos: &[Threshold]) -> String {
    slos.iter()
        .find_map(|t| match (t.metric, t.subject) {
            (Metric::Quantile(_) | Metric::Mean, Subject::Phase(p)) => Some(p.name().to_string()),
            _ => None,
        })
        .unwrap_or_else(|| "session".into())
}

/// The plan of the ladder's first step (errors as `run` would give them).
fn step_plan(base: &RunArgs, ladder: Ladder, step: Duration) -> anyhow::Result<Plan> {
    let mut o = base.overrides.clone();
    step::set_level(&mut o, ladder.from, ladder.whole);
    o.duration = Some(format!("{}ms", step.as_millis()));
    let source = Source::choose(base.profile.as_deref(), &o);
    Ok(Plan::from_source(&source, &o)?)
}

/// What the search will do, on stderr.
fn describe(s: &Settings, ctx: &verdict::Context, dir: &std::path::Path) {
    console::errln(format_args!(
        "ceiling search: {} to {} ×{} per rung, then bisection to {:.0} %; {} s a step after a {} s warm-up",
        ctx.level(s.from_per_s),
        ctx.level(s.to_per_s),
        s.factor,
        s.resolution * 100.0,
        s.step_s,
        s.warmup_s
    ));
    console::errln(format_args!("  SLOs: {}", s.slos.join(", ")));
    if s.retries > 0 {
        console::errln(format_args!(
            "  retries: a failing rate is measured again up to {} times; it passes if any try does",
            s.retries
        ));
    }
    if let Some(n) = s.shards {
        console::errln(format_args!(
            "  shards: {n} generator processes run every step together; shard 0 leads (waiting for all)"
        ));
    }
    match ctx.server_cores {
        Some(c) => console::errln(format_args!("  server: {c} cores")),
        None => console::errln(format_args!(
            "  server: CPU not watched (--server-pid, --server-cgroup or --server-metrics with --server-cores)"
        )),
    }
    console::errln(format_args!("  results: {}", dir.display()));
}

/// The verdict on stdout (only the folder with `--quiet`).
fn print(file: &CeilingFile, dir: &std::path::Path, args: &CeilingArgs) {
    if args.quiet {
        console::outln(format_args!("{}", dir.display()));
        return;
    }
    if let Some(a) = &file.answer {
        console::out(format_args!(
            "{}",
            file::verdict_text(a, file.settings.ladder == "clients")
        ));
    }
    if !file.complete {
        console::outln(format_args!(
            "stopped before the end: the answer is of the steps so far"
        ));
    }
    console::outln(format_args!("results: {}", dir.display()));
}

#[cfg(test)]
mod tests;
