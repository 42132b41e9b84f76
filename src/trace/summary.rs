//! What one recorded session shows of its client: identity, version, capabilities and
//! habits. One function computes it from the session's events, for the recorder (which
//! writes it on the `close` line, for people) and for every reader (which recomputes it,
//! so a trace edited by hand stays consistent).

use super::format::{HttpExchange, Transport};
use super::read::RecordedSession;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `_meta` keys of the modern era (2026-07-28).
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// A session's client, as seen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// `legacy` (an `initialize` was seen) or `modern` (requests carried the modern
    /// `_meta`); `unknown` when neither (the client never got that far).
    pub era: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    /// The client probed with `server/discover` before an `initialize` (a dual-era
    /// client's `auto` mode).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probed: bool,
    pub habits: Habits,
}

/// How the client uses its transport.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Habits {
    /// Streamable HTTP: it opened the standalone GET stream.
    #[serde(default)]
    pub get_stream: bool,
    /// Streamable HTTP: it sent `Mcp-Session-Id` back.
    #[serde(default)]
    pub session_header: bool,
    /// Streamable HTTP: it ended with a DELETE.
    #[serde(default)]
    pub delete: bool,
    /// Modern era: it held `subscriptions/listen` open.
    #[serde(default)]
    pub listen: bool,
    /// HTTP: TCP connections it used, and whether one carried several requests.
    #[serde(default)]
    pub connections: u64,
    #[serde(default)]
    pub keep_alive: bool,
    /// It sent `ping` itself.
    #[serde(default)]
    pub pings: bool,
}

impl Summary {
    /// The summary of `session`'s events.
    pub fn of(session: &RecordedSession) -> Summary {
        let client = || session.client_messages();
        let initialize = client().find(|m| method_of(m) == Some("initialize"));
        let mut s = Summary::default();
        if let Some(init) = initialize {
            let params = init.get("params");
            let field = |k: &str| params.and_then(|p| p.get(k)).cloned();
            s.era = "legacy".into();
            s.protocol_version =
                field("protocolVersion").and_then(|v| v.as_str().map(str::to_string));
            s.client_info = field("clientInfo");
            s.capabilities = field("capabilities");
            s.probed = client()
                .take_while(|m| method_of(m) != Some("initialize"))
                .any(|m| method_of(m) == Some("server/discover"));
        } else if let Some(meta) = client().find_map(|m| modern_meta(m)) {
            s.era = "modern".into();
            s.protocol_version = meta
                .get(META_VERSION)
                .and_then(Value::as_str)
                .map(str::to_string);
            s.client_info = meta.get(META_CLIENT_INFO).cloned();
            s.capabilities = meta.get(META_CAPABILITIES).cloned();
        } else {
            s.era = "unknown".into();
        }
        s.habits = habits(session, client().any(|m| method_of(m) == Some("ping")));
        s.habits.listen = client().any(|m| method_of(m) == Some("subscriptions/listen"));
        s
    }
}

fn habits(session: &RecordedSession, pings: bool) -> Habits {
    let http: Vec<&HttpExchange> = session.http.iter().map(|(_, h)| h).collect();
    let mut connections: Vec<u64> = http.iter().map(|h| h.connection).collect();
    connections.sort_unstable();
    let exchanges = connections.len();
    connections.dedup();
    let is_http = session.transport == Transport::Http;
    Habits {
        get_stream: is_http && http.iter().any(|h| h.method == "GET" && h.status == 200),
        session_header: http.iter().any(|h| h.session_header),
        delete: is_http && http.iter().any(|h| h.method == "DELETE"),
        listen: false,
        connections: connections.len() as u64,
        keep_alive: exchanges > connections.len(),
        pings,
    }
}

/// A message's `method`, if it is a request or notification.
pub fn method_of(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

/// The modern `_meta` of a request, if it carries the protocol version there.
pub fn modern_meta(message: &Value) -> Option<&serde_json::Map<String, Value>> {
    let meta = message.get("params")?.get("_meta")?.as_object()?;
    meta.contains_key(META_VERSION).then_some(meta)
}
