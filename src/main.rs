//! The binary: parse the command line, build the runtime, run, map errors to exit codes
//! (0 done, 1 thresholds failed, 2 the run could not be done — also after writing the
//! results when the target stayed unreachable for `--abort-on-unreachable` — 128 + N
//! stopped by signal N after writing the results). A closed stdout or stderr (`| head`)
//! stops the printing, not the command: the exit code stays as above.

use clap::Parser;
use mcp_fleet::cli::{Cli, Command};
use mcp_fleet::console;
use mcp_fleet::stop::StopReason;
use std::process::ExitCode;

/// How a command that did its job ended.
enum Verdict {
    Passed,
    /// A threshold, a `--fail-if` rule or `--strict` failed.
    Failed,
    /// Stopped before its end after writing the results: exit 128 + the signal's number,
    /// or 2 when the target stayed unreachable.
    Stopped(u8),
}

impl From<bool> for Verdict {
    fn from(passed: bool) -> Verdict {
        if passed {
            Verdict::Passed
        } else {
            Verdict::Failed
        }
    }
}

/// How a run (or a replay) ended, said on stderr when it failed.
fn run_verdict(o: &mcp_fleet::RunOutcome, strict: bool) -> Verdict {
    let findings_fail = strict && o.summary.has_error_findings();
    if findings_fail {
        console::errln(format_args!(
            "error: conformance findings of error severity (--strict)"
        ));
    }
    if o.stopped_by == StopReason::Unreachable {
        console::errln(format_args!(
            "error: the target stayed unreachable (--abort-on-unreachable); the results so far were written"
        ));
    }
    let nothing_worked = o.summary.nothing_completed();
    if nothing_worked && o.stopped_by.exit_code().is_none() {
        let s = &o.summary.sessions;
        console::errln(format_args!(
            "error: no session completed ({} failed, {} unreachable); exit 1",
            s.failed, s.unreachable
        ));
    }
    match o.stopped_by.exit_code() {
        Some(code) => Verdict::Stopped(code),
        None => Verdict::from(o.summary.passed() && !findings_fail && !nothing_worked),
    }
}

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
            console::errln(format_args!("error: cannot start the async runtime: {e}"));
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        // A shard of `--processes` whose parent was killed outright stops as on SIGTERM.
        mcp_fleet::processes::stop_when_orphaned();
        match cli.command {
            Command::Run(args) => {
                let strict = args.strict;
                mcp_fleet::run(*args).await.map(|o| run_verdict(&o, strict))
            }
            Command::Replay(args) => {
                let strict = args.run.strict;
                mcp_fleet::record::playback::replay(*args)
                    .await
                    .map(|o| run_verdict(&o, strict))
            }
            Command::Profile(args) => {
                mcp_fleet::record::playback::write_profile(&args).map(|()| Verdict::Passed)
            }
            Command::Ceiling(args) => {
                mcp_fleet::ceiling::run(*args)
                    .await
                    .map(|o| match o.exit_code() {
                        Some(code) => Verdict::Stopped(code),
                        None => Verdict::from(o.passed()),
                    })
            }
            Command::Serve(args) => mcp_fleet::serve(*args).await.map(|()| Verdict::Passed),
            Command::Inspect(args) => mcp_fleet::inspect::run(*args).await.map(|shown| {
                console::out(format_args!("{}", shown.text));
                if let Some(problem) = &shown.problem {
                    console::errln(format_args!("error: {problem}"));
                }
                if shown.could_not_connect {
                    return Verdict::Stopped(2);
                }
                Verdict::from(shown.passed)
            }),
            Command::Validate(args) => mcp_fleet::validate(&args).map(|text| {
                console::out(format_args!("{text}"));
                Verdict::Passed
            }),
            Command::Report(args) => match &args.from_requests {
                Some(file) => mcp_fleet::report::requests::command(
                    file,
                    args.out.as_deref(),
                    args.view.summary_view(),
                )
                .map(|()| Verdict::Passed),
                None => mcp_fleet::report(&args).map(Verdict::from),
            },
            Command::Compare(args) => mcp_fleet::compare(&args).map(Verdict::from),
            Command::Merge(args) => mcp_fleet::merge::run(&args).map(Verdict::from),
            Command::Record(args) => {
                mcp_fleet::record::run(*args)
                    .await
                    .map(|r| match r.exit_code {
                        0 => Verdict::Passed,
                        code => Verdict::Stopped(code),
                    })
            }
            Command::Completions(args) => {
                console::out(format_args!("{}", mcp_fleet::cli::completions(args.shell)));
                Ok(Verdict::Passed)
            }
        }
    });
    // Sessions still winding down (e.g. stdio children after Ctrl-C) must not hold the
    // process open.
    runtime.shutdown_timeout(std::time::Duration::from_secs(3));
    match result {
        Ok(Verdict::Passed) => ExitCode::SUCCESS,
        // A threshold or a --fail-if rule failed; the reports say which.
        Ok(Verdict::Failed) => ExitCode::from(1),
        // Interrupted, or the target stayed down: the results were written, but the run
        // is not a complete one.
        Ok(Verdict::Stopped(code)) => ExitCode::from(code),
        Err(e) => {
            console::errln(format_args!("error: {}", console::error_text(&e)));
            ExitCode::from(2)
        }
    }
}
