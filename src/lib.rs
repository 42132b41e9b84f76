//! mcp-fleet: a fleet of mock MCP clients that load-tests MCP servers.
//!
//! The pipeline, in one screen:
//!
//! ```text
//! profile.toml ─load─▶ Profile ─resolve(+CLI overrides)─▶ Plan ─▶ fleet (load model)
//!   ─▶ client (one session: connect, handshake, steps, close) ─▶ session (JSON-RPC)
//!   ─▶ transport (stdio | Streamable HTTP | legacy HTTP+SSE | WebSocket)
//! session ─samples─▶ metrics::Collector ─▶ Stats ─▶ report::assemble ─▶ summary::Summary
//!   ─▶ report (terminal, summary.json, report.html, thresholds.xml)
//!               └─ every interval ─▶ .hlog + intervals.csv; instruments: live view, /metrics
//! ```
//!
//! [`run`] is that pipeline, in named steps; [`serve`] runs the built-in reference
//! server; [`validate`] stops after the plan; [`report`] and [`compare`] read results
//! folders; `mcp-fleet ceiling` (its own module) searches in steps of [`run_slice`].

pub mod ceiling;
pub mod cli;
pub mod client;
pub mod conformance;
pub mod console;
pub mod fleet;
mod http1;
pub mod inspect;
pub mod instruments;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod processes;
pub mod profile;
pub mod protocol;
pub mod record;
pub mod redact;
pub mod replay;
pub mod report;
pub mod results;
pub mod server;
pub mod session;
pub mod shard;
pub mod stop;
pub mod summary;
pub mod targets;
pub mod trace;
pub mod transport;
pub mod watch;

use anyhow::Context;
use cli::{CompareArgs, ReportArgs, RunArgs, ServeArgs, ValidateArgs};
use instruments::Instruments;
use plan::{Overrides, Plan};
use shard::{Shard, StartAt};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// The quickstart profile, embedded so `mcp-fleet run` works from any directory.
pub use plan::QUICKSTART;

/// What a finished run hands back to `main` and to tests.
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: summary::Summary,
    pub results_dir: PathBuf,
    /// How the run ended; a signal makes `main` exit 128 + its number.
    pub stopped_by: stop::StopReason,
    /// Which shard of the run this was ([`shard::Shard::ONE`] unsharded).
    pub shard: Shard,
    /// When the schedule began: `--start-at` (or when the run was ready) and how late
    /// after it the schedule really began (the start skew, for the state file).
    pub start: shard::Start,
}

/// `mcp-fleet run`: the whole pipeline. The shard and its start, the plan with its
/// targets and results folder, the instruments, the wait for `--start-at`, the fleet
/// (with checkpoints), then the results written and printed. Errors mean the run could
/// not be done.
pub async fn run(args: RunArgs) -> anyhow::Result<RunOutcome> {
    if let Some(n) = args.processes {
        return run_processes(&args, n).await;
    }
    let outcome = run_slice(&args).await?;
    print_summary(&outcome.summary, &outcome.results_dir, &args);
    Ok(outcome)
}

/// One run (this process's shard of it) with its results written but not printed: the
/// body of [`run`], and each step of a `mcp-fleet ceiling` search, so a step's figures are
/// exactly those `run` would give.
pub async fn run_slice(args: &RunArgs) -> anyhow::Result<RunOutcome> {
    // The shard and the start time first: a bad one stops the run before anything starts.
    let (shard, start_at) = shard_and_start(args)?;
    let Prepared {
        plan,
        targets,
        dir,
        metrics,
        dashboard,
    } = prepare(args, shard, start_at.as_ref()).await?;
    let instruments = Instruments::start(
        &plan,
        instruments_options(args, metrics, shard),
        &dir,
        &targets.children,
        start_at.as_ref().map(|a| a.at),
    )
    .await?;
    // Everything is ready: wait for --start-at (or fail if it is too late for it).
    let start = match instruments.wait_for_start(start_at.as_ref(), shard).await {
        Ok(start) => start,
        Err(late) => {
            let _ = instruments.stop().await;
            targets.shutdown().await;
            return Err(late.into());
        }
    };
    let run = Arc::new(results::Run::new(
        &plan,
        &dir,
        &targets,
        &instruments,
        shard,
        &start,
    ));
    let checkpoints = results::Checkpoints::start(run.clone(), &instruments, args.quiet);
    let dashboard = match dashboard {
        Some(listener) => Some(
            results::dashboard::Dashboard::start(listener, run.clone(), &instruments, args.quiet)
                .await
                .context("starting the live dashboard")?,
        ),
        None => None,
    };
    let aborts = results::abort::AbortWatch::start(run.clone(), &instruments, args.quiet);
    let work = fleet_work(&plan, &targets, &instruments, args.probe_undeclared, shard);
    let scheduled = start_at.is_some().then_some(instruments.started().1);
    let anchor = fleet::Anchor::new(shard, scheduled);
    let (live, stop) = (instruments.live.clone(), instruments.stop.clone());
    let fleet_end = fleet::run(&plan.load, plan.seed, anchor, work, live, stop).await;
    aborts.stop().await;
    checkpoints.stop().await;
    let measured = instruments.stop().await?;
    targets.shutdown().await;

    let stopped_by = match run.stopped_because.get() {
        // A signal before the loss still outranks it (`of`).
        Some(_) if measured.signal.is_none() => stop::StopReason::Threshold,
        _ => stop::StopReason::of(measured.signal, fleet_end),
    };
    let summary = results::write_end(&run, &measured, &stopped_by);
    if let Some(d) = dashboard {
        d.finish(&dir).await;
    }
    let summary = summary?;
    Ok(RunOutcome {
        summary,
        results_dir: dir,
        stopped_by,
        shard,
        start,
    })
}

/// `--shard` and `--start-at`, read and checked: a start already too late fails here.
fn shard_and_start(args: &RunArgs) -> anyhow::Result<(Shard, Option<StartAt>)> {
    let shard = match args.shard.as_deref() {
        Some(text) => Shard::parse(text)?,
        None => Shard::ONE,
    };
    let start_at = match args.start_at.as_deref() {
        Some(text) => {
            let at = StartAt::parse(text, SystemTime::now())?;
            at.ready(shard, SystemTime::now())?;
            Some(at)
        }
        None => None,
    };
    Ok((shard, start_at))
}

/// What a run needs before its instruments start.
struct Prepared {
    /// This shard's plan.
    plan: Arc<Plan>,
    targets: targets::Targets,
    /// The results folder, created.
    dir: PathBuf,
    /// `--metrics-listen`, bound before the results folder was made.
    metrics: Option<tokio::net::TcpListener>,
    /// `--dashboard`, bound likewise.
    dashboard: Option<tokio::net::TcpListener>,
}

/// The plan (this shard's part of it), its targets and its results folder; the plan
/// described on stderr unless `--quiet`.
async fn prepare(
    args: &RunArgs,
    shard: Shard,
    start_at: Option<&StartAt>,
) -> anyhow::Result<Prepared> {
    let source = plan::Source::choose(args.profile.as_deref(), &args.overrides);
    let mut plan = Plan::from_source(&source, &args.overrides)?;
    let local = std::env::var_os(shard::LOCAL_SHARDS).is_some();
    let sharded = apply_shard(&mut plan, shard, local);
    let plan = Arc::new(plan);
    // Whatever can stop the run before it starts comes before its results folder: a
    // failed start leaves no files behind.
    let metrics = match args.metrics_listen {
        Some(addr) => Some(instruments::prometheus::bind(addr).await?),
        None => None,
    };
    let dashboard = match args.dashboard {
        Some(addr) => Some(results::dashboard::bind(addr).await?),
        None => None,
    };
    let targets = targets::resolve(&plan, args.builtin_program.as_deref()).await?;
    let dir = results::folder::choose(&plan.folder_name(), args.out.as_deref(), args.quiet)?;
    let open_files = transport::tcp::raise_open_file_limit();
    if !args.quiet {
        console::err(format_args!("{}", plan.describe()));
        if shard.is_sharded() {
            let seed_from_profile = sharded.seed_from_profile;
            console::err(format_args!(
                "{}",
                plan.describe_shard(shard, seed_from_profile)
            ));
        }
        if let Some(at) = start_at {
            console::errln(format_args!("  start at {}", at.text));
        }
        console::errln(format_args!("  open-file limit {open_files}"));
    }
    Ok(Prepared {
        plan,
        targets,
        dir,
        metrics,
        dashboard,
    })
}

/// What the instruments take of the command line.
fn instruments_options(
    args: &RunArgs,
    metrics: Option<tokio::net::TcpListener>,
    shard: Shard,
) -> instruments::Options {
    instruments::Options {
        quiet: args.quiet,
        metrics,
        shard,
    }
}

/// The fleet's work: MCP sessions as `plan` describes them, against `targets`, recorded
/// by `instruments`. Only shard 0 probes what every shard would (`--probe-undeclared`).
fn fleet_work(
    plan: &Arc<Plan>,
    targets: &targets::Targets,
    instruments: &Instruments,
    probe_undeclared: bool,
    shard: Shard,
) -> Arc<client::FleetWork> {
    let conformance = conformance::Tracker::new(probe_undeclared).probed_elsewhere(shard.index > 0);
    Arc::new(client::FleetWork {
        plan: plan.clone(),
        ctx: client::SessionContext {
            endpoints: Arc::new(targets.endpoints.clone()),
            recorder: instruments.recorder.clone(),
            timeout: plan.connection.timeout,
            conformance: Arc::new(conformance),
            transcript: None,
            calls: client::CallData {
                pools: plan.pools.clone(),
                policy: plan.arguments,
            },
            auth: client::auth::Credentials::new(plan),
            changes: Default::default(),
            // Each shard paces its share of the fleet's iterations.
            pace: plan
                .load
                .iteration_rate
                .map(|r| Arc::new(client::FleetPace::new(r / f64::from(shard.count.max(1))))),
        },
    })
}

/// The run's summary on stdout, and where its results are (only that with `--quiet`).
fn print_summary(summary: &summary::Summary, dir: &std::path::Path, args: &RunArgs) {
    if args.quiet {
        console::outln(format_args!("{}", dir.display()));
    } else {
        let view = args.view.summary_view();
        console::outln(format_args!("{}", report::text::render_view(summary, view)));
        if args.histogram {
            print_histogram(dir, view.style);
        }
        console::outln(format_args!("results: {}", dir.display()));
    }
}

/// `--histogram`: a latency histogram per phase of the run in `dir`, from its raw state
/// (every phase's histogram, as written for `merge`).
fn print_histogram(dir: &std::path::Path, style: report::style::Style) {
    match merge::state::State::read(dir).and_then(|s| s.stats.stats()) {
        Ok(stats) => console::outln(format_args!(
            "{}",
            report::text::histogram::render(&stats, style)
        )),
        Err(e) => console::errln(format_args!("warning: no histogram: {e:#}")),
    }
}

/// `run --processes N`: the plan and the results folder once, then N shard processes
/// of this program and their merge ([`processes`]).
async fn run_processes(args: &RunArgs, n: u32) -> anyhow::Result<RunOutcome> {
    processes::check(n, args.shard.is_some())?;
    // Every child would bind the one address: a page or an endpoint is one process's.
    if let Some(flag) = [
        args.dashboard.map(|_| "--dashboard"),
        args.metrics_listen.map(|_| "--metrics-listen"),
    ]
    .into_iter()
    .flatten()
    .next()
    {
        anyhow::bail!(
            "{flag} serves one process's figures, and --processes starts several\nfix: push every shard to Prometheus or OTLP instead (--push KIND=URL; deploy/grafana has a dashboard that adds them up)"
        );
    }
    let source = plan::Source::choose(args.profile.as_deref(), &args.overrides);
    let plan = Plan::from_source(&source, &args.overrides)?;
    let dir = results::folder::choose(&plan.folder_name(), args.out.as_deref(), args.quiet)?;
    let done = processes::run(&processes_options(args, n), &plan, &dir).await?;
    Ok(RunOutcome {
        summary: done.merged.summary,
        results_dir: done.merged.dir,
        stopped_by: done.stopped_by,
        shard: Shard::ONE,
        start: done.start,
    })
}

/// What `run --processes N` takes of the command line.
fn processes_options(args: &RunArgs, n: u32) -> processes::Options {
    processes::Options {
        count: n,
        start_at: args.start_at.clone(),
        program: args.builtin_program.clone(),
        quiet: args.quiet,
        view: args.view,
        // This command's own arguments after `run`, for the children.
        argv: args.child_argv.clone().unwrap_or_else(|| {
            std::env::args_os()
                .skip(1)
                .skip_while(|a| a != "run")
                .skip(1)
                .collect()
        }),
    }
}

/// What running as `shard` changed in a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sharded {
    /// The profile named no seed: it was derived from the written profile.
    seed_from_profile: bool,
}

/// Make `plan` shard `shard`'s: the same seed on every shard (the profile's, else
/// [`shard::profile_seed`] of the written profile), `unique` rows drawn as this shard, and, when
/// the shards share one machine (`local`), this shard's part of the source addresses.
/// Before the plan is shared (its pools must be ours alone).
fn apply_shard(plan: &mut Plan, shard: Shard, local: bool) -> Sharded {
    let mut seed_from_profile = false;
    if shard.is_sharded() && plan.effective_profile.seed.is_none() {
        plan.seed = shard::profile_seed(&plan.profile_toml());
        seed_from_profile = true;
    }
    if let Some(pools) = std::sync::Arc::get_mut(&mut plan.pools) {
        pools.set_shard(shard);
    } else {
        // Shared already: rebuild the pools' draw state for this shard.
        let mut pools = crate::plan::data::Pools(
            plan.pools
                .0
                .iter()
                .map(crate::plan::data::Pool::clone_rows)
                .collect(),
        );
        pools.set_shard(shard);
        plan.pools = std::sync::Arc::new(pools);
    }
    if local {
        plan.connection.source_addresses = shard.split_sources(&plan.connection.source_addresses);
    }
    Sharded { seed_from_profile }
}

/// `mcp-fleet serve`: the reference server until Ctrl-C (HTTP) or stdin's end (stdio).
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    cli::serve::run(args).await
}

/// `mcp-fleet report DIR`: rebuild the views of a results folder and print the summary.
pub fn report(args: &ReportArgs) -> anyhow::Result<bool> {
    let summary = report::regenerate(args.folder())?;
    let view = args.view.summary_view();
    console::outln(format_args!(
        "{}",
        report::text::render_view(&summary, view)
    ));
    if args.histogram {
        print_histogram(args.folder(), view.style);
    }
    console::outln(format_args!(
        "report: {}",
        args.folder().join(report::html::FILE_NAME).display()
    ));
    Ok(true)
}

/// `mcp-fleet compare BASE NEW`: print the deltas; false when a `--fail-if` rule matched.
pub fn compare(args: &CompareArgs) -> anyhow::Result<bool> {
    use report::compare::ceiling as searches;
    if searches::is_ceiling(&args.base) && searches::is_ceiling(&args.new) {
        let rules = args
            .fail_if
            .iter()
            .map(|t| searches::Rule::parse(t))
            .collect::<Result<Vec<_>, _>>()
            .context("--fail-if")?;
        let c = searches::compare(&args.base, &args.new, &rules)?;
        console::out(format_args!("{}", c.text));
        return Ok(c.regressions.is_empty());
    }
    let rules = args
        .fail_if
        .iter()
        .map(|t| report::compare::FailIf::parse(t))
        .collect::<Result<Vec<_>, _>>()
        .context("--fail-if")?;
    let base = report::load_summary(&args.base)?;
    let new = report::load_summary(&args.new)?;
    let profile = |dir: &std::path::Path| std::fs::read_to_string(dir.join("profile.toml")).ok();
    let profiles = (profile(&args.base), profile(&args.new));
    let both = match &profiles {
        (Some(b), Some(n)) => Some((b.as_str(), n.as_str())),
        _ => None,
    };
    let c = report::compare::compare_with(&base, &new, &rules, both);
    console::out(format_args!("{}", c.text));
    Ok(c.regressions.is_empty())
}

/// `mcp-fleet validate`: resolve the profile and print the plan.
pub fn validate(args: &ValidateArgs) -> anyhow::Result<String> {
    let source = plan::Source::File(args.profile.clone());
    let plan = Plan::from_source(&source, &Overrides::default())?;
    Ok(format!("{}{}", plan.describe(), plan.describe_details()))
}
