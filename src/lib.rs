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
pub mod console;
pub mod fleet;
pub mod inspect;
pub mod instruments;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod profile;
pub mod protocol;
pub mod redact;
pub mod report;
pub mod results;
pub mod server;
pub mod session;
pub mod shard;
pub mod stop;
pub mod targets;
pub mod transport;
pub mod watch;

use anyhow::Context;
use cli::{CompareArgs, ReportArgs, RunArgs, ServeArgs, ValidateArgs};
use plan::{Overrides, Plan};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// The quickstart profile, embedded so `mcp-fleet run` works from any directory.
pub use plan::QUICKSTART;

/// What a finished run hands back to `main` and to tests.
#[derive(Debug)]
pub struct RunOutcome {
    pub summary: report::Summary,
    pub results_dir: PathBuf,
    /// How the run ended; a signal makes `main` exit 128 + its number.
    pub stopped_by: stop::StopReason,
}

/// `mcp-fleet run`: the whole pipeline. Errors mean the run could not be done.
pub async fn run(args: RunArgs) -> anyhow::Result<RunOutcome> {
    let source = plan::Source::choose(args.profile.as_deref(), &args.overrides);
    let plan = Arc::new(Plan::from_source(&source, &args.overrides)?);
    let targets = targets::resolve(&plan, args.builtin_program.as_deref()).await?;
    let results_dir = results_dir(&plan, args.out.as_deref())?;
    let open_files = transport::tcp::raise_open_file_limit();
    if !args.quiet {
        console::err(format_args!("{}", plan.describe()));
        console::errln(format_args!("  open-file limit {open_files}"));
    }

    let instruments =
        instruments::Instruments::start(&plan, &args, &results_dir, &targets.children).await?;
    let run = Arc::new(results::Run {
        plan: plan.clone(),
        dir: results_dir.clone(),
        target: targets.description.clone(),
        transport: targets.transports.clone(),
        started_at: instruments.started().0,
        live: instruments.live.clone(),
        shard: shard::Shard::ONE,
    });
    let checkpoints = results::Checkpoints::start(
        run.clone(),
        instruments.snapshots.clone(),
        instruments.started().1,
        args.quiet,
    );
    let work = Arc::new(client::FleetWork {
        plan: plan.clone(),
        ctx: client::SessionContext {
            endpoints: Arc::new(targets.endpoints.clone()),
            recorder: instruments.recorder.clone(),
            timeout: plan.timeout,
            conformance: Arc::new(conformance::Tracker::new(args.probe_undeclared)),
            transcript: None,
            calls: client::CallData {
                pools: plan.pools.clone(),
                policy: plan.arguments,
            },
            auth: client::auth::Credentials::new(&plan),
        },
    });
    let (live, stop) = (instruments.live.clone(), instruments.stop.clone());
    let fleet_end = fleet::run(&plan.load, plan.seed, work, live, stop).await;
    checkpoints.stop().await;
    let measured = instruments.stop().await?;
    targets.shutdown().await;

    let stopped_by = stop::StopReason::of(measured.signal, fleet_end);
    let moment = results::Moment::end(&measured, &stopped_by);
    let facts = results::facts(&run, &measured.stats, &moment, measured.resources.clone());
    let summary = results::write(&run, &measured.stats, &facts)?;
    if args.quiet {
        console::outln(format_args!("{}", results_dir.display()));
    } else {
        console::outln(format_args!(
            "{}",
            report::text::render_view(&summary, args.view.summary_view())
        ));
        console::outln(format_args!("results: {}", results_dir.display()));
    }
    Ok(RunOutcome {
        summary,
        results_dir,
        stopped_by,
    })
}

/// `--out`, or `results/<name>-<time>`; created.
fn results_dir(plan: &Plan, out: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    let dir = out.map(PathBuf::from).unwrap_or_else(|| {
        let stamp = humantime::format_rfc3339_seconds(SystemTime::now())
            .to_string()
            .replace([':', '-'], "")
            .trim_end_matches('Z')
            .to_string();
        PathBuf::from("results").join(format!("{}-{stamp}", plan.name))
    });
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating the results folder {}", dir.display()))?;
    Ok(dir)
}

/// `serve --auth` and its options.
fn server_auth(args: &ServeArgs) -> anyhow::Result<Option<server::auth::AuthOptions>> {
    if !args.auth {
        return Ok(None);
    }
    let mut opts = server::auth::AuthOptions::default();
    if let Some(path) = &args.auth_tokens {
        opts.static_tokens = server::auth::read_tokens(path)?;
    }
    if let Some(pair) = &args.auth_client {
        let (id, secret) = pair
            .split_once(':')
            .filter(|(id, _)| !id.is_empty())
            .context("--auth-client wants ID:SECRET")?;
        (opts.client_id, opts.client_secret) = (id.to_string(), secret.to_string());
    }
    if let Some(ttl) = args.token_ttl {
        opts.token_ttl = ttl;
    }
    Ok(Some(opts))
}

/// `mcp-fleet serve`.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let auth = server_auth(&args)?;
    let opts = server::ServerOptions {
        page_size: args.page_size.max(1),
        sse_responses: args.sse_responses,
        eras: args.era,
        expire_sessions_after: args.expire_sessions_after,
        sse_drop_after: args.sse_drop_after,
        faults: args.faults,
        stall: args.stall_at.zip(args.stall_for),
        session_ttl: Some(args.session_ttl.unwrap_or(server::DEFAULT_SESSION_TTL)),
        app_tools: args.app_tools,
        auth,
        tasks: args.tasks,
        reuse_port: args.reuse_port,
        ..Default::default()
    };
    match args.http {
        Some(addr) => {
            let server = server::spawn_http(addr, opts)
                .await
                .with_context(|| format!("cannot serve on {addr}"))?;
            console::errln(format_args!(
                "mcp-fleet reference server: {} (Streamable HTTP), http://{}/sse (legacy SSE), ws://{}/ws (WebSocket), http://{}/metrics (Prometheus)",
                server.url(),
                server.addr,
                server.addr,
                server.addr
            ));
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
    console::outln(format_args!(
        "{}",
        report::text::render_view(&summary, args.view.summary_view())
    ));
    console::outln(format_args!(
        "report: {}",
        args.dir.join(report::html::FILE_NAME).display()
    ));
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
