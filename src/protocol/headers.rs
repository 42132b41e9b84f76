//! HTTP header names of the MCP transports, and the WebSocket subprotocol. Header names
//! are lower case, as `http` stores them; the spec's spelling (`Mcp-Session-Id`) is only
//! for messages people read.

use http::HeaderName;

/// The session a Streamable HTTP server assigned at `initialize`.
pub const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// The negotiated version, on every HTTP request after the handshake (2025-06-18 on).
pub const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// 2026-07-28: the method of the request in the body, for routing without parsing it.
pub const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// 2026-07-28: the tool, prompt or resource the request names.
pub const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
/// 2026-07-28: the prefix of the headers that mirror tool arguments (SEP-2243).
pub const MCP_PARAM_PREFIX: &str = "mcp-param-";
/// 2026-07-28: the `inputSchema` property annotation naming an argument's `Mcp-Param-*`
/// header.
pub const X_MCP_HEADER: &str = "x-mcp-header";
/// Resuming an SSE stream after the event with this id.
pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// The `Sec-WebSocket-Protocol` value MCP over WebSocket asks for and must get back.
pub const WS_SUBPROTOCOL: &str = "mcp";
