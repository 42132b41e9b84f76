//! Legacy HTTP+SSE for the reference server (2024-11-05): `GET /sse` opens the stream and
//! announces `endpoint`, `POST /messages?sessionId=…` carries client messages (202), all
//! server messages flow on the stream, around [`super::channel::serve_messages`].
//! STUB: filled in by the legacy-SSE work.

use super::handler::Handler;
use axum::Router;
use std::sync::Arc;

/// Routes to merge into the server's router.
pub fn routes(_handler: Arc<Handler>) -> Router {
    Router::new()
}
