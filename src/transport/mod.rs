//! Transports move whole JSON-RPC messages between a session and a server: send one,
//! receive the next, close. One closed enum, so the session above is written once for
//! every transport; each variant owns its connection or process.

pub mod address;
pub mod auth;
pub mod http;
pub mod legacy_sse;
pub mod sse;
pub mod stdio;
pub mod tcp;
pub mod tls;
pub mod ws;

#[cfg(test)]
mod bounded_tests;
#[cfg(test)]
mod wire_props;

use crate::metrics::FailureKind;
use crate::protocol::jsonrpc::Malformed;
use crate::protocol::Incoming;
use crate::protocol::TransportKind;
use ::http::{HeaderName, HeaderValue};

/// Something that arrived from the server (or the news that nothing more will).
#[derive(Debug)]
pub enum Received {
    Message(Incoming),
    /// Bytes that are not a valid JSON-RPC message; `excerpt` is the start of them.
    /// `request` is the id of our request they concern, when known (the id they carry,
    /// or the POST that carried them); the session fails it, or every waiting request.
    Malformed {
        error: Malformed,
        excerpt: String,
        carrier: Carrier,
        request: Option<u64>,
    },
    /// An exchange failed; `request` is the id of our request it carried, if any.
    Failed {
        request: Option<u64>,
        kind: FailureKind,
        detail: String,
    },
    /// The connection or process is gone; nothing more will arrive.
    Closed {
        detail: String,
    },
}

/// A failure to send, connect or close.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{detail}")]
pub struct TransportError {
    pub kind: FailureKind,
    pub detail: String,
    /// A JSON-RPC error's `data` when the failure carried one (HTTP error bodies).
    pub data: Option<serde_json::Value>,
}

impl TransportError {
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Self {
        TransportError {
            kind,
            detail: detail.into(),
            data: None,
        }
    }
}

/// The largest response head an HTTP transport holds under the message limit
/// `max_message_bytes`: hyper's bounds (an 8 KiB read buffer at least, its default of
/// 8 KiB + 100 headers of 4 KiB at most), kept by our own HTTP/1.1 connection too. A
/// larger head is `message_too_large`.
pub(crate) fn response_head_limit(max_message_bytes: usize) -> usize {
    max_message_bytes.clamp(8192, 8192 + 4096 * 100)
}

/// The failure a message over the limit becomes, on every transport alike.
pub(crate) fn too_large(request: Option<u64>, what: &str, limit: usize) -> Received {
    Received::Failed {
        request,
        kind: FailureKind::MessageTooLarge,
        detail: format!("{what} larger than the {limit}-byte limit (--max-message-size)"),
    }
}

/// At most this much of a bad message is kept for the report.
const EXCERPT_CHARS: usize = 200;

/// `head`, then `: ` and the body's excerpt when the body has any text (an empty body
/// leaves no trailing colon in the report).
pub(crate) fn with_body(head: String, bytes: &[u8]) -> String {
    let body = excerpt(bytes);
    if body.trim().is_empty() {
        head
    } else {
        format!("{head}: {body}")
    }
}

pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().take(EXCERPT_CHARS).collect();
    if text.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    out
}

/// What carried a message to us. The finding a malformed message makes follows the
/// content: bytes that are not JSON are an invalid SSE event only when an SSE event
/// carried them; a JSON body, a stdio line or a WebSocket text message that is not
/// JSON is `jsonrpc.not-json`, whatever the transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// A whole HTTP body (`application/json`).
    JsonBody,
    /// The `data` of an SSE event (Streamable HTTP or legacy SSE), or the SSE framing.
    SseEvent,
    /// A line on a stdio server's stdout.
    StdioLine,
    /// A WebSocket text message.
    WsText,
}

/// Parse one message's bytes into what the session receives.
pub fn classify(bytes: &[u8], carrier: Carrier) -> Received {
    match Incoming::parse(bytes) {
        Ok(m) => Received::Message(m),
        Err(error) => Received::Malformed {
            error,
            excerpt: excerpt(bytes),
            carrier,
            // A malformed message fails the request it names, even under an id of the
            // wrong type (that is one more thing wrong with it).
            request: crate::protocol::jsonrpc::stray_id(bytes)
                .and_then(|id| id.as_own().or_else(|| id.retyped_own())),
        },
    }
}

/// The transports. Each method is message-level; HTTP details stay inside.
pub enum Transport {
    Http(http::HttpTransport),
    /// Legacy HTTP+SSE (2024-11-05).
    Sse(legacy_sse::SseTransport),
    /// WebSocket (SDK convention, not a spec transport).
    Ws(ws::WsTransport),
    /// Boxed: a process handle is large, and spawning dwarfs the allocation.
    Stdio(Box<stdio::StdioTransport>),
}

impl Transport {
    /// Send a request we expect an answer to (the answer arrives through [`recv`]).
    /// `headers` are per-request HTTP headers (the 2026-07-28 `Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`); transports without headers ignore them.
    ///
    /// [`recv`]: Transport::recv
    pub async fn send_request(
        &mut self,
        id: u64,
        bytes: Vec<u8>,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<(), TransportError> {
        match self {
            Transport::Http(t) => t.send_request(id, bytes, headers).await,
            Transport::Sse(t) => t.send_request(id, bytes).await,
            Transport::Ws(t) => t.send(bytes).await,
            Transport::Stdio(t) => t.send(bytes).await,
        }
    }

    /// Send a notification or our response to a server request. Over HTTP this waits for
    /// the server's 202, so the caller can time it.
    pub async fn send_notification(&mut self, bytes: Vec<u8>) -> Result<(), TransportError> {
        match self {
            Transport::Http(t) => t.post_and_wait(bytes).await,
            Transport::Sse(t) => t.post_and_wait(bytes).await,
            Transport::Ws(t) => t.send(bytes).await,
            Transport::Stdio(t) => t.send(bytes).await,
        }
    }

    /// The next message from the server. Cancel-safe: dropping the future loses nothing.
    pub async fn recv(&mut self) -> Received {
        match self {
            Transport::Http(t) => t.recv().await,
            Transport::Sse(t) => t.recv().await,
            Transport::Ws(t) => t.recv().await,
            Transport::Stdio(t) => t.recv().await,
        }
    }

    /// Streamable HTTP: the request whose response stream carried the last message
    /// received (`None` for the GET stream, and on transports with one stream).
    pub fn last_via(&self) -> Option<u64> {
        match self {
            Transport::Http(t) => t.last_via(),
            _ => None,
        }
    }

    /// Streamable HTTP: how the last POSTed notification or response was accepted, when
    /// it was not with a bare 202 (other transports have no such answer).
    pub fn take_unusual_ack(&mut self) -> Option<http::PostAck> {
        match self {
            Transport::Http(t) => t.take_unusual_ack(),
            _ => None,
        }
    }

    /// After the handshake: the version that HTTP requests announce in
    /// `MCP-Protocol-Version` (None for versions before 2025-06-18).
    pub fn set_protocol_version(&mut self, version: Option<&str>) {
        if let Transport::Http(t) = self {
            t.set_protocol_version(version);
        }
    }

    /// A new `Authorization` value for the session's next requests (a refreshed token).
    /// A WebSocket carries it only on its upgrade, so it keeps the one it connected with.
    pub fn set_bearer(&mut self, bearer: Option<HeaderValue>) {
        match self {
            Transport::Http(t) => t.set_bearer(bearer),
            Transport::Sse(t) => t.set_bearer(bearer),
            Transport::Ws(_) | Transport::Stdio(_) => {}
        }
    }

    /// Forget the server's session (after a 404), so the next `initialize` starts a new
    /// one. Only Streamable HTTP has sessions to forget.
    pub fn reset_session(&mut self) {
        if let Transport::Http(t) = self {
            t.reset_session();
        }
    }

    /// Streamable HTTP, legacy era: open the standalone GET stream. `Ok(false)` when
    /// the server does not offer one (405) or the transport has no such thing.
    pub async fn open_get_stream(&mut self) -> Result<bool, TransportError> {
        match self {
            Transport::Http(t) => Ok(t.open_get_stream().await? == http::GetStream::Open),
            _ => Ok(false),
        }
    }

    /// The raw `Mcp-Session-Id` the server assigned (Streamable HTTP), for checking.
    pub fn session_id_bytes(&self) -> Option<&[u8]> {
        match self {
            Transport::Http(t) => t.session_id_bytes(),
            _ => None,
        }
    }

    /// Streamable HTTP's connection and stream counters, for the report.
    pub fn http_stats(&self) -> Option<http::HttpStats> {
        match self {
            Transport::Http(t) => Some(t.stats()),
            _ => None,
        }
    }

    /// End the session the way the transport's spec says.
    pub async fn close(self) -> Result<(), TransportError> {
        match self {
            Transport::Http(t) => t.close().await,
            Transport::Sse(t) => t.close().await,
            Transport::Ws(t) => t.close().await,
            Transport::Stdio(t) => t.close().await,
        }
    }

    /// Whatever the transport knows that helps explain a failure (e.g. the server's
    /// stderr), bounded.
    pub fn diagnostics(&self) -> Option<String> {
        match self {
            Transport::Stdio(t) => t.stderr_tail(),
            _ => None,
        }
    }

    pub fn kind(&self) -> TransportKind {
        match self {
            Transport::Http(_) => TransportKind::StreamableHttp,
            Transport::Sse(_) => TransportKind::Sse,
            Transport::Ws(_) => TransportKind::WebSocket,
            Transport::Stdio(_) => TransportKind::Stdio,
        }
    }
}

/// Where sessions connect to, resolved once per run and shared by every session.
#[derive(Debug, Clone)]
pub enum Endpoint {
    Http(std::sync::Arc<http::HttpEndpoint>),
    Sse(std::sync::Arc<legacy_sse::SseEndpoint>),
    Ws(std::sync::Arc<ws::WsEndpoint>),
    Stdio(std::sync::Arc<stdio::StdioCommand>),
}

impl Endpoint {
    /// The URL sessions reach (the resource their tokens are for) and whether TLS
    /// certificates go unchecked (`--insecure`); `None` for stdio.
    pub fn auth_target(&self) -> Option<(url::Url, bool)> {
        match self {
            Endpoint::Http(ep) => ep.url(),
            Endpoint::Sse(ep) => Some((ep.url.clone(), ep.connection.insecure)),
            Endpoint::Ws(ep) => Some((ep.url.clone(), ep.connection.insecure)),
            Endpoint::Stdio(_) => None,
        }
    }

    /// Open a new connection (HTTP) or spawn a new server process (stdio).
    pub async fn connect(&self) -> Result<Transport, TransportError> {
        self.connect_as(None).await
    }

    /// Connect with a session's own `Authorization` value (see [`auth::bearer`]), sent
    /// on every HTTP request of the session; stdio ignores it.
    pub async fn connect_as(
        &self,
        bearer: Option<HeaderValue>,
    ) -> Result<Transport, TransportError> {
        match self {
            Endpoint::Http(ep) => http::HttpTransport::connect(ep.clone()).await.map(|mut t| {
                t.set_bearer(bearer);
                Transport::Http(t)
            }),
            // Boxed: their handshakes' states are large (the WebSocket one ~9 KiB), and
            // inline every session would move them around (BENCHMARKS, issue 15).
            Endpoint::Sse(ep) => Box::pin(legacy_sse::SseTransport::connect(ep.clone(), bearer))
                .await
                .map(Transport::Sse),
            Endpoint::Ws(ep) => Box::pin(ws::WsTransport::connect(ep.clone(), bearer.as_ref()))
                .await
                .map(Transport::Ws),
            Endpoint::Stdio(cmd) => {
                stdio::StdioTransport::spawn(cmd).map(|t| Transport::Stdio(Box::new(t)))
            }
        }
    }
}
