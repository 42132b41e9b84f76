//! A response body on its way from the server to the client: passed on frame by frame
//! as it arrives (an SSE stream is never held back), and read on the side for the trace
//! — a JSON body whole at its end, an SSE stream event by event. Its end says how the
//! exchange ended: the server finished it, the client went away, or the server died
//! (then the client's connection is broken, as the server's death would break it).

use super::sessions::Sessions;
use crate::trace::{ClosedBy, From};
use crate::transport::sse::SseParser;
use bytes::Bytes;
use http_body::Frame;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Incoming;
use serde_json::Value;
use tokio::sync::mpsc;

/// A response body to the client.
pub type DownBody = BoxBody<Bytes, std::io::Error>;

/// How the proxy reads a body for the trace.
#[derive(Debug)]
pub enum Reading {
    Nothing,
    Json,
    Sse,
}

/// What a legacy HTTP+SSE stream (a GET that names no session) waits for: its
/// `endpoint` event, which opens its session.
#[derive(Debug)]
pub struct LegacyStream {
    pub connection: u64,
    /// The proxy's own origin as the client addressed it, and the upstream's: an absolute
    /// endpoint URI is rewritten from the one to the other.
    pub proxy_origin: String,
    pub upstream_origin: String,
    /// The GET's exchange, recorded when the endpoint event opens the session.
    pub exchange: crate::trace::HttpExchange,
}

/// The session's view of one body.
#[derive(Debug)]
pub struct Tap {
    pub sessions: Sessions,
    /// The session it belongs to (none yet: a legacy stream before its endpoint).
    pub session: Option<u64>,
    pub reading: Reading,
    pub legacy: Option<LegacyStream>,
    /// The session lives as long as this body: a legacy SSE stream.
    pub session_is_stream: bool,
}

/// Pass `body` on to the client through the returned body, reading it per `tap`.
pub fn relay(body: Incoming, tap: Tap) -> DownBody {
    let (tx, rx) = mpsc::channel::<Result<Frame<Bytes>, std::io::Error>>(16);
    if let Some(id) = tap.session {
        tap.sessions.stream_began(id);
    }
    tokio::spawn(pump(body, tx, tap));
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    BodyExt::boxed(StreamBody::new(stream))
}

enum Ended {
    Server,
    Client,
    Failed(String),
}

async fn pump(
    mut body: Incoming,
    tx: mpsc::Sender<Result<Frame<Bytes>, std::io::Error>>,
    mut tap: Tap,
) {
    let mut json = Vec::new();
    let mut sse = SseParser::new();
    let mut events = Vec::new();
    let ended = loop {
        let frame = tokio::select! {
            f = body.frame() => f,
            () = tx.closed() => break Ended::Client,
        };
        let frame = match frame {
            None => break Ended::Server,
            Some(Err(e)) => {
                let why = format!("the server's response broke off: {e}");
                let _ = tx.send(Err(std::io::Error::other(why.clone()))).await;
                break Ended::Failed(why);
            }
            Some(Ok(f)) => f,
        };
        let frame = match frame.into_data() {
            Ok(mut data) => {
                match tap.reading {
                    Reading::Json => json.extend_from_slice(&data),
                    Reading::Sse => {
                        if let Some(legacy) = &tap.legacy {
                            data = rewrite_origin(data, legacy);
                        }
                        if sse.feed(&data, &mut events).is_err() {
                            tap.reading = Reading::Nothing;
                        }
                        for e in events.drain(..) {
                            read_event(&mut tap, e.event_type(), &e.data);
                        }
                    }
                    Reading::Nothing => {}
                }
                Frame::data(data)
            }
            Err(other) => other,
        };
        if tx.send(Ok(frame)).await.is_err() {
            break Ended::Client;
        }
    };
    if let (Reading::Json, Some(id), Ended::Server) = (&tap.reading, tap.session, &ended) {
        record_json(&tap.sessions, id, From::Server, &json);
    }
    let Some(id) = tap.session else {
        return;
    };
    match ended {
        Ended::Failed(why) => tap.sessions.close(id, ClosedBy::UpstreamFailed, Some(why)),
        Ended::Server if tap.session_is_stream => tap.sessions.close(
            id,
            ClosedBy::Server,
            Some("the server ended the SSE stream".into()),
        ),
        Ended::Client if tap.session_is_stream => tap.sessions.close(
            id,
            ClosedBy::Client,
            Some("the client closed the SSE stream".into()),
        ),
        Ended::Server | Ended::Client => tap.sessions.stream_ended(id),
    }
}

fn read_event(tap: &mut Tap, kind: &str, data: &str) {
    if kind == "endpoint" {
        if let (Some(legacy), None) = (tap.legacy.take(), tap.session) {
            let id = tap
                .sessions
                .open(crate::trace::Transport::Sse, legacy.connection);
            tap.sessions.remember_endpoint(id, &endpoint_key(data));
            tap.sessions.stream_began(id);
            tap.session = Some(id);
            tap.session_is_stream = true;
            tap.sessions.trace.http(id, legacy.exchange);
        }
        return;
    }
    if let Some(id) = tap.session {
        record_json(&tap.sessions, id, From::Server, data.as_bytes());
    }
}

/// The path and query an endpoint URI names (relative or absolute): what the client's
/// POSTs to it will carry.
pub fn endpoint_key(uri: &str) -> String {
    let uri = uri.trim();
    let path = match uri.find("://") {
        Some(i) => {
            let rest = &uri[i + 3..];
            rest.find('/').map_or("/", |j| &rest[j..])
        }
        None => uri,
    };
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    }
}

/// An absolute endpoint URI on the upstream's origin points the client past the proxy:
/// it is rewritten to the proxy's origin (the only bytes the proxy changes).
fn rewrite_origin(data: Bytes, legacy: &LegacyStream) -> Bytes {
    let from = legacy.upstream_origin.as_bytes();
    if from.is_empty() || memchr::memmem::find(&data, from).is_none() {
        return data;
    }
    let mut out = Vec::with_capacity(data.len());
    let mut rest: &[u8] = &data;
    while let Some(i) = memchr::memmem::find(rest, from) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(legacy.proxy_origin.as_bytes());
        rest = &rest[i + from.len()..];
    }
    out.extend_from_slice(rest);
    Bytes::from(out)
}

/// Record a JSON body (one message or a batch) of `session`.
pub fn record_json(sessions: &Sessions, session: u64, from: From, body: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    match value {
        Value::Array(batch) => {
            for m in batch.into_iter().filter(Value::is_object) {
                sessions.trace.message(session, from, m);
            }
        }
        m @ Value::Object(_) => sessions.trace.message(session, from, m),
        _ => {}
    }
}
