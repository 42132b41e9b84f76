//! The stdio transport of the reference server: newline-delimited JSON-RPC on any byte
//! stream pair (stdin/stdout in production, in-memory pipes in tests).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::handler::{malformed_reply, Handler, Notifier, Session};
use super::ServerOptions;
use crate::protocol::methods as m;
use crate::protocol::Incoming;

/// How long requests still running at stdin EOF may finish (and be answered) before the
/// server exits anyway; the same grace the SDK clients give before SIGTERM.
const EOF_GRACE: Duration = Duration::from_secs(2);

/// Serve one client on stdin/stdout until stdin reaches EOF.
pub async fn serve_stdio(opts: ServerOptions) -> anyhow::Result<()> {
    serve_io(tokio::io::stdin(), tokio::io::stdout(), opts).await
}

/// Serve one client on `reader`/`writer`: one JSON-RPC message per line each way.
///
/// Requests run concurrently (a slow `sleep` must not hold up `ping`); replies go through
/// a single writer task so lines never interleave.
pub async fn serve_io<R, W>(reader: R, writer: W, opts: ServerOptions) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let handler = Arc::new(Handler::new(&opts));
    let session = Arc::new(Session::new());
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer_task = tokio::spawn(write_lines(writer, rx));
    let mut reader = BufReader::new(reader);
    let mut line = Vec::with_capacity(1024);
    let mut inflight = JoinSet::new();

    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .await
            .context("reading a message from stdin")?;
        if n == 0 || tx.is_closed() {
            break; // EOF, or the writer died because stdout closed
        }
        // Reap finished requests so a long session does not accumulate handles.
        while inflight.try_join_next().is_some() {}
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let msg = match Incoming::parse(&line) {
            Ok(msg) => msg,
            Err(e) => {
                let _ = tx.send(malformed_reply(&e));
                continue;
            }
        };
        let concurrent =
            matches!(&msg, Incoming::Request { method, .. } if method != m::INITIALIZE);
        let notifier = Notifier::new(tx.clone());
        if concurrent {
            let (handler, session, tx) = (handler.clone(), session.clone(), tx.clone());
            inflight.spawn(async move {
                if let Some(reply) = handler.handle(&session, msg, &notifier).await {
                    let _ = tx.send(reply);
                }
            });
        } else if let Some(reply) = handler.handle(&session, msg, &notifier).await {
            // `initialize` and notifications are instant and run in order, so a request
            // sent right after `initialize` always sees the negotiated version.
            let _ = tx.send(reply);
        }
    }

    let _ = tokio::time::timeout(EOF_GRACE, async {
        while inflight.join_next().await.is_some() {}
    })
    .await;
    inflight.abort_all();
    drop(tx);
    match writer_task.await.context("stdout writer task")? {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("writing a message to stdout")
        }
        _ => Ok(()),
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<()> {
    let mut out = BufWriter::new(writer);
    while let Some(msg) = rx.recv().await {
        out.write_all(&msg).await?;
        out.write_all(b"\n").await?;
        // Flush whenever the queue is drained: every message leaves promptly, and a burst
        // of replies shares one write.
        if rx.is_empty() {
            out.flush().await?;
        }
    }
    out.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, DuplexStream, Lines};

    struct Client {
        to_server: DuplexStream,
        from_server: Lines<BufReader<DuplexStream>>,
        server: tokio::task::JoinHandle<anyhow::Result<()>>,
    }

    fn start() -> Client {
        let (to_server, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, from_server) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(serve_io(server_in, server_out, ServerOptions::default()));
        Client {
            to_server,
            from_server: BufReader::new(from_server).lines(),
            server,
        }
    }

    impl Client {
        async fn send(&mut self, line: &str) {
            let mut bytes = line.as_bytes().to_vec();
            bytes.push(b'\n');
            self.to_server
                .write_all(&bytes)
                .await
                .expect("write to server");
        }

        async fn recv(&mut self) -> Value {
            let line = tokio::time::timeout(Duration::from_secs(5), self.from_server.next_line())
                .await
                .expect("reply within 5 s")
                .expect("read from server")
                .expect("server closed its output");
            assert!(!line.contains('\n'));
            serde_json::from_str(&line).expect("reply is JSON")
        }
    }

    #[tokio::test]
    async fn stdio_lifecycle_garbage_and_eof() {
        let mut c = start();
        c.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .await;
        assert_eq!(c.recv().await["error"]["code"], -32600);
        c.send("this is not json").await;
        let r = c.recv().await;
        assert_eq!(r["error"]["code"], -32700);
        assert_eq!(r["id"], Value::Null);
        c.send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#).await;
        let r = c.recv().await;
        assert_eq!(r["id"], 2);
        assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
        c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        c.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#)
            .await;
        assert_eq!(
            c.recv().await["result"]["tools"].as_array().map(Vec::len),
            Some(5)
        );
        drop(c.to_server);
        let done = tokio::time::timeout(Duration::from_secs(5), c.server)
            .await
            .expect("server exits on EOF")
            .expect("server task");
        assert!(done.is_ok());
    }

    #[tokio::test]
    async fn stdio_slow_sleep_does_not_block_ping() {
        let mut c = start();
        c.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#).await;
        c.recv().await;
        c.send(r#"{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"ms":400}}}"#).await;
        c.send(r#"{"jsonrpc":"2.0","id":"fast","method":"ping"}"#)
            .await;
        let first = c.recv().await;
        assert_eq!(first, json!({"jsonrpc":"2.0","id":"fast","result":{}}));
        let second = c.recv().await;
        assert_eq!(second["id"], "slow");
        assert_eq!(second["result"]["content"][0]["text"], "slept 400 ms");
    }

    #[tokio::test]
    async fn stdio_progress_notifications_precede_the_result() {
        let mut c = start();
        c.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#).await;
        c.recv().await;
        c.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"progress","arguments":{"steps":2},"_meta":{"progressToken":"tok"}}}"#).await;
        for i in 1..=2 {
            let n = c.recv().await;
            assert_eq!(n["method"], "notifications/progress");
            assert_eq!(
                n["params"],
                json!({"progressToken":"tok","progress":i,"total":2})
            );
        }
        assert_eq!(c.recv().await["id"], 9);
    }
}
