//! The binary: parse the command line, build the runtime, run, map errors to exit codes
//! (0 done, 1 thresholds failed, 2 the run could not be done).

use clap::Parser;
use mcp_fleet::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => {
                let strict = args.strict;
                mcp_fleet::run(*args)
                    .await
                    .map(|o| strict && o.summary.has_error_findings())
            }
            Command::Serve(args) => mcp_fleet::serve(args).await.map(|()| false),
            Command::Inspect(args) => mcp_fleet::inspect::run(*args).await.map(|text| {
                print!("{text}");
                false
            }),
            Command::Validate(args) => mcp_fleet::validate(&args).map(|text| {
                print!("{text}");
                false
            }),
        }
    });
    // Sessions still winding down (e.g. stdio children after Ctrl-C) must not hold the
    // process open.
    runtime.shutdown_timeout(std::time::Duration::from_secs(3));
    match result {
        // `--strict` and a finding of error severity.
        Ok(true) => {
            eprintln!("error: conformance findings of error severity (--strict)");
            ExitCode::from(1)
        }
        Ok(false) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
