//! The session's verdict on each protocol extension (SEP-2133), once the server has said
//! what it offers: accepted (both declared), ignored (the persona's, not the server's),
//! offered (the server's, not the persona's), and required (a request refused with an
//! error naming an offered extension the persona lacks). And the finding for a server
//! that uses an extension the persona did not declare (a 2026-07-28 `resultType` of the
//! tasks extension).

use super::{Failure, Session};
use crate::conformance::Check;
use crate::metrics::{Event, ExtensionVerdict, FailureKind};
use serde_json::Value;

/// The tasks extension, whose results say `resultType: "task"`.
pub const TASKS: &str = "io.modelcontextprotocol/tasks";

impl Session<'_> {
    /// After the handshake: one verdict per extension either side declared.
    pub fn judge_extensions(&mut self) {
        let offered: Vec<String> = self
            .server
            .as_ref()
            .and_then(|s| s.capabilities.get("extensions"))
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if offered.is_empty() && self.persona.extensions.is_empty() {
            return;
        }
        let declared = &self.persona.extensions;
        for id in declared {
            let verdict = if offered.contains(id) {
                ExtensionVerdict::Accepted
            } else {
                ExtensionVerdict::Ignored
            };
            self.recorder.send(Event::Extension {
                id: id.clone(),
                verdict,
            });
        }
        let undeclared: Vec<String> = offered
            .into_iter()
            .filter(|id| !declared.contains(id))
            .collect();
        for id in &undeclared {
            self.recorder.send(Event::Extension {
                id: id.clone(),
                verdict: ExtensionVerdict::Offered,
            });
        }
        self.undeclared_extensions = undeclared;
    }

    /// A refusal naming an extension the server offers and the persona lacks: required
    /// (once per session and extension).
    pub(super) fn check_required_extension(&mut self, f: &Failure) {
        if !matches!(f.kind, FailureKind::RpcError(_)) || self.undeclared_extensions.is_empty() {
            return;
        }
        let data = f.data.as_ref().map(Value::to_string).unwrap_or_default();
        let named = self
            .undeclared_extensions
            .iter()
            .position(|id| f.detail.contains(id.as_str()) || data.contains(id.as_str()));
        if let Some(i) = named {
            let id = self.undeclared_extensions.swap_remove(i);
            self.recorder.send(Event::Extension {
                id,
                verdict: ExtensionVerdict::Required,
            });
        }
    }

    /// A modern result whose `resultType` belongs to an extension: a finding when the
    /// persona did not declare it.
    pub(super) fn check_extension_result(&mut self, method: &str, result_type: &str) {
        if result_type == "task" && !self.persona.extensions.iter().any(|e| e == TASKS) {
            self.finding(Check::ExtensionUsedUndeclared, || {
                format!("{method} answered resultType \"task\" (the {TASKS} extension) to a client that did not declare it")
            });
        }
    }
}
