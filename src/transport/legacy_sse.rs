//! Legacy HTTP+SSE (2024-11-05): GET the SSE URL, wait for the `endpoint` event, POST
//! every client message there, read every server message from the stream; the session
//! ends when the stream closes. STUB: filled in by the legacy-SSE work.

use super::{Received, TransportError};
use crate::metrics::FailureKind;
use http::{HeaderName, HeaderValue};
use std::sync::Arc;
use std::time::Duration;

/// Where and how to reach a legacy SSE endpoint; shared by every session of a run.
#[derive(Debug)]
pub struct SseEndpoint {
    /// The SSE URL (conventionally `/sse`).
    pub url: url::Url,
    /// Extra headers on every request (GET and POSTs).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub connect_timeout: Duration,
    /// Skip TLS certificate verification (`--insecure`).
    pub insecure: bool,
}

pub struct SseTransport {}

impl SseTransport {
    /// GET the stream and wait for the `endpoint` event (the `connect` phase).
    pub async fn connect(_ep: Arc<SseEndpoint>) -> Result<SseTransport, TransportError> {
        Err(TransportError::new(
            FailureKind::ConnectFailed,
            "legacy SSE is not built yet",
        ))
    }

    /// POST a request; its response arrives on the stream.
    pub async fn send_request(&mut self, _id: u64, _bytes: Vec<u8>) -> Result<(), TransportError> {
        Err(TransportError::new(FailureKind::TransportClosed, "stub"))
    }

    /// POST a notification or a response and wait for the server's 202.
    pub async fn post_and_wait(&mut self, _bytes: Vec<u8>) -> Result<(), TransportError> {
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
