//! The stdio transport of the reference server: newline-delimited JSON-RPC on any byte
//! stream pair (stdin/stdout in production, in-memory pipes in tests).

use std::sync::Arc;

use anyhow::Context;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;

use super::channel::serve_messages;
use super::handler::Handler;
use super::ServerOptions;

/// Serve one client on stdin/stdout until stdin reaches EOF.
pub async fn serve_stdio(opts: ServerOptions) -> anyhow::Result<()> {
    let crashes = opts.faults.contains(&super::Fault::CrashOnInvalidJson);
    serve_io(tokio::io::stdin(), tokio::io::stdout(), opts).await?;
    if crashes {
        // A crash is sudden: do not wait for the runtime to give up on stdin's reader
        // thread (blocked on a read nobody wants).
        std::process::exit(0);
    }
    Ok(())
}

/// Serve one client on `reader`/`writer`: one JSON-RPC message per line each way. The
/// session logic is [`serve_messages`]; this only frames lines.
pub async fn serve_io<R, W>(reader: R, writer: W, opts: ServerOptions) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let handler = Arc::new(Handler::new(&opts));
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let (in_tx, in_rx) = mpsc::channel::<Vec<u8>>(64);
    let writer_task = tokio::spawn(write_lines(writer, out_rx));
    let session = tokio::spawn(serve_messages(handler, in_rx, out_tx));
    let mut reader = BufReader::new(reader);
    let mut read_error = None;
    loop {
        let mut line = Vec::with_capacity(256);
        let read = tokio::select! {
            r = reader.read_until(b'\n', &mut line) => r,
            // The session ended on its own (a crash fault): stop reading.
            () = in_tx.closed() => break,
        };
        match read {
            Ok(0) => break,
            Ok(_) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if in_tx.send(line).await.is_err() {
                    break; // the session ended (stdout closed)
                }
            }
            Err(e) => {
                read_error = Some(e);
                break;
            }
        }
    }
    drop(in_tx);
    let _ = session.await;
    if let Some(e) = read_error {
        return Err(e).context("reading a message from stdin");
    }
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
    use std::time::Duration;
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
            Some(9)
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

    #[tokio::test]
    async fn stdio_routes_the_clients_answer_to_the_asking_tool() {
        let mut c = start();
        c.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t"}}}"#).await;
        c.recv().await;
        c.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_roots"}}"#)
            .await;
        let request = c.recv().await;
        assert_eq!(request["method"], "roots/list");
        let answer = json!({"jsonrpc": "2.0", "id": request["id"],
                            "result": {"roots": [{"uri": "file:///x"}]}});
        c.send(&answer.to_string()).await;
        let reply = c.recv().await;
        assert_eq!(reply["id"], 2);
        assert_eq!(reply["result"]["content"][0]["text"], "1 roots: file:///x");
        // A stateless request on the same pipe.
        c.send(r#"{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#).await;
        assert_eq!(c.recv().await["result"]["resultType"], "complete");
    }
}
