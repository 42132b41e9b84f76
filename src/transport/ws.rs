//! WebSocket (not a spec transport; the TypeScript v1 / Python v1 SDK convention):
//! subprotocol `mcp`, one JSON-RPC message per text frame, the legacy handshake over the
//! socket, a close frame ends the session. STUB: filled in by the WebSocket work.

use super::{Received, TransportError};
use crate::metrics::FailureKind;
use http::{HeaderName, HeaderValue};
use std::sync::Arc;
use std::time::Duration;

/// Where and how to reach a WebSocket endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct WsEndpoint {
    /// `ws://` or `wss://`.
    pub url: url::Url,
    /// Extra headers on the upgrade request (e.g. Authorization).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub connect_timeout: Duration,
    /// Skip TLS certificate verification (`--insecure`).
    pub insecure: bool,
}

pub struct WsTransport {}

impl WsTransport {
    pub async fn connect(_ep: Arc<WsEndpoint>) -> Result<WsTransport, TransportError> {
        Err(TransportError::new(
            FailureKind::ConnectFailed,
            "WebSocket is not built yet",
        ))
    }

    pub async fn send(&mut self, _bytes: Vec<u8>) -> Result<(), TransportError> {
        Err(TransportError::new(FailureKind::TransportClosed, "stub"))
    }

    /// Cancel-safe.
    pub async fn recv(&mut self) -> Received {
        Received::Closed {
            detail: "stub".into(),
        }
    }

    pub async fn close(self) -> Result<(), TransportError> {
        Ok(())
    }
}
