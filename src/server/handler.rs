//! The transport-independent core of the reference server: one parsed message in, at most
//! one encoded reply out. Two eras share the era-neutral `dispatch`: the legacy lifecycle
//! (version negotiation, "not initialized", server→client requests) kept per [`Session`],
//! and stateless 2026-07-28 requests whose `params._meta` carries everything (version,
//! client capabilities), answered with `resultType`, `serverInfo` and caching hints.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, oneshot};

use super::catalog::{self, Catalog, Listing, Prompt, Tool};
use super::{Eras, ServerOptions};
use crate::protocol::jsonrpc::{
    codes, encode_notification, encode_request, encode_response, Malformed,
};
use crate::protocol::methods as m;
use crate::protocol::version::{legacy_versions, LATEST_LEGACY, LATEST_MODERN};
use crate::protocol::{Incoming, RequestId, RpcError};

/// Methods the server answers that the shared method table has no constant for (the
/// client side never sends them on its hot path).
const LOGGING_SET_LEVEL: &str = "logging/setLevel";
const COMPLETION_COMPLETE: &str = "completion/complete";
pub const SERVER_DISCOVER: &str = "server/discover";
const SAMPLING_CREATE: &str = "sampling/createMessage";
const ELICITATION_CREATE: &str = "elicitation/create";
const ROOTS_LIST: &str = "roots/list";

/// `params._meta` keys of the 2026-07-28 era.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Error codes of the 2026-07-28 era.
pub mod modern_codes {
    pub const HEADER_MISMATCH: i64 = -32020;
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// Methods a 2026-07-28 request may name here; anything else is -32601 (`ping` and
/// `logging/setLevel` no longer exist in that era).
const MODERN_METHODS: [&str; 9] = [
    SERVER_DISCOVER,
    m::TOOLS_LIST,
    m::TOOLS_CALL,
    m::RESOURCES_LIST,
    m::RESOURCES_TEMPLATES_LIST,
    m::RESOURCES_READ,
    m::PROMPTS_LIST,
    m::PROMPTS_GET,
    COMPLETION_COMPLETE,
];
/// Results that carry `ttlMs` / `cacheScope` in the modern era.
const CACHEABLE: [&str; 6] = [
    SERVER_DISCOVER,
    m::TOOLS_LIST,
    m::RESOURCES_LIST,
    m::RESOURCES_TEMPLATES_LIST,
    m::PROMPTS_LIST,
    m::RESOURCES_READ,
];
/// Freshness of cacheable results: the catalog never really changes.
const CACHE_TTL_MS: u64 = 60_000;
/// How long a legacy `ask_*` tool waits for the client's answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(30);

const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];
/// Languages offered by `completion/complete` for the `review` prompt.
const LANGUAGES: [&str; 8] = [
    "c",
    "cpp",
    "go",
    "java",
    "javascript",
    "python",
    "rust",
    "typescript",
];
const MAX_SLEEP_MS: u64 = 60_000;
const MAX_PROGRESS_STEPS: u64 = 100;

type Answered = Result<Value, RpcError>;

/// Lifecycle state of one client connection (a stdio process or an HTTP session): the
/// negotiated version and capabilities, written once by `initialize`, and the server's own
/// requests to the client that await an answer.
#[derive(Debug, Default)]
pub struct Session {
    version: OnceLock<&'static str>,
    client_capabilities: OnceLock<Value>,
    client_initialized: AtomicBool,
    next_event_id: AtomicU64,
    next_request_id: AtomicU64,
    /// Server→client requests in flight, by the id the server gave them.
    pending: Mutex<HashMap<u64, oneshot::Sender<Answered>>>,
    /// The stream for messages unrelated to any request (the HTTP standalone GET stream).
    standalone: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
}

/// Why a server→client request got no result.
enum AskFailure {
    /// The client answered with a JSON-RPC error.
    Client(RpcError),
    Timeout,
    /// No way to reach the client (no stream, or it went away).
    Unreachable,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// The negotiated protocol version, once `initialize` has been answered.
    pub fn version(&self) -> Option<&'static str> {
        self.version.get().copied()
    }

    /// Whether the client has sent `notifications/initialized`.
    pub fn client_initialized(&self) -> bool {
        self.client_initialized.load(Ordering::Relaxed)
    }

    /// A fresh number, unique within the session; HTTP numbers its SSE streams with it
    /// (event ids are `<stream>-<n>`), as resumption requires.
    pub fn next_event_id(&self) -> u64 {
        self.next_event_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Hand the client's response to the server request it answers. Returns whether a
    /// request was waiting for it (late and unknown answers are dropped).
    pub fn deliver(&self, id: Option<&RequestId>, outcome: Answered) -> bool {
        let Some(id) = id.and_then(RequestId::as_own) else {
            return false;
        };
        let waiting = lock(&self.pending).remove(&id);
        waiting.is_some_and(|tx| tx.send(outcome).is_ok())
    }

    /// Install the standalone stream; `false` if one is already open (HTTP answers 409).
    pub fn open_standalone(&self, tx: mpsc::UnboundedSender<Vec<u8>>) -> bool {
        let mut slot = lock(&self.standalone);
        if slot.as_ref().is_some_and(|open| !open.is_closed()) {
            return false;
        }
        *slot = Some(tx);
        true
    }

    /// Whether a standalone stream is open.
    pub fn has_standalone(&self) -> bool {
        lock(&self.standalone)
            .as_ref()
            .is_some_and(|tx| !tx.is_closed())
    }

    /// Send on the standalone stream; `false` if none is open.
    fn send_standalone(&self, message: Vec<u8>) -> bool {
        lock(&self.standalone)
            .as_ref()
            .is_some_and(|tx| tx.send(message).is_ok())
    }

    fn declared(&self, capability: &str) -> bool {
        self.client_capabilities
            .get()
            .is_some_and(|caps| declares(caps, capability))
    }

    /// Send a request to the client on `notifier`'s stream and wait (bounded) for the
    /// answer that comes back through [`Session::deliver`].
    async fn ask(
        &self,
        notifier: &Notifier,
        method: &str,
        params: &Value,
    ) -> Result<Value, AskFailure> {
        let Some(tx) = &notifier.0 else {
            return Err(AskFailure::Unreachable);
        };
        let id = self.next_request_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (answer_tx, answer_rx) = oneshot::channel();
        lock(&self.pending).insert(id, answer_tx);
        // Forget the request however this ends (answer, timeout, the caller going away).
        struct Forget<'a>(&'a Session, u64);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                lock(&self.0.pending).remove(&self.1);
            }
        }
        let _forget = Forget(self, id);
        if tx.send(encode_request(id, method, Some(params))).is_err() {
            return Err(AskFailure::Unreachable);
        }
        match tokio::time::timeout(ASK_TIMEOUT, answer_rx).await {
            Ok(Ok(outcome)) => outcome.map_err(AskFailure::Client),
            Ok(Err(_)) => Err(AskFailure::Unreachable),
            Err(_) => Err(AskFailure::Timeout),
        }
    }
}

/// A poisoned lock only means another request panicked mid-update; the data is usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `caps` (a `ClientCapabilities` object) declares `capability`. Elicitation must
/// allow form mode: `{}` means form, `{url: {}}` alone does not.
fn declares(caps: &Value, capability: &str) -> bool {
    match caps.get(capability) {
        Some(Value::Object(c)) if capability == "elicitation" => {
            c.is_empty() || c.contains_key("form")
        }
        Some(Value::Object(_)) => true,
        _ => false,
    }
}

/// Where a request's messages to the client go while it runs (progress notifications,
/// server→client requests): the outbound queue on stdio/ws/sse, the request's SSE stream
/// on HTTP, or nowhere (plain JSON responses).
#[derive(Debug, Clone, Default)]
pub struct Notifier(Option<mpsc::UnboundedSender<Vec<u8>>>);

impl Notifier {
    pub fn new(tx: mpsc::UnboundedSender<Vec<u8>>) -> Notifier {
        Notifier(Some(tx))
    }

    pub fn none() -> Notifier {
        Notifier(None)
    }

    fn send(&self, message: Vec<u8>) {
        if let Some(tx) = &self.0 {
            // A closed receiver means the client went away; the result is dropped anyway.
            let _ = tx.send(message);
        }
    }
}

/// A successful result: pre-serialized JSON from the catalog, or built per request.
enum Answer<'a> {
    Static(&'a str),
    Owned(String),
    Value(Value),
}

/// One encoded reply, with its error code when it is an error (HTTP maps modern error
/// codes to statuses).
#[derive(Debug)]
pub struct Reply {
    pub bytes: Vec<u8>,
    pub error: Option<i64>,
}

/// What a request runs against: a legacy session (which may be asked things), or the
/// capabilities a stateless request declared in its `_meta`.
enum Ctx<'a> {
    Legacy {
        session: &'a Session,
        notifier: &'a Notifier,
    },
    Modern {
        caps: &'a Value,
        notifier: &'a Notifier,
    },
}

impl Ctx<'_> {
    fn notifier(&self) -> &Notifier {
        match self {
            Ctx::Legacy { notifier, .. } | Ctx::Modern { notifier, .. } => notifier,
        }
    }
}

/// The shared, immutable part of the server: catalog and pre-built answers.
#[derive(Debug)]
pub struct Handler {
    catalog: Catalog,
    eras: Eras,
    /// The initialize result minus its leading `{"protocolVersion":"…"`, which is the only
    /// part that varies.
    init_tail: String,
    /// Members every modern result starts with: `resultType` and `_meta.serverInfo`.
    modern_members: String,
    /// `modern_members` plus the caching hints.
    cached_members: String,
    /// The complete `server/discover` result.
    discover: String,
    /// `supportedVersions`: the modern version, then the legacy ones when served.
    supported: Vec<&'static str>,
    server_info: Value,
}

impl Handler {
    pub fn new(opts: &ServerOptions) -> Handler {
        let server_info = json!({
            "name": opts.name,
            "version": env!("CARGO_PKG_VERSION"),
            "title": "mcp-fleet reference server",
        });
        let instructions = "Reference MCP server of mcp-fleet. Tools: echo, add, sleep, fail, \
             progress, ask_sampling, ask_elicitation, ask_roots, notify_list_changed. \
             Resources fleet://resources/1..25. Prompts: greeting, review.";
        let rest = json!({
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": false, "listChanged": true},
                "prompts": {"listChanged": true},
                "logging": {},
                "completions": {},
            },
            "serverInfo": server_info,
            "instructions": instructions,
        })
        .to_string();
        // `rest` is `{...}`: drop its `{` so it can follow the version member.
        let init_tail = format!(",{}", rest.get(1..).unwrap_or("}"));
        let mut supported = vec![LATEST_MODERN];
        if opts.eras.legacy() {
            supported.extend(legacy_versions());
        }
        let modern_members = format!(
            "\"resultType\":\"complete\",\"_meta\":{}",
            json!({ META_SERVER_INFO: server_info })
        );
        let cached_members =
            format!("{modern_members},\"ttlMs\":{CACHE_TTL_MS},\"cacheScope\":\"public\"");
        let discover = json!({
            "supportedVersions": supported,
            // No logging: `logging/setLevel` is gone and this server never logs.
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"listChanged": true},
                "prompts": {"listChanged": true},
                "completions": {},
            },
            "instructions": instructions,
        })
        .to_string();
        let discover = splice(&cached_members, &discover);
        Handler {
            catalog: Catalog::new(opts.page_size),
            eras: opts.eras,
            init_tail,
            modern_members,
            cached_members,
            discover,
            supported,
            server_info,
        }
    }

    /// Whether `msg` is a stateless (2026-07-28) request here: its `_meta` names a
    /// protocol version, or it is `server/discover` (which only that era has), and the
    /// modern era is served. In a modern-only server every request is stateless.
    pub fn is_stateless(&self, msg: &Incoming) -> bool {
        match msg {
            Incoming::Request { method, params, .. } => {
                self.eras == Eras::Modern || self.stateless(method, params.as_ref())
            }
            _ => false,
        }
    }

    /// Whether the modern era answers this request (else the legacy lifecycle does, which
    /// refuses everything in a modern-only server).
    fn stateless(&self, method: &str, params: Option<&Value>) -> bool {
        self.eras.modern()
            && method != m::INITIALIZE
            && (method == SERVER_DISCOVER || has_modern_meta(params))
    }

    /// Whether a request should be answered on an SSE stream even when the transport would
    /// otherwise send plain JSON: the `progress` tool streams its notifications, and legacy
    /// tools that talk to the client need a stream to do it on.
    pub fn wants_stream(msg: &Incoming) -> bool {
        let Incoming::Request { method, params, .. } = msg else {
            return false;
        };
        if method != m::TOOLS_CALL {
            return false;
        }
        let tool = params
            .as_ref()
            .and_then(|p| p.get("name"))
            .and_then(Value::as_str)
            .and_then(Tool::from_name);
        match tool {
            Some(Tool::Progress) => true,
            Some(Tool::AskSampling | Tool::AskElicitation | Tool::AskRoots)
            | Some(Tool::NotifyListChanged) => !has_modern_meta(params.as_ref()),
            _ => false,
        }
    }

    /// Handle one message of `session`. Requests get a reply; notifications and client
    /// responses get none (a response is handed to the server request awaiting it).
    pub async fn handle(
        &self,
        session: &Session,
        msg: Incoming,
        notifier: &Notifier,
    ) -> Option<Vec<u8>> {
        self.answer(session, msg, notifier).await.map(|r| r.bytes)
    }

    /// [`Handler::handle`], keeping the error code of an error reply.
    pub async fn answer(
        &self,
        session: &Session,
        msg: Incoming,
        notifier: &Notifier,
    ) -> Option<Reply> {
        match msg {
            Incoming::Request { id, method, params } => {
                let stateless = self.stateless(&method, params.as_ref());
                let outcome = if stateless {
                    self.modern(&method, params, notifier).await
                } else {
                    self.request(session, &method, params, notifier).await
                };
                let error = outcome.as_ref().err().map(|e| e.code);
                Some(Reply {
                    bytes: encode(&id, outcome),
                    error,
                })
            }
            Incoming::Notification { method, .. } => {
                if method == m::INITIALIZED {
                    session.client_initialized.store(true, Ordering::Relaxed);
                }
                // Cancellation and everything else is accepted and ignored: no request
                // here holds resources worth reclaiming early.
                None
            }
            Incoming::Response { id, outcome } => {
                session.deliver(id.as_ref(), outcome);
                None
            }
        }
    }

    /// The legacy lifecycle gate in front of [`Handler::dispatch`].
    async fn request(
        &self,
        session: &Session,
        method: &str,
        params: Option<Value>,
        notifier: &Notifier,
    ) -> Result<Answer<'_>, RpcError> {
        if !self.eras.legacy() {
            return Err(rpc_error(
                codes::INVALID_REQUEST,
                format!(
                    "Unsupported protocol era: this server speaks only {LATEST_MODERN} \
                     (no initialize; send server/discover and per-request _meta). \
                     Supported versions: {LATEST_MODERN}"
                ),
            ));
        }
        match method {
            m::INITIALIZE => self.initialize(session, params.as_ref()),
            m::PING => Ok(Answer::Static("{}")),
            // A legacy-only server has never heard of it, initialized or not.
            SERVER_DISCOVER => Err(method_not_found()),
            _ if session.version().is_none() => {
                Err(rpc_error(codes::INVALID_REQUEST, "Server not initialized"))
            }
            _ => {
                let ctx = Ctx::Legacy { session, notifier };
                let params = params.unwrap_or(Value::Null);
                self.dispatch(&ctx, method, &params).await
            }
        }
    }

    fn initialize(
        &self,
        session: &Session,
        params: Option<&Value>,
    ) -> Result<Answer<'_>, RpcError> {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_params("initialize needs params.protocolVersion (a string)"))?;
        let version = negotiate(requested);
        if session.version.set(version).is_err() {
            return Err(rpc_error(
                codes::INVALID_REQUEST,
                "Server already initialized",
            ));
        }
        let caps = params
            .and_then(|p| p.get("capabilities"))
            .filter(|c| c.is_object())
            .cloned()
            .unwrap_or_else(|| json!({}));
        let _ = session.client_capabilities.set(caps);
        Ok(Answer::Owned(format!(
            "{{\"protocolVersion\":\"{version}\"{}",
            self.init_tail
        )))
    }

    /// A stateless request: check its `_meta` and method, run it, dress the result.
    async fn modern(
        &self,
        method: &str,
        params: Option<Value>,
        notifier: &Notifier,
    ) -> Result<Answer<'_>, RpcError> {
        let params = params.unwrap_or(Value::Null);
        let caps = self.modern_check(method, &params)?;
        if method == SERVER_DISCOVER {
            return Ok(Answer::Static(&self.discover));
        }
        let ctx = Ctx::Modern { caps, notifier };
        let answer = self.dispatch(&ctx, method, &params).await?;
        let members = if CACHEABLE.contains(&method) {
            &self.cached_members
        } else {
            &self.modern_members
        };
        Ok(match answer {
            Answer::Static(s) => Answer::Owned(splice(members, s)),
            Answer::Owned(s) => Answer::Owned(splice(members, &s)),
            Answer::Value(v) => Answer::Value(self.dress(v, CACHEABLE.contains(&method))),
        })
    }

    /// What makes a stateless request unanswerable before it runs: a missing or
    /// unsupported `_meta` version (-32602 / -32022), missing client capabilities
    /// (-32602), or a method this era lacks (-32601). Returns the declared capabilities.
    pub fn modern_check<'p>(&self, method: &str, params: &'p Value) -> Result<&'p Value, RpcError> {
        let meta = params.get("_meta");
        let version = meta
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .ok_or_else(|| {
                invalid_params(format!(
                    "params._meta[\"{META_PROTOCOL_VERSION}\"] is required"
                ))
            })?;
        let Some(version) = version.as_str() else {
            return Err(invalid_params(format!(
                "params._meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
            )));
        };
        if version != LATEST_MODERN {
            return Err(RpcError {
                code: modern_codes::UNSUPPORTED_PROTOCOL_VERSION,
                message: "Unsupported protocol version".into(),
                data: Some(json!({"supported": self.supported, "requested": version})),
            });
        }
        let caps = meta
            .and_then(|m| m.get(META_CLIENT_CAPABILITIES))
            .filter(|c| c.is_object())
            .ok_or_else(|| {
                invalid_params(format!(
                    "params._meta[\"{META_CLIENT_CAPABILITIES}\"] is required (an object)"
                ))
            })?;
        if !MODERN_METHODS.contains(&method) {
            return Err(method_not_found());
        }
        Ok(caps)
    }

    /// Add `resultType` (unless set), `_meta.serverInfo` and, when cacheable, the hints.
    fn dress(&self, mut value: Value, cacheable: bool) -> Value {
        if let Value::Object(map) = &mut value {
            map.entry("resultType").or_insert_with(|| json!("complete"));
            let meta = map.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(meta) = meta {
                meta.insert(META_SERVER_INFO.into(), self.server_info.clone());
            }
            if cacheable {
                map.insert("ttlMs".into(), json!(CACHE_TTL_MS));
                map.insert("cacheScope".into(), json!("public"));
            }
        }
        value
    }

    /// The operations every era shares, after the lifecycle has been checked.
    async fn dispatch(
        &self,
        ctx: &Ctx<'_>,
        method: &str,
        params: &Value,
    ) -> Result<Answer<'_>, RpcError> {
        match method {
            m::PING => Ok(Answer::Static("{}")),
            m::TOOLS_LIST => page(&self.catalog.tools, params),
            m::RESOURCES_LIST => page(&self.catalog.resources, params),
            m::RESOURCES_TEMPLATES_LIST => page(&self.catalog.templates, params),
            m::PROMPTS_LIST => page(&self.catalog.prompts, params),
            m::TOOLS_CALL => call_tool(ctx, params).await.map(Answer::Value),
            m::RESOURCES_READ => self.read_resource(ctx, params),
            m::PROMPTS_GET => get_prompt(params).map(Answer::Value),
            LOGGING_SET_LEVEL => match params.get("level").and_then(Value::as_str) {
                Some(level) if LOG_LEVELS.contains(&level) => Ok(Answer::Static("{}")),
                _ => Err(invalid_params("level must be a syslog level name")),
            },
            COMPLETION_COMPLETE => Ok(Answer::Value(complete(params))),
            _ => Err(method_not_found()),
        }
    }

    fn read_resource(&self, ctx: &Ctx<'_>, params: &Value) -> Result<Answer<'_>, RpcError> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_params("resources/read needs params.uri (a string)"))?;
        // Resource not found: -32002 until 2025-11-25, -32602 from 2026-07-28.
        let code = match ctx {
            Ctx::Legacy { .. } => codes::RESOURCE_NOT_FOUND,
            Ctx::Modern { .. } => codes::INVALID_PARAMS,
        };
        catalog::resource_number(uri)
            .and_then(|n| self.catalog.read(n))
            .map(Answer::Static)
            .ok_or_else(|| RpcError {
                code,
                message: "Resource not found".into(),
                data: Some(json!({ "uri": uri })),
            })
    }
}

fn has_modern_meta(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .is_some_and(|meta| meta.get(META_PROTOCOL_VERSION).is_some())
}

/// Put `members` (serialized object members) in front of those of the object `object`.
fn splice(members: &str, object: &str) -> String {
    let rest = object.strip_prefix('{').unwrap_or("}");
    if rest.trim_start().starts_with('}') {
        format!("{{{members}}}")
    } else {
        format!("{{{members},{rest}")
    }
}

/// Echo a legacy version we speak; otherwise counter-offer our latest (a result, not an
/// error, as the legacy spec and the SDK servers do).
pub fn negotiate(requested: &str) -> &'static str {
    legacy_versions()
        .find(|v| *v == requested)
        .unwrap_or(LATEST_LEGACY)
}

fn page<'a>(listing: &'a Listing, params: &Value) -> Result<Answer<'a>, RpcError> {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => return Err(invalid_params("cursor must be a string")),
    };
    listing
        .page(cursor)
        .map(Answer::Static)
        .ok_or_else(|| invalid_params("Invalid cursor"))
}

async fn call_tool(ctx: &Ctx<'_>, params: &Value) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("tools/call needs params.name (a string)"))?;
    let tool =
        Tool::from_name(name).ok_or_else(|| invalid_params(format!("Unknown tool: {name}")))?;
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return Err(invalid_params("arguments must be an object")),
    };
    match tool {
        Tool::Echo => {
            let message = args
                .get("message")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid_params("echo needs `message` (a string)"))?;
            Ok(text_result(message))
        }
        Tool::Add => {
            let (a, b) = (number_arg(args, "a")?, number_arg(args, "b")?);
            // Keep integers integral ("3", not "3.0") when both operands are integers.
            let sum = match (a.as_i64(), b.as_i64()) {
                (Some(x), Some(y)) if x.checked_add(y).is_some() => json!(x + y),
                _ => json!(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
            };
            let text = json!({ "sum": sum }).to_string();
            Ok(json!({"content": [{"type": "text", "text": text}],
                      "structuredContent": {"sum": sum}}))
        }
        Tool::Sleep => {
            let ms = integer_arg(args, "ms", None, 0, MAX_SLEEP_MS)?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(text_result(&format!("slept {ms} ms")))
        }
        Tool::Fail => Ok(error_result("The fail tool always fails, on purpose.")),
        Tool::Progress => {
            let steps = integer_arg(args, "steps", Some(3), 1, MAX_PROGRESS_STEPS)?;
            let token = params.get("_meta").and_then(|m| m.get("progressToken"));
            if let Some(token) = token {
                for i in 1..=steps {
                    let note = json!({"progressToken": token, "progress": i, "total": steps});
                    ctx.notifier()
                        .send(encode_notification(m::PROGRESS, Some(&note)));
                }
            }
            Ok(text_result(&format!("completed {steps} steps")))
        }
        Tool::AskSampling | Tool::AskElicitation | Tool::AskRoots => {
            let question = Question::new(tool, args)?;
            match ctx {
                Ctx::Legacy { session, notifier } => Ok(question.ask(session, notifier).await),
                Ctx::Modern { caps, .. } => question.round_trip(caps, args, params),
            }
        }
        Tool::NotifyListChanged => {
            let list = match args.get("list") {
                None | Some(Value::Null) => "tools",
                Some(Value::String(l))
                    if ["tools", "prompts", "resources"].contains(&l.as_str()) =>
                {
                    l.as_str()
                }
                Some(_) => {
                    return Err(invalid_params(
                        "`list` must be one of \"tools\", \"prompts\", \"resources\"",
                    ))
                }
            };
            match ctx {
                Ctx::Legacy { session, notifier } => {
                    let method = format!("notifications/{list}/list_changed");
                    let note = encode_notification(&method, None);
                    // Unrelated to this request: the standalone stream when one is open.
                    if !session.send_standalone(note.clone()) {
                        notifier.send(note);
                    }
                    Ok(text_result("sent"))
                }
                // No `subscriptions/listen` here, so there is nowhere to send it.
                Ctx::Modern { .. } => Ok(text_result(
                    "not sent: in 2026-07-28 list_changed travels on subscriptions/listen, \
                     which this server does not offer",
                )),
            }
        }
    }
}

/// What an `ask_*` tool asks the client: the request, and how to read the answer.
struct Question {
    tool: Tool,
    /// The client capability needed, and the `inputRequests` key in the modern era.
    capability: &'static str,
    method: &'static str,
    params: Value,
}

impl Question {
    fn new(tool: Tool, args: &Map<String, Value>) -> Result<Question, RpcError> {
        let (capability, method, params) = match tool {
            Tool::AskSampling => {
                let prompt = args
                    .get("prompt")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid_params("ask_sampling needs `prompt` (a string)"))?;
                let params = json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                    "maxTokens": 64,
                });
                ("sampling", SAMPLING_CREATE, params)
            }
            Tool::AskElicitation => {
                let message = match args.get("message") {
                    None | Some(Value::Null) => "Please tell us about yourself.",
                    Some(Value::String(s)) => s.as_str(),
                    Some(_) => return Err(invalid_params("`message` must be a string")),
                };
                let params = json!({"mode": "form", "message": message,
                                    "requestedSchema": catalog::elicitation_schema()});
                ("elicitation", ELICITATION_CREATE, params)
            }
            _ => ("roots", ROOTS_LIST, json!({})),
        };
        Ok(Question {
            tool,
            capability,
            method,
            params,
        })
    }

    /// Legacy: a real request on the tools/call's stream, awaited (bounded).
    async fn ask(&self, session: &Session, notifier: &Notifier) -> Value {
        if !session.declared(self.capability) {
            return error_result(&format!(
                "the client did not declare the `{}` capability in initialize, so the \
                 server cannot send {}",
                self.capability, self.method
            ));
        }
        match session.ask(notifier, self.method, &self.params).await {
            Ok(answer) => self.conclude(&answer),
            Err(AskFailure::Client(e)) => error_result(&format!(
                "the client answered {} with error {}: {}",
                self.method, e.code, e.message
            )),
            Err(AskFailure::Timeout) => error_result(&format!(
                "no answer to {} within {} s",
                self.method,
                ASK_TIMEOUT.as_secs()
            )),
            Err(AskFailure::Unreachable) => {
                error_result(&format!("cannot reach the client to send {}", self.method))
            }
        }
    }

    /// Modern (Multi Round-Trip Request): without an answer, say what input is required;
    /// with one, finish. The request state carries the tool and arguments it was issued
    /// for, so a retry of a different call is caught without any server-side memory.
    fn round_trip(
        &self,
        caps: &Value,
        args: &Map<String, Value>,
        params: &Value,
    ) -> Result<Value, RpcError> {
        if !declares(caps, self.capability) {
            let required = match self.capability {
                "elicitation" => json!({"elicitation": {"form": {}}}),
                other => json!({ other: {} }),
            };
            return Err(RpcError {
                code: modern_codes::MISSING_CLIENT_CAPABILITY,
                message: format!(
                    "Missing required client capability: {} needs `{}`",
                    self.tool.name(),
                    self.capability
                ),
                data: Some(json!({ "requiredCapabilities": required })),
            });
        }
        let state = json!({"v": 1, "tool": self.tool.name(), "arguments": args});
        let Some(responses) = params.get("inputResponses").filter(|r| !r.is_null()) else {
            return Ok(json!({
                "resultType": "input_required",
                "inputRequests": {
                    self.capability: {"method": self.method, "params": self.params},
                },
                "requestState": hex_encode(state.to_string().as_bytes()),
            }));
        };
        let echoed = params
            .get("requestState")
            .and_then(Value::as_str)
            .and_then(hex_decode)
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
        if echoed.as_ref() != Some(&state) {
            return Err(invalid_params(
                "requestState is missing, altered, or from another call",
            ));
        }
        let answer = responses
            .get(self.capability)
            .ok_or_else(|| invalid_params(format!("inputResponses lacks `{}`", self.capability)))?;
        Ok(self.conclude(answer))
    }

    /// The tool result for the client's answer.
    fn conclude(&self, answer: &Value) -> Value {
        match self.tool {
            Tool::AskSampling => {
                // `content` is one block, or (2025-11-25) an array of blocks.
                let content = answer.get("content");
                let text = match content {
                    Some(Value::Array(blocks)) => blocks
                        .iter()
                        .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                        .and_then(|b| b.get("text")),
                    other => other.and_then(|b| b.get("text")),
                };
                match text.and_then(Value::as_str) {
                    Some(text) => text_result(text),
                    None => error_result("the sampling result has no text content"),
                }
            }
            Tool::AskElicitation => {
                let action = answer.get("action").and_then(Value::as_str);
                let content = answer.get("content").filter(|c| !c.is_null());
                match action {
                    Some("accept") => match catalog::check_elicited(content) {
                        Ok(()) => {
                            let content = content.cloned().unwrap_or(Value::Null);
                            json!({
                                "content": [{"type": "text",
                                             "text": format!("action=accept content={content}")}],
                                "structuredContent": {"action": "accept", "content": content},
                            })
                        }
                        Err(reason) => error_result(&format!(
                            "accepted content does not match the requested schema: {reason}"
                        )),
                    },
                    Some(action @ ("decline" | "cancel")) => json!({
                        "content": [{"type": "text", "text": format!("action={action}")}],
                        "structuredContent": {"action": action},
                    }),
                    _ => error_result(
                        "the elicitation result's action must be accept, decline or cancel",
                    ),
                }
            }
            _ => {
                let Some(roots) = answer.get("roots").and_then(Value::as_array) else {
                    return error_result("the roots/list result has no `roots` array");
                };
                let uris: Vec<&str> = roots
                    .iter()
                    .filter_map(|r| r.get("uri").and_then(Value::as_str))
                    .collect();
                let mut text = format!("{} roots", roots.len());
                if !uris.is_empty() {
                    text.push_str(": ");
                    text.push_str(&uris.join(", "));
                }
                json!({"content": [{"type": "text", "text": text}],
                       "structuredContent": {"count": roots.len(), "uris": uris}})
            }
        }
    }
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn number_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a Value, RpcError> {
    args.get(key)
        .filter(|v| v.is_number())
        .ok_or_else(|| invalid_params(format!("`{key}` must be a number")))
}

fn integer_arg(
    args: &Map<String, Value>,
    key: &str,
    default: Option<u64>,
    min: u64,
    max: u64,
) -> Result<u64, RpcError> {
    let value = match (args.get(key), default) {
        (None, Some(d)) => d,
        (v, _) => v
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid_params(format!("`{key}` must be an integer")))?,
    };
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(invalid_params(format!(
            "`{key}` must be between {min} and {max}"
        )))
    }
}

fn get_prompt(params: &Value) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("prompts/get needs params.name (a string)"))?;
    let prompt =
        Prompt::from_name(name).ok_or_else(|| invalid_params(format!("Unknown prompt: {name}")))?;
    let args = params.get("arguments");
    let arg = |key: &str| -> Result<Option<&str>, RpcError> {
        match args.and_then(|a| a.get(key)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid_params(format!("argument `{key}` must be a string"))),
        }
    };
    for (key, required) in prompt.arguments() {
        if *required && arg(key)?.is_none() {
            return Err(invalid_params(format!(
                "prompt `{name}` needs the argument `{key}`"
            )));
        }
    }
    let text = match prompt {
        Prompt::Greeting => format!("Please greet {} warmly.", arg("name")?.unwrap_or_default()),
        Prompt::Review => {
            let code = arg("code")?.unwrap_or_default();
            match arg("language")? {
                Some(lang) => format!("Please review this {lang} code:\n\n{code}"),
                None => format!("Please review this code:\n\n{code}"),
            }
        }
    };
    Ok(json!({"description": prompt.description(),
              "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}))
}

/// `completion/complete`: language names for the `review` prompt, nothing elsewhere.
fn complete(params: &Value) -> Value {
    let is_review = params.pointer("/ref/name").and_then(Value::as_str) == Some("review");
    let argument = params.pointer("/argument/name").and_then(Value::as_str);
    let prefix = params
        .pointer("/argument/value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let values: Vec<&str> = if is_review && argument == Some("language") {
        LANGUAGES
            .into_iter()
            .filter(|l| l.starts_with(prefix))
            .collect()
    } else {
        Vec::new()
    };
    json!({"completion": {"values": values, "total": values.len(), "hasMore": false}})
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// A tool execution error: a result with `isError`, not a protocol error.
fn error_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn method_not_found() -> RpcError {
    rpc_error(codes::METHOD_NOT_FOUND, "Method not found")
}

fn rpc_error(code: i64, message: impl Into<String>) -> RpcError {
    RpcError {
        code,
        message: message.into(),
        data: None,
    }
}

fn invalid_params(message: impl Into<String>) -> RpcError {
    rpc_error(codes::INVALID_PARAMS, message)
}

fn encode(id: &RequestId, outcome: Result<Answer<'_>, RpcError>) -> Vec<u8> {
    let raw = match outcome {
        Ok(Answer::Value(v)) => return encode_response(id, Ok(&v)),
        Err(e) => return encode_response(id, Err(&e)),
        Ok(Answer::Static(s)) => s,
        Ok(Answer::Owned(ref s)) => s.as_str(),
    };
    // Splice the pre-serialized result in rather than re-serializing it through `Value`.
    let id = serde_json::to_string(id).unwrap_or_else(|_| "null".into());
    let mut out = Vec::with_capacity(raw.len() + id.len() + 36);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(raw.as_bytes());
    out.push(b'}');
    out
}

/// An error reply with `"id": null`, for input that could not be read as a request.
pub fn error_without_id(code: i64, message: &str) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": null});
    body.to_string().into_bytes()
}

/// The reply to something that is not a JSON-RPC message: -32700 when it is not JSON at
/// all, -32600 when it is JSON of the wrong shape (including a batch).
pub fn malformed_reply(err: &Malformed) -> Vec<u8> {
    match err {
        Malformed::NotJson(_) => error_without_id(codes::PARSE_ERROR, "Parse error"),
        other => error_without_id(codes::INVALID_REQUEST, &format!("Invalid Request: {other}")),
    }
}

#[cfg(test)]
mod tests;
