//! mcp-fleet: a fleet of mock MCP clients that load-tests MCP servers.
//!
//! The pipeline, in one screen:
//!
//! ```text
//! profile.toml ─load─▶ Profile ─resolve(+CLI overrides)─▶ Plan ─▶ fleet (load model)
//!   ─▶ client (one session: connect, handshake, steps, close) ─▶ session (JSON-RPC)
//!   ─▶ transport (stdio | Streamable HTTP)
//! session ─samples─▶ metrics::Collector ─▶ Stats ─▶ report (terminal, summary.json)
//! ```
//!
//! [`run`] is that pipeline; [`serve`] runs the built-in reference server; [`validate`]
//! stops after the plan.

pub mod cli;
pub mod client;
pub mod fleet;
pub mod metrics;
pub mod plan;
pub mod profile;
pub mod protocol;
pub mod report;
pub mod server;
pub mod session;
pub mod transport;

use anyhow::{bail, Context};
use cli::{RunArgs, ServeArgs, ValidateArgs};
use plan::{Overrides, Plan, Target};
use profile::Profile;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use transport::http::HttpEndpoint;
use transport::stdio::StdioCommand;
use transport::Endpoint;

/// The quickstart profile, embedded so `mcp-fleet run` works from any directory.
pub const QUICKSTART: &str = include_str!("../profiles/quickstart.toml");

/// How long a stdio server gets at each shutdown step (stdin EOF, then SIGTERM).
const STDIO_GRACE: Duration = Duration::from_secs(2);

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
        timeout: args.timeout.clone(),
        headers: args.headers.clone(),
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

/// Check that the target can be reached before starting clients, so a typo is one
/// clear error (exit 2) rather than thousands of failed sessions.
async fn preflight(endpoint: &Endpoint, timeout: Duration) -> anyhow::Result<()> {
    match endpoint {
        Endpoint::Http(ep) => {
            match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(&ep.addr)).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => bail!("cannot reach {}: {e} — is the server running?", ep.addr),
                Err(_) => bail!("cannot reach {}: no answer within {timeout:?}", ep.addr),
            }
        }
        Endpoint::Sse(_) | Endpoint::Ws(_) => Ok(()),
        Endpoint::Stdio(cmd) => {
            if find_program(&cmd.program).is_none() {
                bail!(
                    "cannot find the program {:?} (not a file, and not on PATH)",
                    cmd.program
                );
            }
            Ok(())
        }
    }
}

fn find_program(program: &str) -> Option<PathBuf> {
    let p = std::path::Path::new(program);
    if program.contains('/') {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|c| c.is_file())
    })
}

/// `mcp-fleet run`: the whole pipeline. Errors mean the run could not be done.
pub async fn run(args: RunArgs) -> anyhow::Result<RunOutcome> {
    let plan = Arc::new(plan_from_args(&args)?);

    // The built-in server, when the plan names no target.
    let mut builtin = None;
    let (endpoint, target_desc) = match &plan.target {
        Target::BuiltIn => {
            let server = server::spawn_http(
                std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
                server::ServerOptions::default(),
            )
            .await
            .context("starting the built-in server")?;
            let url = url::Url::parse(&server.url())?;
            builtin = Some(server);
            let ep = HttpEndpoint::new(&url, plan.headers.clone(), plan.timeout, false)?;
            (Endpoint::Http(Arc::new(ep)), format!("{url} (built-in)"))
        }
        Target::Http(url) => {
            let ep = HttpEndpoint::new(url, plan.headers.clone(), plan.timeout, false)?;
            (Endpoint::Http(Arc::new(ep)), url.to_string())
        }
        Target::Stdio {
            program,
            args: a,
            env,
        } => {
            let cmd = StdioCommand {
                program: program.clone(),
                args: a.clone(),
                env: env.clone(),
                grace: STDIO_GRACE,
            };
            (Endpoint::Stdio(Arc::new(cmd)), plan.target.describe())
        }
    };
    preflight(&endpoint, plan.timeout).await?;
    let transport_name = match endpoint {
        Endpoint::Http(_) => "streamable-http",
        Endpoint::Sse(_) => "sse",
        Endpoint::Ws(_) => "ws",
        Endpoint::Stdio(_) => "stdio",
    };

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

    if !args.quiet {
        eprint!("{}", plan.describe());
    }

    let (collector, recorder) = metrics::Collector::new(plan.personas.len(), plan.tools.len());
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
    let progress =
        (!args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
            tokio::spawn(fleet::progress::show(
                live.clone(),
                Duration::from_secs(1),
                progress_done.clone(),
            ))
        });

    let started_at = SystemTime::now();
    let started = tokio::time::Instant::now();
    let ctx = client::SessionContext {
        endpoint,
        recorder,
        timeout: plan.timeout,
    };
    fleet::run(plan.clone(), ctx, live, stop.clone()).await;
    let elapsed = started.elapsed();
    let finished_at = SystemTime::now();
    progress_done.cancel();
    if let Some(p) = progress {
        let _ = p.await;
    }
    let stats = collecting.await.context("the collector stopped")?;
    if let Some(server) = builtin {
        server.shutdown().await;
    }

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
        transport: transport_name.to_string(),
        stopped_by: stopped_by.to_string(),
    };
    let summary = report::Summary::build(&plan, &stats, &facts);
    report::write_results(&results_dir, &summary, &plan.effective_profile.to_toml())
        .with_context(|| format!("writing results to {}", results_dir.display()))?;
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
    let opts = server::ServerOptions {
        page_size: args.page_size.max(1),
        sse_responses: args.sse_responses,
        ..Default::default()
    };
    match args.http {
        Some(addr) => {
            let server = server::spawn_http(addr, opts)
                .await
                .with_context(|| format!("cannot serve on {addr}"))?;
            eprintln!("mcp-fleet reference server on {}", server.url());
            let _ = tokio::signal::ctrl_c().await;
            server.shutdown().await;
            Ok(())
        }
        None => server::serve_stdio(opts).await,
    }
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
