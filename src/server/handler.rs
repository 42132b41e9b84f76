//! The transport-independent core of the reference server: one parsed message in, at most
//! one encoded reply out. Two eras share the era-neutral `dispatch`: the legacy lifecycle
//! (version negotiation, "not initialized", server→client requests) kept per [`Session`],
//! and stateless 2026-07-28 requests whose `params._meta` carries everything (version,
//! client capabilities), answered with `resultType`, `serverInfo` and caching hints.
//!
//! The era-specific parts live in submodules: `modern` (stateless checks and result
//! decoration), `ask` (the tools that need the client, in both eras), `operations` (the
//! per-request work of `tools/call`, `prompts/get`, `completion/complete`) and `session`
//! (per-connection state, the notifier and server→client requests).

mod ask;
mod extensions;
mod lifecycle;
mod listen;
mod modern;
mod operations;
mod reply;
mod session;

use std::sync::atomic::Ordering;

use serde_json::{json, Value};

use super::app::AppTools;
use super::catalog::{self, Catalog, Listing, Tool};
use super::faults::Faults;
use super::notifier::Notifier;
use super::stall::Stall;
use super::tasks::{TaskStore, TaskTool};
use super::{Eras, ServerOptions};
use crate::protocol::jsonrpc::codes;
use crate::protocol::meta::{META, META_SERVER_INFO};
use crate::protocol::methods as m;
use crate::protocol::version::{legacy_versions, LATEST_LEGACY, LATEST_MODERN};
use crate::protocol::{Incoming, RawResult, RequestId, RpcError};
use modern::{has_modern_meta, splice, CACHE_TTL_MS};
use operations::{call_tool, complete, get_prompt};
use reply::{encode, invalid_params, method_not_found, rpc_error, Reply};

pub use lifecycle::negotiate;
pub use reply::{error_without_id, malformed_reply, too_large_reply, EncodedReply};
pub use session::Session;

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
        /// Where a change is fanned out to the listens (`notify_list_changed`).
        hub: &'a super::listen::Hub,
    },
}

impl Ctx<'_> {
    fn notifier(&self) -> &Notifier {
        match self {
            Ctx::Legacy { notifier, .. } | Ctx::Modern { notifier, .. } => notifier,
        }
    }
}

/// The shared, immutable part of the server: catalog and pre-built replies.
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
    /// Mistakes made on purpose; empty in normal service.
    faults: Faults,
    /// The stall fault, timed from this handler's creation (the server's start).
    stall: Option<Stall>,
    /// The capacity knob: handshakes queue for a bounded pool of workers.
    capacity: Option<super::capacity::Capacity>,
    /// Sessions open and opened, over every network transport, for `/metrics`.
    pub sessions: super::process_metrics::SessionGauge,
    /// The application tools, when served (`serve --app-tools`).
    app: Option<AppTools>,
    /// The task store, when tasks are served (`serve --tasks`).
    tasks: Option<std::sync::Arc<TaskStore>>,
    /// `init_tail` with the `tasks` capability, for 2025-11-25 sessions.
    init_tail_tasks: String,
    /// Every open `subscriptions/listen`, and the changes fanned out to them.
    pub hub: std::sync::Arc<super::listen::Hub>,
    /// `serve --listen-lifetime`, and `--listen-end cancelled`.
    listen_lifetime: Option<std::time::Duration>,
    listen_end_cancelled: bool,
    /// `serve --require-extension`: a `tools/call` of a client without one is refused.
    require_extensions: Vec<String>,
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
        let instructions = if opts.app_tools {
            format!(
                "{instructions} Application tools: {}.",
                super::app::AppTool::ALL
                    .map(super::app::AppTool::name)
                    .join(", ")
            )
        } else {
            instructions.to_string()
        };
        let mut rest = json!({
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": false, "listChanged": true},
                "prompts": {"listChanged": true},
                "logging": {},
                "completions": {},
            },
            "serverInfo": server_info,
            "instructions": &instructions,
        });
        let extensions: serde_json::Map<String, Value> = opts
            .extensions
            .iter()
            .chain(&opts.require_extensions)
            .map(|id| (id.clone(), json!({})))
            .collect();
        if !extensions.is_empty() {
            rest["capabilities"]["extensions"] = Value::Object(extensions.clone());
        }
        let rest = rest.to_string();
        // `rest` is `{...}`: drop its `{` so it can follow the version member.
        let init_tail = format!(",{}", rest.get(1..).unwrap_or("}"));
        let mut supported = vec![LATEST_MODERN];
        if opts.eras.legacy() {
            supported.extend(legacy_versions());
        }
        let modern_members = format!(
            "\"resultType\":\"complete\",\"{META}\":{}",
            json!({ META_SERVER_INFO: server_info })
        );
        let cached_members =
            format!("{modern_members},\"ttlMs\":{CACHE_TTL_MS},\"cacheScope\":\"public\"");
        let mut discover = json!({
            "supportedVersions": supported,
            // No logging: `logging/setLevel` is gone and this server never logs.
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": true, "listChanged": true},
                "prompts": {"listChanged": true},
                "completions": {},
            },
            "instructions": &instructions,
        });
        if !extensions.is_empty() {
            discover["capabilities"]["extensions"] = Value::Object(extensions);
        }
        let discover = discover.to_string();
        let discover = splice(&cached_members, &discover);
        let app = opts.app_tools.then(AppTools::default);
        let mut extra_tools = app.as_ref().map(AppTools::definitions).unwrap_or_default();
        let faults = Faults::new(&opts.faults).serving(opts.eras);
        let task_faults = faults.tasks();
        let serve_tasks =
            opts.tasks || task_faults.stuck || task_faults.regress || task_faults.early_result;
        if serve_tasks {
            extra_tools.extend(TaskTool::ALL.map(TaskTool::definition));
        }
        let init_tail_tasks = init_tail.replacen(
            "\"capabilities\":{",
            &format!(
                "\"capabilities\":{{\"tasks\":{},",
                super::tasks::capability()
            ),
            1,
        );
        let hub = super::listen::Hub::new(opts.max_listens.max(1));
        if let Some(every) = opts.change_every {
            hub.spawn_timer(every);
        }
        Handler {
            catalog: Catalog::with_tools(opts.page_size, extra_tools),
            app,
            eras: opts.eras,
            init_tail,
            modern_members,
            cached_members,
            discover,
            supported,
            server_info,
            faults,
            tasks: serve_tasks.then(|| std::sync::Arc::new(TaskStore::new(task_faults))),
            init_tail_tasks,
            stall: opts.stall.map(|(at, length)| Stall::new(at, length)),
            capacity: opts
                .capacity
                .map(|(n, t)| super::capacity::Capacity::new(n, t)),
            sessions: Default::default(),
            hub,
            listen_lifetime: opts.listen_lifetime,
            listen_end_cancelled: opts.listen_end_cancelled,
            require_extensions: opts.require_extensions.clone(),
        }
    }

    /// The faults this server commits (HTTP reads its own from here).
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Whether a request should be answered on an SSE stream even when the transport would
    /// otherwise send plain JSON: the `progress` tool streams its notifications, and legacy
    /// tools that talk to the client need a stream to do it on.
    pub fn wants_stream(&self, msg: &Incoming) -> bool {
        let Incoming::Request { method, params, .. } = msg else {
            return false;
        };
        if method == m::SUBSCRIPTIONS_LISTEN {
            return true;
        }
        if method != m::TOOLS_CALL {
            return false;
        }
        if self.faults.has(super::Fault::ListenOnRequestStream) && has_modern_meta(params.as_ref())
        {
            return true;
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
        self.reply(session, msg, notifier).await.map(|r| r.bytes)
    }

    /// [`Handler::handle`], keeping the error code of an error reply.
    pub async fn reply(
        &self,
        session: &Session,
        msg: Incoming,
        notifier: &Notifier,
    ) -> Option<EncodedReply> {
        if let Some(stall) = &self.stall {
            stall.wait().await;
        }
        match msg {
            Incoming::Request { id, method, params } => {
                if let Some(pool) = &self.capacity {
                    if method == m::INITIALIZE || method == m::SERVER_DISCOVER {
                        pool.serve().await;
                    }
                }
                let stateless = self.stateless(&method, params.as_ref());
                if stateless && method == m::SUBSCRIPTIONS_LISTEN {
                    return self.serve_listen(session, id, params, notifier).await;
                }
                if self.faults.any() {
                    return Some(
                        self.reply_faulty(session, id, method, params, notifier)
                            .await,
                    );
                }
                let outcome = if stateless {
                    self.modern(&method, params, notifier).await
                } else {
                    self.request(session, &method, params, notifier).await
                };
                let error = outcome.as_ref().err().map(|e| e.code);
                Some(EncodedReply {
                    bytes: encode(&id, outcome),
                    error,
                })
            }
            Incoming::Notification { method, params } => {
                if method == m::INITIALIZED {
                    session.client_initialized.store(true, Ordering::Relaxed);
                }
                if method == m::CANCELLED {
                    if let Some(request) = params.as_ref().and_then(|p| p.get("requestId")) {
                        session.cancel_listen(request);
                    }
                }
                // Cancellation and everything else is accepted and ignored: no request
                // here holds resources worth reclaiming early.
                self.faults
                    .notification_reply()
                    .map(|bytes| EncodedReply { bytes, error: None })
            }
            Incoming::Response { id, outcome } => {
                session.deliver(id.as_ref(), outcome.map(RawResult::into_value));
                None
            }
        }
    }

    /// [`Handler::reply`] for a server with faults: the same path, with the fault hooks
    /// around it.
    async fn reply_faulty(
        &self,
        session: &Session,
        id: RequestId,
        method: String,
        mut params: Option<Value>,
        notifier: &Notifier,
    ) -> EncodedReply {
        let stateless = self.stateless(&method, params.as_ref());
        self.faults.hold(&method, params.as_ref()).await;
        let asked = self.faults.asked(&method, params.as_ref());
        let outcome = match self
            .faults
            .before(&method, &mut params, stateless, session, notifier)
        {
            Some(e) => Err(e),
            None if stateless => self.modern(&method, params, notifier).await,
            None => self.request(session, &method, params, notifier).await,
        };
        let error = outcome.as_ref().err().map(|e| e.code);
        EncodedReply {
            bytes: self.faults.reply(&asked, encode(&id, outcome)),
            error,
        }
    }

    /// The legacy lifecycle gate in front of [`Handler::dispatch`].
    async fn request(
        &self,
        session: &Session,
        method: &str,
        params: Option<Value>,
        notifier: &Notifier,
    ) -> Result<Reply<'_>, RpcError> {
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
            m::PING => Ok(Reply::Static("{}")),
            // A legacy-only server has never heard of it, initialized or not.
            m::SERVER_DISCOVER => Err(method_not_found()),
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

    /// The operations every era shares, after the lifecycle has been checked.
    async fn dispatch(
        &self,
        ctx: &Ctx<'_>,
        method: &str,
        params: &Value,
    ) -> Result<Reply<'_>, RpcError> {
        if let Some(store) = &self.tasks {
            // Tasks are 2025-11-25 only: told to those sessions, ignored by the others.
            let declared = matches!(ctx, Ctx::Legacy { session, .. }
                if session.version() == Some(LATEST_LEGACY));
            let notifier = ctx.notifier();
            let outcome = super::tasks::dispatch(store, declared, method, params, notifier);
            if let Some(outcome) = outcome.await {
                return outcome.map(Reply::Value);
            }
        }
        match method {
            m::PING => Ok(Reply::Static("{}")),
            m::TOOLS_LIST => page(&self.catalog.tools, params),
            m::RESOURCES_LIST => page(&self.catalog.resources, params),
            m::RESOURCES_TEMPLATES_LIST => page(&self.catalog.templates, params),
            m::PROMPTS_LIST => page(&self.catalog.prompts, params),
            m::TOOLS_CALL if self.extension_answer(ctx).is_some() => self
                .extension_answer(ctx)
                .unwrap_or_else(|| Err(method_not_found())),
            m::TOOLS_CALL => match self.app.as_ref().and_then(|app| app.call(params)) {
                Some(outcome) => outcome.map(Reply::Value),
                None => call_tool(ctx, params).await.map(Reply::Value),
            },
            m::RESOURCES_READ => self.read_resource(ctx, params),
            m::PROMPTS_GET => get_prompt(params).map(Reply::Value),
            m::LOGGING_SET_LEVEL => match params.get("level").and_then(Value::as_str) {
                Some(level) if LOG_LEVELS.contains(&level) => Ok(Reply::Static("{}")),
                _ => Err(invalid_params("level must be a syslog level name")),
            },
            m::COMPLETION_COMPLETE => Ok(Reply::Value(complete(params))),
            _ => Err(method_not_found()),
        }
    }

    fn read_resource(&self, ctx: &Ctx<'_>, params: &Value) -> Result<Reply<'_>, RpcError> {
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
            .map(Reply::Static)
            .ok_or_else(|| RpcError {
                code,
                message: "Resource not found".into(),
                data: Some(json!({ "uri": uri })),
            })
    }
}

fn page<'a>(listing: &'a Listing, params: &Value) -> Result<Reply<'a>, RpcError> {
    let cursor = match params.get("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.as_str()),
        Some(_) => return Err(invalid_params("cursor must be a string")),
    };
    listing
        .page(cursor)
        .map(Reply::Static)
        .ok_or_else(|| invalid_params("Invalid cursor"))
}

#[cfg(test)]
mod tests;
