//! The Streamable HTTP transport of the reference server, both shapes on one `/mcp`
//! endpoint: legacy sessions keyed by `Mcp-Session-Id` (SSE streams with event ids and
//! replay, the standalone GET stream, resumption with `Last-Event-ID`) and stateless
//! 2026-07-28 POSTs (routing headers checked against the body); JSON or SSE framing around
//! the transport-independent handler, plus the HTTP fault switches.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use anyhow::Context;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, ALLOW, CACHE_CONTROL};
use axum::http::header::{CONTENT_TYPE, ORIGIN};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt;
use axum::Router;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::handler::{error_without_id, malformed_reply, Handler, Notifier, Session};
use super::handler::{modern_codes, META_PROTOCOL_VERSION};
use super::{Eras, ServerOptions};
use crate::protocol::jsonrpc::{codes, encode_response};
use crate::protocol::methods as m;
use crate::protocol::version::legacy_versions;
use crate::protocol::{Incoming, RpcError};

const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");
/// What the TS SDK server answers for an unknown session; clients key re-init on the 404.
const SESSION_NOT_FOUND: &str =
    r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}"#;
/// Bound on waiting for open streams (a long `sleep`) when shutting down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Shared by every connection: the handler, the live sessions and the fault switches.
struct AppState {
    handler: Arc<Handler>,
    sessions: RwLock<HashMap<String, Arc<HttpSession>>>,
    sse_responses: bool,
    eras: Eras,
    sse_drop_after: Option<usize>,
    expire_sessions_after: Option<u32>,
}

impl AppState {
    fn session(&self, id: &str) -> Option<Arc<HttpSession>> {
        // A poisoned lock only means another request panicked mid-insert; the map is
        // still usable.
        let map = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        map.get(id).cloned()
    }

    fn insert(&self, id: String, session: Arc<HttpSession>) {
        let mut map = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        map.insert(id, session);
    }

    fn remove(&self, id: &str) -> bool {
        let mut map = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        map.remove(id).is_some()
    }
}

/// Events kept for replay per stream, and streams kept per session (oldest forgotten
/// first; the standalone stream is never forgotten).
const REPLAY_EVENTS: usize = 256;
const KEPT_STREAMS: usize = 64;
/// Reconnect delay announced in the priming event when the drop fault will cut a stream.
const DROP_RETRY_MS: u64 = 200;

/// One Streamable HTTP session: the handler's session plus what only HTTP has, the SSE
/// streams with their replay buffers and the request count of the expiry fault.
#[derive(Debug, Default)]
struct HttpSession {
    core: Session,
    requests: AtomicU32,
    streams: Mutex<Streams>,
}

#[derive(Debug, Default)]
struct Streams {
    logs: BTreeMap<u64, Arc<Mutex<StreamLog>>>,
    standalone: Option<u64>,
}

/// One SSE stream of a session: every event it carried (bounded), for `Last-Event-ID`, and
/// the connection currently receiving it, if any. Event ids are `<stream>-<n>`; the
/// priming event is `<stream>-0`.
#[derive(Debug)]
struct StreamLog {
    stream: u64,
    next: u64,
    events: VecDeque<(u64, Bytes)>,
    /// The final response is logged: the stream ends after it is delivered.
    done: bool,
    live: Option<mpsc::UnboundedSender<Bytes>>,
    /// The drop fault: how many more messages the first connection may carry.
    budget: Option<usize>,
}

/// Why a GET cannot have the stream it asks for.
enum Refusal {
    Conflict,
    UnknownEvent,
}

impl StreamLog {
    /// Log a message and deliver it to the live connection, unless the drop fault cuts
    /// the connection first (it never lets the final response through).
    fn push(&mut self, msg: Vec<u8>, last: bool) {
        self.next += 1;
        let n = self.next;
        let event = frame_event(Some(&format!("{}-{n}", self.stream)), &msg);
        self.events.push_back((n, event.clone()));
        if self.events.len() > REPLAY_EVENTS {
            self.events.pop_front();
        }
        if self.live.is_none() {
            return;
        }
        if let Some(budget) = self.budget {
            if last || budget == 0 {
                self.live = None;
                return;
            }
            self.budget = Some(budget - 1);
        }
        if let Some(live) = &self.live {
            // A gone client keeps the stream going: it may resume.
            let _ = live.send(event);
        }
        if self.budget == Some(0) {
            self.live = None;
        }
    }

    fn finish(&mut self) {
        self.done = true;
        self.live = None;
    }

    /// Continue the stream on a new connection: replay what followed event `after`, then
    /// go on live unless the stream is complete.
    fn attach(&mut self, live: mpsc::UnboundedSender<Bytes>, after: u64) -> Result<(), Refusal> {
        if self.live.as_ref().is_some_and(|l| !l.is_closed()) {
            return Err(Refusal::Conflict);
        }
        for (_, event) in self.events.iter().filter(|(n, _)| *n > after) {
            let _ = live.send(event.clone());
        }
        // The fault cuts the first connection only.
        self.budget = None;
        self.live = (!self.done).then_some(live);
        Ok(())
    }
}

impl HttpSession {
    /// A new stream whose first event (priming: id, empty data) is already queued.
    fn open_stream(&self, budget: Option<usize>) -> (Arc<Mutex<StreamLog>>, Body) {
        let stream = self.core.next_event_id();
        let (tx, rx) = mpsc::unbounded_channel();
        let retry = if budget.is_some() {
            format!("retry: {DROP_RETRY_MS}\n")
        } else {
            String::new()
        };
        let _ = tx.send(Bytes::from(format!("id: {stream}-0\n{retry}data:\n\n")));
        let log = Arc::new(Mutex::new(StreamLog {
            stream,
            next: 0,
            events: VecDeque::new(),
            done: false,
            live: (budget != Some(0)).then_some(tx),
            budget,
        }));
        let mut streams = lock(&self.streams);
        streams.logs.insert(stream, log.clone());
        while streams.logs.len() > KEPT_STREAMS {
            let standalone = streams.standalone;
            let oldest = streams
                .logs
                .keys()
                .copied()
                .find(|k| Some(*k) != standalone);
            match oldest {
                Some(k) => streams.logs.remove(&k),
                None => break,
            };
        }
        (log, body_of(rx))
    }

    /// The standalone GET stream; 409 when one is already open.
    fn open_standalone(&self) -> Result<Body, Refusal> {
        let (tx, rx) = mpsc::unbounded_channel();
        if !self.core.open_standalone(tx) {
            return Err(Refusal::Conflict);
        }
        let (log, body) = self.open_stream(None);
        let live = lock(&log).live.clone();
        lock(&self.streams).standalone = Some(lock(&log).stream);
        tokio::spawn(async move { pump(&log, rx, live).await });
        Ok(body)
    }

    /// `GET` + `Last-Event-ID: <stream>-<n>`.
    fn resume(&self, last_event_id: &str) -> Result<Body, Refusal> {
        let (stream, after) = last_event_id
            .trim()
            .split_once('-')
            .and_then(|(s, n)| Some((s.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
            .ok_or(Refusal::UnknownEvent)?;
        let (log, standalone) = {
            let streams = lock(&self.streams);
            let log = streams.logs.get(&stream).cloned();
            (
                log.ok_or(Refusal::UnknownEvent)?,
                streams.standalone == Some(stream),
            )
        };
        let (live, rx) = mpsc::unbounded_channel();
        if standalone {
            let (tx, messages) = mpsc::unbounded_channel();
            if !self.core.open_standalone(tx) {
                return Err(Refusal::Conflict);
            }
            lock(&log).attach(live.clone(), after)?;
            tokio::spawn(async move { pump(&log, messages, Some(live)).await });
        } else {
            lock(&log).attach(live, after)?;
        }
        Ok(body_of(rx))
    }
}

/// Move the handler's messages into `log` until their senders are gone or, when
/// `watched` is given (the standalone stream), until that connection closes, so the
/// session sees the stream as closed and list_changed falls back to request streams.
async fn pump(
    log: &Mutex<StreamLog>,
    mut messages: mpsc::UnboundedReceiver<Vec<u8>>,
    watched: Option<mpsc::UnboundedSender<Bytes>>,
) {
    let closed = async {
        match &watched {
            Some(live) => live.closed().await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(closed);
    loop {
        tokio::select! {
            msg = messages.recv() => match msg {
                Some(msg) => lock(log).push(msg, false),
                None => break,
            },
            () = &mut closed => break,
        }
    }
}

fn body_of(rx: mpsc::UnboundedReceiver<Bytes>) -> Body {
    Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        let event = rx.recv().await?;
        Some((Ok::<_, Infallible>(event), rx))
    }))
}

/// One SSE `message` event carrying a JSON-RPC message.
fn frame_event(id: Option<&str>, msg: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(msg.len() + 48);
    if let Some(id) = id {
        event.extend_from_slice(b"id: ");
        event.extend_from_slice(id.as_bytes());
        event.push(b'\n');
    }
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(msg);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A poisoned lock only means another request panicked mid-update; the data is usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running HTTP server; dropping it or calling [`HttpServer::shutdown`] stops it.
pub struct HttpServer {
    pub addr: SocketAddr,
    /// Dropping the sender is the stop signal, so dropping the server stops it too.
    stop: oneshot::Sender<()>,
    task: JoinHandle<std::io::Result<()>>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl HttpServer {
    /// Stop accepting, let open requests finish (bounded), then return.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        let mut task = self.task;
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }

    /// The MCP endpoint URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

/// Bind `addr` (port 0 picks a free port), serve in the background, return at once.
pub async fn spawn_http(addr: SocketAddr, opts: ServerOptions) -> anyhow::Result<HttpServer> {
    let listener = bind(addr).await?;
    let addr = listener.local_addr().context("reading the bound address")?;
    let (stop, stopped) = oneshot::channel::<()>();
    let app = router(&opts);
    let task = tokio::spawn(async move {
        axum::serve(nodelay(listener), app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    });
    Ok(HttpServer { addr, stop, task })
}

/// Bind `addr` and serve until Ctrl-C.
pub async fn serve_http(addr: SocketAddr, opts: ServerOptions) -> anyhow::Result<()> {
    let listener = bind(addr).await?;
    axum::serve(nodelay(listener), router(&opts))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving HTTP")
}

async fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot bind the reference server to {addr}"))
}

/// Small request/response exchanges must not wait on Nagle's algorithm.
fn nodelay(listener: TcpListener) -> impl axum::serve::Listener<Addr = SocketAddr> {
    listener.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    })
}

fn router(opts: &ServerOptions) -> Router {
    let handler = Arc::new(Handler::new(opts));
    let state = Arc::new(AppState {
        handler: handler.clone(),
        sessions: RwLock::new(HashMap::new()),
        sse_responses: opts.sse_responses,
        eras: opts.eras,
        sse_drop_after: opts.sse_drop_after,
        expire_sessions_after: opts.expire_sessions_after,
    });
    // Any other method gets axum's 405 with an `Allow` header.
    Router::new()
        .route("/mcp", post(post_mcp).get(get_mcp).delete(delete_mcp))
        .with_state(state)
        .merge(super::ws::routes(handler.clone()))
        .merge(super::legacy_sse::routes(handler))
}

async fn post_mcp(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    let accept = header_text(&headers, &ACCEPT);
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list both application/json and text/event-stream",
        );
    }
    if !header_text(&headers, &CONTENT_TYPE).starts_with("application/json") {
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: Content-Type must be application/json",
        );
    }
    let msg = match Incoming::parse(&body) {
        Ok(msg) => msg,
        Err(e) => return json_response(StatusCode::BAD_REQUEST, malformed_reply(&e), None),
    };
    if state.handler.is_stateless(&msg) {
        return post_stateless(&state, &headers, msg).await;
    }
    let is_initialize = matches!(&msg, Incoming::Request { method, .. } if method == m::INITIALIZE);
    let (session, new_id) = match headers.get(&MCP_SESSION_ID) {
        Some(id) => {
            let id = id.to_str().unwrap_or_default();
            let Some(session) = state.session(id) else {
                return session_not_found();
            };
            if let Some(refused) = version_refusal(&headers) {
                return refused;
            }
            // The expiry fault: this request is still served, the next one gets 404.
            let served = session.requests.fetch_add(1, Ordering::Relaxed) + 1;
            if state
                .expire_sessions_after
                .is_some_and(|limit| served >= limit)
            {
                state.remove(id);
            }
            (session, None)
        }
        None if is_initialize => (Arc::new(HttpSession::default()), Some(new_session_id())),
        None => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            )
        }
    };

    if !matches!(msg, Incoming::Request { .. }) {
        // Notifications and the client's answers to our requests (routed to the tool
        // call awaiting them): accepted, no body.
        state
            .handler
            .handle(&session.core, msg, &Notifier::none())
            .await;
        return StatusCode::ACCEPTED.into_response();
    }

    let streams = state.sse_responses || Handler::wants_stream(&msg);
    if is_initialize || !streams {
        // Answer inline: `initialize` must finish before the session id is published.
        let reply = state
            .handler
            .handle(&session.core, msg, &Notifier::none())
            .await;
        let session_header = match new_id {
            Some(id) if session.core.version().is_some() => {
                state.insert(id.clone(), session.clone());
                Some(id)
            }
            _ => None,
        };
        let reply = reply.unwrap_or_default();
        if streams {
            let (log, body) = session.open_stream(None);
            lock(&log).push(reply, true);
            lock(&log).finish();
            return sse_response(body, session_header);
        }
        return json_response(StatusCode::OK, reply, session_header);
    }

    let is_call = matches!(&msg, Incoming::Request { method, .. } if method == m::TOOLS_CALL);
    let (log, body) = session.open_stream(state.sse_drop_after.filter(|_| is_call));
    tokio::spawn(async move {
        let (tx, rx) = mpsc::unbounded_channel();
        let notifier = Notifier::new(tx);
        let work = async move {
            let reply = state.handler.handle(&session.core, msg, &notifier).await;
            drop(notifier); // ends the pump once everything sent is logged
            reply
        };
        let (reply, ()) = tokio::join!(work, pump(&log, rx, None));
        let mut log = lock(&log);
        if let Some(reply) = reply {
            log.push(reply, true);
        }
        // Ends the live connection, if any: the stream is complete.
        log.finish();
    });
    sse_response(body, None)
}

/// A 2026-07-28 request: no session. The routing headers must agree with the body; errors
/// get their era's HTTP statuses.
async fn post_stateless(state: &AppState, headers: &HeaderMap, msg: Incoming) -> Response {
    let Incoming::Request { method, params, .. } = &msg else {
        return StatusCode::ACCEPTED.into_response();
    };
    let params = params.as_ref().unwrap_or(&Value::Null);
    // Without a `_meta` version there is nothing to compare the headers with; the handler
    // answers the missing key (-32602), or refuses a legacy request in a modern-only server.
    if params
        .pointer("/_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some()
    {
        if let Err(mismatch) = check_routing_headers(headers, method, params) {
            let error = RpcError {
                code: modern_codes::HEADER_MISMATCH,
                message: format!("Header mismatch: {mismatch}"),
                data: None,
            };
            return json_response(StatusCode::BAD_REQUEST, encode_error(&msg, &error), None);
        }
    }
    let session = Session::new(); // stateless: nothing in it is ever read
    let streams = state.sse_responses || Handler::wants_stream(&msg);
    if streams {
        if let Err(error) = state.handler.modern_check(method, params) {
            let status = modern_status(error.code);
            return json_response(status, encode_error(&msg, &error), None);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let handler = state.handler.clone();
        tokio::spawn(async move {
            let notifier = Notifier::new(tx.clone());
            if let Some(reply) = handler.handle(&session, msg, &notifier).await {
                let _ = tx.send(reply);
            }
        });
        // No resumability in this era: events carry no ids.
        let events = futures::stream::unfold(rx, |mut rx| async move {
            let msg = rx.recv().await?;
            Some((Ok::<_, Infallible>(frame_event(None, &msg)), rx))
        });
        return sse_response(Body::from_stream(events), None);
    }
    match state.handler.answer(&session, msg, &Notifier::none()).await {
        Some(reply) => {
            let status = reply.error.map_or(StatusCode::OK, modern_status);
            json_response(status, reply.bytes, None)
        }
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// `MCP-Protocol-Version` equal to the `_meta` version, `Mcp-Method` to the method, and
/// `Mcp-Name` to the name or URI for the methods that have one.
fn check_routing_headers(headers: &HeaderMap, method: &str, params: &Value) -> Result<(), String> {
    let expect = |name: &HeaderName, want: Option<&str>| -> Result<(), String> {
        let got = headers.get(name).and_then(|v| v.to_str().ok());
        match (got, want) {
            (Some(got), Some(want)) if got.trim() == want => Ok(()),
            (None, _) => Err(format!("{name} header is missing")),
            (Some(got), want) => Err(format!(
                "{name} is {got:?} but the body says {:?}",
                want.unwrap_or_default()
            )),
        }
    };
    let version = params
        .pointer("/_meta")
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    expect(&MCP_PROTOCOL_VERSION, version)?;
    expect(&MCP_METHOD, Some(method))?;
    let name_key = match method {
        m::TOOLS_CALL | m::PROMPTS_GET => Some("name"),
        m::RESOURCES_READ => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key {
        expect(&MCP_NAME, params.get(key).and_then(Value::as_str))?;
    }
    Ok(())
}

/// HTTP status of a modern error reply (reference §7.3).
fn modern_status(code: i64) -> StatusCode {
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::INVALID_PARAMS
        | codes::INVALID_REQUEST
        | modern_codes::HEADER_MISMATCH
        | modern_codes::MISSING_CLIENT_CAPABILITY
        | modern_codes::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn encode_error(msg: &Incoming, error: &RpcError) -> Vec<u8> {
    match msg {
        Incoming::Request { id, .. } => encode_response(id, Err(error)),
        _ => error_without_id(error.code, &error.message),
    }
}

async fn delete_mcp(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    if !state.eras.legacy() {
        return (StatusCode::METHOD_NOT_ALLOWED, [(ALLOW, "POST")]).into_response();
    }
    let Some(id) = headers.get(&MCP_SESSION_ID) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        );
    };
    if id.to_str().is_ok_and(|id| state.remove(id)) {
        StatusCode::OK.into_response()
    } else {
        session_not_found()
    }
}

/// The standalone stream for server messages unrelated to a request (one per session,
/// a second → 409), or the resumption of any stream of the session with `Last-Event-ID`.
/// Without a session (a modern client, or a modern-only server) there is no GET: 405.
async fn get_mcp(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    let session_id = headers.get(&MCP_SESSION_ID).and_then(|v| v.to_str().ok());
    let (true, Some(id)) = (state.eras.legacy(), session_id) else {
        return (StatusCode::METHOD_NOT_ALLOWED, [(ALLOW, "POST, DELETE")]).into_response();
    };
    let Some(session) = state.session(id) else {
        return session_not_found();
    };
    if !header_text(&headers, &ACCEPT).contains("text/event-stream") {
        return error_response(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list text/event-stream",
        );
    }
    if let Some(refused) = version_refusal(&headers) {
        return refused;
    }
    let last = headers.get(LAST_EVENT_ID).and_then(|v| v.to_str().ok());
    let resumed = match last {
        Some(last) => session.resume(last),
        None => session.open_standalone(),
    };
    match resumed {
        Ok(body) => sse_response(body, None),
        Err(Refusal::Conflict) => error_response(
            StatusCode::CONFLICT,
            "Conflict: this stream is already open for the session",
        ),
        Err(Refusal::UnknownEvent) => error_response(
            StatusCode::NOT_FOUND,
            "Not Found: Last-Event-ID names no stream of this session",
        ),
    }
}

/// An SSE response around `body` (already framed events).
fn sse_response(body: Body, session_id: Option<String>) -> Response {
    let mut response = (
        StatusCode::OK,
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
            (X_ACCEL_BUFFERING, "no"),
        ],
        body,
    )
        .into_response();
    add_session_header(&mut response, session_id);
    response
}

fn json_response(status: StatusCode, body: Vec<u8>, session_id: Option<String>) -> Response {
    let mut response = (status, [(CONTENT_TYPE, "application/json")], body).into_response();
    add_session_header(&mut response, session_id);
    response
}

fn add_session_header(response: &mut Response, session_id: Option<String>) {
    if let Some(value) = session_id.and_then(|id| HeaderValue::try_from(id).ok()) {
        response.headers_mut().insert(MCP_SESSION_ID, value);
    }
}

/// An HTTP error whose body is an id-less JSON-RPC error, as SDK clients expect.
fn error_response(status: StatusCode, message: &str) -> Response {
    json_response(status, error_without_id(-32000, message), None)
}

fn session_not_found() -> Response {
    json_response(StatusCode::NOT_FOUND, SESSION_NOT_FOUND.into(), None)
}

/// A random 128-bit id; `rand::random` draws from the thread-local CSPRNG.
fn new_session_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// All values of `name`, joined and lowercased, for substring checks.
fn header_text(headers: &HeaderMap, name: &HeaderName) -> String {
    let mut text = String::new();
    for value in headers.get_all(name) {
        if let Ok(v) = value.to_str() {
            text.push_str(&v.to_ascii_lowercase());
            text.push(',');
        }
    }
    text
}

/// DNS-rebinding defence: a browser page from another host must not reach a local
/// server. Returns the 403 to send, if any.
fn origin_refusal(headers: &HeaderMap) -> Option<Response> {
    let origin = headers.get(ORIGIN)?;
    (!origin.to_str().is_ok_and(is_local_origin))
        .then(|| error_response(StatusCode::FORBIDDEN, "Forbidden: Origin not allowed"))
}

fn is_local_origin(origin: &str) -> bool {
    let Some((_, rest)) = origin.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if authority.starts_with('[') {
        authority.split(']').next().map(|h| format!("{h}]"))
    } else {
        authority.split(':').next().map(str::to_owned)
    };
    host.is_some_and(|h| {
        let h = h.to_ascii_lowercase();
        h == "localhost" || h == "127.0.0.1" || h == "[::1]"
    })
}

/// `MCP-Protocol-Version`, when present, must name a version we speak; absent means
/// 2025-03-26, which we speak. Returns the 400 to send, if any.
fn version_refusal(headers: &HeaderMap) -> Option<Response> {
    let value = headers.get(&MCP_PROTOCOL_VERSION)?;
    let supported = value
        .to_str()
        .is_ok_and(|v| legacy_versions().any(|known| known == v.trim()));
    (!supported).then(|| {
        json_response(
            StatusCode::BAD_REQUEST,
            error_without_id(
                codes::INVALID_REQUEST,
                "Bad Request: Unsupported protocol version",
            ),
            None,
        )
    })
}

#[cfg(test)]
mod tests;
