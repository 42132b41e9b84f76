//! The faulty exchange on the wire: send bytes the session would never build, then read
//! until the server answers them (an id-less error counts: a server that could not read
//! the id cannot echo it), the connection goes, or the request timeout passes. Nothing
//! here is a sample; the session's regular phases stay the well-behaved ones.

use super::classify::{Health, Seen};
use crate::metrics::FailureKind;
use crate::plan::Persona;
use crate::protocol::{Era, Incoming, TransportKind};
use crate::session::Session;
use crate::transport::{Received, TransportError};
use http::{HeaderName, HeaderValue};
use rand::SeedableRng;
use std::time::Duration;
use tokio::time::Instant;

/// Send `bytes` as request `id` and wait for what comes back (up to `wait`).
pub async fn exchange(
    session: &mut Session<'_>,
    id: u64,
    bytes: Vec<u8>,
    headers: &[(HeaderName, HeaderValue)],
    wait: Duration,
) -> Seen {
    if let Err(seen) = send(session, id, bytes, headers).await {
        return seen;
    }
    answer(session, id, wait).await
}

/// Only send (the answer is read later, or never).
pub async fn send(
    session: &mut Session<'_>,
    id: u64,
    bytes: Vec<u8>,
    headers: &[(HeaderName, HeaderValue)],
) -> Result<(), Seen> {
    if let Some(t) = session.transcript() {
        t.sent(&bytes);
    }
    let limit = session.timeout();
    let sent = tokio::time::timeout(
        limit,
        session.transport_mut().send_request(id, bytes, headers),
    )
    .await;
    let http = session.transport().kind() == TransportKind::StreamableHttp;
    match sent {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(from_error(e, http)),
        Err(_) => Err(Seen::Silence),
    }
}

/// Read until the answer to `id` arrives (or `wait` passes). The server's own requests
/// are left unanswered here: no fault needs them answered.
pub async fn answer(session: &mut Session<'_>, id: u64, wait: Duration) -> Seen {
    let deadline = Instant::now() + wait;
    let http = session.transport().kind() == TransportKind::StreamableHttp;
    loop {
        let Ok(received) = tokio::time::timeout_at(deadline, session.transport_mut().recv()).await
        else {
            return Seen::Silence;
        };
        if let (Some(t), Received::Message(m)) = (session.transcript(), &received) {
            t.received(m);
        }
        match received {
            Received::Message(Incoming::Response { id: rid, outcome }) => {
                let ours = match &rid {
                    None => outcome.is_err(),
                    Some(r) => r.as_own() == Some(id),
                };
                if ours {
                    return match outcome {
                        Ok(v) => Seen::Result(v.into_value()),
                        Err(e) => Seen::Error {
                            code: e.code,
                            status: http.then(|| status_of(&e.message)).flatten(),
                            detail: e.message,
                        },
                    };
                }
            }
            Received::Message(_) => {}
            Received::Malformed { excerpt, .. } => return Seen::Garbled(excerpt),
            Received::Failed {
                request,
                kind,
                detail,
            } => {
                if request.is_none_or(|r| r == id) {
                    return from_error(TransportError::new(kind, detail), http);
                }
            }
            Received::Closed { detail } => return Seen::Closed(detail),
        }
    }
}

/// What a failed exchange was, as seen; `http`: over Streamable HTTP, where an error
/// may come in the body of an error status.
fn from_error(e: TransportError, http: bool) -> Seen {
    match e.kind {
        FailureKind::RpcError(code) => Seen::Error {
            code,
            status: http.then(|| status_of(&e.detail)).flatten(),
            detail: e.detail,
        },
        FailureKind::HttpStatus(status) => Seen::Status {
            status,
            detail: e.detail,
        },
        FailureKind::Timeout => Seen::Silence,
        _ => Seen::Closed(e.detail),
    }
}

/// The HTTP status a Streamable HTTP error came with: the transport hands a JSON-RPC
/// error in the body of an error status on as that error, its detail starting `HTTP 400
/// Bad Request: …` (and a 200 body's error has no such prefix).
fn status_of(detail: &str) -> Option<u16> {
    detail.strip_prefix("HTTP ")?.get(..3)?.parse().ok()
}

/// The server still answers this session: a `ping` (the 2026-07-28 era has none: a
/// `tools/list`).
pub async fn ping(session: &mut Session<'_>) -> Health {
    let method = match session.era() {
        Era::Legacy => crate::protocol::methods::PING,
        Era::Modern => crate::protocol::methods::TOOLS_LIST,
    };
    match session.request(method, None).await {
        Ok(_) => Health::Serves,
        Err(f) => Health::Fails(f.detail),
    }
}

/// The server still serves a new session: connect and run the persona's handshake
/// (untimed), then close.
pub async fn fresh_session(
    endpoint: &super::Reconnect<'_>,
    persona: &Persona,
    era: Era,
    timeout: Duration,
    recorder: &crate::metrics::Recorder,
) -> Health {
    let transport = match endpoint.connect().await {
        Ok(t) => t,
        Err(e) => return Health::Fails(format!("connect: {}", e.detail)),
    };
    let rng = rand::rngs::SmallRng::seed_from_u64(0);
    let mut s = Session::new(transport, timeout, persona, recorder.clone(), rng);
    let health = match handshake(&mut s, era).await {
        Ok(()) => ping(&mut s).await,
        Err(why) => Health::Fails(why),
    };
    let _ = s.close().await;
    health
}

/// The handshake of `era` on `session`, untimed.
pub async fn handshake(session: &mut Session<'_>, era: Era) -> Result<(), String> {
    match era {
        Era::Modern => session
            .discover(false)
            .await
            .map(|_| ())
            .map_err(|f| format!("server/discover: {}", f.detail)),
        Era::Legacy => {
            session
                .initialize()
                .await
                .map_err(|f| format!("initialize: {}", f.detail))?;
            session
                .initialized()
                .await
                .map_err(|f| format!("notifications/initialized: {}", f.detail))
        }
    }
}
