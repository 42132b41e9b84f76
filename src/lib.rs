//! mcp-fleet: a fleet of mock MCP clients that load-tests MCP servers.
//!
//! The pipeline, in one screen:
//!
//! ```text
//! profile.toml ─load─▶ Profile ─resolve(+CLI overrides)─▶ Plan ─▶ fleet (load model)
//!   ─▶ client (one session: connect, handshake, steps, close) ─▶ session (JSON-RPC)
//!   ─▶ transport (stdio | Streamable HTTP)
//! session ─samples─▶ metrics::Collector ─▶ Stats ─▶ report (terminal, summary.json,
//!   report.html, thresholds.xml)
//!               └─ every interval ─▶ .hlog + intervals.csv, live view, /metrics
//! ```
//!
//! [`run`] is that pipeline; [`serve`] runs the built-in reference server; [`validate`]
//! stops after the plan; [`report`] and [`compare`] read results folders.

pub mod cli;
pub mod client;
pub mod conformance;
pub mod fleet;
pub mod inspect;
pub mod metrics;
pub mod plan;
pub mod profile;
pub mod protocol;
pub mod report;
pub mod server;
pub mod session;
pub mod targets;
pub mod transport;

use anyhow::Context;
use cli::{CompareArgs, ReportArgs, RunArgs, ServeArgs, ValidateArgs};
use plan::{Overrides, Plan};
use profile::Profile;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The quickstart profile, embedded so `mcp-fleet run` works from any directory.
pub const QUICKSTART: &str = include_str!("../profiles/quickstart.toml");

/// What a finished run hands back to `main` and to tests.
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: report::Summary,
    pub results_dir: PathBuf,
}

/// Load the profile named on the command line (or the quickstart) and apply overrides.
pub fn plan_from_args(args: &RunArgs) -> anyhow::Result<Plan> {
    let overrides = Overrides {
        target: args.target.clone(),
        stdio: args.stdio.clone(),
        clients: args.clients,
        sessions: args.sessions,
        duration: args.duration.clone(),
        seed: args.seed,
        timeout: args.client.timeout.clone(),
        max_message_size: args.client.max_message_size.clone(),
        headers: args.client.headers.clone(),
        transport: args.client.transport.clone(),
        era: args.client.era.clone(),
        protocol_version: args.client.protocol_version.clone(),
        client_name: args.client.client_name.clone(),
        capabilities: args.client.capabilities.clone(),
        insecure: args.client.insecure,
        rate: args.rate.clone(),
        ramp: args.ramp.clone(),
        think: args.think.clone(),
        max_in_flight: args.max_in_flight,
        source_addresses: args.source_addresses.clone(),
        keep_alive: args.keep_alive,
        thresholds: args.thresholds.clone(),
    };
    let (profile, origin) = match &args.profile {
        Some(path) => (Profile::load(path)?, path.display().to_string()),
        // A target without a profile: handshake + discovery, no tool calls.
        None if args.target.is_some() || args.stdio.is_some() => {
            (Profile::default(), "command line".to_string())
        }
        None => (
            Profile::parse(QUICKSTART, "quickstart (built in)")?,
            "quickstart (built in)".to_string(),
        ),
    };
    Ok(Plan::resolve(profile, &overrides, &origin)?)
}

/// `mcp-fleet run`: the whole pipeline. Errors mean the run could not be done.
pub async fn run(args: RunArgs) -> anyhow::Result<RunOutcome> {
    let plan = Arc::new(plan_from_args(&args)?);

    let targets = targets::resolve(&plan).await?;

    let results_dir = args.out.clone().unwrap_or_else(|| {
        let stamp = humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .replace([':', '-'], "")
            .trim_end_matches('Z')
            .to_string();
        PathBuf::from("results").join(format!("{}-{stamp}", plan.name))
    });
    std::fs::create_dir_all(&results_dir)
        .with_context(|| format!("creating the results folder {}", results_dir.display()))?;

    let open_files = transport::tcp::raise_open_file_limit();
    if !args.quiet {
        eprint!("{}", plan.describe());
        eprintln!("  open-file limit {open_files}");
    }

    let interval = match &args.interval {
        Some(text) => humantime::parse_duration(text.trim())
            .ok()
            .filter(|d| *d >= Duration::from_millis(10))
            .with_context(|| {
                format!("--interval {text:?}: not a duration of 10ms or more\nfix: use e.g. --interval 1s")
            })?,
        None => metrics::DEFAULT_INTERVAL,
    };
    let started_at = SystemTime::now();
    let sinks: Vec<Box<dyn metrics::IntervalSink>> = vec![
        Box::new(report::hlog::HlogSink::new(&results_dir, started_at)),
        Box::new(
            report::csv::CsvSink::create(&results_dir)
                .with_context(|| format!("writing to {}", results_dir.display()))?,
        ),
    ];
    let (collector, recorder) = metrics::Collector::new(
        plan.personas.iter().map(|p| p.route.transport).collect(),
        plan.tools.len(),
    );
    let collector = collector.with_intervals(interval, sinks);
    let figures = collector.live();
    let collecting = tokio::spawn(collector.run());
    let live = Arc::new(fleet::LiveCounters::default());
    let stop = fleet::StopSignals::default();
    let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let stop = stop.clone();
        let flag = interrupted.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                stop.interrupt();
            }
        });
    }
    let progress_done = tokio_util::sync::CancellationToken::new();
    if let Some(addr) = args.metrics_listen {
        let bound =
            report::prometheus::serve(addr, figures.clone(), live.clone(), progress_done.clone())
                .await?;
        if !args.quiet {
            eprintln!("live metrics: http://{bound}/metrics");
        }
    }
    let progress = (!args.quiet).then(|| {
        let mode = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            fleet::live::Mode::Terminal
        } else {
            fleet::live::Mode::Lines {
                every: Duration::from_secs(5),
            }
        };
        tokio::spawn(fleet::live::show(
            mode,
            fleet::live::Goal::of(&plan),
            live.clone(),
            figures,
            progress_done.clone(),
        ))
    });

    let started = tokio::time::Instant::now();
    let ctx = client::SessionContext {
        endpoints: Arc::new(targets.endpoints.clone()),
        recorder,
        timeout: plan.timeout,
        conformance: Arc::new(conformance::Tracker::new(args.probe_undeclared)),
        transcript: None,
    };
    let work = Arc::new(client::FleetWork {
        plan: plan.clone(),
        ctx,
    });
    fleet::run(&plan.load, plan.seed, work, live, stop.clone()).await;
    let elapsed = started.elapsed();
    let finished_at = SystemTime::now();
    progress_done.cancel();
    if let Some(p) = progress {
        let _ = p.await;
    }
    let stats = collecting.await.context("the collector stopped")?;
    let (target_desc, transport_name) = (targets.description.clone(), targets.transports.clone());
    targets.shutdown().await;

    let stopped_by = if interrupted.load(std::sync::atomic::Ordering::SeqCst) {
        "interrupted"
    } else if stop.drain.is_cancelled() {
        "duration"
    } else {
        "sessions"
    };
    let facts = report::RunFacts {
        started_at,
        finished_at,
        duration: elapsed,
        target: target_desc,
        transport: transport_name,
        stopped_by: stopped_by.to_string(),
    };
    let summary = report::Summary::build(&plan, &stats, &facts);
    let histograms = stats
        .phases
        .active()
        .map(|(p, s)| (p.name().to_string(), s.service.clone()))
        .collect();
    report::write_results(
        &results_dir,
        &summary,
        &plan.effective_profile.to_toml(),
        &stats.timeline,
        histograms,
    )
    .with_context(|| format!("writing results to {}", results_dir.display()))?;
    if let Some(e) = &stats.interval_error {
        anyhow::bail!(
            "writing the interval files (.hlog, intervals.csv) to {}: {e}",
            results_dir.display()
        );
    }
    if args.quiet {
        println!("{}", results_dir.display());
    } else {
        println!("{}", report::text::render(&summary));
        println!("results: {}", results_dir.display());
    }
    Ok(RunOutcome {
        summary,
        results_dir,
    })
}

/// `mcp-fleet serve`.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let eras = match args.era.as_str() {
        "legacy" => server::Eras::Legacy,
        "modern" => server::Eras::Modern,
        _ => server::Eras::Both,
    };
    let opts = server::ServerOptions {
        page_size: args.page_size.max(1),
        sse_responses: args.sse_responses,
        eras,
        expire_sessions_after: args.expire_sessions_after,
        sse_drop_after: args.sse_drop_after,
        faults: args
            .faults
            .iter()
            .filter_map(|n| server::Fault::from_name(n))
            .collect(),
        stall: args.stall_at.zip(args.stall_for),
        ..Default::default()
    };
    match args.http {
        Some(addr) => {
            let server = server::spawn_http(addr, opts)
                .await
                .with_context(|| format!("cannot serve on {addr}"))?;
            eprintln!(
                "mcp-fleet reference server: {} (Streamable HTTP), http://{}/sse (legacy SSE), ws://{}/ws (WebSocket)",
                server.url(),
                server.addr,
                server.addr
            );
            let _ = tokio::signal::ctrl_c().await;
            server.shutdown().await;
            Ok(())
        }
        None => server::serve_stdio(opts).await,
    }
}

/// `mcp-fleet report DIR`: rebuild the views of a results folder and print the summary.
pub fn report(args: &ReportArgs) -> anyhow::Result<bool> {
    let summary = report::regenerate(&args.dir)?;
    println!("{}", report::text::render(&summary));
    println!(
        "report: {}",
        args.dir.join(report::html::FILE_NAME).display()
    );
    Ok(true)
}

/// `mcp-fleet compare BASE NEW`: print the deltas; false when a `--fail-if` rule matched.
pub fn compare(args: &CompareArgs) -> anyhow::Result<bool> {
    let rules = args
        .fail_if
        .iter()
        .map(|t| report::compare::FailIf::parse(t))
        .collect::<Result<Vec<_>, _>>()
        .context("--fail-if")?;
    let base = report::load_summary(&args.base)?;
    let new = report::load_summary(&args.new)?;
    let c = report::compare::compare(&base, &new, &rules);
    print!("{}", c.text);
    Ok(c.regressions.is_empty())
}

/// `mcp-fleet validate`: resolve the profile and print the plan.
pub fn validate(args: &ValidateArgs) -> anyhow::Result<String> {
    let profile = Profile::load(&args.profile)?;
    let plan = Plan::resolve(
        profile,
        &Overrides::default(),
        &args.profile.display().to_string(),
    )?;
    Ok(plan.describe())
}
