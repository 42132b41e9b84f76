//! The recorder's HTTP side: one port that takes Streamable HTTP, legacy HTTP+SSE and
//! WebSocket upgrades, and forwards each request unchanged (but its `Host`) to the same
//! path on the upstream, over a connection of its own per client connection.

use super::body::{record_json, relay, DownBody, LegacyStream, Reading, Tap};
use super::sessions::Sessions;
use super::upstream::{UpBody, Upstream};
use crate::trace::{modern_meta, ClosedBy, From, HttpExchange, Transport};
use bytes::Bytes;
use http::{header, HeaderMap, Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// Largest request body passed on (MCP requests are small; a bigger one is refused
/// with 413, as a server would).
const BODY_LIMIT: usize = 64 << 20;

/// The identity under which a legacy client of a server that hands out no session id is
/// known.
const NO_SESSION_ID: &str = "<no session id>";

/// What every connection shares.
#[derive(Debug, Clone)]
pub struct Proxy {
    pub upstream: Arc<Upstream>,
    pub sessions: Sessions,
}

/// Accept clients until `stop`.
pub async fn serve(listener: TcpListener, proxy: Proxy, stop: CancellationToken) {
    let mut connection = 0u64;
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = stop.cancelled() => break,
        };
        let Ok((stream, peer)) = accepted else {
            continue; // a client that went away before it was accepted
        };
        let _ = stream.set_nodelay(true);
        connection += 1;
        let proxy = proxy.clone();
        let stop = stop.clone();
        tasks.spawn(async move {
            let n = connection;
            let up: Arc<Mutex<Option<SendRequest<UpBody>>>> = Arc::default();
            let conn_proxy = proxy.clone();
            let service = hyper::service::service_fn(move |req| {
                let (proxy, up) = (conn_proxy.clone(), up.clone());
                async move { handle(req, &proxy, &up, peer, n).await }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::select! {
                _ = conn => {}
                () = stop.cancelled() => {}
            }
            proxy.sessions.connection_closed(n);
        });
        while tasks.try_join_next().is_some() {}
    }
    tasks.abort_all();
}

fn header_str<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The exchange's record: the header names the client sent, never their values (but
/// the protocol version's).
pub(super) fn exchange(req: &http::request::Parts, connection: u64) -> HttpExchange {
    let mut headers: Vec<String> = req.headers.keys().map(|k| k.as_str().to_string()).collect();
    headers.sort();
    headers.dedup();
    HttpExchange {
        method: req.method.to_string(),
        path: req.uri.path().to_string(),
        status: 0,
        content_type: None,
        connection,
        headers,
        protocol_version: header_str(&req.headers, "mcp-protocol-version").map(str::to_string),
        session_header: req.headers.contains_key("mcp-session-id"),
    }
}

/// A client's identity in a modern request, to group its requests into a session.
fn modern_identity(message: &Value) -> Option<String> {
    let meta = modern_meta(message)?;
    let get = |k: &str| meta.get(k).map(Value::to_string).unwrap_or_default();
    Some(format!(
        "{} {}",
        get(crate::trace::META_CLIENT_INFO),
        get(crate::trace::META_VERSION)
    ))
}

/// The `clientInfo` a request carries (in `initialize`, or a modern request's `_meta`),
/// as one string to compare.
fn client_info(message: &Value) -> Option<String> {
    let info = match modern_meta(message) {
        Some(meta) => meta.get(crate::trace::META_CLIENT_INFO),
        None => message.get("params").and_then(|p| p.get("clientInfo")),
    }?;
    let get = |k: &str| info.get(k).map(Value::to_string).unwrap_or_default();
    Some(format!("{} {}", get("name"), get("version")))
}

fn is_initialize(body: &Option<Value>) -> bool {
    let first = match body {
        Some(Value::Array(batch)) => batch.first(),
        other => other.as_ref(),
    };
    first.and_then(|m| m.get("method")).and_then(Value::as_str) == Some("initialize")
}

/// Why a request was not passed on: hyper then drops the client's connection, which is
/// what the client would have seen of a dead server.
type Failed = std::io::Error;

async fn handle(
    req: Request<Incoming>,
    proxy: &Proxy,
    up: &Mutex<Option<SendRequest<UpBody>>>,
    peer: SocketAddr,
    connection: u64,
) -> Result<Response<DownBody>, Failed> {
    if super::ws::is_upgrade(req.headers()) {
        return super::ws::relay(req, proxy, up, connection).await;
    }
    let sessions = &proxy.sessions;
    let (parts, body) = req.into_parts();
    let bytes = match Limited::new(body, BODY_LIMIT).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(too_large()),
    };
    let message: Option<Value> = serde_json::from_slice(&bytes).ok();
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let sid = header_str(&parts.headers, "mcp-session-id");
    let mut legacy_get = false;
    let session = if let Some(sid) = sid {
        Some(sessions.by_header(sid, connection).unwrap_or_else(|| {
            let id = sessions.open(Transport::Http, connection);
            sessions.remember_header(id, sid);
            id
        }))
    } else if let Some(id) = sessions.by_endpoint(path_and_query, connection) {
        Some(id)
    } else if is_initialize(&message) {
        // After a dual-era client's probe, its fallback: one session.
        let client = message.as_ref().and_then(first).and_then(client_info);
        let probe = client.and_then(|c| sessions.probing(peer.ip(), &c, connection));
        Some(probe.unwrap_or_else(|| sessions.open(Transport::Http, connection)))
    } else if let Some(identity) = message.as_ref().and_then(first).and_then(modern_identity) {
        let discovers = message
            .as_ref()
            .and_then(first)
            .and_then(|m| m.get("method"))
            == Some(&Value::from("server/discover"));
        // A request on another connection than its session's (a held listen, calls in
        // parallel) joins the latest session of its client; a discover begins one.
        Some(sessions.by_client(peer.ip(), &identity, connection, !discovers, discovers))
    } else if parts.method == http::Method::GET {
        legacy_get = true;
        None
    } else if message.is_some() {
        // A legacy client of a server that hands out no session id.
        Some(sessions.by_client(peer.ip(), NO_SESSION_ID, connection, true, false))
    } else {
        None
    };
    if let Some(id) = session {
        record_json(sessions, id, From::Client, &bytes);
        let m = message.as_ref().and_then(first);
        let method = m.and_then(|m| m.get("method")).and_then(Value::as_str);
        sessions.sent(id, method, m.and_then(client_info), peer.ip());
    }
    let mut record = exchange(&parts, connection);
    // Forward: the same request, to the upstream's host.
    let mut forward = Request::from_parts(
        parts.clone(),
        Full::new(bytes).map_err(|e| match e {}).boxed(),
    );
    forward
        .headers_mut()
        .insert(header::HOST, proxy.upstream.address.authority.clone());
    let response = match send(up, &proxy.upstream, forward).await {
        Ok(r) => r,
        Err(e) => {
            let why = format!("the upstream failed: {e}");
            if let Some(id) = session {
                sessions.trace.http(id, record);
                sessions.close(id, ClosedBy::UpstreamFailed, Some(why.clone()));
            }
            return Err(std::io::Error::other(why));
        }
    };
    let (head, body) = response.into_parts();
    record.status = head.status.as_u16();
    let content_type = header_str(&head.headers, "content-type").map(|c| {
        c.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    });
    record.content_type = content_type.clone();
    let reading = match content_type.as_deref() {
        Some("application/json") => Reading::Json,
        Some("text/event-stream") => Reading::Sse,
        _ => Reading::Nothing,
    };
    if let (Some(id), Some(new_sid), true) = (
        session,
        header_str(&head.headers, "mcp-session-id"),
        sid.is_none(),
    ) {
        sessions.remember_header(id, new_sid);
    } else if let (Some(id), true, None) = (session, is_initialize(&message), sid) {
        // No session id handed out: later requests are known by the client's address.
        sessions.remember_client(id, peer.ip(), NO_SESSION_ID, connection);
    }
    let legacy = (legacy_get && matches!(reading, Reading::Sse)).then(|| LegacyStream {
        connection,
        proxy_origin: proxy_origin(&parts.headers, &proxy.upstream),
        upstream_origin: proxy.upstream.origin.clone(),
        exchange: record.clone(),
    });
    if let Some(id) = session {
        sessions.trace.http(id, record);
    }
    let tap = Tap {
        sessions: sessions.clone(),
        session,
        reading,
        legacy,
        session_is_stream: false,
    };
    let body = relay(body, tap);
    if let (Some(id), true) = (session, parts.method == http::Method::DELETE) {
        sessions.close(id, ClosedBy::Client, Some("DELETE".into()));
    }
    Ok(Response::from_parts(head, body))
}

fn first(message: &Value) -> Option<&Value> {
    match message {
        Value::Array(batch) => batch.first(),
        m => Some(m),
    }
}

/// `http://HOST` as the client addressed the proxy.
fn proxy_origin(headers: &HeaderMap, upstream: &Upstream) -> String {
    match header_str(headers, "host") {
        Some(host) => format!("http://{host}"),
        None => upstream.origin.clone(),
    }
}

fn too_large() -> Response<DownBody> {
    let mut r = Response::new(
        Full::new(Bytes::from_static(b"request body too large"))
            .map_err(|e| match e {})
            .boxed(),
    );
    *r.status_mut() = http::StatusCode::PAYLOAD_TOO_LARGE;
    r
}

/// Send on this client connection's upstream connection, opening it (again) when needed.
pub async fn send(
    up: &Mutex<Option<SendRequest<UpBody>>>,
    upstream: &Upstream,
    req: Request<UpBody>,
) -> std::io::Result<Response<Incoming>> {
    let mut guard = up.lock().await;
    if guard.as_ref().is_none_or(SendRequest::is_closed) {
        *guard = Some(upstream.connect().await?);
    }
    let Some(sender) = guard.as_mut() else {
        return Err(std::io::Error::other("no upstream connection"));
    };
    sender.ready().await.map_err(std::io::Error::other)?;
    sender
        .send_request(req)
        .await
        .map_err(std::io::Error::other)
}
