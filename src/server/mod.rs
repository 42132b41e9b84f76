//! The built-in reference MCP server (the default target): public entry points and options.
//!
//! `catalog` holds what the server offers, `handler` turns one JSON-RPC message into its
//! reply independently of the transport, and `http` / `stdio` only frame bytes around it.

pub mod catalog;
pub mod channel;
pub mod handler;
pub mod http;
pub mod legacy_sse;
pub mod stdio;
pub mod ws;

pub use http::{serve_http, spawn_http, HttpServer};
pub use stdio::{serve_io, serve_stdio};

/// Knobs of the reference server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Items per list page (`tools/list`, `resources/list`, …).
    pub page_size: usize,
    /// Answer every POSTed request as an SSE stream instead of a JSON body.
    pub sse_responses: bool,
    /// `serverInfo.name` in the initialize result.
    pub name: String,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 10,
            sse_responses: false,
            name: "mcp-fleet-reference".into(),
        }
    }
}
