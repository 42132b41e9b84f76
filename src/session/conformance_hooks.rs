//! Conformance hooks of a session: the checks it makes as it goes (the check table
//! itself is `conformance/checks.rs`). Findings are reported once per session with a
//! first example (built only then), the transcript for `inspect`, and the cross-session
//! tracker.

use super::{Failure, Session, Transcript};
use crate::conformance::{Check, Tracker};
use crate::metrics::{Event, FailureKind};
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, Era};
use serde_json::Value;
use std::sync::Arc;

impl Session<'_> {
    /// Record every message of this session (for `inspect`).
    pub fn observe(&mut self, transcript: Transcript) {
        self.transcript = Some(transcript);
    }

    /// The run's cross-session conformance state.
    pub fn set_tracker(&mut self, tracker: Arc<Tracker>) {
        self.checks.tracker = Some(tracker);
    }

    pub fn tracker(&self) -> Option<&Tracker> {
        self.checks.tracker.as_deref()
    }

    /// Report a conformance finding; the example is built only the first time this
    /// session sees the check.
    pub fn finding(&mut self, check: Check, example: impl FnOnce() -> String) {
        let example = self.checks.first(check).then(example);
        if let (Some(t), Some(e)) = (&self.transcript, &example) {
            t.note(format!("finding {}: {e}", check.code()));
        }
        self.recorder.send(Event::Finding {
            check: check.id(),
            example,
        });
    }

    /// The `outputSchema` a listed tool declared.
    pub fn output_schema(&self, tool: &str) -> Option<&Value> {
        self.checks.output_schemas.get(tool).map(|s| &**s)
    }

    /// Findings a failed request shows: a declared capability that is not implemented,
    /// the negotiated version header refused.
    pub(super) fn check_failure(&mut self, method: &str, f: &Failure) {
        self.check_required_extension(f);
        match f.kind {
            // A task-required tool called directly: -32601 is the right answer.
            FailureKind::RpcError(codes::METHOD_NOT_FOUND) if self.tasks.refusal_expected => {}
            FailureKind::RpcError(codes::METHOD_NOT_FOUND) => {
                let cap = crate::conformance::capability_of(method);
                let declared = self.server.as_ref().is_some_and(|s| {
                    cap.is_some_and(|c| !s.capabilities.is_null() && s.declares(c))
                });
                if declared {
                    self.finding(Check::CapabilityDeclaredButMissing, || {
                        format!(
                            "{method} answered -32601 although {:?} is declared",
                            cap.unwrap_or_default()
                        )
                    });
                }
            }
            // The modern era's own version errors (-32020, -32022) are negotiation,
            // not a refusal of the header we were told to send.
            FailureKind::RpcError(codes::UNSUPPORTED_PROTOCOL_VERSION | codes::HEADER_MISMATCH) => {
            }
            FailureKind::HttpStatus(400) | FailureKind::RpcError(_)
                if f.detail.starts_with("HTTP 400") && self.era == Era::Legacy =>
            {
                let text = f.detail.to_ascii_lowercase();
                if text.contains("protocol-version") || text.contains("protocol version") {
                    self.finding(Check::VersionHeaderRejected, || f.detail.clone());
                }
            }
            _ => {}
        }
    }

    /// After a POSTed notification or our answer to a server request (Streamable HTTP):
    /// anything but a bare 202 is a finding, and `inspect` shows what came back.
    pub(super) fn check_post_ack(&mut self, what: &str) {
        let Some(ack) = self.transport.take_unusual_ack() else {
            return;
        };
        if let Some(t) = &self.transcript {
            t.note(format!("HTTP {} to the POSTed {what}", ack.status));
            if !ack.body.is_empty() {
                t.received_raw(&ack.body);
            }
        }
        for check in crate::conformance::post_ack(ack.status, &ack.body) {
            self.finding(check, || {
                let body = String::from_utf8_lossy(&ack.body);
                let shown: String = body.chars().take(160).collect();
                format!(
                    "the POSTed {what} got HTTP {} with body {shown:?}",
                    ack.status
                )
            });
        }
    }

    /// After a handshake: the server capabilities this client (persona and version) was
    /// told must be those an earlier session of the same client was told.
    pub(super) fn check_capabilities(&mut self) {
        let (Some(tracker), Some(server)) = (self.checks.tracker.clone(), &self.server) else {
            return;
        };
        if !server.capabilities.is_object() {
            return; // unknown (a modern server without discover)
        }
        let caps = &server.capabilities;
        let before = tracker.capabilities_seen(self.persona.id, self.version, caps);
        if let Some(before) = before {
            let now = caps.to_string();
            let (persona, version) = (self.persona.name.clone(), self.version);
            self.finding(Check::CapabilityChangedBetweenSessions, || {
                format!(
                    "persona {persona:?} at {}: an earlier session was told {before}, this one {now}",
                    version.name()
                )
            });
        }
    }

    /// Legacy era: only `ping` and logging may come before `notifications/initialized`.
    pub(super) fn check_early(&mut self, method: &str) {
        if self.checks.handshaking && method != methods::PING && method != methods::LOG_MESSAGE {
            self.finding(Check::LifecycleEarlyMessage, || {
                format!("{method} arrived before notifications/initialized was sent")
            });
        }
    }
}
