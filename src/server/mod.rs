//! The built-in reference MCP server (the default target): public entry points and options.
//!
//! `catalog` holds what the server offers, `handler` turns one JSON-RPC message into its
//! reply independently of the transport (both eras: the legacy `initialize` session and
//! the stateless 2026-07-28 requests), and `http` / `stdio` / `channel` only frame bytes
//! around it.

pub mod app;
pub mod auth;
pub mod capacity;
pub mod catalog;
pub mod channel;
mod connection;
pub mod faults;
pub mod handler;
pub mod http;
pub mod legacy_sse;
pub mod listen;
pub mod notifier;
mod origin;
pub mod process_metrics;
mod stall;
pub mod stdio;
pub mod tasks;
pub mod ws;

pub use faults::Fault;
pub use http::{serve_http, spawn_http, HttpServer};
pub use stdio::{serve_io, serve_stdio};

/// Which protocol eras the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Eras {
    /// Only the `initialize` handshake (2024-11-05 … 2025-11-25); a modern request is
    /// treated as a legacy server would treat it, and `server/discover` is unknown.
    Legacy,
    /// Only stateless 2026-07-28 requests; `initialize` and session requests are refused
    /// with -32600 naming the supported version.
    Modern,
    /// Both, chosen per request: `params._meta` with a protocol version → modern.
    #[default]
    Both,
}

impl Eras {
    pub fn legacy(self) -> bool {
        self != Eras::Modern
    }

    pub fn modern(self) -> bool {
        self != Eras::Legacy
    }
}

/// How long an idle Streamable HTTP session lives by default: long enough for any think
/// time or idle period a profile writes, short enough that abandoned sessions do not
/// look like a leak of a healthy server in a soak run.
pub const DEFAULT_SESSION_TTL: std::time::Duration = std::time::Duration::from_secs(600);
/// Listens the reference server holds at once unless `serve --max-listens` says otherwise.
pub const DEFAULT_MAX_LISTENS: usize = 100_000;

/// Knobs of the reference server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Items per list page (`tools/list`, `resources/list`, …).
    pub page_size: usize,
    /// Answer every POSTed request as an SSE stream instead of a JSON body.
    pub sse_responses: bool,
    /// `serverInfo.name` in the initialize result.
    pub name: String,
    /// The protocol eras served.
    pub eras: Eras,
    /// Fault: a legacy `tools/call` answered as SSE sends its priming event (with
    /// `retry: 200`), at most this many messages, then ends the connection without the
    /// response, which the client must fetch with `GET` + `Last-Event-ID`.
    pub sse_drop_after: Option<usize>,
    /// Fault: after this many POSTs carrying a Streamable HTTP session id, the session is
    /// forgotten (the next one gets 404 "Session not found").
    pub expire_sessions_after: Option<u32>,
    /// Protocol faults committed on purpose (`serve --fault NAME`), to test the
    /// conformance checks.
    pub faults: Vec<Fault>,
    /// Fault: `(A, B)` — from A after the server starts, every message it handles waits
    /// until A + B (the server freezes for B).
    pub stall: Option<(std::time::Duration, std::time::Duration)>,
    /// Streamable HTTP sessions no request named for this long are dropped by a
    /// periodic sweep (`serve --session-ttl`); `None` keeps them until DELETE.
    pub session_ttl: Option<std::time::Duration>,
    /// Add the application tools (`serve --app-tools`): one tool per JSON Schema feature,
    /// each validating its arguments strictly (-32602 otherwise), and a shared note
    /// store (`note_create` / `note_get` / `note_list` / `note_delete`).
    pub app_tools: bool,
    /// `serve --auth`: every MCP endpoint wants a bearer token.
    pub auth: Option<auth::AuthOptions>,
    /// Serve the task tools and methods (`serve --tasks`, implied by a task fault).
    pub tasks: bool,
    /// `serve --reuse-port`: listen with SO_REUSEPORT, so that several server processes
    /// share the port and the kernel spreads connections over them.
    pub reuse_port: bool,
    /// `serve --workers N --service-time T`: handshakes wait for one of N workers and
    /// hold it for T (a known capacity of N / T a second); `None` answers at once.
    pub capacity: Option<(u32, std::time::Duration)>,
    /// `serve --change-every`: the tool list changes this often, fanned out to every
    /// `subscriptions/listen` (stamped with its time, for the fleet's `fanout` phase).
    pub change_every: Option<std::time::Duration>,
    /// `serve --listen-lifetime`: each listen is ended (with its final `complete`
    /// response) this long after it opened; `None` keeps it until the client goes.
    pub listen_lifetime: Option<std::time::Duration>,
    /// `serve --listen-end cancelled`: a listen the server ends gets
    /// `notifications/cancelled` naming it (the cancellation page's way) instead of its
    /// final `complete` response (the subscriptions page's way).
    pub listen_end_cancelled: bool,
    /// `serve --max-listens`: listens open at once, over every connection.
    pub max_listens: usize,
    /// `serve --extension ID`: protocol extensions declared in the server's
    /// `capabilities.extensions` (both eras).
    pub extensions: Vec<String>,
    /// `serve --require-extension ID`: declared, and every `tools/call` of a client that
    /// did not declare it is refused (-32602 naming it).
    pub require_extensions: Vec<String>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 10,
            sse_responses: false,
            name: "mcp-fleet-reference".into(),
            eras: Eras::Both,
            sse_drop_after: None,
            expire_sessions_after: None,
            faults: Vec::new(),
            stall: None,
            session_ttl: Some(DEFAULT_SESSION_TTL),
            app_tools: false,
            auth: None,
            tasks: false,
            reuse_port: false,
            capacity: None,
            change_every: None,
            listen_lifetime: None,
            listen_end_cancelled: false,
            max_listens: DEFAULT_MAX_LISTENS,
            extensions: Vec::new(),
            require_extensions: Vec::new(),
        }
    }
}
