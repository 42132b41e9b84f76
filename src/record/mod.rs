//! `mcp-fleet record`: a transparent proxy between real MCP clients and a server that
//! writes what they say to each other into a trace (`crate::trace`): HTTP transports on
//! one port ([`http`], [`ws`]), or a stdio server wrapped ([`stdio`]). Bytes pass
//! unchanged; the trace gets messages, times, identities and habits, never a secret.
//! [`playback`]: the commands that play a trace back (`replay`, `profile --from-trace`).

mod body;
mod http;
pub mod playback;
mod sessions;
mod stdio;
mod upstream;
mod ws;

use crate::cli::RecordArgs;
use crate::console;
use crate::trace::{Redaction, TraceWriter};
use anyhow::Context;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a recording ended.
#[derive(Debug)]
pub struct Recorded {
    pub sessions: u64,
    /// stdio: the server's exit code (128 + N for a signal).
    pub exit_code: u8,
}

pub async fn run(args: RecordArgs) -> anyhow::Result<Recorded> {
    let redaction = redaction(&args)?;
    let stop = CancellationToken::new();
    spawn_signals(stop.clone())?;
    if args.stdio {
        let program = args.command.first().map_or("", String::as_str);
        let trace = TraceWriter::create(&args.trace, "stdio", program, redaction)
            .with_context(|| format!("cannot write the trace {}", args.trace.display()))?;
        let status = stdio::record(&args.command, &trace, stop).await;
        let sessions = trace.finish().context("writing the trace")?;
        let status = status?;
        let exit_code = match (
            status.code(),
            std::os::unix::process::ExitStatusExt::signal(&status),
        ) {
            (Some(c), _) => u8::try_from(c).unwrap_or(1),
            (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(1),
            _ => 1,
        };
        console::errln(format_args!(
            "mcp-fleet record: {sessions} session recorded to {}",
            args.trace.display()
        ));
        return Ok(Recorded {
            sessions,
            exit_code,
        });
    }
    let (Some(listen), Some(upstream)) = (args.listen, args.upstream.as_deref()) else {
        anyhow::bail!(
            "say what to record: --listen ADDR --upstream URL (HTTP), or --stdio -- CMD ARGS"
        );
    };
    let upstream =
        upstream::Upstream::parse(upstream, args.insecure).map_err(anyhow::Error::msg)?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen}"))?;
    let bound = listener.local_addr()?;
    let trace = TraceWriter::create(&args.trace, "http", &upstream.shown, redaction)
        .with_context(|| format!("cannot write the trace {}", args.trace.display()))?;
    let trace = Arc::new(trace);
    console::errln(format_args!(
        "mcp-fleet record: listening on {bound} (→ {}); trace → {}",
        upstream.shown,
        args.trace.display()
    ));
    let sessions = sessions::Sessions::new(trace.clone());
    let proxy = http::Proxy {
        upstream: Arc::new(upstream),
        sessions: sessions.clone(),
    };
    let server = tokio::spawn(http::serve(listener, proxy, stop.clone()));
    let enough = async {
        let Some(n) = args.sessions else {
            return std::future::pending().await;
        };
        loop {
            let notified = sessions.closed.notified();
            if sessions.closed_count() >= n {
                return;
            }
            notified.await;
        }
    };
    let deadline = async {
        match args.duration {
            Some(d) => tokio::time::sleep(Duration::from(d)).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = stop.cancelled() => {}
        () = enough => {}
        () = deadline => {}
    }
    stop.cancel();
    let _ = server.await;
    let recorded = trace.finish().context("writing the trace")?;
    console::errln(format_args!(
        "mcp-fleet record: {recorded} sessions recorded to {}",
        args.trace.display()
    ));
    Ok(Recorded {
        sessions: recorded,
        exit_code: 0,
    })
}

fn redaction(args: &RecordArgs) -> anyhow::Result<Redaction> {
    if let Some(bad) = args.redact.iter().find(|p| !p.starts_with('/')) {
        anyhow::bail!(
            "--redact {bad:?}: a JSON pointer starts with '/', e.g. /params/arguments/password"
        );
    }
    Ok(Redaction {
        pointers: args.redact.clone(),
        tools: args.redact_tool.clone(),
    })
}

/// SIGINT, SIGTERM and SIGHUP end the recording (the trace is finished).
fn spawn_signals(stop: CancellationToken) -> anyhow::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut signals = [
        signal(SignalKind::interrupt())?,
        signal(SignalKind::terminate())?,
        signal(SignalKind::hangup())?,
    ];
    tokio::spawn(async move {
        let [a, b, c] = &mut signals;
        tokio::select! {
            _ = a.recv() => {}
            _ = b.recv() => {}
            _ = c.recv() => {}
        }
        stop.cancel();
    });
    Ok(())
}
