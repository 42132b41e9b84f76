//! The server's HTTP/1.1 connection against raw bytes on loopback: framing both ways,
//! pipelining, refusals, a client that leaves, and stopping. A small router stands for
//! the MCP one, so that these tests are about the connection only.

use super::*;
use axum::routing::{get, post};
use bytes::Bytes;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

/// Every wait in these tests is bounded by this.
const BOUND: Duration = Duration::from_secs(5);

/// Sets its flag when dropped: shows that a handler's future went away.
struct Dropped(Arc<AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

struct Server {
    addr: std::net::SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    /// Set when `/forever`'s handler is dropped.
    forever_dropped: Arc<AtomicBool>,
}

async fn start() -> Server {
    let forever_dropped = Arc::new(AtomicBool::new(false));
    let flag = forever_dropped.clone();
    let app = Router::new()
        .route("/echo", post(|body: Bytes| async move { body }))
        .route(
            "/stream",
            get(|| async {
                let pieces = futures::stream::unfold(0, |n| async move {
                    if n == 3 {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Some((Ok::<_, io::Error>(Bytes::from(format!("piece{n};"))), n + 1))
                });
                Body::from_stream(pieces)
            }),
        )
        .route(
            "/held",
            get(|| async {
                let first =
                    futures::stream::once(async { Ok::<_, io::Error>(Bytes::from("hello")) });
                Body::from_stream(first.chain(futures::stream::pending()))
            }),
        )
        .route(
            "/forever",
            get(move || {
                let guard = Dropped(flag.clone());
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    "never"
                }
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback test step");
    let addr = listener.local_addr().expect("loopback test step");
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(serve(
        listener,
        app,
        async move {
            let _ = stopped.await;
        },
        Duration::from_millis(200),
    ));
    Server {
        addr,
        stop: Some(stop),
        task,
        forever_dropped,
    }
}

use futures::StreamExt;

/// Connect and send `bytes`.
async fn open(server: &Server, bytes: &[u8]) -> TcpStream {
    let mut tcp = TcpStream::connect(server.addr)
        .await
        .expect("loopback test step");
    tcp.write_all(bytes).await.expect("loopback test step");
    tcp
}

/// Connect, send `bytes`, read until the server closes (bounded).
async fn exchange(server: &Server, bytes: &[u8]) -> String {
    let mut tcp = open(server, bytes).await;
    read_to_close(&mut tcp).await
}

async fn read_to_close(tcp: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let read = tokio::time::timeout(BOUND, tcp.read_to_end(&mut out)).await;
    assert!(
        read.is_ok(),
        "the server did not close: {:?}",
        String::from_utf8_lossy(&out)
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// Read until `text` has arrived (bounded); everything read so far.
async fn read_until(tcp: &mut TcpStream, seen: &mut String, text: &str) {
    let mut buf = [0u8; 4096];
    while !seen.contains(text) {
        let n = tokio::time::timeout(BOUND, tcp.read(&mut buf))
            .await
            .expect("the server answered in time")
            .expect("loopback test step");
        assert!(n > 0, "closed before {text:?}; got {seen:?}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order_on_one_connection() {
    let server = start().await;
    let two = b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\n\r\nfirstPOST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 6\r\nconnection: close\r\n\r\nsecond";
    let answer = exchange(&server, two).await;
    let first = answer.find("first").expect("the first answer");
    let second = answer.find("second").expect("the second answer");
    assert!(first < second, "{answer}");
    assert_eq!(answer.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{answer}");
    assert!(answer.contains("content-length: 5\r\n"), "{answer}");
    assert!(answer.contains("content-length: 6\r\n"), "{answer}");
    assert!(answer.contains("\r\ndate: "), "{answer}");
    // Only the answer to the request that asked for it closes.
    assert_eq!(answer.matches("connection: close").count(), 1, "{answer}");
}

#[tokio::test]
async fn a_chunked_body_sent_in_pieces_after_100_continue_arrives_whole() {
    let server = start().await;
    let head = b"POST /echo HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ntransfer-encoding: chunked\r\n\r\n";
    let mut tcp = open(&server, head).await;
    let mut seen = String::new();
    read_until(&mut tcp, &mut seen, "HTTP/1.1 100 Continue\r\n\r\n").await;
    for piece in [
        &b"4;ext=1\r\nabcd\r\n"[..],
        b"3\r\nefg\r\n",
        b"0\r\ntrailer: t\r\n\r\n",
    ] {
        tcp.write_all(piece).await.expect("loopback test step");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    read_until(&mut tcp, &mut seen, "abcdefg").await;
    assert!(seen.contains("HTTP/1.1 200 OK\r\n"), "{seen}");
    assert!(seen.contains("content-length: 7\r\n"), "{seen}");
}

#[tokio::test]
async fn a_streamed_body_is_chunked_for_http_1_1_and_runs_to_the_close_for_http_1_0() {
    let server = start().await;
    let chunked = exchange(
        &server,
        b"GET /stream HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    )
    .await;
    assert!(
        chunked.contains("transfer-encoding: chunked\r\n"),
        "{chunked}"
    );
    assert!(!chunked.contains("content-length"), "{chunked}");
    for n in 0..3 {
        assert!(
            chunked.contains(&format!("7\r\npiece{n};\r\n")),
            "{chunked}"
        );
    }
    assert!(chunked.ends_with("0\r\n\r\n"), "{chunked}");

    let close = exchange(&server, b"GET /stream HTTP/1.0\r\nhost: x\r\n\r\n").await;
    assert!(!close.contains("transfer-encoding"), "{close}");
    assert!(close.contains("connection: close\r\n"), "{close}");
    assert!(close.ends_with("\r\n\r\npiece0;piece1;piece2;"), "{close}");
}

#[tokio::test]
async fn a_head_request_gets_the_length_and_no_body() {
    let server = start().await;
    let mut tcp = open(
        &server,
        b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabc",
    )
    .await;
    let mut seen = String::new();
    read_until(&mut tcp, &mut seen, "abc").await;
    // Then a 405 for HEAD of a POST route: its head only, the connection kept.
    tcp.write_all(b"HEAD /echo HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .await
        .expect("loopback test step");
    let rest = read_to_close(&mut tcp).await;
    assert!(
        rest.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
        "{rest}"
    );
    assert!(
        rest.ends_with("\r\n\r\n"),
        "no body after a HEAD answer: {rest}"
    );
}

#[tokio::test]
async fn broken_or_oversized_requests_are_refused_with_a_status_and_closed() {
    let server = start().await;
    let many: String = (0..150).map(|i| format!("x-{i}: v\r\n")).collect();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"NOT HTTP AT ALL\r\n\r\n".to_vec(), "400 Bad Request"),
        (
            b"POST /echo HTTP/1.1\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd".to_vec(),
            "400 Bad Request",
        ),
        (
            b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\ncontent-length: 3\r\n\r\n"
                .to_vec(),
            "400 Bad Request",
        ),
        (
            b"POST /echo HTTP/1.1\r\ntransfer-encoding: gzip\r\n\r\n".to_vec(),
            "400 Bad Request",
        ),
        (
            b"POST /echo HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n".to_vec(),
            "400 Bad Request",
        ),
        (
            format!("GET /stream HTTP/1.1\r\n{many}\r\n").into_bytes(),
            "431 Request Header Fields Too Large",
        ),
        (
            format!(
                "GET /stream HTTP/1.1\r\nx-big: {}\r\n\r\n",
                "a".repeat(70_000)
            )
            .into_bytes(),
            "431 Request Header Fields Too Large",
        ),
        (
            b"POST /echo HTTP/1.1\r\ncontent-length: 99999999999\r\n\r\n".to_vec(),
            "413 Payload Too Large",
        ),
    ];
    for (request, status) in cases {
        let answer = exchange(&server, &request).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}\r\n")),
            "{:?} got {answer:?}",
            String::from_utf8_lossy(&request[..request.len().min(60)])
        );
        assert!(answer.contains("connection: close\r\n"), "{answer}");
    }
}

#[tokio::test]
async fn a_client_that_goes_away_ends_its_request_and_its_stream() {
    let server = start().await;
    let tcp = open(&server, b"GET /forever HTTP/1.1\r\nhost: x\r\n\r\n").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !server.forever_dropped.load(Ordering::SeqCst),
        "the handler runs"
    );
    drop(tcp);
    let gone = async {
        while !server.forever_dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    assert!(
        tokio::time::timeout(BOUND, gone).await.is_ok(),
        "the handler of a client that left was not dropped"
    );
}

#[tokio::test]
async fn stopping_closes_idle_connections_ends_streams_and_returns() {
    let mut server = start().await;
    let mut idle = open(
        &server,
        b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi",
    )
    .await;
    let mut idle_seen = String::new();
    read_until(&mut idle, &mut idle_seen, "\r\n\r\nhi").await;
    let mut held = open(&server, b"GET /held HTTP/1.1\r\nhost: x\r\n\r\n").await;
    let mut held_seen = String::new();
    read_until(&mut held, &mut held_seen, "5\r\nhello\r\n").await;

    let _ = server.stop.take().expect("not stopped yet").send(());
    assert_eq!(
        read_to_close(&mut idle).await,
        "",
        "an idle connection just closes"
    );
    let rest = read_to_close(&mut held).await;
    assert_eq!(rest, "0\r\n\r\n", "a held stream ends cleanly");
    assert!(
        tokio::time::timeout(BOUND, &mut server.task).await.is_ok(),
        "serve returns once its connections are done"
    );
    assert!(
        TcpStream::connect(server.addr).await.is_err(),
        "the listener is closed"
    );
}
