//! Streamable HTTP (2025-03-26 and later), client side, on HTTP/1.1 connections of our
//! own ([`h1`]).
//!
//! Each session owns its connections, as a real client process would: the first one is
//! opened by [`HttpTransport::connect`] (timed as the `connect` phase), more are opened
//! only while all are busy (an SSE response, the GET stream or a parallel request holds
//! one). `https://` runs the same code over rustls. Every client message is its own
//! POST; a request's answer comes back as one JSON body or an SSE stream, and each of
//! those, like the optional standalone GET stream, becomes a [`flow`] of [`Received`]
//! items that `recv` polls together, so server requests and notifications can
//! interleave with responses. Flows that lose their SSE stream resume it with `GET` +
//! `Last-Event-ID`.
//!
//! We use our own connections rather than reqwest's or hyper's because the session must
//! see connection setup as its own phase and must own its connections (a shared client
//! pool hides both), and because hyper's fixed cost per connection (~29 KiB, a driver
//! task) was most of a long-lived session's memory.

mod conn;
mod flow;
pub(crate) mod h1;

use super::tcp::SourceAddrs;
use super::{Received, TransportError};
use crate::metrics::FailureKind;
use crate::plan::Connection;
use crate::protocol::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use conn::Pool;
use flow::{Flow, Item};
use futures::stream::{BoxStream, SelectAll};
use futures::StreamExt;
use http::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{Method, StatusCode};
use rustls::pki_types::ServerName;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const ACCEPT_SSE: &str = "text/event-stream";

/// Where and how to reach the endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct HttpEndpoint {
    /// host:port to connect to.
    pub addr: String,
    /// Host header value.
    pub authority: HeaderValue,
    /// Request target in origin form (path and query).
    pub path: http::Uri,
    /// How sessions connect: headers, timeout, message limit (the largest body, SSE
    /// event or response head we hold), `--insecure`, source addresses, keep-alive.
    pub connection: Connection,
    /// `connection.source_addresses`, taken in turn.
    pub sources: SourceAddrs,
    /// With `connection.keep_alive`: the idle connections that outlive sessions and are
    /// reused by later ones.
    pub shared_idle: Option<Arc<conn::SharedIdle>>,
    /// Set for `https://`.
    tls: Option<TlsTarget>,
}

/// What every TLS handshake of an endpoint needs; the config is built once.
#[derive(Debug)]
struct TlsTarget {
    config: Arc<rustls::ClientConfig>,
    server_name: ServerName<'static>,
}

impl HttpEndpoint {
    /// `connection.insecure` accepts any server certificate; only used for https.
    pub fn new(url: &url::Url, connection: Connection) -> Result<HttpEndpoint, TransportError> {
        let bad = |what: String| TransportError::new(FailureKind::ConnectFailed, what);
        let address = super::address::Address::parse(url, ("http", "https")).map_err(bad)?;
        let tls = if address.secure {
            Some(TlsTarget {
                config: super::tls::client_config(connection.insecure),
                server_name: address
                    .server_name()
                    .map_err(|e| bad(format!("{}: {e}", crate::redact::url(url))))?,
            })
        } else {
            None
        };
        Ok(HttpEndpoint {
            addr: address.connect,
            authority: address.authority,
            path: address.path,
            sources: SourceAddrs::new(connection.source_addresses.clone()),
            shared_idle: connection.keep_alive.then(Arc::default),
            connection,
            tls,
        })
    }

    /// The endpoint's URL (the resource a token is for) and `--insecure`.
    pub fn url(&self) -> Option<(url::Url, bool)> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let text = format!("{scheme}://{}{}", self.authority.to_str().ok()?, self.path);
        Some((url::Url::parse(&text).ok()?, self.connection.insecure))
    }
}

/// What the standalone GET stream request found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetStream {
    /// The stream is open; its messages arrive through `recv`.
    Open,
    /// The server answered 405: it offers no GET stream.
    NotOffered,
}

/// Connection and stream counts of one session, for its report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HttpStats {
    pub connections_opened: u32,
    /// POST response streams resumed with `GET` + `Last-Event-ID`.
    pub resumptions: u32,
    /// Times the standalone GET stream was reopened after it ended or broke.
    pub get_stream_reconnects: u32,
}

/// The session headers every request after `initialize` carries.
#[derive(Debug, Clone, Default)]
struct SessionHeaders {
    id: Option<HeaderValue>,
    version: Option<HeaderValue>,
    /// The session's `Authorization: Bearer …` (sensitive), on every request.
    auth: Option<HeaderValue>,
}

pub struct HttpTransport {
    pool: Arc<Pool>,
    streams: SelectAll<BoxStream<'static, Item>>,
    session: SessionHeaders,
    /// The last POSTed notification or response that was accepted with something other
    /// than a bare 202 (for the conformance checks; taken by the session).
    unusual_ack: Option<PostAck>,
}

/// How the server accepted a POSTed notification or response, when it was not the bare
/// 202 the spec asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostAck {
    pub status: u16,
    pub body: Vec<u8>,
}

impl HttpTransport {
    /// Open the first connection.
    pub async fn connect(endpoint: Arc<HttpEndpoint>) -> Result<HttpTransport, TransportError> {
        let pool = Pool::new(endpoint);
        pool.open_idle().await?;
        Ok(HttpTransport {
            pool,
            streams: SelectAll::new(),
            session: SessionHeaders::default(),
            unusual_ack: None,
        })
    }

    /// A request to the endpoint with this session's headers, encoded.
    fn request(&self, method: Method, body: &[u8], extra: &[(HeaderName, HeaderValue)]) -> Vec<u8> {
        build_request(
            &self.pool.endpoint,
            method,
            body,
            &self.session,
            None,
            extra,
        )
    }

    /// How the last POSTed notification or response was accepted, if not with a bare 202.
    pub fn take_unusual_ack(&mut self) -> Option<PostAck> {
        self.unusual_ack.take()
    }

    /// The `Authorization` value of every later request (GET stream reconnects too).
    pub fn set_bearer(&mut self, bearer: Option<HeaderValue>) {
        self.session.auth = bearer;
    }

    pub fn set_protocol_version(&mut self, version: Option<&str>) {
        self.session.version = version.and_then(|v| HeaderValue::from_str(v).ok());
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session.id.as_ref().and_then(|v| v.to_str().ok())
    }

    /// The session id as the server sent it (it may not be valid text).
    pub fn session_id_bytes(&self) -> Option<&[u8]> {
        self.session.id.as_ref().map(HeaderValue::as_bytes)
    }

    /// Forget the session (id and protocol-version header) and drop every open stream,
    /// keeping the idle connections: the way to re-initialize after a 404.
    pub fn reset_session(&mut self) {
        self.session = SessionHeaders {
            auth: self.session.auth.take(),
            ..SessionHeaders::default()
        };
        self.streams = SelectAll::new();
    }

    pub fn stats(&self) -> HttpStats {
        HttpStats {
            connections_opened: self.pool.connections_opened.load(Ordering::Relaxed),
            resumptions: self.pool.resumptions.load(Ordering::Relaxed),
            get_stream_reconnects: self.pool.get_stream_reconnects.load(Ordering::Relaxed),
        }
    }

    /// POST a request; its answer is read by `recv`.
    pub async fn send_request(
        &mut self,
        id: u64,
        body: Vec<u8>,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<(), TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::POST, &body, headers);
        let response = lease.send(req);
        let flow = Flow::post(self.pool.clone(), id, self.session.clone(), response);
        self.streams.push(flow.into_stream());
        Ok(())
    }

    /// POST a notification or a response and wait for the server's 202.
    pub async fn post_and_wait(&mut self, body: Vec<u8>) -> Result<(), TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::POST, &body, &[]);
        let resp = lease.send(req).await?;
        let status = resp.status;
        let challenge = super::auth::challenge(status, &resp.headers);
        let body = resp
            .body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await;
        let body = too_large_or_default(body)?;
        match status {
            StatusCode::ACCEPTED | StatusCode::OK | StatusCode::NO_CONTENT => {
                if status != StatusCode::ACCEPTED || !body.is_empty() {
                    self.unusual_ack = Some(PostAck {
                        status: status.as_u16(),
                        body,
                    });
                }
                Ok(())
            }
            s => Err(status_error(
                s,
                self.session.id.is_some(),
                challenge.as_deref(),
                &body,
            )),
        }
    }

    /// Open the standalone GET stream on a connection of its own. Its messages (server
    /// requests and notifications) arrive through `recv`; if it ends or breaks it is
    /// reopened with `Last-Event-ID`, up to three times in a row. A server that sits on
    /// the response head (or drips a refusal's body) is given the request timeout.
    pub async fn open_get_stream(&mut self) -> Result<GetStream, TransportError> {
        let limit = self.pool.endpoint.connection.timeout;
        within(limit, "the GET stream", self.get_stream()).await
    }

    async fn get_stream(&mut self) -> Result<GetStream, TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::GET, &[], &[]);
        let resp = lease.send(req).await?;
        let status = resp.status;
        if status == StatusCode::OK && flow::is_event_stream(&resp.headers) {
            let flow = Flow::listen(self.pool.clone(), self.session.clone(), resp.body);
            self.streams.push(flow.into_stream());
            return Ok(GetStream::Open);
        }
        let content_type = resp.headers.get(CONTENT_TYPE).cloned();
        let challenge = super::auth::challenge(status, &resp.headers);
        let body = resp
            .body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await;
        let body = too_large_or_default(body)?;
        match status {
            StatusCode::METHOD_NOT_ALLOWED => Ok(GetStream::NotOffered),
            StatusCode::OK => Err(TransportError::new(
                FailureKind::ProtocolViolation,
                format!("the GET stream answered 200 with Content-Type {content_type:?}, not text/event-stream"),
            )),
            s => Err(status_error(
                s,
                self.session.id.is_some(),
                challenge.as_deref(),
                &body,
            )),
        }
    }

    pub async fn recv(&mut self) -> Received {
        loop {
            match self.streams.next().await {
                Some(Item::SessionId(id)) => self.session.id = Some(id),
                Some(Item::Received(r)) => return r,
                // Nothing outstanding: wait until the caller's timeout (a server message
                // cannot arrive without an open stream).
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// DELETE the session (405 means the server does not allow it: fine), within the
    /// request timeout: a server that never answers or drips the body cannot hold the
    /// client.
    pub async fn close(mut self) -> Result<(), TransportError> {
        self.streams = SelectAll::new();
        if self.session.id.is_none() {
            self.pool.give_back();
            return Ok(());
        }
        let limit = self.pool.endpoint.connection.timeout;
        within(limit, "the DELETE", self.delete()).await
    }

    async fn delete(&mut self) -> Result<(), TransportError> {
        let lease = self.pool.lease().await?;
        let req = self.request(Method::DELETE, &[], &[]);
        let resp = lease.send(req).await?;
        let status = resp.status;
        let _ = resp
            .body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await;
        self.pool.give_back();
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

/// One POST of `body` over `io` and its answer read as a session reads it (the head
/// within the limits `limit` sets, the body up to `limit`): the status and the body's
/// length. For the fuzz target (`fuzz/fuzz_targets/http_response.rs`).
#[doc(hidden)]
pub async fn exchange_over(
    io: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    body: &[u8],
    limit: usize,
) -> Result<(u16, usize), TransportError> {
    let host = HeaderValue::from_static("fuzz");
    let request = h1::encode_request(&Method::POST, "/mcp", &[(&HOST, &host)], body);
    let max_head = super::response_head_limit(limit);
    let (head, mut body) = h1::Conn::over(io).exchange(&request, max_head).await?;
    let mut read = 0;
    while let Some(piece) = body.frame().await {
        read += piece?.len();
        if read > limit {
            break;
        }
    }
    Ok((head.status.as_u16(), read))
}

/// `exchange` within the request timeout, else a `timeout` failure naming `what`. A
/// combinator, not an `async fn`: an `async fn` would hold `exchange` twice, as its
/// argument and inside the timeout (BENCHMARKS, issue 15: future sizes).
fn within<'a, T: 'a>(
    limit: Duration,
    what: &'a str,
    exchange: impl std::future::Future<Output = Result<T, TransportError>> + 'a,
) -> impl std::future::Future<Output = Result<T, TransportError>> + 'a {
    use futures::FutureExt;
    tokio::time::timeout(limit, exchange).map(move |r| {
        r.unwrap_or_else(|_| {
            Err(TransportError::new(
                FailureKind::Timeout,
                format!(
                    "{what} was not answered within {}",
                    humantime::format_duration(limit)
                ),
            ))
        })
    })
}

/// A request to the endpoint with the session's headers, encoded for one write. A GET
/// asks for an event stream, resuming after `last_event_id` when given; `extra` fields
/// come last and replace any of the same name.
fn build_request(
    ep: &HttpEndpoint,
    method: Method,
    body: &[u8],
    session: &SessionHeaders,
    last_event_id: Option<&str>,
    extra: &[(HeaderName, HeaderValue)],
) -> Vec<u8> {
    // The fields in order, a later one replacing an earlier one of the same name (as
    // a `HeaderMap` would, without building one for every request).
    let (content_type, accept) = (CONTENT_TYPE, ACCEPT);
    let json = HeaderValue::from_static("application/json");
    let (both, sse) = (
        HeaderValue::from_static(ACCEPT_BOTH),
        HeaderValue::from_static(ACCEPT_SSE),
    );
    let (last_event, id, version, auth) = (
        LAST_EVENT_ID,
        MCP_SESSION_ID,
        MCP_PROTOCOL_VERSION,
        AUTHORIZATION,
    );
    let resume = last_event_id.and_then(|id| HeaderValue::from_str(id).ok());
    let mut h: Vec<(&HeaderName, &HeaderValue)> =
        Vec::with_capacity(6 + ep.connection.headers.len() + extra.len());
    let mut set = |k, v| match h.iter_mut().find(|(name, _)| *name == k) {
        Some(field) => field.1 = v,
        None => h.push((k, v)),
    };
    let host = HOST;
    set(&host, &ep.authority);
    if method == Method::POST {
        set(&content_type, &json);
        set(&accept, &both);
    } else if method == Method::GET {
        set(&accept, &sse);
        if let Some(v) = &resume {
            set(&last_event, v);
        }
    }
    if let Some(v) = &session.id {
        set(&id, v);
    }
    if let Some(v) = &session.version {
        set(&version, v);
    }
    for (k, v) in &ep.connection.headers {
        set(k, v);
    }
    if let Some(v) = &session.auth {
        set(&auth, v);
    }
    for (k, v) in extra {
        set(k, v);
    }
    let target = ep.path.path_and_query().map_or("/", |pq| pq.as_str());
    h1::encode_request(&method, target, &h, body)
}

/// What a non-2xx answer means. A 404 on a live session is the server forgetting it; a
/// body that is a JSON-RPC error is that error (the 2026-07-28 era answers -32020…-32022
/// with 400, and its `data` matters for version negotiation); anything else is the status.
fn status_error(
    status: StatusCode,
    had_session: bool,
    challenge: Option<&str>,
    body: &[u8],
) -> TransportError {
    if status == StatusCode::NOT_FOUND && had_session {
        return TransportError::new(
            FailureKind::SessionExpired,
            super::with_body("404 on a live session".into(), body),
        );
    }
    if let Ok(crate::protocol::Incoming::Response {
        outcome: Err(e), ..
    }) = crate::protocol::Incoming::parse(body)
    {
        let mut err = TransportError::new(
            FailureKind::RpcError(e.code),
            format!("HTTP {status}: {} ({})", e.message, e.code),
        );
        err.data = e.data;
        return err;
    }
    TransportError::new(
        FailureKind::HttpStatus(status.as_u16()),
        super::with_body(
            super::auth::with_challenge(format!("HTTP {status}"), challenge),
            body,
        ),
    )
}

/// A body over the limit fails the exchange; a broken one leaves only the status to go by.
fn too_large_or_default(body: Result<Vec<u8>, TransportError>) -> Result<Vec<u8>, TransportError> {
    match body {
        Err(e) if e.kind == FailureKind::MessageTooLarge => Err(e),
        other => Ok(other.unwrap_or_default()),
    }
}

#[cfg(test)]
mod tests;
