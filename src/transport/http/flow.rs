//! One flow of server messages: the answer to a POSTed request (one JSON body or an SSE
//! stream), or the standalone GET stream. A flow that loses its SSE stream reconnects
//! itself with `GET` + `Last-Event-ID` after the server's `retry` delay: a POST's stream
//! to resume the request it still owes an answer to (2025-11-25), the GET stream to
//! keep listening. Each flow becomes one stream of [`Item`]s that `recv` polls.

use super::answer::status_error;
use super::conn::{Body, Pool, Response};
use super::request::{build_request, SessionHeaders};
use crate::metrics::FailureKind;
use crate::protocol::headers::MCP_SESSION_ID;
use crate::protocol::jsonrpc::Malformed;
use crate::protocol::Incoming as Message;
use crate::transport::sse::{SseError, SseEvent, SseParser};
use crate::transport::{classify, excerpt, too_large, Carrier, Received, TransportError};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use http::header::{HeaderValue, CONTENT_TYPE};
use http::{HeaderMap, Method, StatusCode};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Reconnects in a row (without a message in between) before a flow gives up.
pub(super) const MAX_RECONNECTS: u32 = 3;
/// The wait before reconnecting when the server sent no `retry:` field.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// What a flow yields to the transport.
pub(super) enum Item {
    SessionId(HeaderValue),
    Received(Received),
}

/// What a flow is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Purpose {
    /// The answer to our request `id`.
    Post { id: u64 },
    /// The standalone GET stream: server requests and notifications, no answer owed.
    Listen,
}

type ResponseFuture = BoxFuture<'static, Result<Response, TransportError>>;

enum State {
    Waiting(ResponseFuture),
    /// Boxed: the variant is large and the others small.
    Sse(Box<Sse>),
    Reconnect,
    Done,
}

struct Sse {
    body: Body,
    parser: SseParser,
}

impl State {
    fn sse(body: Body, parser: SseParser) -> State {
        State::Sse(Box::new(Sse { body, parser }))
    }
}

pub(super) struct Flow {
    pool: Arc<Pool>,
    purpose: Purpose,
    /// The headers a reconnecting GET carries (a POST flow learns the session id from
    /// its own response when it carried `initialize`).
    session: SessionHeaders,
    had_session: bool,
    state: State,
    queue: VecDeque<Item>,
    answered: bool,
    last_event_id: Option<String>,
    retry: Option<Duration>,
    /// Reconnects since the last message.
    attempts: u32,
}

impl Flow {
    /// The answer to a POSTed request, whose response head is `response`.
    pub fn post(
        pool: Arc<Pool>,
        id: u64,
        session: SessionHeaders,
        response: impl std::future::Future<Output = Result<Response, TransportError>> + Send + 'static,
    ) -> Flow {
        Flow::new(
            pool,
            Purpose::Post { id },
            session,
            State::Waiting(response.boxed()),
        )
    }

    /// The standalone GET stream, whose 200 `text/event-stream` head has arrived.
    pub fn listen(pool: Arc<Pool>, session: SessionHeaders, body: Body) -> Flow {
        let state = State::sse(
            body,
            SseParser::with_limit(pool.endpoint.connection.max_message_bytes),
        );
        Flow::new(pool, Purpose::Listen, session, state)
    }

    fn new(pool: Arc<Pool>, purpose: Purpose, session: SessionHeaders, state: State) -> Flow {
        Flow {
            pool,
            purpose,
            had_session: session.id.is_some(),
            session,
            state,
            queue: VecDeque::new(),
            answered: false,
            last_event_id: None,
            retry: None,
            attempts: 0,
        }
    }

    /// The flow's items, each with the id of the request whose stream carried it (none
    /// for the GET stream).
    pub fn into_stream(self) -> BoxStream<'static, (Item, Option<u64>)> {
        futures::stream::unfold(self, |mut flow| async move {
            let item = flow.next_item().await?;
            let via = flow.request_id();
            Some(((item, via), flow))
        })
        .boxed()
    }

    async fn next_item(&mut self) -> Option<Item> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some(item);
            }
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return None,
                State::Waiting(fut) => match fut.await {
                    // Boxed (as `reconnect`): the GET stream's flow lives as long as its
                    // session and would otherwise hold these futures' bytes throughout.
                    Ok(resp) => self.state = Box::pin(self.on_response(resp)).await,
                    Err(e) if e.kind == FailureKind::MessageTooLarge => {
                        self.fail(e.kind, e.detail);
                    }
                    Err(e) => self.lost(format!("POST failed: {}", e.detail)),
                },
                State::Sse(mut sse) => match sse.body.frame().await {
                    None => {
                        sse.body.release();
                        self.lost("the SSE stream ended before the response".into());
                    }
                    Some(Err(e)) => self.lost(format!("SSE stream broke: {}", e.detail)),
                    Some(Ok(data)) => {
                        if !self.feed_sse(&mut sse.parser, &data) {
                            continue; // over the limit: the flow is done
                        }
                        if !self.answered {
                            self.state = State::Sse(sse);
                            continue;
                        }
                        // Answered: if the end of the body is already here, free the
                        // connection before the session sends its next request.
                        match sse.body.frame().now_or_never() {
                            Some(None) => sse.body.release(),
                            Some(Some(Err(_))) => {}
                            Some(Some(Ok(data))) => {
                                if self.feed_sse(&mut sse.parser, &data) {
                                    self.state = State::Sse(sse);
                                }
                            }
                            None => self.state = State::Sse(sse),
                        }
                    }
                },
                State::Reconnect => self.state = Box::pin(self.reconnect()).await,
            }
        }
    }

    fn request_id(&self) -> Option<u64> {
        match self.purpose {
            Purpose::Post { id } => Some(id),
            Purpose::Listen => None,
        }
    }

    fn fail(&mut self, kind: FailureKind, detail: String) {
        self.queue.push_back(Item::Received(Received::Failed {
            request: self.request_id(),
            kind,
            detail,
        }));
    }

    /// The stream ended or broke: reconnect if that can still help, else report.
    fn lost(&mut self, detail: String) {
        if self.answered {
            return;
        }
        let resumable = match self.purpose {
            Purpose::Post { .. } => self.last_event_id.is_some(),
            Purpose::Listen => true,
        };
        if resumable && self.attempts < MAX_RECONNECTS {
            self.state = State::Reconnect;
            return;
        }
        let detail = match (self.purpose, self.attempts) {
            (_, 0) => detail,
            (Purpose::Post { .. }, n) => format!("{detail} (not resumed after {n} attempts)"),
            (Purpose::Listen, n) => format!("GET stream lost: {detail} (after {n} reconnects)"),
        };
        self.fail(FailureKind::TransportClosed, detail);
    }

    /// Wait the server's `retry` delay, then `GET` with `Last-Event-ID`.
    async fn reconnect(&mut self) -> State {
        self.attempts += 1;
        tokio::time::sleep(self.retry.unwrap_or(DEFAULT_RETRY)).await;
        let lease = match self.pool.lease().await {
            Ok(lease) => lease,
            Err(e) => {
                self.lost(format!("reconnecting: {}", e.detail));
                return std::mem::replace(&mut self.state, State::Done);
            }
        };
        let req = build_request(
            &self.pool.endpoint,
            Method::GET,
            &[],
            &self.session,
            self.last_event_id.as_deref(),
            &[],
        );
        let resp = match lease.send(req).await {
            Ok(resp) => resp,
            Err(e) => {
                self.lost(format!("reconnecting GET failed: {}", e.detail));
                return std::mem::replace(&mut self.state, State::Done);
            }
        };
        let status = resp.status;
        let challenge = crate::transport::auth::challenge(status, &resp.headers);
        if status == StatusCode::OK && is_event_stream(&resp.headers) {
            let counter = match self.purpose {
                Purpose::Post { .. } => &self.pool.resumptions,
                Purpose::Listen => &self.pool.get_stream_reconnects,
            };
            counter.fetch_add(1, Ordering::Relaxed);
            return State::sse(
                resp.body,
                SseParser::with_limit(self.pool.endpoint.connection.max_message_bytes),
            );
        }
        // The server refused the stream: asking again would not change its mind.
        let body = resp
            .body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await;
        let e = status_error(
            status,
            self.had_session,
            challenge.as_deref(),
            &body.unwrap_or_default(),
        );
        let kind = match e.kind {
            FailureKind::SessionExpired => FailureKind::SessionExpired,
            _ => FailureKind::TransportClosed,
        };
        let what = match self.purpose {
            Purpose::Post { .. } => "the response stream could not be resumed",
            Purpose::Listen => "the GET stream could not be reopened",
        };
        self.fail(kind, format!("{what}: GET answered {}", e.detail));
        State::Done
    }

    fn push_message(&mut self, bytes: &[u8], carrier: Carrier) {
        let mut r = classify(bytes, carrier);
        if let Purpose::Post { id } = self.purpose {
            match &mut r {
                // Bad bytes on this POST's body or stream concern the request it carried.
                Received::Malformed { request, .. } => *request = Some(id),
                Received::Message(Message::Response { id: Some(rid), .. })
                    if rid.as_own() == Some(id) =>
                {
                    self.answered = true;
                }
                // An error without an id on this POST's stream can only be about the one
                // request the POST carried.
                Received::Message(Message::Response {
                    id: None,
                    outcome: Err(e),
                }) if !self.answered => {
                    let (kind, detail) = (FailureKind::RpcError(e.code), e.message.clone());
                    self.fail(kind, detail);
                    self.answered = true;
                    return;
                }
                _ => {}
            }
        }
        self.queue.push_back(Item::Received(r));
    }

    /// Parse a chunk of the stream; `false` when the stream must not be read further
    /// (an event over the limit: the flow fails and drops its connection).
    fn feed_sse(&mut self, parser: &mut SseParser, data: &[u8]) -> bool {
        let mut events: Vec<SseEvent> = Vec::new();
        match parser.feed(data, &mut events) {
            Ok(()) => {}
            Err(SseError::TooLarge { limit }) => {
                let r = too_large(self.request_id(), "an SSE event", limit);
                self.queue.push_back(Item::Received(r));
                return false;
            }
            Err(e) => self.queue.push_back(Item::Received(Received::Malformed {
                error: Malformed::NotJson(e.to_string()),
                excerpt: excerpt(data),
                carrier: Carrier::SseEvent,
                request: self.request_id(),
            })),
        }
        for ev in events {
            if let Some(id) = ev.id.as_deref() {
                // An empty `id:` resets the cursor (WHATWG).
                self.last_event_id = (!id.is_empty()).then(|| id.to_string());
            }
            if let Some(ms) = ev.retry_ms {
                self.retry = Some(Duration::from_millis(ms));
            }
            // Priming events (id only, empty data) and non-message events carry no
            // JSON-RPC message.
            if ev.data.is_empty() || ev.event_type() != "message" {
                continue;
            }
            self.attempts = 0;
            self.push_message(ev.data.as_bytes(), Carrier::SseEvent);
        }
        true
    }

    async fn on_response(&mut self, resp: Response) -> State {
        let status = resp.status;
        if status.is_success() {
            if let Some(sid) = resp.headers.get(MCP_SESSION_ID) {
                self.session.id = Some(sid.clone());
                self.queue.push_back(Item::SessionId(sid.clone()));
            }
        }
        let content_type = content_type(&resp.headers);
        let event_stream = is_event_stream(&resp.headers);
        let challenge = crate::transport::auth::challenge(status, &resp.headers);
        let body = resp.body;
        let limit = self.pool.endpoint.connection.max_message_bytes;
        if status != StatusCode::OK {
            return self.refused(status, challenge, body).await;
        }
        if event_stream {
            return State::sse(body, SseParser::with_limit(limit));
        }
        match body.read_all(limit).await {
            Ok(bytes) => {
                if content_type.starts_with("application/json") {
                    self.push_message(&bytes, Carrier::JsonBody);
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
            Err(e) => self.fail(e.kind, e.detail),
        }
        State::Done
    }

    /// A POST answered with a status other than 200: a JSON-RPC error in the body
    /// answers the request this POST carried (its `data` matters: -32022 lists the
    /// versions to retry with); anything else fails it.
    async fn refused(
        &mut self,
        status: StatusCode,
        challenge: Option<String>,
        body: Body,
    ) -> State {
        let bytes = match body
            .read_all(self.pool.endpoint.connection.max_message_bytes)
            .await
        {
            Ok(bytes) => bytes,
            Err(e) if e.kind == FailureKind::MessageTooLarge => {
                self.fail(e.kind, e.detail);
                return State::Done;
            }
            Err(_) => Vec::new(),
        };
        let e = if status == StatusCode::ACCEPTED {
            crate::transport::TransportError::new(
                FailureKind::ProtocolViolation,
                "the server answered a request with 202 Accepted and no response",
            )
        } else {
            status_error(status, self.had_session, challenge.as_deref(), &bytes)
        };
        if let (FailureKind::RpcError(code), Some(id)) = (e.kind, self.request_id()) {
            self.answered = true;
            self.queue.push_back(Item::Received(Received::Message(
                crate::protocol::Incoming::Response {
                    id: Some(crate::protocol::RequestId::Number(
                        i64::try_from(id).unwrap_or(i64::MAX),
                    )),
                    outcome: Err(crate::protocol::RpcError {
                        code,
                        message: e.detail,
                        data: e.data,
                    }),
                },
            )));
            return State::Done;
        }
        self.fail(e.kind, e.detail);
        State::Done
    }
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

pub(super) fn is_event_stream(headers: &HeaderMap) -> bool {
    content_type(headers).starts_with("text/event-stream")
}
