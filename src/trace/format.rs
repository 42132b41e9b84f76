//! The trace file's lines, as serde reads and writes them: a header, then one event a
//! line, then an `end` line. The format is versioned ([`VERSION`]) and documented in
//! docs/traces.md; a reader refuses a newer version rather than guess.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the header's `format` says.
pub const FORMAT: &str = "mcp-fleet-trace";
/// The version this build writes and the newest it reads.
pub const VERSION: u32 = 1;

/// The first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// `mcp-fleet 0.2.0`.
    pub recorder: String,
    /// When the recording began (RFC 3339, UTC); every event's `t` counts from here.
    pub started: String,
    /// What the proxy listened as: `http` (Streamable HTTP, legacy HTTP+SSE and
    /// WebSocket on one port) or `stdio`.
    pub mode: String,
    /// The upstream: a URL (secrets redacted) or the server command's program name.
    pub upstream: String,
}

/// The transport a recorded session spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    Ws,
}

impl Transport {
    /// The profile's name for it (`transport = "…"`).
    pub fn name(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Sse => "sse",
            Transport::Ws => "ws",
        }
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum From {
    Client,
    Server,
}

/// Who ended a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClosedBy {
    /// The client: a DELETE, a close frame, stdin's end, or its connection closed.
    Client,
    /// The server: it closed the stream or connection, or its process exited.
    Server,
    /// The upstream could not be reached or died mid-exchange; the client was given a
    /// closed connection, as the server's own death would have.
    UpstreamFailed,
    /// The recording stopped (a signal, or `--duration`) while the session was open.
    Recorder,
}

/// One HTTP exchange of a session, as far as it shows a client's habits: no header
/// values but the protocol's own (which carry no secret).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HttpExchange {
    /// `POST`, `GET`, `DELETE`.
    pub method: String,
    /// The path the client asked for (never the query: it may hold a secret).
    pub path: String,
    /// The upstream's status (0: no answer, the upstream failed).
    pub status: u16,
    /// The response's content type without parameters (`text/event-stream`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The client's TCP connection, numbered from 1 in the order the proxy accepted them.
    pub connection: u64,
    /// Names of the request's headers, lower case, sorted (their values are not kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// `MCP-Protocol-Version`, when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// The request carried `Mcp-Session-Id`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub session_header: bool,
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Event {
    /// A session began (its first message or connection).
    Open {
        t: u64,
        session: u64,
        transport: Transport,
    },
    /// A JSON-RPC message, whole (values redacted as asked).
    Message {
        t: u64,
        session: u64,
        from: From,
        message: Value,
    },
    /// An HTTP exchange (Streamable HTTP and legacy HTTP+SSE), at its response's head.
    Http {
        t: u64,
        session: u64,
        #[serde(flatten)]
        exchange: HttpExchange,
    },
    /// A session ended. `summary` is what it showed of its client ([`super::Summary`]).
    Close {
        t: u64,
        session: u64,
        by: ClosedBy,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<super::Summary>,
    },
    /// The last line: the recording ended whole.
    End {
        t: u64,
        sessions: u64,
        messages: u64,
    },
}

impl Event {
    /// Microseconds since the header's `started`.
    pub fn t(&self) -> u64 {
        match self {
            Event::Open { t, .. }
            | Event::Message { t, .. }
            | Event::Http { t, .. }
            | Event::Close { t, .. }
            | Event::End { t, .. } => *t,
        }
    }

    /// The session the event belongs to (none for `end`).
    pub fn session(&self) -> Option<u64> {
        match self {
            Event::Open { session, .. }
            | Event::Message { session, .. }
            | Event::Http { session, .. }
            | Event::Close { session, .. } => Some(*session),
            Event::End { .. } => None,
        }
    }
}
