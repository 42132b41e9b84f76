//! Protocol faults the reference server can commit on purpose (`serve --fault NAME`),
//! one per conformance finding it can reproduce, so every check is tested against a
//! server that makes that mistake. The handler calls three small hooks — before a
//! request, on its encoded reply, on a notification — and they cost nothing when no
//! fault is set.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};

use super::notifier::Notifier;
use crate::protocol::jsonrpc::{codes, encode_notification};
use crate::protocol::methods as m;
use crate::protocol::version::legacy_versions;
use crate::protocol::RpcError;

/// The faults, a closed set; each names the finding it provokes in its doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `tools/list` answered with `"jsonrpc": "1.0"` (jsonrpc.wrong-version).
    WrongJsonrpc,
    /// `tools/list` answered with both `result` and `error` (jsonrpc.result-and-error).
    ResultAndError,
    /// `tools/list` answered under another id (jsonrpc.unknown-id).
    WrongId,
    /// Notifications get a response (jsonrpc.response-to-notification). Over Streamable
    /// HTTP a POSTed notification or response is answered 200 with a JSON-RPC body
    /// (also http.post-status-not-202).
    RespondToNotification,
    /// Streamable HTTP: a POSTed notification or response is answered 200 with no body
    /// instead of 202 (http.post-status-not-202).
    NotificationStatus200,
    /// Every other handshake result (initialize, server/discover) lacks `completions`
    /// (capability.changed-between-sessions; over HTTP, SSE and ws, where one server
    /// serves every session — a stdio server lives for one session).
    FlappingCapabilities,
    /// `capabilities: []` in the initialize result (handshake.capabilities-not-object).
    CapabilitiesNotObject,
    /// `serverInfo` without `version` (handshake.server-info-invalid).
    NoServerInfoVersion,
    /// The initialize result names version "2099-12-31" (version.unknown).
    UnknownVersion,
    /// Any requested version is echoed, even one that does not exist
    /// (version.echoed-unsupported).
    EchoVersion,
    /// An unsupported requested version gets -32602 instead of a counter-offer
    /// (version.error-instead-of-offer).
    VersionError,
    /// HTTP: a request carrying `MCP-Protocol-Version` is refused with 400
    /// (version.header-rejected).
    RejectVersionHeader,
    /// Every modern request gets -32022 without `data.supported`
    /// (version.unsupported-without-list).
    ModernNoSupported,
    /// `notifications/tools/list_changed` before the initialize reply
    /// (lifecycle.early-message; stdio, ws, sse).
    EarlyMessage,
    /// The first tool's `inputSchema` is `{"type":"string"}` (tools.input-schema-not-object).
    BadInputSchema,
    /// The first tool is listed twice (tools.duplicate-name).
    DuplicateTools,
    /// `tools/list` returns the same cursor again and again (pagination.loop).
    PaginationLoop,
    /// `tools/list` returns `"nextCursor": ""` (pagination.empty-cursor).
    EmptyCursor,
    /// `add` returns `structuredContent` whose `sum` is a string
    /// (tools.structured-content-mismatch).
    BadStructuredContent,
    /// HTTP: the session id contains spaces (http.invalid-session-id).
    BadSessionId,
    /// A request's stream carries an event that is not JSON before the answer
    /// (sse.invalid-event over HTTP with SSE responses and legacy SSE; jsonrpc.not-json
    /// over stdio and ws).
    SseGarbage,
    /// Every other `tools/list` changes `echo`'s schema, with no list_changed
    /// (capability.list-changed-not-honoured).
    ToolsDrift,
    /// `prompts` is not declared but works (capability.undeclared-but-works: a default
    /// run probes once per target; `--probe-undeclared` in every session).
    UndeclaredPrompts,
    /// `tools` is not declared but its methods work, the most common server mistake
    /// (capability.undeclared-but-works, found by a default run's probe).
    UndeclaredTools,
    /// `resources` is not declared and `resources/list` answers -32603
    /// (capability.undeclared-wrong-error, with `--probe-undeclared`).
    UndeclaredResourcesError,
    /// `prompts` is declared but its methods answer -32601
    /// (capability.declared-but-missing).
    MissingPrompts,
    /// Every session (each `initialize`, on every transport) keeps ~256 KiB of touched
    /// memory and one open file descriptor that are never released, even when the session
    /// is deleted or expires: the soak verdicts' `slope(server.rss)` and
    /// `slope(server.fds)` must see it.
    Leak,
    /// Goes along with a malformed `initialize` (capabilities not an object, no
    /// clientInfo, no protocolVersion) instead of refusing it (client fault verdict
    /// `accepted`).
    AcceptInvalid,
    /// -32603 where -32700, -32600, -32601 or -32602 belong (verdict `wrong_error`).
    WrongErrorCodes,
    /// A message that is not JSON ends the session: stdio exits, ws closes, HTTP answers
    /// 500 and then 503 to everything (verdict `crashed`).
    CrashOnInvalidJson,
    /// A `tools/call` of a tool it does not have is never answered (verdict `hung`).
    HangOnUnknownTool,
    /// `serve --auth`: a 401 without `WWW-Authenticate` (auth.401-without-www-authenticate).
    AuthNoChallenge,
    /// `serve --auth`: the protected resource and authorization server metadata answer
    /// 404 (auth.resource-metadata-missing).
    AuthNoMetadata,
    /// `serve --auth`: the protected resource metadata lacks `authorization_servers`
    /// (auth.metadata-malformed).
    AuthBadMetadata,
    /// `serve --auth`: tokens minted for another resource are accepted
    /// (auth.wrong-audience-accepted).
    AuthAnyAudience,
    /// Tasks never leave `working` (tasks.stuck-working; implies `--tasks`).
    TaskStuck,
    /// A completed task reads `working` again after its first read
    /// (tasks.status-out-of-order; implies `--tasks`).
    TaskStatusRegress,
    /// `tasks/result` answers at once while `tasks/get` still says `working`
    /// (tasks.result-before-completion; implies `--tasks`).
    TaskEarlyResult,
}

impl Fault {
    pub const ALL: [Fault; 38] = [
        Fault::WrongJsonrpc,
        Fault::ResultAndError,
        Fault::WrongId,
        Fault::RespondToNotification,
        Fault::NotificationStatus200,
        Fault::FlappingCapabilities,
        Fault::CapabilitiesNotObject,
        Fault::NoServerInfoVersion,
        Fault::UnknownVersion,
        Fault::EchoVersion,
        Fault::VersionError,
        Fault::RejectVersionHeader,
        Fault::ModernNoSupported,
        Fault::EarlyMessage,
        Fault::BadInputSchema,
        Fault::DuplicateTools,
        Fault::PaginationLoop,
        Fault::EmptyCursor,
        Fault::BadStructuredContent,
        Fault::BadSessionId,
        Fault::SseGarbage,
        Fault::ToolsDrift,
        Fault::UndeclaredPrompts,
        Fault::UndeclaredTools,
        Fault::UndeclaredResourcesError,
        Fault::MissingPrompts,
        Fault::Leak,
        Fault::AcceptInvalid,
        Fault::WrongErrorCodes,
        Fault::CrashOnInvalidJson,
        Fault::HangOnUnknownTool,
        Fault::AuthNoChallenge,
        Fault::AuthNoMetadata,
        Fault::AuthBadMetadata,
        Fault::AuthAnyAudience,
        Fault::TaskStuck,
        Fault::TaskStatusRegress,
        Fault::TaskEarlyResult,
    ];

    /// The name on the command line (`--fault wrong-jsonrpc`).
    pub fn name(self) -> &'static str {
        match self {
            Fault::WrongJsonrpc => "wrong-jsonrpc",
            Fault::ResultAndError => "result-and-error",
            Fault::WrongId => "wrong-id",
            Fault::RespondToNotification => "respond-to-notification",
            Fault::NotificationStatus200 => "notification-status-200",
            Fault::FlappingCapabilities => "flapping-capabilities",
            Fault::CapabilitiesNotObject => "capabilities-not-object",
            Fault::NoServerInfoVersion => "no-server-info-version",
            Fault::UnknownVersion => "unknown-version",
            Fault::EchoVersion => "echo-version",
            Fault::VersionError => "version-error",
            Fault::RejectVersionHeader => "reject-version-header",
            Fault::ModernNoSupported => "modern-no-supported",
            Fault::EarlyMessage => "early-message",
            Fault::BadInputSchema => "bad-input-schema",
            Fault::DuplicateTools => "duplicate-tools",
            Fault::PaginationLoop => "pagination-loop",
            Fault::EmptyCursor => "empty-cursor",
            Fault::BadStructuredContent => "bad-structured-content",
            Fault::BadSessionId => "bad-session-id",
            Fault::SseGarbage => "sse-garbage",
            Fault::ToolsDrift => "tools-drift",
            Fault::UndeclaredPrompts => "undeclared-prompts",
            Fault::UndeclaredTools => "undeclared-tools",
            Fault::UndeclaredResourcesError => "undeclared-resources-error",
            Fault::MissingPrompts => "missing-prompts",
            Fault::Leak => "leak",
            Fault::AcceptInvalid => "accept-invalid",
            Fault::WrongErrorCodes => "wrong-error-codes",
            Fault::CrashOnInvalidJson => "crash-on-invalid-json",
            Fault::HangOnUnknownTool => "hang-on-unknown-tool",
            Fault::AuthNoChallenge => "auth-no-challenge",
            Fault::AuthNoMetadata => "auth-no-metadata",
            Fault::AuthBadMetadata => "auth-bad-metadata",
            Fault::AuthAnyAudience => "auth-any-audience",
            Fault::TaskStuck => "task-stuck",
            Fault::TaskStatusRegress => "task-status-regress",
            Fault::TaskEarlyResult => "task-early-result",
        }
    }

    pub fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Every name, for error messages and `--help`.
    pub fn names() -> Vec<&'static str> {
        Fault::ALL.iter().map(|f| f.name()).collect()
    }
}

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
}

/// One session's leak: memory and a descriptor nobody frees.
#[derive(Debug)]
struct Leaked {
    _memory: Vec<u8>,
    _descriptor: std::fs::File,
}

/// The memory one leaking session keeps.
pub const LEAK_BYTES: usize = 256 * 1024;

impl Faults {
    pub fn new(set: &[Fault]) -> Faults {
        Faults {
            set: set.to_vec(),
            tool_lists: AtomicU64::new(0),
            handshakes: AtomicU64::new(0),
            leaked: std::sync::Mutex::new(Vec::new()),
            crashed: std::sync::atomic::AtomicBool::new(false),
        }
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
    /// something first. `stateless` says the modern era answers it.
    pub fn before(
        &self,
        method: &str,
        params: &mut Option<Value>,
        stateless: bool,
        notifier: &Notifier,
    ) -> Option<RpcError> {
        if self.has(Fault::SseGarbage) && method != m::INITIALIZE {
            notifier.send(b"this is not JSON".to_vec());
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

    /// The encoded reply, bent by the faults that concern it.
    pub fn reply(&self, asked: &Asked, bytes: Vec<u8>) -> Vec<u8> {
        let Ok(mut msg) = serde_json::from_slice::<Value>(&bytes) else {
            return bytes;
        };
        if let Some(result) = msg.get_mut("result") {
            self.bend_result(asked, result);
        }
        if self.has(Fault::WrongErrorCodes) {
            if let Some(code) = msg.get_mut("error").and_then(|e| e.get_mut("code")) {
                let right = [
                    codes::PARSE_ERROR,
                    codes::INVALID_REQUEST,
                    codes::METHOD_NOT_FOUND,
                ];
                if right
                    .iter()
                    .chain([&codes::INVALID_PARAMS])
                    .any(|c| code == c)
                {
                    *code = json!(codes::INTERNAL_ERROR);
                }
            }
        }
        if asked.method == m::TOOLS_LIST {
            if self.has(Fault::WrongJsonrpc) {
                msg["jsonrpc"] = json!("1.0");
            }
            if self.has(Fault::ResultAndError) {
                msg["error"] = json!({"code": codes::INTERNAL_ERROR, "message": "and an error"});
            }
            if self.has(Fault::WrongId) {
                msg["id"] = match msg.get("id").and_then(Value::as_i64) {
                    Some(n) => json!(n + 1000),
                    None => json!("not-your-id"),
                };
            }
        }
        serde_json::to_vec(&msg).unwrap_or(bytes)
    }

    fn bend_result(&self, asked: &Asked, result: &mut Value) {
        match asked.method.as_str() {
            m::INITIALIZE | m::SERVER_DISCOVER => {
                if self.has(Fault::CapabilitiesNotObject) {
                    result["capabilities"] = json!([]);
                }
                if let Some(caps) = result
                    .get_mut("capabilities")
                    .and_then(Value::as_object_mut)
                {
                    if self.has(Fault::UndeclaredPrompts) {
                        caps.remove("prompts");
                    }
                    if self.has(Fault::UndeclaredTools) {
                        caps.remove("tools");
                    }
                    if self.has(Fault::UndeclaredResourcesError) {
                        caps.remove("resources");
                    }
                    let n = self.handshakes.fetch_add(1, Ordering::Relaxed);
                    if self.has(Fault::FlappingCapabilities) && n % 2 == 1 {
                        caps.remove("completions");
                    }
                }
                if self.has(Fault::NoServerInfoVersion) {
                    if let Some(info) = result.get_mut("serverInfo").and_then(Value::as_object_mut)
                    {
                        info.remove("version");
                    }
                }
                if self.has(Fault::UnknownVersion) && asked.method == m::INITIALIZE {
                    result["protocolVersion"] = json!("2099-12-31");
                }
                if let (true, Some(v)) = (self.has(Fault::EchoVersion), &asked.version) {
                    result["protocolVersion"] = json!(v);
                }
            }
            m::TOOLS_LIST => self.bend_tools(result),
            m::TOOLS_CALL
                if asked.tool.as_deref() == Some("add")
                    && self.has(Fault::BadStructuredContent) =>
            {
                result["structuredContent"] = json!({"sum": "three"});
            }
            _ => {}
        }
    }

    fn bend_tools(&self, result: &mut Value) {
        let n = self.tool_lists.fetch_add(1, Ordering::Relaxed);
        if self.has(Fault::PaginationLoop) {
            result["nextCursor"] = json!("loop");
        }
        if self.has(Fault::EmptyCursor) {
            result["nextCursor"] = json!("");
        }
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        if self.has(Fault::DuplicateTools) {
            if let Some(first) = tools.first().cloned() {
                tools.push(first);
            }
        }
        if let Some(first) = tools.first_mut() {
            if self.has(Fault::BadInputSchema) {
                first["inputSchema"] = json!({"type": "string"});
            }
            if self.has(Fault::ToolsDrift) && n % 2 == 1 {
                first["inputSchema"]["properties"]["drift"] = json!({"type": "string"});
            }
        }
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
