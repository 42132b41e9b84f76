//! Transports move whole JSON-RPC messages between a session and a server: send one,
//! receive the next, close. One closed enum, so the session above is written once for
//! every transport; each variant owns its connection or process.

pub mod http;
pub mod sse;
pub mod stdio;

use crate::metrics::FailureKind;
use crate::protocol::jsonrpc::Malformed;
use crate::protocol::Incoming;

/// Something that arrived from the server (or the news that nothing more will).
#[derive(Debug)]
pub enum Received {
    Message(Incoming),
    /// Bytes that are not a valid JSON-RPC message; `excerpt` is the start of them.
    Malformed {
        error: Malformed,
        excerpt: String,
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
}

impl TransportError {
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Self {
        TransportError {
            kind,
            detail: detail.into(),
        }
    }
}

/// At most this much of a bad message is kept for the report.
const EXCERPT_CHARS: usize = 200;

pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().take(EXCERPT_CHARS).collect();
    if text.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    out
}

/// Parse one message's bytes into what the session receives.
pub(crate) fn classify(bytes: &[u8]) -> Received {
    match Incoming::parse(bytes) {
        Ok(m) => Received::Message(m),
        Err(error) => Received::Malformed {
            error,
            excerpt: excerpt(bytes),
        },
    }
}

/// The transports. Each method is message-level; HTTP details stay inside.
pub enum Transport {
    Http(http::HttpTransport),
    /// Boxed: a process handle is large, and spawning dwarfs the allocation.
    Stdio(Box<stdio::StdioTransport>),
}

impl Transport {
    /// Send a request we expect an answer to (the answer arrives through [`recv`]).
    ///
    /// [`recv`]: Transport::recv
    pub async fn send_request(&mut self, id: u64, bytes: Vec<u8>) -> Result<(), TransportError> {
        match self {
            Transport::Http(t) => t.send_request(id, bytes).await,
            Transport::Stdio(t) => t.send(bytes).await,
        }
    }

    /// Send a notification or our response to a server request. Over HTTP this waits for
    /// the server's 202, so the caller can time it.
    pub async fn send_notification(&mut self, bytes: Vec<u8>) -> Result<(), TransportError> {
        match self {
            Transport::Http(t) => t.post_and_wait(bytes).await,
            Transport::Stdio(t) => t.send(bytes).await,
        }
    }

    /// The next message from the server. Cancel-safe: dropping the future loses nothing.
    pub async fn recv(&mut self) -> Received {
        match self {
            Transport::Http(t) => t.recv().await,
            Transport::Stdio(t) => t.recv().await,
        }
    }

    /// After the handshake: the version that HTTP requests announce in
    /// `MCP-Protocol-Version` (None for versions before 2025-06-18).
    pub fn set_protocol_version(&mut self, version: Option<&str>) {
        if let Transport::Http(t) = self {
            t.set_protocol_version(version);
        }
    }

    /// End the session the way the transport's spec says.
    pub async fn close(self) -> Result<(), TransportError> {
        match self {
            Transport::Http(t) => t.close().await,
            Transport::Stdio(t) => t.close().await,
        }
    }

    /// Whatever the transport knows that helps explain a failure (e.g. the server's
    /// stderr), bounded.
    pub fn diagnostics(&self) -> Option<String> {
        match self {
            Transport::Http(_) => None,
            Transport::Stdio(t) => t.stderr_tail(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Transport::Http(_) => "streamable-http",
            Transport::Stdio(_) => "stdio",
        }
    }
}

/// Where sessions connect to, resolved once per run and shared by every session.
#[derive(Debug, Clone)]
pub enum Endpoint {
    Http(std::sync::Arc<http::HttpEndpoint>),
    Stdio(std::sync::Arc<stdio::StdioCommand>),
}

impl Endpoint {
    /// Open a new connection (HTTP) or spawn a new server process (stdio).
    pub async fn connect(&self) -> Result<Transport, TransportError> {
        match self {
            Endpoint::Http(ep) => http::HttpTransport::connect(ep.clone())
                .await
                .map(Transport::Http),
            Endpoint::Stdio(cmd) => {
                stdio::StdioTransport::spawn(cmd).map(|t| Transport::Stdio(Box::new(t)))
            }
        }
    }
}
