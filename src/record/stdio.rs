//! Recording a stdio server: the host starts `mcp-fleet record --stdio -- SERVER…` in
//! the server's place; the recorder starts the server and passes the client's stdin to
//! it and its stdout back, byte for byte as they come, reading whole lines on the side.
//! One process is one session. The server's stderr is the recorder's.

use crate::trace::{ClosedBy, From, TraceWriter, Transport};
use serde_json::Value;
use std::process::{ExitStatus, Stdio};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

/// Run `command` as the server until it exits; its exit status.
pub async fn record(
    command: &[String],
    trace: &TraceWriter,
    stop: CancellationToken,
) -> anyhow::Result<ExitStatus> {
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("--stdio needs the server's command after `--`");
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start the server {program:?}: {e}"))?;
    let (Some(to_server), Some(from_server)) = (child.stdin.take(), child.stdout.take()) else {
        anyhow::bail!("the server's stdin or stdout is not a pipe");
    };
    let session = trace.open(Transport::Stdio);
    let client_in = pass(tokio::io::stdin(), to_server, trace, session, From::Client);
    let server_out = pass(
        from_server,
        tokio::io::stdout(),
        trace,
        session,
        From::Server,
    );
    tokio::pin!(client_in, server_out);
    let (mut client_done, mut server_done) = (false, false);
    let mut by = None;
    let status = loop {
        tokio::select! {
            () = &mut client_in, if !client_done => {
                client_done = true;
                by.get_or_insert(ClosedBy::Client);
            }
            () = &mut server_out, if !server_done => {
                server_done = true;
                by.get_or_insert(ClosedBy::Server);
            }
            status = child.wait() => break status?,
            () = stop.cancelled() => {
                // Stopped: the server gets the signal the recorder got, and a moment.
                by.get_or_insert(ClosedBy::Recorder);
                if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGTERM,
                    );
                }
                match tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await {
                    Ok(status) => break status?,
                    Err(_) => {
                        let _ = child.kill().await;
                        break child.wait().await?;
                    }
                }
            }
        }
    };
    // What the server wrote before it exited still goes to the client.
    if !server_done {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), &mut server_out).await;
    }
    let by = by.unwrap_or(ClosedBy::Server);
    trace.close(session, by, Some(format!("the server exited ({status})")));
    Ok(status)
}

/// Copy `from` to `to` as bytes arrive, recording each whole line that is JSON; ends at
/// `from`'s end (then `to` is closed) or when `to` no longer takes bytes.
async fn pass(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    trace: &TraceWriter,
    session: u64,
    who: From,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // Recorded before it is passed on, so the trace keeps cause before effect.
        let mut rest = &buf[..n];
        while let Some(i) = memchr::memchr(b'\n', rest) {
            line.extend_from_slice(&rest[..i]);
            record_line(trace, session, who, &line);
            line.clear();
            rest = &rest[i + 1..];
        }
        line.extend_from_slice(rest);
        if to.write_all(&buf[..n]).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    if !line.is_empty() {
        record_line(trace, session, who, &line);
    }
    let _ = to.shutdown().await;
}

fn record_line(trace: &TraceWriter, session: u64, who: From, line: &[u8]) {
    if let Ok(m @ Value::Object(_)) = serde_json::from_slice::<Value>(line) {
        trace.message(session, who, m);
    }
}
