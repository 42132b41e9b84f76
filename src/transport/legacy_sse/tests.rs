//! Tests of the legacy HTTP+SSE client transport: whole sessions against the reference
//! server, and scripted SSE servers for endpoint resolution, missing endpoints, dropped
//! streams and failed POSTs.

use super::*;
use crate::protocol::jsonrpc::{encode_notification, encode_request};
use crate::protocol::Incoming;
use crate::server::{spawn_http, HttpServer, ServerOptions};
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use http::HeaderName;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(5);

fn endpoint(url: &str, timeout: Duration) -> Arc<SseEndpoint> {
    let connection = Connection {
        headers: vec![(
            HeaderName::from_static("x-test"),
            HeaderValue::from_static("1"),
        )],
        timeout,
        ..Connection::default()
    };
    Arc::new(SseEndpoint::new(url.parse().expect("url"), connection))
}

async fn reference() -> HttpServer {
    let addr = "127.0.0.1:0".parse().expect("addr");
    spawn_http(addr, ServerOptions::default())
        .await
        .expect("server starts")
}

async fn connect(url: &str) -> SseTransport {
    SseTransport::connect(endpoint(url, WAIT), None)
        .await
        .expect("connects")
}

async fn recv(t: &mut SseTransport) -> Received {
    tokio::time::timeout(WAIT, t.recv())
        .await
        .expect("something arrives within 5 s")
}

/// Send a request and wait for its result (skipping notifications).
async fn call(t: &mut SseTransport, id: u64, method: &str, params: Option<Value>) -> Value {
    t.send_request(id, encode_request(id, method, params.as_ref()))
        .await
        .expect("POST");
    loop {
        match recv(t).await {
            Received::Message(Incoming::Response {
                id: Some(rid),
                outcome,
            }) if rid.as_own() == Some(id) => return outcome.expect("a result").into_value(),
            Received::Message(Incoming::Notification { .. }) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

async fn handshake(t: &mut SseTransport, name: &str) {
    let params = json!({"protocolVersion":"2024-11-05","capabilities":{},
        "clientInfo":{"name":name,"version":"1"}});
    let init = call(t, 1, "initialize", Some(params)).await;
    assert_eq!(init["protocolVersion"], "2024-11-05");
    t.post_and_wait(encode_notification("notifications/initialized", None))
        .await
        .expect("initialized is accepted");
}

#[tokio::test]
async fn legacy_sse_whole_session_against_the_reference_server() {
    let server = reference().await;
    let mut t = connect(&format!("http://{}/sse", server.addr)).await;
    assert!(t
        .post_target
        .path
        .to_string()
        .starts_with("/messages?sessionId="));
    handshake(&mut t, "t").await;
    let tools = call(&mut t, 2, "tools/list", None).await;
    assert!(tools["tools"].as_array().is_some_and(|a| !a.is_empty()));
    let echo = json!({"name":"echo","arguments":{"message":"hi there"}});
    let r = call(&mut t, 3, "tools/call", Some(echo)).await;
    assert_eq!(r["content"][0]["text"], "hi there");
    let r = call(&mut t, 4, "resources/list", None).await;
    assert!(r["resources"].is_array(), "{r}");
    t.close().await.expect("close");
}

#[tokio::test]
async fn legacy_sse_two_sessions_stay_separate_and_requests_overlap() {
    let server = reference().await;
    let url = format!("http://{}/sse", server.addr);
    let (mut a, mut b) = tokio::join!(connect(&url), connect(&url));
    assert_ne!(a.post_target.path, b.post_target.path);
    handshake(&mut a, "a").await;
    // `b` has not initialized: the server must not take `a`'s handshake for it.
    let refused = b
        .send_request(9, encode_request(9, "tools/list", None))
        .await;
    assert!(refused.is_ok());
    match recv(&mut b).await {
        Received::Message(Incoming::Response { outcome, .. }) => {
            assert!(
                outcome.is_err(),
                "uninitialized session answered {outcome:?}"
            )
        }
        other => panic!("unexpected {other:?}"),
    }
    // Two requests in flight on one session, the slow one first.
    let sleep = json!({"name":"sleep","arguments":{"ms":300}});
    a.send_request(5, encode_request(5, "tools/call", Some(&sleep)))
        .await
        .expect("POST");
    let echo = json!({"name":"echo","arguments":{"message":"fast"}});
    let r = call(&mut a, 6, "tools/call", Some(echo)).await;
    assert_eq!(r["content"][0]["text"], "fast");
    match recv(&mut a).await {
        Received::Message(Incoming::Response { id: Some(id), .. }) => {
            assert_eq!(id.as_own(), Some(5))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn legacy_sse_http_error_on_the_get() {
    let server = reference().await;
    let err = SseTransport::connect(
        endpoint(&format!("http://{}/nope", server.addr), WAIT),
        None,
    )
    .await
    .err()
    .expect("a 404 is an error");
    assert_eq!(err.kind, FailureKind::HttpStatus(404), "{err}");
}

#[tokio::test]
async fn legacy_sse_https_to_a_plain_server_fails_to_connect() {
    let server = reference().await;
    let url = format!("https://localhost:{}/sse", server.addr.port());
    let err = SseTransport::connect(endpoint(&url, WAIT), None)
        .await
        .err()
        .expect("no TLS there");
    assert_eq!(err.kind, FailureKind::ConnectFailed, "{err}");
}

/// A scripted SSE server: `GET /events` sends noise, then `endpoint` (if any); every
/// `POST /p` is echoed back as a `message` event, and with `hang_up` the stream ends
/// right after.
#[derive(Clone)]
struct Tiny {
    endpoint: Option<String>,
    hang_up: bool,
    stream: Arc<Mutex<Option<mpsc::UnboundedSender<Bytes>>>>,
}

async fn tiny(endpoint: impl FnOnce(SocketAddr) -> Option<String>, hang_up: bool) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = Tiny {
        endpoint: endpoint(addr),
        hang_up,
        stream: Arc::new(Mutex::new(None)),
    };
    let app = axum::Router::new()
        .route("/events", get(tiny_get))
        .route("/p", post(tiny_post))
        .with_state(state);
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/events")
}

async fn tiny_get(State(s): State<Tiny>) -> axum::response::Response {
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    let _ = tx.send(Bytes::from_static(
        b": hello\n\nevent: ping\ndata: x\n\nevent: message\ndata:\n\n",
    ));
    if let Some(e) = &s.endpoint {
        let _ = tx.send(Bytes::from(format!("event: endpoint\ndata: {e}\n\n")));
    }
    *s.stream.lock().expect("lock") = Some(tx);
    let body = futures::stream::unfold(rx, |mut rx| async move {
        let b = rx.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(b), rx))
    });
    (
        [(CONTENT_TYPE, "text/event-stream")],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

async fn tiny_post(State(s): State<Tiny>, body: Bytes) -> StatusCode {
    let mut stream = s.stream.lock().expect("lock");
    if let Some(tx) = stream.as_ref() {
        let mut event = b"event: message\ndata: ".to_vec();
        event.extend_from_slice(&body);
        event.extend_from_slice(b"\n\n");
        let _ = tx.send(Bytes::from(event));
    }
    if s.hang_up {
        *stream = None;
    }
    StatusCode::ACCEPTED
}

async fn echoed(t: &mut SseTransport, id: u64) {
    t.send_request(id, encode_request(id, "ping", None))
        .await
        .expect("POST");
    match recv(t).await {
        Received::Message(Incoming::Request {
            id: rid, method, ..
        }) => {
            assert_eq!((rid.as_own(), method.as_str()), (Some(id), "ping"))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn legacy_sse_absolute_and_relative_endpoints_resolve() {
    let url = tiny(|addr| Some(format!("http://{addr}/p?k=abs")), false).await;
    let mut t = connect(&url).await;
    assert_eq!(t.post_target.path, "/p?k=abs");
    echoed(&mut t, 1).await;

    let url = tiny(|_| Some(" /p?k=rel ".into()), false).await;
    let mut t = connect(&url).await;
    assert_eq!(t.post_target.path, "/p?k=rel");
    echoed(&mut t, 2).await;

    let base: url::Url = "http://h:1/a/sse".parse().expect("url");
    let r = resolve_endpoint(&base, "messages?sessionId=x").expect("resolves");
    assert_eq!(r.as_str(), "http://h:1/a/messages?sessionId=x");
}

#[tokio::test]
async fn legacy_sse_no_endpoint_event_times_out() {
    let url = tiny(|_| None, false).await;
    let started = Instant::now();
    let err = SseTransport::connect(endpoint(&url, Duration::from_millis(300)), None)
        .await
        .err()
        .expect("no endpoint is an error");
    assert_eq!(err.kind, FailureKind::Timeout);
    assert!(err.detail.contains("`endpoint`"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn legacy_sse_server_dropping_the_stream_is_closed() {
    let url = tiny(|_| Some("/p".into()), true).await;
    let mut t = connect(&url).await;
    echoed(&mut t, 1).await;
    assert!(matches!(recv(&mut t).await, Received::Closed { .. }));
    assert!(matches!(recv(&mut t).await, Received::Closed { .. }));
    let err = t.send_request(2, b"{}".to_vec()).await.err();
    assert_eq!(err.map(|e| e.kind), Some(FailureKind::TransportClosed));
}

#[tokio::test]
async fn legacy_sse_failed_post_fails_its_request() {
    let url = tiny(|_| Some("/missing".into()), false).await;
    let mut t = connect(&url).await;
    t.send_request(7, encode_request(7, "ping", None))
        .await
        .expect("the POST is started");
    match recv(&mut t).await {
        Received::Failed { request, kind, .. } => {
            assert_eq!((request, kind), (Some(7), FailureKind::SessionExpired))
        }
        other => panic!("unexpected {other:?}"),
    }
    let err = t.post_and_wait(encode_notification("n", None)).await.err();
    assert_eq!(err.map(|e| e.kind), Some(FailureKind::SessionExpired));
}
