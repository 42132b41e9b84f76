//! Legacy HTTP+SSE (2024-11-05): GET the SSE URL, wait for the `endpoint` event, POST
//! every client message there, read every server message from the stream; the session
//! ends when the stream closes.
//!
//! On hyper directly, like Streamable HTTP: one long-lived connection carries the GET
//! stream, POSTs go over connections of their own (opened only while all are busy). A
//! request's POST runs in a small task so several requests can be in flight; its 202 says
//! nothing about the answer, which comes on the stream, so only a failed POST is reported
//! (as `Received::Failed` for that request id, through `recv`). Opening connections
//! lives in `conn`.

pub(crate) mod conn;

use super::sse::{SseError, SseEvent, SseParser};
use super::tcp::SourceAddrs;
use super::{classify, excerpt, too_large, Carrier, Received, TransportError};
use crate::metrics::FailureKind;
use crate::plan::Connection;
use crate::protocol::jsonrpc::Malformed;
use bytes::Bytes;
use conn::{connect_failed, open, send_failed, Target};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming as Body;
use hyper::client::conn::http1::SendRequest;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Most of an error body we read (for the report's excerpt).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Where and how to reach a legacy SSE endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct SseEndpoint {
    /// The SSE URL (conventionally `/sse`).
    pub url: url::Url,
    /// How sessions connect: headers (on the GET and every POST), timeout, message limit
    /// (the largest SSE event or response head we hold), `--insecure`, source addresses.
    pub connection: Connection,
    /// `connection.source_addresses`, taken in turn.
    pub sources: SourceAddrs,
}

impl SseEndpoint {
    pub fn new(url: url::Url, connection: Connection) -> SseEndpoint {
        SseEndpoint {
            url,
            sources: SourceAddrs::new(connection.source_addresses.clone()),
            connection,
        }
    }
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
    /// The session's `Authorization: Bearer …` (sensitive), on every request.
    bearer: Option<HeaderValue>,
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
    /// `bearer` is the session's `Authorization` value, on the GET and every POST.
    pub async fn connect(
        ep: Arc<SseEndpoint>,
        bearer: Option<HeaderValue>,
    ) -> Result<SseTransport, TransportError> {
        let target = Target::new(&ep.url).map_err(connect_failed)?;
        let mut stage = "connecting";
        let connection = &ep.connection;
        let opened = tokio::time::timeout(connection.timeout, async {
            let limit = connection.max_message_bytes;
            let mut sender = open(&target, connection.insecure, &ep.sources, limit).await?;
            stage = "waiting for the response to the GET";
            let mut req = target.request(Method::GET, Vec::new(), &connection.headers);
            req.headers_mut()
                .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
            if let Some(v) = &bearer {
                req.headers_mut().insert(AUTHORIZATION, v.clone());
            }
            let resp = sender.send_request(req).await.map_err(|e| {
                let e = send_failed(&e);
                TransportError::new(
                    e.kind,
                    format!("GET {}: {}", crate::redact::url(&ep.url), e.detail),
                )
            })?;
            check_stream_response(&ep.url, resp.status(), resp.headers())?;
            let mut body = resp.into_body();
            stage = "waiting for the `endpoint` event";
            let mut parser = SseParser::with_limit(connection.max_message_bytes);
            let mut pending = VecDeque::new();
            let post_url = loop {
                let events = read_events(&mut body, &mut parser, &mut pending).await?;
                let Some(events) = events else {
                    return Err(TransportError::new(
                        FailureKind::TransportClosed,
                        format!(
                            "the SSE stream of {} ended before the `endpoint` event",
                            crate::redact::url(&ep.url)
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
                        crate::redact::url(&ep.url),
                        ep.connection.timeout
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
            bearer,
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
        // Boxed: opening a connection (TCP, TLS, hyper's handshake) is rare and its
        // state is large; inline, every request's future would carry it
        // (results/BENCHMARKS.md, issue 15: future sizes).
        let sender = tokio::time::timeout(
            ep.connection.timeout,
            Box::pin(open(
                &self.post_target,
                ep.connection.insecure,
                &ep.sources,
                ep.connection.max_message_bytes,
            )),
        )
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
        let mut req =
            self.post_target
                .request(Method::POST, bytes, &self.endpoint.connection.headers);
        req.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(v) = &self.bearer {
            req.headers_mut().insert(AUTHORIZATION, v.clone());
        }
        let conn = &mut self.posts[i];
        conn.busy.store(true, Ordering::Release);
        let guard = BusyGuard(conn.busy.clone());
        let response = conn.sender.send_request(req);
        // A server that never answers the POST, or drips its body, holds the task and
        // the connection no longer than the request timeout.
        let limit = self.endpoint.connection.timeout;
        Ok(async move {
            let outcome = match tokio::time::timeout(limit, finish_post(response)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(TransportError::new(
                    FailureKind::Timeout,
                    format!(
                        "the POST was not answered within {}",
                        humantime::format_duration(limit)
                    ),
                )),
            };
            drop(guard);
            outcome
        })
    }

    /// POST a request; its response arrives on the stream.
    /// The `Authorization` value of every later POST.
    pub fn set_bearer(&mut self, bearer: Option<HeaderValue>) {
        self.bearer = bearer;
    }

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
                    match fed {
                        Ok(()) => {}
                        Err(SseError::TooLarge { limit }) => {
                            // Stop reading: the rest of the event is never buffered.
                            self.stream = None;
                            self.pending
                                .push_back(too_large(None, "an SSE event", limit));
                        }
                        Err(e) => self.pending.push_back(parse_failure(&e, &data)),
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
        let challenge = super::auth::challenge(status, headers);
        return Err(TransportError::new(
            FailureKind::HttpStatus(status.as_u16()),
            super::auth::with_challenge(
                format!("GET {} answered {status}", crate::redact::url(url)),
                challenge.as_deref(),
            ),
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
            format!(
                "GET {}: Content-Type {content_type:?}, want text/event-stream",
                crate::redact::url(url)
            ),
        ));
    }
    Ok(())
}

/// Read frames until at least one whole event is parsed; `None` when the stream ends,
/// an error when an event outgrows the limit.
async fn read_events(
    body: &mut Body,
    parser: &mut SseParser,
    pending: &mut VecDeque<Received>,
) -> Result<Option<Vec<SseEvent>>, TransportError> {
    loop {
        let Some(Ok(frame)) = body.frame().await else {
            return Ok(None);
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let mut events = Vec::new();
        match parser.feed(&data, &mut events) {
            Ok(()) => {}
            Err(SseError::TooLarge { limit }) => {
                return Err(TransportError::new(
                    FailureKind::MessageTooLarge,
                    format!("an SSE event larger than the {limit}-byte limit (--max-message-size)"),
                ))
            }
            Err(e) => pending.push_back(parse_failure(&e, &data)),
        }
        if !events.is_empty() {
            return Ok(Some(events));
        }
    }
}

/// `event: message` carries every server message; anything else (a late `endpoint`,
/// pings, events without data) carries none.
fn message_event(ev: SseEvent, pending: &mut VecDeque<Received>) {
    if ev.event_type() == "message" && !ev.data.is_empty() {
        pending.push_back(classify(ev.data.as_bytes(), Carrier::SseEvent));
    }
}

fn parse_failure(e: &SseError, data: &[u8]) -> Received {
    Received::Malformed {
        error: Malformed::NotJson(e.to_string()),
        excerpt: excerpt(data),
        carrier: Carrier::SseEvent,
        request: None,
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
        let e = send_failed(&e);
        TransportError::new(e.kind, format!("POST failed: {}", e.detail))
    })?;
    let status = resp.status();
    let challenge = super::auth::challenge(status, resp.headers());
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
            super::with_body(
                "POST answered 404: the server forgot the session".into(),
                &bytes,
            ),
        )),
        s => Err(TransportError::new(
            FailureKind::HttpStatus(s.as_u16()),
            super::with_body(
                super::auth::with_challenge(format!("POST answered {s}"), challenge.as_deref()),
                &bytes,
            ),
        )),
    }
}

#[cfg(test)]
mod tests;
