//! `[[persona]]`: a kind of virtual client — identity, version, capabilities, how it
//! answers the server, its shape and its faults.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::auth::AuthSection;
use super::target::Command;
use super::tasks::TasksSection;

/// `[[persona]]`: a kind of virtual client.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PersonaSection {
    pub name: String,
    /// Start from a persona of the client library (`from = "python-sdk-1"`: the
    /// recorded real clients of profiles/clients/, built in) or of another profile
    /// (`from = "hosts.toml"`, its first persona, or `"hosts.toml#name"`; relative to
    /// this profile): its keys, under the ones written here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Relative share of sessions; default 1.
    pub weight: Option<u32>,
    /// `legacy` (initialize handshake), `modern` (2026-07-28, stateless) or `auto`
    /// (probe with `server/discover`, fall back to the handshake). Default: the era of
    /// `protocol_version`.
    pub era: Option<String>,
    /// The version offered: in `initialize` (legacy) or in every request's `_meta`
    /// (modern). Any string, so wrong or unknown versions can be tested.
    pub protocol_version: Option<String>,
    /// `auto` only: the version `initialize` offers when the server turns out legacy.
    pub legacy_version: Option<String>,
    /// Versions the persona accepts back; default: every known version.
    pub accept_versions: Option<Vec<String>>,
    pub client_info: Option<ClientInfoSection>,
    /// Declared client capabilities, free-form: `{ roots = { listChanged = true } }`.
    pub capabilities: Option<Value>,
    /// Protocol extensions declared (SEP-2133) in `capabilities.extensions`:
    /// `["io.modelcontextprotocol/ui"]`, or a table of id → settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Value>,
    /// Names of the scenarios this persona runs; default: all.
    pub scenarios: Option<Vec<String>>,
    /// `stdio`, `http` (Streamable HTTP), `sse` (legacy HTTP+SSE) or `ws` (WebSocket).
    /// Default: from the URL scheme (`ws://` → ws, else http) or stdio for a command.
    pub transport: Option<String>,
    /// This persona's own server URL (else `[target].url`).
    pub url: Option<String>,
    /// This persona's own server command (else `[target].command`).
    pub command: Option<Command>,
    /// Streamable HTTP, legacy era: open the standalone GET stream after the handshake,
    /// as the TypeScript and Python SDK clients do. Default false.
    pub get_stream: Option<bool>,
    /// What `notifications/*/list_changed` makes the persona do: `refetch` the list
    /// (default) or `ignore` it (counted either way).
    pub list_changed: Option<String>,
    /// Modern era (2026-07-28): hold `subscriptions/listen` open for the session's life,
    /// `listen = { lists = ["tools"], resources = ["file:///a"] }`, re-listening after
    /// the server ends or drops it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<ListenSection>,
    /// W3C trace context on every request: `traceparent` / `tracestate` in `_meta` and,
    /// over HTTP, as headers; the results name the slowest requests' trace ids per
    /// phase. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<bool>,
    /// Modern era: honour `ttlMs` and serve repeated lists from a cache. Default false.
    pub cache: Option<bool>,
    /// Modern era: most `input_required` rounds before a request is given up. Default 8.
    pub max_input_rounds: Option<u32>,
    /// Start a new session (re-initialize) when the server answers 404 for the session,
    /// as the SDK clients can. Default true.
    pub reinitialize: Option<bool>,
    /// How the persona answers `sampling/createMessage` (needs `sampling` declared).
    pub sampling: Option<SamplingSection>,
    /// How the persona answers `elicitation/create` (needs `elicitation` declared).
    pub elicitation: Option<ElicitationSection>,
    /// What `roots/list` returns (needs `roots` declared).
    pub roots: Option<Vec<RootSection>>,
    /// `churn` (default: each session opens, runs its scenario once, closes) or
    /// `long-lived` (the session stays open for the whole run, repeating its scenario).
    pub shape: Option<String>,
    /// Long-lived sessions: scenario iterations per second per session, e.g. `"0.5/s"`.
    pub pace: Option<String>,
    /// Share of sessions (0…1) that vanish at the end instead of closing: no DELETE, no
    /// close frame, no stdin EOF — the connection is just dropped. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandon: Option<f64>,
    /// Long-lived, legacy era: send `ping` this often while otherwise idle, e.g. `"30s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_every: Option<String>,
    /// Long-lived: a pause between iterations, `"5s"` or a uniform range `"1s..30s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<String>,
    /// Long-lived: how long one session lasts before it closes (or is abandoned) and its
    /// client opens the next, `"10m"` or a uniform range `"5m..20m"`, as a chat lasts a
    /// while. Default: until the run drains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<String>,
    /// Client-side faults, each committed by a share of this persona's sessions (at most
    /// one a session): `faults = [{ fault = "invalid-json", share = 0.02 }]`. Names:
    /// `metrics::ClientFault`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<Vec<FaultSection>>,
    /// HTTP transports: how this persona's virtual clients authenticate (bearer tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthSection>,
    /// Task-augmented tool calls (protocol 2025-11-25): when to call tools as tasks, how
    /// many to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksSection>,
}

/// `listen = { lists = ["tools", "prompts"], resources = ["file:///a"] }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ListenSection {
    /// Lists whose changes to hear of: `tools`, `prompts`, `resources`.
    #[serde(default)]
    pub lists: Vec<String>,
    /// Resource URIs whose updates to hear of (`resourceSubscriptions`).
    #[serde(default)]
    pub resources: Vec<String>,
}

/// `{ fault = "invalid-json", share = 0.02 }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSection {
    pub fault: String,
    /// Share (0…1) of the persona's sessions that commit it; the shares of one persona
    /// add up to at most 1.
    pub share: f64,
}

/// `sampling = { text = "…", delay = "20ms" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingSection {
    pub text: Option<String>,
    pub model: Option<String>,
    pub delay: Option<String>,
}

/// `elicitation = { accept = 8, decline = 1, cancel = 1, delay = "50ms" }`: weights of
/// the three actions.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ElicitationSection {
    pub accept: Option<u32>,
    pub decline: Option<u32>,
    pub cancel: Option<u32>,
    pub delay: Option<String>,
}

/// `{ uri = "file:///work", name = "work" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RootSection {
    pub uri: String,
    pub name: Option<String>,
}

/// `clientInfo` as sent in `initialize`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientInfoSection {
    pub name: Option<String>,
    pub version: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "websiteUrl")]
    pub website_url: Option<String>,
}
