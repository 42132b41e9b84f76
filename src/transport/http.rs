//! Streamable HTTP (2025-03-26 and later), client side, on hyper directly.
//!
//! Each session owns its connections, as a real client process would: the first one is
//! opened by [`HttpTransport::connect`] (timed as the `connect` phase), more are opened
//! only while all are busy (an SSE response or a parallel request holds one). Every
//! client message is its own POST; a request's answer comes back as one JSON body or an
//! SSE stream, and both are turned into a stream of [`Received`] items that `recv` polls
//! together, so server requests and notifications can interleave with responses.
//!
//! We use hyper rather than reqwest because the session must see connection setup as
//! its own phase and must own its connections; a shared client pool hides both.

use super::sse::{SseEvent, SseParser};
use super::{classify, excerpt, Received, TransportError};
use crate::metrics::FailureKind;
use crate::protocol::jsonrpc::Malformed;
use bytes::Bytes;
use futures::stream::{BoxStream, SelectAll};
use futures::{FutureExt, StreamExt};
use http::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;

pub const SESSION_HEADER: &str = "mcp-session-id";
pub const VERSION_HEADER: &str = "mcp-protocol-version";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// Largest JSON body we read; larger is a protocol violation, not an OOM.
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Where and how to reach the endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct HttpEndpoint {
    /// host:port to connect to.
    pub addr: String,
    /// Host header value.
    pub authority: HeaderValue,
    /// Request target in origin form (path and query).
    pub path: http::Uri,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub connect_timeout: Duration,
}

impl HttpEndpoint {
    pub fn new(
        url: &url::Url,
        headers: Vec<(HeaderName, HeaderValue)>,
        connect_timeout: Duration,
    ) -> Result<HttpEndpoint, TransportError> {
        let bad = |what: &str| TransportError::new(FailureKind::ConnectFailed, what.to_string());
        if url.scheme() != "http" {
            return Err(bad(&format!(
                "{url}: only http:// is supported by this build (TLS comes with the transports work)"
            )));
        }
        let host = url.host_str().ok_or_else(|| bad("the URL has no host"))?;
        let port = url.port_or_known_default().unwrap_or(80);
        let host_for_connect = host.trim_start_matches('[').trim_end_matches(']');
        let addr = if host_for_connect.contains(':') {
            format!("[{host_for_connect}]:{port}")
        } else {
            format!("{host_for_connect}:{port}")
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
        Ok(HttpEndpoint {
            addr,
            authority: HeaderValue::from_str(&authority).map_err(|_| bad("bad host"))?,
            path: path.parse().map_err(|_| bad("bad path"))?,
            headers,
            connect_timeout,
        })
    }
}

struct Conn {
    sender: SendRequest<Full<Bytes>>,
    /// Set while a response body on this connection is still being read.
    busy: Arc<AtomicBool>,
}

/// Clears a connection's busy flag when the response that used it is done or dropped.
struct BusyGuard(Option<Arc<AtomicBool>>);

impl BusyGuard {
    fn release(&mut self) {
        if let Some(flag) = self.0.take() {
            flag.store(false, Ordering::Release);
        }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Items produced by one POST's response.
enum Item {
    SessionId(HeaderValue),
    Received(Received),
}

pub struct HttpTransport {
    endpoint: Arc<HttpEndpoint>,
    conns: Vec<Conn>,
    streams: SelectAll<BoxStream<'static, Item>>,
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
}

impl HttpTransport {
    /// Open the first connection.
    pub async fn connect(endpoint: Arc<HttpEndpoint>) -> Result<HttpTransport, TransportError> {
        let mut t = HttpTransport {
            endpoint,
            conns: Vec::new(),
            streams: SelectAll::new(),
            session_id: None,
            protocol_version: None,
        };
        let conn = Self::open(&t.endpoint).await?;
        t.conns.push(conn);
        Ok(t)
    }

    async fn open(ep: &HttpEndpoint) -> Result<Conn, TransportError> {
        let connect = async {
            let tcp = TcpStream::connect(&ep.addr).await?;
            tcp.set_nodelay(true)?;
            Ok::<_, std::io::Error>(tcp)
        };
        let tcp = match tokio::time::timeout(ep.connect_timeout, connect).await {
            Ok(Ok(tcp)) => tcp,
            Ok(Err(e)) => {
                return Err(TransportError::new(
                    FailureKind::ConnectFailed,
                    format!("connect to {}: {e}", ep.addr),
                ))
            }
            Err(_) => {
                return Err(TransportError::new(
                    FailureKind::Timeout,
                    format!("connect to {}: no answer", ep.addr),
                ))
            }
        };
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(|e| TransportError::new(FailureKind::ConnectFailed, e.to_string()))?;
        // The connection task ends when the server closes or every sender is dropped.
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Conn {
            sender,
            busy: Arc::new(AtomicBool::new(false)),
        })
    }

    /// A connection ready for a new request: an idle one, else a new one.
    async fn ready_conn(&mut self) -> Result<usize, TransportError> {
        self.conns.retain(|c| !c.sender.is_closed());
        for i in 0..self.conns.len() {
            if self.conns[i].busy.load(Ordering::Acquire) {
                continue;
            }
            if self.conns[i].sender.ready().await.is_ok() {
                return Ok(i);
            }
        }
        self.conns.retain(|c| !c.sender.is_closed());
        let endpoint = self.endpoint.clone();
        let conn = Self::open(&endpoint).await?;
        self.conns.push(conn);
        Ok(self.conns.len() - 1)
    }

    fn build(&self, method: Method, body: Vec<u8>) -> Request<Full<Bytes>> {
        let ep = &self.endpoint;
        let mut req = Request::builder()
            .method(method.clone())
            .uri(ep.path.clone())
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_default();
        let h = req.headers_mut();
        h.insert(HOST, ep.authority.clone());
        if method == Method::POST {
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            h.insert(ACCEPT, HeaderValue::from_static(ACCEPT_BOTH));
        }
        if let Some(id) = &self.session_id {
            h.insert(HeaderName::from_static(SESSION_HEADER), id.clone());
        }
        if let Some(v) = &self.protocol_version {
            h.insert(HeaderName::from_static(VERSION_HEADER), v.clone());
        }
        for (k, v) in &ep.headers {
            h.insert(k.clone(), v.clone());
        }
        req
    }

    /// Forget the session id and version header and drop open streams (re-init).
    pub fn reset_session(&mut self) {
        self.session_id = None;
        self.protocol_version = None;
        self.streams = SelectAll::new();
    }

    pub fn set_protocol_version(&mut self, version: Option<&str>) {
        self.protocol_version = version.and_then(|v| HeaderValue::from_str(v).ok());
    }

    /// POST a request; its answer is read by `recv`.
    pub async fn send_request(
        &mut self,
        id: u64,
        body: Vec<u8>,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<(), TransportError> {
        let i = self.ready_conn().await?;
        let mut req = self.build(Method::POST, body);
        for (k, v) in headers {
            req.headers_mut().insert(k.clone(), v.clone());
        }
        let conn = &mut self.conns[i];
        conn.busy.store(true, Ordering::Release);
        let guard = BusyGuard(Some(conn.busy.clone()));
        let response = conn.sender.send_request(req);
        let had_session = self.session_id.is_some();
        self.streams
            .push(response_stream(response, id, had_session, guard).boxed());
        Ok(())
    }

    /// POST a notification or a response and wait for the server's 202.
    pub async fn post_and_wait(&mut self, body: Vec<u8>) -> Result<(), TransportError> {
        let i = self.ready_conn().await?;
        let req = self.build(Method::POST, body);
        let had_session = self.session_id.is_some();
        let conn = &mut self.conns[i];
        let resp = conn
            .sender
            .send_request(req)
            .await
            .map_err(|e| TransportError::new(FailureKind::TransportClosed, e.to_string()))?;
        let status = resp.status();
        let body = read_body(resp.into_body()).await;
        match status {
            StatusCode::ACCEPTED | StatusCode::OK | StatusCode::NO_CONTENT => Ok(()),
            s => Err(status_error(s, had_session, &body.unwrap_or_default())),
        }
    }

    pub async fn recv(&mut self) -> Received {
        loop {
            match self.streams.next().await {
                Some(Item::SessionId(id)) => self.session_id = Some(id),
                Some(Item::Received(r)) => return r,
                // Nothing outstanding: wait until the caller's timeout (a server message
                // cannot arrive without an open stream).
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// DELETE the session (405 means the server does not allow it: fine).
    pub async fn close(mut self) -> Result<(), TransportError> {
        self.streams = SelectAll::new();
        if self.session_id.is_none() {
            return Ok(());
        }
        let i = self.ready_conn().await?;
        let req = self.build(Method::DELETE, Vec::new());
        let resp = self.conns[i]
            .sender
            .send_request(req)
            .await
            .map_err(|e| TransportError::new(FailureKind::TransportClosed, e.to_string()))?;
        let status = resp.status();
        let _ = read_body(resp.into_body()).await;
        if status.is_success() || status == StatusCode::METHOD_NOT_ALLOWED {
            Ok(())
        } else {
            Err(TransportError::new(
                FailureKind::HttpStatus(status.as_u16()),
                format!("DELETE answered {status}"),
            ))
        }
    }
}

fn status_error(status: StatusCode, had_session: bool, body: &[u8]) -> TransportError {
    if status == StatusCode::NOT_FOUND && had_session {
        return TransportError::new(
            FailureKind::SessionExpired,
            format!("404 on a live session: {}", excerpt(body)),
        );
    }
    TransportError::new(
        FailureKind::HttpStatus(status.as_u16()),
        format!("HTTP {status}: {}", excerpt(body)),
    )
}

async fn read_body(mut body: Body) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| e.to_string())?;
        if let Ok(data) = frame.into_data() {
            if out.len() + data.len() > MAX_BODY_BYTES {
                return Err(format!("body larger than {MAX_BODY_BYTES} bytes"));
            }
            out.extend_from_slice(&data);
        }
    }
    Ok(out)
}

/// The state of one POST's response as it is read.
enum State<F> {
    Waiting(F),
    Sse { body: Body, parser: SseParser },
    Done,
}

/// Turn one POST's response into items: its session id, then every message in it, then
/// a failure for request `id` if the response never came.
fn response_stream<F>(
    response: F,
    id: u64,
    had_session: bool,
    guard: BusyGuard,
) -> impl futures::Stream<Item = Item> + Send + 'static
where
    F: std::future::Future<Output = hyper::Result<hyper::Response<Body>>> + Send + 'static,
{
    struct Ctx<F> {
        state: State<F>,
        queue: VecDeque<Item>,
        id: u64,
        had_session: bool,
        answered: bool,
        guard: BusyGuard,
    }
    let ctx = Ctx {
        state: State::Waiting(response),
        queue: VecDeque::new(),
        id,
        had_session,
        answered: false,
        guard,
    };
    let stream = futures::stream::unfold(ctx, |mut cx| async move {
        loop {
            if let Some(item) = cx.queue.pop_front() {
                return Some((item, cx));
            }
            match std::mem::replace(&mut cx.state, State::Done) {
                State::Done => {
                    cx.guard.release();
                    return None;
                }
                State::Waiting(fut) => {
                    let resp = match fut.await {
                        Ok(r) => r,
                        Err(e) => {
                            cx.fail(FailureKind::TransportClosed, format!("POST failed: {e}"));
                            continue;
                        }
                    };
                    cx.state = cx.on_response(resp).await;
                }
                State::Sse {
                    mut body,
                    mut parser,
                } => match body.frame().await {
                    None => {
                        cx.guard.release();
                        if !cx.answered {
                            cx.fail(
                                FailureKind::TransportClosed,
                                "the SSE stream ended before the response".into(),
                            );
                        }
                    }
                    Some(Err(e)) => {
                        cx.guard.release();
                        if !cx.answered {
                            cx.fail(
                                FailureKind::TransportClosed,
                                format!("SSE stream broke: {e}"),
                            );
                        }
                    }
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            cx.feed_sse(&mut parser, &data);
                        }
                        if cx.answered {
                            // The server should end the stream after the response; if the
                            // end is already here, free the connection before the session
                            // sends its next request.
                            if let Some(None) = body.frame().now_or_never() {
                                cx.guard.release();
                                continue;
                            }
                        }
                        cx.state = State::Sse { body, parser };
                    }
                },
            }
        }
    });

    impl<F> Ctx<F> {
        fn fail(&mut self, kind: FailureKind, detail: String) {
            self.queue.push_back(Item::Received(Received::Failed {
                request: Some(self.id),
                kind,
                detail,
            }));
        }

        fn push_message(&mut self, bytes: &[u8]) {
            use crate::protocol::Incoming;
            let r = classify(bytes);
            match &r {
                Received::Message(Incoming::Response { id: Some(rid), .. })
                    if rid.as_own() == Some(self.id) =>
                {
                    self.answered = true;
                }
                // An error without an id on this POST's stream can only be about the one
                // request the POST carried.
                Received::Message(Incoming::Response {
                    id: None,
                    outcome: Err(e),
                }) if !self.answered => {
                    self.answered = true;
                    let (kind, detail) = (FailureKind::RpcError(e.code), e.message.clone());
                    self.fail(kind, detail);
                    return;
                }
                _ => {}
            }
            self.queue.push_back(Item::Received(r));
        }

        fn feed_sse(&mut self, parser: &mut SseParser, data: &[u8]) {
            let mut events: Vec<SseEvent> = Vec::new();
            if let Err(e) = parser.feed(data, &mut events) {
                self.queue.push_back(Item::Received(Received::Malformed {
                    error: Malformed::NotJson(e.to_string()),
                    excerpt: excerpt(data),
                }));
            }
            for ev in events {
                // Priming events (id only, empty data) and non-message events carry no
                // JSON-RPC message.
                if ev.data.is_empty() || ev.event_type() != "message" {
                    continue;
                }
                self.push_message(ev.data.as_bytes());
            }
        }

        async fn on_response(&mut self, resp: hyper::Response<Body>) -> State<F> {
            let status = resp.status();
            if status.is_success() {
                if let Some(sid) = resp.headers().get(SESSION_HEADER) {
                    self.queue.push_back(Item::SessionId(sid.clone()));
                }
            }
            let content_type = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            let body = resp.into_body();
            if status != StatusCode::OK {
                let bytes = read_body(body).await.unwrap_or_default();
                self.guard.release();
                let e = if status == StatusCode::ACCEPTED {
                    TransportError::new(
                        FailureKind::ProtocolViolation,
                        "the server answered a request with 202 Accepted and no response",
                    )
                } else {
                    status_error(status, self.had_session, &bytes)
                };
                self.fail(e.kind, e.detail);
                return State::Done;
            }
            if content_type.starts_with("text/event-stream") {
                return State::Sse {
                    body,
                    parser: SseParser::new(),
                };
            }
            match read_body(body).await {
                Ok(bytes) => {
                    self.guard.release();
                    if content_type.starts_with("application/json") {
                        self.push_message(&bytes);
                        if !self.answered {
                            // A JSON body that is not our response (or is malformed) leaves
                            // the request unanswered; the session sees both.
                            self.fail(
                                FailureKind::ProtocolViolation,
                                "the JSON body does not answer the request".into(),
                            );
                        }
                    } else {
                        self.fail(
                            FailureKind::ProtocolViolation,
                            format!(
                                "unexpected Content-Type {content_type:?} (want application/json or text/event-stream)"
                            ),
                        );
                    }
                }
                Err(e) => self.fail(FailureKind::TransportClosed, format!("reading body: {e}")),
            }
            State::Done
        }
    }

    stream
}
