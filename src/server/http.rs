//! The Streamable HTTP transport of the reference server (legacy shape, one `/mcp`
//! endpoint): header checks, sessions keyed by `Mcp-Session-Id`, and JSON or SSE framing
//! around the transport-independent handler.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
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
use futures::StreamExt;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::handler::{error_without_id, malformed_reply, Handler, Notifier, Session};
use super::ServerOptions;
use crate::protocol::jsonrpc::codes;
use crate::protocol::methods as m;
use crate::protocol::version::legacy_versions;
use crate::protocol::Incoming;

const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// What the TS SDK server answers for an unknown session; clients key re-init on the 404.
const SESSION_NOT_FOUND: &str =
    r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}"#;
/// Bound on waiting for open streams (a long `sleep`) when shutting down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Shared by every connection: the handler and the live sessions.
struct AppState {
    handler: Arc<Handler>,
    sessions: RwLock<HashMap<String, Arc<Session>>>,
    sse_responses: bool,
}

impl AppState {
    fn session(&self, id: &str) -> Option<Arc<Session>> {
        // A poisoned lock only means another request panicked mid-insert; the map is
        // still usable.
        let map = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        map.get(id).cloned()
    }

    fn insert(&self, id: String, session: Arc<Session>) {
        let mut map = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        map.insert(id, session);
    }

    fn remove(&self, id: &str) -> bool {
        let mut map = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        map.remove(id).is_some()
    }
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
    let is_initialize = matches!(&msg, Incoming::Request { method, .. } if method == m::INITIALIZE);
    let (session, new_id) = match headers.get(&MCP_SESSION_ID) {
        Some(id) => {
            let Some(session) = id.to_str().ok().and_then(|id| state.session(id)) else {
                return session_not_found();
            };
            if let Some(refused) = version_refusal(&headers) {
                return refused;
            }
            (session, None)
        }
        None if is_initialize => (Arc::new(Session::new()), Some(new_session_id())),
        None => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "Bad Request: Mcp-Session-Id header is required",
            )
        }
    };

    if !matches!(msg, Incoming::Request { .. }) {
        // Notifications and the client's answers to our requests: accepted, no body.
        state.handler.handle(&session, msg, &Notifier::none()).await;
        return StatusCode::ACCEPTED.into_response();
    }

    let streams = state.sse_responses || Handler::wants_stream(&msg);
    if is_initialize || !streams {
        // Answer inline: `initialize` must finish before the session id is published.
        let reply = state.handler.handle(&session, msg, &Notifier::none()).await;
        let session_header = match new_id {
            Some(id) if session.version().is_some() => {
                state.insert(id.clone(), session.clone());
                Some(id)
            }
            _ => None,
        };
        let reply = reply.unwrap_or_default();
        if streams {
            let (tx, rx) = mpsc::unbounded_channel();
            let _ = tx.send(reply);
            return sse_response(&session, rx, session_header);
        }
        return json_response(StatusCode::OK, reply, session_header);
    }

    let (tx, rx) = mpsc::unbounded_channel();
    let stream_session = session.clone();
    tokio::spawn(async move {
        let notifier = Notifier::new(tx.clone());
        if let Some(reply) = state.handler.handle(&session, msg, &notifier).await {
            let _ = tx.send(reply);
        }
        // Dropping the last sender ends the SSE body: the stream closes after the reply.
    });
    sse_response(&stream_session, rx, None)
}

async fn delete_mcp(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
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

/// No standalone server→client stream yet.
async fn get_mcp(headers: HeaderMap) -> Response {
    if let Some(refused) = origin_refusal(&headers) {
        return refused;
    }
    (StatusCode::METHOD_NOT_ALLOWED, [(ALLOW, "POST, DELETE")]).into_response()
}

/// The SSE body: a priming event (id, empty data) so the client holds a resumption
/// cursor, then every message from `rx` until its senders are gone.
fn sse_response(
    session: &Session,
    rx: mpsc::UnboundedReceiver<Vec<u8>>,
    session_id: Option<String>,
) -> Response {
    let priming = Bytes::from(format!("id: {}\ndata:\n\n", session.next_event_id()));
    let events = futures::stream::unfold(rx, |mut rx| async move {
        let msg = rx.recv().await?;
        let mut event = Vec::with_capacity(msg.len() + 24);
        event.extend_from_slice(b"event: message\ndata: ");
        event.extend_from_slice(&msg);
        event.extend_from_slice(b"\n\n");
        Some((Ok::<_, Infallible>(Bytes::from(event)), rx))
    });
    let body = futures::stream::once(async move { Ok::<_, Infallible>(priming) }).chain(events);
    let mut response = (
        StatusCode::OK,
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
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
