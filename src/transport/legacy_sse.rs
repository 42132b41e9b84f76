//! Legacy HTTP+SSE (2024-11-05): GET the SSE URL, wait for the `endpoint` event, POST
//! every client message there, read every server message from the stream; the session
//! ends when the stream closes.
//!
//! On hyper directly, like Streamable HTTP: one long-lived connection carries the GET
//! stream, POSTs go over connections of their own (opened only while all are busy). A
//! request's POST runs in a small task so several requests can be in flight; its 202 says
//! nothing about the answer, which comes on the stream, so only a failed POST is reported
//! (as `Received::Failed` for that request id, through `recv`).

use super::sse::{SseError, SseEvent, SseParser};
use super::{classify, excerpt, Received, TransportError};
use crate::metrics::FailureKind;
use crate::protocol::jsonrpc::Malformed;
use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderName, HeaderValue, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// Most of an error body we read (for the report's excerpt).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Where and how to reach a legacy SSE endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct SseEndpoint {
    /// The SSE URL (conventionally `/sse`).
    pub url: url::Url,
    /// Extra headers on every request (GET and POSTs).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub connect_timeout: Duration,
    /// Skip TLS certificate verification (`--insecure`).
    pub insecure: bool,
}

/// One URL taken apart for hyper: where to connect, what to say in `Host`, what to ask for.
#[derive(Debug, Clone)]
struct Target {
    https: bool,
    /// Host name for TLS SNI and certificate checks (no IPv6 brackets).
    host: String,
    /// host:port to connect to.
    addr: String,
    authority: HeaderValue,
    /// Request target in origin form (path and query).
    path: http::Uri,
}

impl Target {
    fn new(url: &url::Url) -> Result<Target, String> {
        let https = match url.scheme() {
            "http" => false,
            "https" => true,
            other => return Err(format!("{url}: scheme {other:?} is not http or https")),
        };
        let host = url.host_str().ok_or_else(|| format!("{url}: no host"))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addr = if bare.contains(':') {
            format!("[{bare}]:{port}")
        } else {
            format!("{bare}:{port}")
        };
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Target {
            https,
            host: bare.to_string(),
            addr,
            authority: HeaderValue::from_str(&authority).map_err(|_| format!("{url}: bad host"))?,
            path: path.parse().map_err(|_| format!("{url}: bad path"))?,
        })
    }

    fn request(
        &self,
        method: Method,
        body: Vec<u8>,
        extra: &[(HeaderName, HeaderValue)],
    ) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(Bytes::from(body)));
        *req.method_mut() = method;
        *req.uri_mut() = self.path.clone();
        let h = req.headers_mut();
        h.insert(HOST, self.authority.clone());
        for (k, v) in extra {
            h.insert(k.clone(), v.clone());
        }
        req
    }
}

/// The TLS config, built once per process and mode: loading the root store is not cheap.
fn tls_config(insecure: bool) -> Arc<rustls::ClientConfig> {
    static VERIFIED: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    static INSECURE: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    let cell = if insecure { &INSECURE } else { &VERIFIED };
    cell.get_or_init(|| super::tls::client_config(insecure))
        .clone()
}

fn connect_failed(detail: String) -> TransportError {
    TransportError::new(FailureKind::ConnectFailed, detail)
}

/// TCP (+ TLS) + HTTP/1.1 handshake; the connection's driver runs in its own task.
async fn open(target: &Target, insecure: bool) -> Result<SendRequest<Full<Bytes>>, TransportError> {
    let tcp = TcpStream::connect(&target.addr)
        .await
        .map_err(|e| connect_failed(format!("connect to {}: {e}", target.addr)))?;
    tcp.set_nodelay(true)
        .map_err(|e| connect_failed(format!("TCP_NODELAY: {e}")))?;
    if !target.https {
        return handshake(tcp).await;
    }
    let name = rustls::pki_types::ServerName::try_from(target.host.clone())
        .map_err(|e| connect_failed(format!("{}: not a TLS server name: {e}", target.host)))?;
    let tls = tokio_rustls::TlsConnector::from(tls_config(insecure))
        .connect(name, tcp)
        .await
        .map_err(|e| connect_failed(format!("TLS with {}: {e}", target.addr)))?;
    handshake(tls).await
}

async fn handshake<IO>(io: IO) -> Result<SendRequest<Full<Bytes>>, TransportError>
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| connect_failed(format!("HTTP handshake: {e}")))?;
    // Ends when the server closes or the sender and every response body are dropped.
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// A connection for POSTs.
struct PostConn {
    sender: SendRequest<Full<Bytes>>,
    /// Set while a POST on this connection has not been fully answered.
    busy: Arc<AtomicBool>,
}

/// Clears a connection's busy flag when its POST is done (or abandoned).
struct BusyGuard(Arc<AtomicBool>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

pub struct SseTransport {
    endpoint: Arc<SseEndpoint>,
    /// Where POSTs go: the `endpoint` event resolved against the SSE URL. Boxed, like the
    /// parser, to keep the `Transport` enum small.
    post_target: Box<Target>,
    posts: Vec<PostConn>,
    /// Keeps the GET's connection open; dropped with the stream.
    _stream_conn: SendRequest<Full<Bytes>>,
    /// `None` once the stream has ended.
    stream: Option<Body>,
    parser: Box<SseParser>,
    /// Items already read from the stream, not yet returned by `recv`.
    pending: VecDeque<Received>,
    /// Failed POSTs of requests, reported by their tasks.
    failures: mpsc::UnboundedReceiver<Received>,
    failures_tx: mpsc::UnboundedSender<Received>,
}

impl SseTransport {
    /// GET the stream and wait for the `endpoint` event (the `connect` phase).
    pub async fn connect(ep: Arc<SseEndpoint>) -> Result<SseTransport, TransportError> {
        let target = Target::new(&ep.url).map_err(connect_failed)?;
        let mut stage = "connecting";
        let opened = tokio::time::timeout(ep.connect_timeout, async {
            let mut sender = open(&target, ep.insecure).await?;
            stage = "waiting for the response to the GET";
            let mut req = target.request(Method::GET, Vec::new(), &ep.headers);
            req.headers_mut()
                .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            let resp = sender.send_request(req).await.map_err(|e| {
                TransportError::new(FailureKind::TransportClosed, format!("GET {}: {e}", ep.url))
            })?;
            check_stream_response(&ep.url, resp.status(), resp.headers())?;
            let mut body = resp.into_body();
            stage = "waiting for the `endpoint` event";
            let mut parser = SseParser::new();
            let mut pending = VecDeque::new();
            let post_url = loop {
                let events = read_events(&mut body, &mut parser, &mut pending).await;
                let Some(events) = events else {
                    return Err(TransportError::new(
                        FailureKind::TransportClosed,
                        format!(
                            "the SSE stream of {} ended before the `endpoint` event",
                            ep.url
                        ),
                    ));
                };
                let mut found = None;
                for ev in events {
                    if found.is_none() && ev.event_type() == "endpoint" {
                        found = Some(resolve_endpoint(&ep.url, &ev.data)?);
                    } else {
                        message_event(ev, &mut pending);
                    }
                }
                if let Some(url) = found {
                    break url;
                }
            };
            Ok((sender, body, parser, pending, post_url))
        })
        .await;
        let (sender, body, parser, pending, post_url) = match opened {
            Ok(result) => result?,
            Err(_) => {
                return Err(TransportError::new(
                    FailureKind::Timeout,
                    format!(
                        "{}: no `endpoint` event within {:?} ({stage})",
                        ep.url, ep.connect_timeout
                    ),
                ))
            }
        };
        let post_target = Target::new(&post_url).map(Box::new).map_err(|e| {
            TransportError::new(
                FailureKind::ProtocolViolation,
                format!("`endpoint` event: {e}"),
            )
        })?;
        let (failures_tx, failures) = mpsc::unbounded_channel();
        Ok(SseTransport {
            endpoint: ep,
            post_target,
            posts: Vec::new(),
            _stream_conn: sender,
            stream: Some(body),
            parser: Box::new(parser),
            pending,
            failures,
            failures_tx,
        })
    }

    /// A POST connection ready for a new request: an idle one, else a new one.
    async fn ready_conn(&mut self) -> Result<usize, TransportError> {
        if self.stream.is_none() {
            return Err(TransportError::new(
                FailureKind::TransportClosed,
                "the SSE stream has ended; the session is over",
            ));
        }
        self.posts.retain(|c| !c.sender.is_closed());
        for i in 0..self.posts.len() {
            if self.posts[i].busy.load(Ordering::Acquire) {
                continue;
            }
            if self.posts[i].sender.ready().await.is_ok() {
                return Ok(i);
            }
        }
        self.posts.retain(|c| !c.sender.is_closed());
        let ep = &self.endpoint;
        let sender = tokio::time::timeout(ep.connect_timeout, open(&self.post_target, ep.insecure))
            .await
            .map_err(|_| {
                TransportError::new(
                    FailureKind::Timeout,
                    format!("connect to {}: no answer", self.post_target.addr),
                )
            })??;
        self.posts.push(PostConn {
            sender,
            busy: Arc::new(AtomicBool::new(false)),
        });
        Ok(self.posts.len() - 1)
    }

    /// Start a POST on a ready connection; the returned future finishes it.
    async fn start_post(
        &mut self,
        bytes: Vec<u8>,
    ) -> Result<
        impl std::future::Future<Output = Result<(), TransportError>> + Send + 'static,
        TransportError,
    > {
        let i = self.ready_conn().await?;
        let mut req = self
            .post_target
            .request(Method::POST, bytes, &self.endpoint.headers);
        req.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let conn = &mut self.posts[i];
        conn.busy.store(true, Ordering::Release);
        let guard = BusyGuard(conn.busy.clone());
        let response = conn.sender.send_request(req);
        Ok(async move {
            let outcome = finish_post(response).await;
            drop(guard);
            outcome
        })
    }

    /// POST a request; its response arrives on the stream.
    pub async fn send_request(&mut self, id: u64, bytes: Vec<u8>) -> Result<(), TransportError> {
        let post = self.start_post(bytes).await?;
        let failures = self.failures_tx.clone();
        tokio::spawn(async move {
            if let Err(e) = post.await {
                let _ = failures.send(Received::Failed {
                    request: Some(id),
                    kind: e.kind,
                    detail: e.detail,
                });
            }
        });
        Ok(())
    }

    /// POST a notification or a response and wait for the server's 202.
    pub async fn post_and_wait(&mut self, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.start_post(bytes).await?.await
    }

    /// Cancel-safe: everything read is queued in `self` before anything is returned, and
    /// the futures raced here lose nothing when dropped.
    pub async fn recv(&mut self) -> Received {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return r;
            }
            if let Ok(r) = self.failures.try_recv() {
                return r;
            }
            let Some(body) = self.stream.as_mut() else {
                return Received::Closed {
                    detail: "the SSE stream has ended".into(),
                };
            };
            let frame = tokio::select! {
                Some(r) = self.failures.recv() => return r,
                frame = body.frame() => frame,
            };
            match frame {
                None => self.end_stream("the server closed the SSE stream".into()),
                Some(Err(e)) => self.end_stream(format!("the SSE stream broke: {e}")),
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue; // trailers
                    };
                    let mut events = Vec::new();
                    let fed = self.parser.feed(&data, &mut events);
                    for ev in events {
                        message_event(ev, &mut self.pending);
                    }
                    if let Err(e) = fed {
                        self.pending.push_back(parse_failure(&e, &data));
                        if e == SseError::TooLarge {
                            self.end_stream(e.to_string());
                        }
                    }
                }
            }
        }
    }

    fn end_stream(&mut self, detail: String) {
        self.stream = None;
        self.pending.push_back(Received::Closed { detail });
    }

    /// Drop the stream and every connection: for this transport that ends the session.
    pub async fn close(self) -> Result<(), TransportError> {
        drop(self);
        Ok(())
    }
}

/// The GET must answer 200 with an event stream.
fn check_stream_response(
    url: &url::Url,
    status: StatusCode,
    headers: &http::HeaderMap,
) -> Result<(), TransportError> {
    if status != StatusCode::OK {
        return Err(TransportError::new(
            FailureKind::HttpStatus(status.as_u16()),
            format!("GET {url} answered {status}"),
        ));
    }
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !content_type.starts_with("text/event-stream") {
        return Err(TransportError::new(
            FailureKind::ProtocolViolation,
            format!("GET {url}: Content-Type {content_type:?}, want text/event-stream"),
        ));
    }
    Ok(())
}

/// Read frames until at least one whole event is parsed; `None` when the stream ends.
async fn read_events(
    body: &mut Body,
    parser: &mut SseParser,
    pending: &mut VecDeque<Received>,
) -> Option<Vec<SseEvent>> {
    loop {
        let frame = body.frame().await?.ok()?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let mut events = Vec::new();
        if let Err(e) = parser.feed(&data, &mut events) {
            pending.push_back(parse_failure(&e, &data));
            if e == SseError::TooLarge {
                return None;
            }
        }
        if !events.is_empty() {
            return Some(events);
        }
    }
}

/// `event: message` carries every server message; anything else (a late `endpoint`,
/// pings, events without data) carries none.
fn message_event(ev: SseEvent, pending: &mut VecDeque<Received>) {
    if ev.event_type() == "message" && !ev.data.is_empty() {
        pending.push_back(classify(ev.data.as_bytes()));
    }
}

fn parse_failure(e: &SseError, data: &[u8]) -> Received {
    Received::Malformed {
        error: Malformed::NotJson(e.to_string()),
        excerpt: excerpt(data),
    }
}

/// The `endpoint` data is a URI reference, usually relative; treat it as opaque.
fn resolve_endpoint(sse_url: &url::Url, data: &str) -> Result<url::Url, TransportError> {
    sse_url.join(data.trim()).map_err(|e| {
        TransportError::new(
            FailureKind::ProtocolViolation,
            format!(
                "`endpoint` event {:?} is not a URI: {e}",
                excerpt(data.as_bytes())
            ),
        )
    })
}

/// Wait for a POST's answer and read its (small) body so the connection can be reused.
async fn finish_post<F>(response: F) -> Result<(), TransportError>
where
    F: std::future::Future<Output = hyper::Result<hyper::Response<Body>>>,
{
    let resp = response.await.map_err(|e| {
        TransportError::new(FailureKind::TransportClosed, format!("POST failed: {e}"))
    })?;
    let status = resp.status();
    let mut body = resp.into_body();
    let mut bytes = Vec::new();
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            bytes.extend_from_slice(&data);
        }
        if bytes.len() > MAX_ERROR_BODY {
            break; // the connection is dropped with the unread rest
        }
    }
    match status {
        StatusCode::ACCEPTED | StatusCode::OK | StatusCode::NO_CONTENT => Ok(()),
        StatusCode::NOT_FOUND => Err(TransportError::new(
            FailureKind::SessionExpired,
            format!(
                "POST answered 404: the server forgot the session: {}",
                excerpt(&bytes)
            ),
        )),
        s => Err(TransportError::new(
            FailureKind::HttpStatus(s.as_u16()),
            format!("POST answered {s}: {}", excerpt(&bytes)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc::{encode_notification, encode_request};
    use crate::protocol::Incoming;
    use crate::server::{spawn_http, HttpServer, ServerOptions};
    use axum::extract::State;
    use axum::response::IntoResponse;
    use axum::routing::{get, post};
    use serde_json::{json, Value};
    use std::net::SocketAddr;
    use std::sync::Mutex;
    use std::time::Instant;

    const WAIT: Duration = Duration::from_secs(5);

    fn endpoint(url: &str, connect_timeout: Duration) -> Arc<SseEndpoint> {
        Arc::new(SseEndpoint {
            url: url.parse().expect("url"),
            headers: vec![(
                HeaderName::from_static("x-test"),
                HeaderValue::from_static("1"),
            )],
            connect_timeout,
            insecure: false,
        })
    }

    async fn reference() -> HttpServer {
        let addr = "127.0.0.1:0".parse().expect("addr");
        spawn_http(addr, ServerOptions::default())
            .await
            .expect("server starts")
    }

    async fn connect(url: &str) -> SseTransport {
        SseTransport::connect(endpoint(url, WAIT))
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
                }) if rid.as_own() == Some(id) => return outcome.expect("a result"),
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
        let err = SseTransport::connect(endpoint(&format!("http://{}/nope", server.addr), WAIT))
            .await
            .err()
            .expect("a 404 is an error");
        assert_eq!(err.kind, FailureKind::HttpStatus(404), "{err}");
    }

    #[tokio::test]
    async fn legacy_sse_https_to_a_plain_server_fails_to_connect() {
        let server = reference().await;
        let url = format!("https://localhost:{}/sse", server.addr.port());
        let err = SseTransport::connect(endpoint(&url, WAIT))
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
        let err = SseTransport::connect(endpoint(&url, Duration::from_millis(300)))
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
}
