//! The HTTP client against small axum servers on 127.0.0.1:0 that each play one part
//! of the protocol: TLS, the GET stream, its reconnect, POST stream resumption, and
//! session reset.

use super::request::ACCEPT_SSE;
use super::*;
use crate::plan::Connection;
use crate::protocol::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use crate::protocol::Incoming;
use axum::body::Body as ServerBody;
use axum::extract::Request as ServerRequest;
use axum::response::Response as ServerResponse;
use axum::Router;
use bytes::Bytes;
use futures::stream;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

const WAIT: Duration = Duration::from_secs(5);
const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;

/// How a test server's SSE body ends after its events.
#[derive(Clone, Copy)]
enum End {
    /// The body ends cleanly.
    Close,
    /// The connection is dropped mid-body.
    Break,
    /// The stream stays open.
    Hold,
}

fn sse(events: &[&str], end: End) -> ServerResponse {
    let chunks: Vec<Result<Bytes, std::io::Error>> = events
        .iter()
        .map(|e| Ok(Bytes::from(e.to_string())))
        .collect();
    let head = stream::iter(chunks);
    let body = match end {
        End::Close => ServerBody::from_stream(head),
        // The pause lets hyper flush the head and the events before it aborts.
        End::Break => ServerBody::from_stream(head.chain(stream::once(async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Err(std::io::Error::other("dropped on purpose"))
        }))),
        End::Hold => ServerBody::from_stream(head.chain(stream::pending())),
    };
    ServerResponse::builder()
        .header("content-type", "text/event-stream")
        .body(body)
        .expect("sse response")
}

fn json(body: &'static str, session: Option<&'static str>) -> ServerResponse {
    let mut b = ServerResponse::builder().header("content-type", "application/json");
    if let Some(s) = session {
        b = b.header(MCP_SESSION_ID, s);
    }
    b.body(ServerBody::from(body)).expect("json response")
}

fn status(code: u16) -> ServerResponse {
    ServerResponse::builder()
        .status(code)
        .body(ServerBody::empty())
        .expect("status response")
}

fn header(req: &ServerRequest, name: impl http::header::AsHeaderName) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

async fn serve(app: Router) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

fn endpoint(url: &str, insecure: bool) -> Arc<HttpEndpoint> {
    let url = url::Url::parse(url).expect("test url");
    let connection = Connection {
        timeout: WAIT,
        insecure,
        ..Connection::default()
    };
    Arc::new(HttpEndpoint::new(&url, connection).expect("endpoint"))
}

async fn connect(addr: SocketAddr) -> HttpTransport {
    HttpTransport::connect(endpoint(&format!("http://{addr}/mcp"), false))
        .await
        .expect("connect")
}

async fn next(t: &mut HttpTransport) -> Received {
    tokio::time::timeout(WAIT, t.recv())
        .await
        .expect("a message before the timeout")
}

fn response_id(r: &Received) -> Option<u64> {
    match r {
        Received::Message(Incoming::Response { id: Some(id), .. }) => id.as_own(),
        _ => None,
    }
}

// ---- (a) https ----

struct TlsListener {
    tcp: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((tcp, addr)) = self.tcp.accept().await else {
                continue;
            };
            // A client that rejects our certificate fails the handshake: next one.
            if let Ok(tls) = self.acceptor.accept(tcp).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

async fn serve_tls(app: Router) -> SocketAddr {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("self-signed cert");
    let chain: Vec<CertificateDer<'static>> = vec![cert.cert.der().clone()];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der()));
    // *ring*, as the client side (src/transport/tls.rs).
    #[allow(deprecated)]
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("server cert");
    let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = tcp.local_addr().expect("local addr");
    let listener = TlsListener {
        tcp,
        acceptor: tokio_rustls::TlsAcceptor::from(Arc::new(config)),
    };
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

#[tokio::test]
async fn https_initialize_with_insecure_and_certificate_error_without() {
    let app = Router::new().route(
        "/mcp",
        axum::routing::post(|| async {
            json(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Some("tls-1"))
        }),
    );
    let addr = serve_tls(app).await;
    let url = format!("https://{addr}/mcp");

    let mut t = HttpTransport::connect(endpoint(&url, true))
        .await
        .expect("insecure connect");
    t.send_request(1, INIT.to_vec(), &[]).await.expect("send");
    assert_eq!(response_id(&next(&mut t).await), Some(1));
    assert_eq!(t.session_id(), Some("tls-1"));
    assert_eq!(t.stats().connections_opened, 1);

    let err = match HttpTransport::connect(endpoint(&url, false)).await {
        Ok(_) => panic!("a self-signed certificate must be rejected"),
        Err(e) => e,
    };
    assert_eq!(err.kind, FailureKind::ConnectFailed);
    assert!(err.detail.contains("certificate"), "{}", err.detail);
    assert!(err.detail.contains("--insecure"), "{}", err.detail);
}

// ---- (b) the GET stream ----

#[tokio::test]
async fn get_stream_delivers_notification_and_server_request() {
    let app = Router::new().route(
        "/mcp",
        axum::routing::any(|req: ServerRequest| async move {
            if req.method() == Method::POST {
                return json(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Some("s-1"));
            }
            let ok = header(&req, MCP_SESSION_ID).as_deref() == Some("s-1")
                && header(&req, MCP_PROTOCOL_VERSION).as_deref() == Some("2025-11-25")
                && header(&req, "accept").as_deref() == Some(ACCEPT_SSE);
            if !ok {
                return status(400);
            }
            sse(
                &[
                    "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
                    "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n",
                ],
                End::Hold,
            )
        }),
    );
    let mut t = connect(serve(app).await).await;
    t.send_request(1, INIT.to_vec(), &[]).await.expect("send");
    assert_eq!(response_id(&next(&mut t).await), Some(1));
    t.set_protocol_version(Some("2025-11-25"));

    assert_eq!(t.open_get_stream().await.expect("GET"), GetStream::Open);
    match next(&mut t).await {
        Received::Message(Incoming::Notification { method, .. }) => {
            assert_eq!(method, "notifications/tools/list_changed")
        }
        other => panic!("expected the notification, got {other:?}"),
    }
    match next(&mut t).await {
        Received::Message(Incoming::Request { method, .. }) => assert_eq!(method, "ping"),
        other => panic!("expected the ping request, got {other:?}"),
    }
    // The GET stream holds its connection: the next POST needs another one.
    assert_eq!(t.stats().connections_opened, 1);
    t.send_request(1, INIT.to_vec(), &[]).await.expect("send");
    assert_eq!(response_id(&next(&mut t).await), Some(1));
    assert_eq!(t.stats().connections_opened, 2);
}

#[tokio::test]
async fn get_stream_405_is_not_offered_and_409_is_an_error() {
    let app = Router::new()
        .route("/mcp", axum::routing::get(|| async { status(405) }))
        .route("/busy", axum::routing::get(|| async { status(409) }));
    let addr = serve(app).await;
    let mut t = connect(addr).await;
    assert_eq!(
        t.open_get_stream().await.expect("GET"),
        GetStream::NotOffered
    );
    let mut busy = HttpTransport::connect(endpoint(&format!("http://{addr}/busy"), false))
        .await
        .expect("connect");
    let err = busy.open_get_stream().await.expect_err("409");
    assert_eq!(err.kind, FailureKind::HttpStatus(409));
}

// ---- (c) GET stream reconnect ----

#[tokio::test]
async fn get_stream_reconnects_with_last_event_id() {
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let log = seen.clone();
    let app = Router::new().route(
        "/mcp",
        axum::routing::get(move |req: ServerRequest| {
            let log = log.clone();
            async move {
                let last = header(&req, LAST_EVENT_ID);
                let first = {
                    let mut log = log.lock().expect("log");
                    log.push(last);
                    log.len() == 1
                };
                if first {
                    sse(
                        &["id: g-1\nretry: 50\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n"],
                        End::Break,
                    )
                } else {
                    sse(
                        &["id: g-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n\n"],
                        End::Hold,
                    )
                }
            }
        }),
    );
    let mut t = connect(serve(app).await).await;
    assert_eq!(t.open_get_stream().await.expect("GET"), GetStream::Open);
    for want in ["a", "b"] {
        match next(&mut t).await {
            Received::Message(Incoming::Notification { method, .. }) => assert_eq!(method, want),
            other => panic!("expected notification {want}, got {other:?}"),
        }
    }
    let seen = seen.lock().expect("log").clone();
    assert_eq!(seen, vec![None, Some("g-1".to_string())]);
    assert_eq!(t.stats().get_stream_reconnects, 1);
}

// ---- (d) resumption of a POST's stream ----

/// POST /mcp and /gone answer with a priming event and drop the connection; /noid drops
/// it with no event id. GET /mcp resumes `s1-0` with the response; GET elsewhere is 405.
fn resuming_server(log: Arc<Mutex<Vec<Option<String>>>>) -> Router {
    let handler = move |req: ServerRequest| {
        let log = log.clone();
        async move {
            let path = req.uri().path().to_string();
            if req.method() == Method::POST {
                if path == "/noid" {
                    return sse(&[": nothing resumable\n\n"], End::Break);
                }
                return sse(&["id: s1-0\nretry: 100\ndata:\n\n"], End::Break);
            }
            log.lock().expect("log").push(header(&req, LAST_EVENT_ID));
            if path != "/mcp" || header(&req, LAST_EVENT_ID).as_deref() != Some("s1-0") {
                return status(405);
            }
            sse(
                &["id: s1-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"ok\":true}}\n\n"],
                End::Close,
            )
        }
    };
    Router::new()
        .route("/mcp", axum::routing::any(handler.clone()))
        .route("/gone", axum::routing::any(handler.clone()))
        .route("/noid", axum::routing::any(handler))
}

#[tokio::test]
async fn post_stream_is_resumed_with_get_and_last_event_id() {
    let log: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let mut t = connect(serve(resuming_server(log.clone())).await).await;
    t.send_request(
        2,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_vec(),
        &[],
    )
    .await
    .expect("send");
    let r = next(&mut t).await;
    assert_eq!(response_id(&r), Some(2), "{r:?}");
    assert_eq!(t.stats().resumptions, 1);
    assert_eq!(*log.lock().expect("log"), vec![Some("s1-0".to_string())]);
}

#[tokio::test]
async fn post_stream_that_cannot_be_resumed_fails_the_request() {
    let log: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let addr = serve(resuming_server(log.clone())).await;
    for path in ["gone", "noid"] {
        let mut t = HttpTransport::connect(endpoint(&format!("http://{addr}/{path}"), false))
            .await
            .expect("connect");
        t.send_request(2, br#"{"jsonrpc":"2.0","id":2,"method":"x"}"#.to_vec(), &[])
            .await
            .expect("send");
        match next(&mut t).await {
            Received::Failed {
                request: Some(2),
                kind: FailureKind::TransportClosed,
                ..
            } => {}
            other => panic!("{path}: expected the request to fail, got {other:?}"),
        }
        assert_eq!(t.stats().resumptions, 0);
    }
    // /gone tried once (405 is final); /noid had nothing to resume from.
    assert_eq!(*log.lock().expect("log"), vec![Some("s1-0".to_string())]);
}

// ---- (e) reset_session ----

#[tokio::test]
async fn reset_session_drops_session_headers_and_keeps_connections() {
    // (session id, protocol version) of each POST.
    type Seen = Arc<Mutex<Vec<(Option<String>, Option<String>)>>>;
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let app = Router::new().route(
        "/mcp",
        axum::routing::post(move |req: ServerRequest| {
            let log = log.clone();
            async move {
                log.lock().expect("log").push((
                    header(&req, MCP_SESSION_ID),
                    header(&req, MCP_PROTOCOL_VERSION),
                ));
                json(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, Some("s-1"))
            }
        }),
    );
    let mut t = connect(serve(app).await).await;
    let exchange = async |t: &mut HttpTransport| {
        t.send_request(1, INIT.to_vec(), &[]).await.expect("send");
        assert_eq!(response_id(&next(t).await), Some(1));
    };
    exchange(&mut t).await;
    t.set_protocol_version(Some("2025-11-25"));
    exchange(&mut t).await;
    assert_eq!(t.session_id(), Some("s-1"));
    t.reset_session();
    assert_eq!(t.session_id(), None);
    exchange(&mut t).await;

    let s1 = Some("s-1".to_string());
    let v = Some("2025-11-25".to_string());
    assert_eq!(
        *seen.lock().expect("log"),
        vec![(None, None), (s1, v), (None, None)]
    );
    assert_eq!(t.stats().connections_opened, 1);
}
