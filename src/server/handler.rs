//! The transport-independent core of the reference server: one parsed message in, at most
//! one encoded reply out, with the legacy lifecycle (version negotiation, "not initialized")
//! kept per [`Session`]. Transports own framing only; a later era plugs in next to
//! [`Handler::handle`] and reuses its era-neutral `dispatch`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::catalog::{self, Catalog, Listing, Prompt, Tool};
use super::ServerOptions;
use crate::protocol::jsonrpc::{codes, encode_notification, encode_response, Malformed};
use crate::protocol::methods as m;
use crate::protocol::version::{legacy_versions, LATEST_LEGACY};
use crate::protocol::{Incoming, RequestId, RpcError};

/// Methods the server answers that the shared method table has no constant for (the
/// client side never sends them on its hot path).
const LOGGING_SET_LEVEL: &str = "logging/setLevel";
const COMPLETION_COMPLETE: &str = "completion/complete";
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

/// Lifecycle state of one client connection (a stdio process or an HTTP session).
/// Lock-free: the version is written once by `initialize` and read by every request.
#[derive(Debug, Default)]
pub struct Session {
    version: OnceLock<&'static str>,
    client_initialized: AtomicBool,
    next_event_id: AtomicU64,
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

    /// A fresh SSE event id, unique within the session as resumption requires.
    pub fn next_event_id(&self) -> u64 {
        self.next_event_id.fetch_add(1, Ordering::Relaxed)
    }
}

/// Where request-related notifications (progress) go while a request runs: the stdout
/// writer on stdio, the request's SSE stream on HTTP, or nowhere (plain JSON responses).
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

/// The shared, immutable part of the server: catalog and pre-built initialize answer.
#[derive(Debug)]
pub struct Handler {
    catalog: Catalog,
    /// The initialize result minus its leading `{"protocolVersion":"…"`, which is the only
    /// part that varies.
    init_tail: String,
}

impl Handler {
    pub fn new(opts: &ServerOptions) -> Handler {
        let rest = json!({
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": false, "listChanged": true},
                "prompts": {"listChanged": true},
                "logging": {},
                "completions": {},
            },
            "serverInfo": {
                "name": opts.name,
                "version": env!("CARGO_PKG_VERSION"),
                "title": "mcp-fleet reference server",
            },
            "instructions": "Reference MCP server of mcp-fleet. Tools: echo, add, sleep, fail, \
                             progress. Resources fleet://resources/1..25. Prompts: greeting, review.",
        })
        .to_string();
        // `rest` is `{...}`: drop its `{` so it can follow the version member.
        let init_tail = format!(",{}", rest.get(1..).unwrap_or("}"));
        Handler {
            catalog: Catalog::new(opts.page_size),
            init_tail,
        }
    }

    /// Whether a request should be answered on an SSE stream even when the transport would
    /// otherwise send plain JSON: the `progress` tool streams its notifications.
    pub fn wants_stream(msg: &Incoming) -> bool {
        match msg {
            Incoming::Request { method, params, .. } if method == m::TOOLS_CALL => {
                params
                    .as_ref()
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    == Some(Tool::Progress.name())
            }
            _ => false,
        }
    }

    /// Handle one message of `session`. Requests get a reply; notifications and client
    /// responses get none.
    pub async fn handle(
        &self,
        session: &Session,
        msg: Incoming,
        notifier: &Notifier,
    ) -> Option<Vec<u8>> {
        match msg {
            Incoming::Request { id, method, params } => {
                let outcome = self.request(session, &method, params, notifier).await;
                Some(encode(&id, outcome))
            }
            Incoming::Notification { method, .. } => {
                if method == m::INITIALIZED {
                    session.client_initialized.store(true, Ordering::Relaxed);
                }
                // Cancellation and everything else is accepted and ignored: no request
                // here holds resources worth reclaiming early.
                None
            }
            Incoming::Response { .. } => None,
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
        match method {
            m::INITIALIZE => self.initialize(session, params.as_ref()),
            m::PING => Ok(Answer::Static("{}")),
            _ if session.version().is_none() => {
                Err(rpc_error(codes::INVALID_REQUEST, "Server not initialized"))
            }
            _ => self.dispatch(method, params, notifier).await,
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
        Ok(Answer::Owned(format!(
            "{{\"protocolVersion\":\"{version}\"{}",
            self.init_tail
        )))
    }

    /// The operations every era shares, after the lifecycle has been checked.
    async fn dispatch(
        &self,
        method: &str,
        params: Option<Value>,
        notifier: &Notifier,
    ) -> Result<Answer<'_>, RpcError> {
        let params = params.unwrap_or(Value::Null);
        match method {
            m::PING => Ok(Answer::Static("{}")),
            m::TOOLS_LIST => page(&self.catalog.tools, &params),
            m::RESOURCES_LIST => page(&self.catalog.resources, &params),
            m::RESOURCES_TEMPLATES_LIST => page(&self.catalog.templates, &params),
            m::PROMPTS_LIST => page(&self.catalog.prompts, &params),
            m::TOOLS_CALL => call_tool(&params, notifier).await.map(Answer::Value),
            m::RESOURCES_READ => self.read_resource(&params),
            m::PROMPTS_GET => get_prompt(&params).map(Answer::Value),
            LOGGING_SET_LEVEL => match params.get("level").and_then(Value::as_str) {
                Some(level) if LOG_LEVELS.contains(&level) => Ok(Answer::Static("{}")),
                _ => Err(invalid_params("level must be a syslog level name")),
            },
            COMPLETION_COMPLETE => Ok(Answer::Value(complete(&params))),
            _ => Err(rpc_error(codes::METHOD_NOT_FOUND, "Method not found")),
        }
    }

    fn read_resource(&self, params: &Value) -> Result<Answer<'_>, RpcError> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid_params("resources/read needs params.uri (a string)"))?;
        catalog::resource_number(uri)
            .and_then(|n| self.catalog.read(n))
            .map(Answer::Static)
            .ok_or_else(|| RpcError {
                code: codes::RESOURCE_NOT_FOUND,
                message: "Resource not found".into(),
                data: Some(json!({ "uri": uri })),
            })
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

async fn call_tool(params: &Value, notifier: &Notifier) -> Result<Value, RpcError> {
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
        Tool::Fail => Ok(json!({
            "content": [{"type": "text", "text": "The fail tool always fails, on purpose."}],
            "isError": true,
        })),
        Tool::Progress => {
            let steps = integer_arg(args, "steps", Some(3), 1, MAX_PROGRESS_STEPS)?;
            let token = params.get("_meta").and_then(|m| m.get("progressToken"));
            if let Some(token) = token {
                for i in 1..=steps {
                    let note = json!({"progressToken": token, "progress": i, "total": steps});
                    notifier.send(encode_notification(m::PROGRESS, Some(&note)));
                }
            }
            Ok(text_result(&format!("completed {steps} steps")))
        }
    }
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
