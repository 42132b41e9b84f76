//! WebSocket for the reference server (`GET /ws`, subprotocol `mcp`): one JSON-RPC
//! message per text frame around [`super::channel::serve_messages`]. STUB: filled in by
//! the WebSocket work.

use super::handler::Handler;
use axum::Router;
use std::sync::Arc;

/// Routes to merge into the server's router.
pub fn routes(_handler: Arc<Handler>) -> Router {
    Router::new()
}
