//! What a hostile server can make a transport hold or wait for: over every transport a
//! message larger than the limit is `message_too_large` (and nothing past the limit is
//! buffered), and a server that drips or never answers is bounded by the request
//! timeout. Scripted raw servers on 127.0.0.1:0 say exactly which bytes arrive when.

use super::http::{HttpEndpoint, HttpTransport};
use super::legacy_sse::{SseEndpoint, SseTransport};
use super::stdio::{StdioCommand, StdioTransport};
use super::ws::{WsEndpoint, WsTransport};
use super::{Received, TransportError};
use crate::metrics::FailureKind;
use crate::plan::Connection;
use crate::protocol::jsonrpc::encode_request;
use futures::stream::{self, BoxStream, StreamExt};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The limit the tests set: small, so "too large" costs nothing to send.
const LIMIT: usize = 1024;
/// The request timeout the tests set.
const TIMEOUT: Duration = Duration::from_millis(300);

/// The connection the tests set: the small limit and the short timeout.
fn limited() -> Connection {
    Connection {
        timeout: TIMEOUT,
        max_message_bytes: LIMIT,
        ..Connection::default()
    }
}
/// Bound on any wait in these tests.
const WAIT: Duration = Duration::from_secs(5);

/// What a scripted server writes after reading a request head (given to the script).
type Script = Arc<dyn Fn(&str) -> BoxStream<'static, Vec<u8>> + Send + Sync>;

/// A raw HTTP/1.1 server: for every request head, the script's chunks in order; the
/// connection then stays open (a server that neither answers nor closes).
async fn raw_server(script: Script) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr").to_string();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(serve_connection(tcp, script.clone()));
        }
    });
    addr
}

async fn serve_connection(mut tcp: TcpStream, script: Script) {
    loop {
        let Some(head) = read_head(&mut tcp).await else {
            return;
        };
        let mut chunks = script(&head);
        while let Some(chunk) = chunks.next().await {
            if tcp.write_all(&chunk).await.is_err() {
                return;
            }
        }
    }
}

/// A request head, and the body its `Content-Length` announces (read and dropped).
async fn read_head(tcp: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if tcp.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    tcp.read_exact(&mut body).await.ok()?;
    Some(head)
}

fn chunks(parts: Vec<Vec<u8>>) -> BoxStream<'static, Vec<u8>> {
    stream::iter(parts).boxed()
}

/// `head`, then a chunk of 64 spaces every 10 ms for as long as the client reads.
fn drip(head: &str) -> BoxStream<'static, Vec<u8>> {
    let first = stream::once(futures::future::ready(head.as_bytes().to_vec()));
    let rest = stream::unfold((), |()| async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        Some((format!("40\r\n{:64}\r\n", "").into_bytes(), ()))
    });
    first.chain(rest).boxed()
}

/// `first`, then `later` after a pause (so they arrive as separate reads).
fn two_reads(first: String, later: Option<String>) -> BoxStream<'static, Vec<u8>> {
    let head = stream::once(futures::future::ready(first.into_bytes()));
    let rest = stream::iter(later).then(|l| async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        l.into_bytes()
    });
    head.chain(rest).boxed()
}

fn http_endpoint(addr: &str) -> Arc<HttpEndpoint> {
    let url = url::Url::parse(&format!("http://{addr}/mcp")).expect("url");
    Arc::new(HttpEndpoint::new(&url, limited()).expect("endpoint"))
}

async fn http_request(addr: &str) -> HttpTransport {
    let mut t = HttpTransport::connect(http_endpoint(addr))
        .await
        .expect("connect");
    let bytes = encode_request(1, "tools/list", None);
    t.send_request(1, bytes, &[]).await.expect("POST");
    t
}

async fn next(recv: impl std::future::Future<Output = Received>) -> Received {
    tokio::time::timeout(WAIT, recv)
        .await
        .expect("something arrives in time")
}

fn assert_too_large(r: &Received, request: Option<u64>) {
    match r {
        Received::Failed {
            request: got,
            kind: FailureKind::MessageTooLarge,
            ..
        } => assert_eq!(*got, request),
        other => panic!("expected message_too_large, got {other:?}"),
    }
}

const JSON_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n";

#[tokio::test]
async fn http_body_over_the_limit_by_its_length_or_as_it_grows() {
    let declared = raw_server(Arc::new(|_| {
        chunks(vec![
            format!("{JSON_HEAD}content-length: 100000\r\n\r\n{{").into_bytes()
        ])
    }))
    .await;
    let mut t = http_request(&declared).await;
    assert_too_large(&next(t.recv()).await, Some(1));

    // Chunked: no length up front; it fails once 1 KiB is passed, while the server
    // would go on forever.
    let growing = raw_server(Arc::new(|_| {
        drip(&format!("{JSON_HEAD}transfer-encoding: chunked\r\n\r\n"))
    }))
    .await;
    let mut t = http_request(&growing).await;
    let started = Instant::now();
    let r = next(t.recv()).await;
    assert_too_large(&r, Some(1));
    assert!(started.elapsed() < WAIT);
}

#[tokio::test]
async fn http_sse_event_over_the_limit_ends_the_flow() {
    let addr = raw_server(Arc::new(|_| {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                    transfer-encoding: chunked\r\n\r\n";
        let event = format!("data: {}", "a".repeat(LIMIT * 2));
        let chunk = format!("{:x}\r\n{event}\r\n", event.len());
        chunks(vec![head.as_bytes().to_vec(), chunk.into_bytes()])
    }))
    .await;
    let mut t = http_request(&addr).await;
    assert_too_large(&next(t.recv()).await, Some(1));
}

#[tokio::test]
async fn http_response_head_over_the_limit() {
    let addr = raw_server(Arc::new(|_| {
        let big = "x".repeat(64 * 1024);
        chunks(vec![format!(
            "{JSON_HEAD}x-big: {big}\r\ncontent-length: 2\r\n\r\n{{}}"
        )
        .into_bytes()])
    }))
    .await;
    let mut t = http_request(&addr).await;
    assert_too_large(&next(t.recv()).await, Some(1));
}

/// A server that gives a session id, then never finishes its answer to anything else
/// (the GET stream's head, the DELETE's body).
fn stalling_after_initialize(head: &str) -> BoxStream<'static, Vec<u8>> {
    if head.starts_with("post") {
        let body = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        return chunks(vec![format!(
            "{JSON_HEAD}mcp-session-id: s1\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()]);
    }
    if head.starts_with("delete") {
        let head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\n \r\n";
        return two_reads(head.into(), None)
            .chain(stream::pending())
            .boxed();
    }
    stream::pending().boxed()
}

#[tokio::test]
async fn http_get_stream_and_delete_are_bounded_by_the_timeout() {
    let addr = raw_server(Arc::new(stalling_after_initialize)).await;
    let mut t = http_request(&addr).await;
    assert!(matches!(next(t.recv()).await, Received::Message(_)));
    let started = Instant::now();
    let get = tokio::time::timeout(WAIT, t.open_get_stream())
        .await
        .expect("bounded by the transport");
    assert!(matches!(
        get,
        Err(TransportError {
            kind: FailureKind::Timeout,
            ..
        })
    ));
    let closed = tokio::time::timeout(WAIT, t.close())
        .await
        .expect("bounded by the transport");
    assert!(matches!(
        closed,
        Err(TransportError {
            kind: FailureKind::Timeout,
            ..
        })
    ));
    assert!(started.elapsed() < TIMEOUT * 4, "{:?}", started.elapsed());
}

fn sse_endpoint(addr: &str) -> Arc<SseEndpoint> {
    let url = format!("http://{addr}/sse").parse().expect("url");
    Arc::new(SseEndpoint::new(url, limited()))
}

/// Legacy SSE: the stream gives the endpoint, then `event` (if any); every POST is
/// answered 202 with a body that drips forever.
fn legacy(event: Option<String>) -> Script {
    Arc::new(move |head: &str| {
        if head.starts_with("post") {
            return drip("HTTP/1.1 202 Accepted\r\ntransfer-encoding: chunked\r\n\r\n");
        }
        let body = "event: endpoint\ndata: /messages\n\n";
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n",
            body.len()
        );
        let later = event.as_ref().map(|e| format!("{:x}\r\n{e}\r\n", e.len()));
        two_reads(head, later)
    })
}

#[tokio::test]
async fn legacy_sse_event_over_the_limit_ends_the_stream() {
    let event = format!("data: {}\n\n", "a".repeat(LIMIT * 2));
    let addr = raw_server(legacy(Some(event))).await;
    let mut t = SseTransport::connect(sse_endpoint(&addr), None)
        .await
        .expect("connect");
    assert_too_large(&next(t.recv()).await, None);
    assert!(matches!(next(t.recv()).await, Received::Closed { .. }));
}

#[tokio::test]
async fn legacy_sse_post_that_drips_is_a_timeout_of_its_request() {
    let addr = raw_server(legacy(None)).await;
    let mut t = SseTransport::connect(sse_endpoint(&addr), None)
        .await
        .expect("connect");
    let started = Instant::now();
    t.send_request(7, encode_request(7, "tools/list", None))
        .await
        .expect("POST started");
    match next(t.recv()).await {
        Received::Failed {
            request: Some(7),
            kind: FailureKind::Timeout,
            ..
        } => {}
        other => panic!("expected a timeout of request 7, got {other:?}"),
    }
    assert!(started.elapsed() < TIMEOUT * 4, "{:?}", started.elapsed());
}

#[tokio::test]
async fn websocket_message_over_the_limit() {
    use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.expect("accept");
        #[allow(clippy::result_large_err)] // the signature tungstenite asks for
        fn mcp(_: &Request, mut resp: Response) -> Result<Response, ErrorResponse> {
            let v = http::HeaderValue::from_static(crate::protocol::headers::WS_SUBPROTOCOL);
            resp.headers_mut().insert("sec-websocket-protocol", v);
            Ok(resp)
        }
        let mut ws = tokio_tungstenite::accept_hdr_async(tcp, mcp)
            .await
            .expect("upgrade");
        let big = "a".repeat(LIMIT * 4);
        let _ = futures::SinkExt::send(&mut ws, big.into()).await;
        tokio::time::sleep(WAIT).await;
    });
    let url = format!("ws://{addr}/ws").parse().expect("url");
    let ep = Arc::new(WsEndpoint::new(url, limited()));
    let mut t = WsTransport::connect(ep, None).await.expect("connect");
    assert_too_large(&next(t.recv()).await, None);
}

#[tokio::test]
async fn stdio_line_over_the_limit() {
    let cmd = StdioCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            "head -c 100000 /dev/zero | tr '\\0' a; echo; sleep 5".into(),
        ],
        env: Vec::new(),
        grace: Duration::from_millis(100),
        max_message_bytes: LIMIT,
        children: Default::default(),
    };
    let mut t = StdioTransport::spawn(&cmd).expect("spawn");
    assert_too_large(&next(t.recv()).await, None);
}
