//! Protocol faults the reference server can commit on purpose (`serve --fault NAME`),
//! one per conformance finding it can reproduce, so every check is tested against a
//! server that makes that mistake. The handler calls three small hooks — before a
//! request, on its encoded reply, on a notification — and they cost nothing when no
//! fault is set.
//!
//! `fault` names the closed set; `reply` bends an encoded reply; this file holds the
//! state the faults keep and the other hooks.

mod fault;
mod reply;

pub use fault::Fault;

use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};

use super::notifier::Notifier;
use crate::protocol::jsonrpc::{codes, encode_notification};
use crate::protocol::meta::META;
use crate::protocol::methods as m;
use crate::protocol::version::{legacy_versions, LATEST_MODERN};
use crate::protocol::RpcError;

/// What a reply hook needs to know about the request it answers (only gathered when a
/// fault is set).
#[derive(Debug, Default)]
pub struct Asked {
    method: String,
    tool: Option<String>,
    version: Option<String>,
}

/// The faults a server commits, and the little state they need.
#[derive(Debug, Default)]
pub struct Faults {
    set: Vec<Fault>,
    tool_lists: AtomicU64,
    handshakes: AtomicU64,
    /// What the `leak` fault holds on to, one per session, forever.
    leaked: std::sync::Mutex<Vec<Leaked>>,
    /// `crash-on-invalid-json` over HTTP: the server has "crashed".
    crashed: std::sync::atomic::AtomicBool,
    /// `era-lock` in a modern-only server: every connection is modern from the start.
    modern_only: bool,
}

/// One session's leak: memory and a descriptor nobody frees.
#[derive(Debug)]
struct Leaked {
    _memory: Vec<u8>,
    _descriptor: std::fs::File,
}

/// The memory one leaking session keeps.
pub const LEAK_BYTES: usize = 256 * 1024;

/// How late `--fault slow` answers a `tools/call`: well past any sane p99 on loopback.
pub const SLOW: std::time::Duration = std::time::Duration::from_millis(200);

impl Faults {
    pub fn new(set: &[Fault]) -> Faults {
        Faults {
            set: set.to_vec(),
            tool_lists: AtomicU64::new(0),
            handshakes: AtomicU64::new(0),
            leaked: std::sync::Mutex::new(Vec::new()),
            crashed: std::sync::atomic::AtomicBool::new(false),
            modern_only: false,
        }
    }

    /// The faults of a server of `eras`.
    pub fn serving(mut self, eras: super::Eras) -> Faults {
        self.modern_only = !eras.legacy();
        self
    }

    /// `crash-on-invalid-json` saw a message that is not JSON: whether to crash (and,
    /// over HTTP, stay down from now on).
    pub fn crash_on(&self, error: &crate::protocol::jsonrpc::Malformed) -> bool {
        let crash = self.has(Fault::CrashOnInvalidJson)
            && matches!(error, crate::protocol::jsonrpc::Malformed::NotJson(_));
        if crash {
            self.crashed.store(true, Ordering::Relaxed);
        }
        crash
    }

    /// HTTP after `crash-on-invalid-json`: the server is down.
    pub fn crashed(&self) -> bool {
        self.crashed.load(Ordering::Relaxed)
    }

    /// `slow` and `hang-on-unknown-tool`: wait before answering this request (an hour,
    /// bounded like everything, is "never" to any client).
    pub async fn hold(&self, method: &str, params: Option<&Value>) {
        if self.has(Fault::Slow) && method == m::TOOLS_CALL {
            tokio::time::sleep(SLOW).await;
        }
        if self.hangs(method, params) {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
    }

    /// `hang-on-unknown-tool`: this request is never answered.
    pub fn hangs(&self, method: &str, params: Option<&Value>) -> bool {
        self.has(Fault::HangOnUnknownTool)
            && method == m::TOOLS_CALL
            && params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .is_some_and(|n| super::catalog::Tool::from_name(n).is_none())
    }

    /// A session began (its `initialize` was accepted): with the `leak` fault, keep
    /// [`LEAK_BYTES`] of memory, every page written so the RSS really grows, and a
    /// descriptor of `/dev/null`.
    pub fn session_started(&self) {
        if !self.has(Fault::Leak) {
            return;
        }
        // Non-zero bytes: zeroed allocations may be mapped lazily and never count.
        let memory = vec![0xA5u8; LEAK_BYTES];
        let Ok(descriptor) = std::fs::File::open("/dev/null") else {
            return;
        };
        self.leaked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Leaked {
                _memory: memory,
                _descriptor: descriptor,
            });
    }

    /// Sessions leaked so far.
    pub fn leaked_sessions(&self) -> usize {
        self.leaked.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The task faults (they act inside the task store, not through the hooks).
    pub fn tasks(&self) -> super::tasks::TaskFaults {
        super::tasks::TaskFaults {
            stuck: self.has(Fault::TaskStuck),
            regress: self.has(Fault::TaskStatusRegress),
            early_result: self.has(Fault::TaskEarlyResult),
        }
    }

    pub fn any(&self) -> bool {
        !self.set.is_empty()
    }

    pub fn has(&self, f: Fault) -> bool {
        self.set.contains(&f)
    }

    /// Note what the reply hook will need, before the request is consumed.
    pub fn asked(&self, method: &str, params: Option<&Value>) -> Asked {
        let text = |k: &str| {
            params
                .and_then(|p| p.get(k))
                .and_then(Value::as_str)
                .map(String::from)
        };
        Asked {
            method: method.to_string(),
            tool: text("name"),
            version: text("protocolVersion"),
        }
    }

    /// Before a request runs: faults that answer instead of the server, or that send
    /// something first. `stateless` says the modern era answers it; `session` is the
    /// connection's.
    pub fn before(
        &self,
        method: &str,
        params: &mut Option<Value>,
        stateless: bool,
        session: &super::handler::Session,
        notifier: &Notifier,
    ) -> Option<RpcError> {
        if self.has(Fault::EraLock) {
            let modern = *session.first_modern.get_or_init(|| stateless);
            if method == m::INITIALIZE && (modern || self.modern_only) {
                let mut e = error(
                    codes::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version: this connection speaks 2026-07-28",
                );
                e.data = Some(json!({"supported": [LATEST_MODERN], "requested": params
                    .as_ref()
                    .and_then(|p| p.get("protocolVersion"))}));
                return Some(e);
            }
        }
        if self.has(Fault::SseGarbage) && method != m::INITIALIZE {
            notifier.send(b"this is not JSON".to_vec());
        }
        if self.has(Fault::ListenOnRequestStream) && stateless && method == m::TOOLS_CALL {
            // A change announced on a tool call's stream, with no listen to belong to.
            let at = crate::server::listen::now_us();
            let params = json!({ META: { crate::protocol::meta::META_CHANGED_AT: at } });
            notifier.send(encode_notification(m::TOOLS_LIST_CHANGED, Some(&params)));
        }
        if self.has(Fault::EarlyMessage) && method == m::INITIALIZE {
            notifier.send(encode_notification(m::TOOLS_LIST_CHANGED, None));
        }
        if self.has(Fault::PaginationLoop) && method == m::TOOLS_LIST {
            if let Some(Value::Object(p)) = params {
                if p.get("cursor").and_then(Value::as_str) == Some("loop") {
                    p.remove("cursor");
                }
            }
        }
        if self.has(Fault::ModernNoSupported) && stateless {
            return Some(error(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
            ));
        }
        if self.has(Fault::VersionError) && method == m::INITIALIZE {
            let requested = params
                .as_ref()
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !legacy_versions().any(|v| v == requested) {
                let mut e = error(codes::INVALID_PARAMS, "Unsupported protocol version");
                e.data = Some(json!({"supported": legacy_versions().collect::<Vec<_>>(),
                    "requested": requested}));
                return Some(e);
            }
        }
        if self.has(Fault::MissingPrompts) && method.starts_with("prompts/") {
            return Some(error(codes::METHOD_NOT_FOUND, "Method not found"));
        }
        if self.has(Fault::UndeclaredResourcesError) && method == m::RESOURCES_LIST {
            return Some(error(codes::INTERNAL_ERROR, "Internal error"));
        }
        None
    }

    /// A reply to a notification, which should get none.
    pub fn notification_reply(&self) -> Option<Vec<u8>> {
        self.has(Fault::RespondToNotification)
            .then(|| NOTIFICATION_REPLY.to_vec())
    }

    /// Streamable HTTP: the status and body a POSTed notification or response gets
    /// instead of a bare 202, when a fault says so.
    pub fn post_ack(&self) -> Option<(u16, Vec<u8>)> {
        if self.has(Fault::RespondToNotification) {
            Some((200, NOTIFICATION_REPLY.to_vec()))
        } else if self.has(Fault::NotificationStatus200) {
            Some((200, Vec::new()))
        } else {
            None
        }
    }
}

/// What the `respond-to-notification` fault answers a notification with.
const NOTIFICATION_REPLY: &[u8] = br#"{"jsonrpc":"2.0","id":null,"result":{}}"#;

fn error(code: i64, message: &str) -> RpcError {
    RpcError {
        code,
        message: message.into(),
        data: None,
    }
}

#[cfg(test)]
mod tests;
