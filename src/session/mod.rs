//! One MCP connection lifecycle on top of a transport: request/response correlation by
//! id, timeouts with `notifications/cancelled`, answers to what the server asks of a
//! client, and counting what the server tells us. The session drives its own receive
//! loop (no task per session): while it waits for a response it also serves everything
//! else that arrives.

mod handshake;

pub use handshake::ServerInfo;

use crate::metrics::{Event, FailureKind, PersonaId, Recorder};
use crate::protocol::jsonrpc::{codes, encode_notification, encode_request, encode_response};
use crate::protocol::{methods, Incoming, RequestId, RpcError};
use crate::transport::{Received, Transport, TransportError};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// Why an exchange failed, with a message worth showing a person.
#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: FailureKind,
    pub detail: String,
}

impl Failure {
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Self {
        Failure {
            kind,
            detail: detail.into(),
        }
    }
}

impl From<TransportError> for Failure {
    fn from(e: TransportError) -> Self {
        Failure::new(e.kind, e.detail)
    }
}

/// How long we give a best-effort `notifications/cancelled` after a timeout.
const CANCEL_SEND_LIMIT: Duration = Duration::from_secs(1);

pub struct Session {
    transport: Transport,
    next_id: u64,
    timeout: Duration,
    persona: PersonaId,
    recorder: Recorder,
    /// What `initialize` told us (legacy era).
    pub server: Option<ServerInfo>,
}

impl Session {
    pub fn new(
        transport: Transport,
        timeout: Duration,
        persona: PersonaId,
        recorder: Recorder,
    ) -> Session {
        Session {
            transport,
            next_id: 1,
            timeout,
            persona,
            recorder,
            server: None,
        }
    }

    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Send a request and wait for its response, serving the server meanwhile.
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, Failure> {
        let id = self.next_id;
        self.next_id += 1;
        let bytes = encode_request(id, method, params.as_ref());
        self.transport.send_request(id, bytes, &[]).await?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let Ok(received) = tokio::time::timeout_at(deadline, self.transport.recv()).await
            else {
                self.cancel(id).await;
                return Err(Failure::new(
                    FailureKind::Timeout,
                    format!(
                        "no answer to {method} within {}",
                        humantime::format_duration(self.timeout)
                    ),
                ));
            };
            match received {
                Received::Message(Incoming::Response {
                    id: Some(rid),
                    outcome,
                }) if rid.as_own() == Some(id) => {
                    return outcome.map_err(|e| {
                        Failure::new(
                            FailureKind::RpcError(e.code),
                            format!("{method}: {} ({})", e.message, e.code),
                        )
                    })
                }
                // A late answer to a request we gave up on, or to an id we never used.
                Received::Message(Incoming::Response { .. }) => {}
                Received::Message(Incoming::Request { id, method, params }) => {
                    self.answer(id, method, params).await?;
                }
                Received::Message(Incoming::Notification { method, .. }) => {
                    self.recorder.send(Event::ServerMessage { method });
                }
                Received::Malformed { error, excerpt } => {
                    // A stray line (a server logging to stdout, say) does not tell us our
                    // answer is lost; count it and keep waiting.
                    self.recorder.send(Event::Malformed {
                        persona: self.persona,
                        text: format!("{error}: {excerpt}"),
                    });
                }
                Received::Failed {
                    request: Some(r),
                    kind,
                    detail,
                } if r == id => return Err(Failure::new(kind, detail)),
                Received::Failed { .. } => {}
                Received::Closed { detail } => {
                    return Err(Failure::new(FailureKind::TransportClosed, detail))
                }
            }
        }
    }

    /// Send a notification (over HTTP: and wait for its 202).
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), Failure> {
        let bytes = encode_notification(method, params.as_ref());
        match tokio::time::timeout(self.timeout, self.transport.send_notification(bytes)).await {
            Ok(r) => r.map_err(Failure::from),
            Err(_) => Err(Failure::new(
                FailureKind::Timeout,
                format!(
                    "{method} not accepted within {}",
                    humantime::format_duration(self.timeout)
                ),
            )),
        }
    }

    /// Answer a server→client request. `ping` is always answered; the client features
    /// (sampling, elicitation, roots) are not offered yet, so they get -32601 as the
    /// spec prescribes for undeclared capabilities.
    async fn answer(
        &mut self,
        id: RequestId,
        method: String,
        _params: Option<Value>,
    ) -> Result<(), Failure> {
        let reply = if method == methods::PING {
            encode_response(&id, Ok(&json!({})))
        } else {
            let e = RpcError {
                code: codes::METHOD_NOT_FOUND,
                message: format!("Method not found: {method}"),
                data: None,
            };
            encode_response(&id, Err(&e))
        };
        self.recorder.send(Event::ServerMessage { method });
        match tokio::time::timeout(self.timeout, self.transport.send_notification(reply)).await {
            Ok(r) => r.map_err(Failure::from),
            Err(_) => Err(Failure::new(
                FailureKind::Timeout,
                "our answer to a server request was not accepted in time",
            )),
        }
    }

    /// Tell the server we gave up on request `id` (best effort, bounded).
    async fn cancel(&mut self, id: u64) {
        let params = json!({"requestId": id, "reason": "timeout"});
        let bytes = encode_notification(methods::CANCELLED, Some(&params));
        let _ =
            tokio::time::timeout(CANCEL_SEND_LIMIT, self.transport.send_notification(bytes)).await;
    }

    /// End the session (DELETE / stdin EOF and signals).
    pub async fn close(self) -> Result<(), Failure> {
        self.transport.close().await.map_err(Failure::from)
    }

    pub fn diagnostics(&self) -> Option<String> {
        self.transport.diagnostics()
    }
}
