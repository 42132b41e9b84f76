//! The 2026-07-28 era: which requests are stateless, what makes one unanswerable before it
//! runs (`_meta` version and capabilities, -32022, methods the era lacks), and the members
//! every modern result carries (`resultType`, `_meta.serverInfo`, `ttlMs` / `cacheScope`).

use serde_json::{json, Value};

use super::reply::{invalid_params, method_not_found, Reply};
use super::{Ctx, Handler, Notifier};
use crate::protocol::jsonrpc::codes;
use crate::protocol::meta::{
    META, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO,
};
use crate::protocol::methods as m;
use crate::protocol::version::LATEST_MODERN;
use crate::protocol::{Incoming, RpcError};
use crate::server::Eras;

/// Methods a 2026-07-28 request may name here; anything else is -32601 (`ping` and
/// `logging/setLevel` no longer exist in that era).
const MODERN_METHODS: [&str; 10] = [
    m::SERVER_DISCOVER,
    m::TOOLS_LIST,
    m::TOOLS_CALL,
    m::RESOURCES_LIST,
    m::RESOURCES_TEMPLATES_LIST,
    m::RESOURCES_READ,
    m::PROMPTS_LIST,
    m::PROMPTS_GET,
    m::COMPLETION_COMPLETE,
    m::SUBSCRIPTIONS_LISTEN,
];
/// Results that carry `ttlMs` / `cacheScope` in the modern era.
const CACHEABLE: [&str; 6] = [
    m::SERVER_DISCOVER,
    m::TOOLS_LIST,
    m::RESOURCES_LIST,
    m::RESOURCES_TEMPLATES_LIST,
    m::PROMPTS_LIST,
    m::RESOURCES_READ,
];
/// Freshness of cacheable results: the catalog never really changes.
pub(super) const CACHE_TTL_MS: u64 = 60_000;

impl Handler {
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
    pub(super) fn stateless(&self, method: &str, params: Option<&Value>) -> bool {
        self.eras.modern()
            && method != m::INITIALIZE
            && (method == m::SERVER_DISCOVER || has_modern_meta(params))
    }

    /// A stateless request: check its `_meta` and method, run it, dress the result.
    pub(super) async fn modern(
        &self,
        method: &str,
        params: Option<Value>,
        notifier: &Notifier,
    ) -> Result<Reply<'_>, RpcError> {
        let params = params.unwrap_or(Value::Null);
        let caps = self.modern_check(method, &params)?;
        if method == m::SERVER_DISCOVER {
            return Ok(Reply::Static(&self.discover));
        }
        let ctx = Ctx::Modern {
            caps,
            notifier,
            hub: &self.hub,
        };
        let answer = self.dispatch(&ctx, method, &params).await?;
        let members = if CACHEABLE.contains(&method) {
            &self.cached_members
        } else {
            &self.modern_members
        };
        Ok(match answer {
            Reply::Static(s) => Reply::Owned(splice(members, s)),
            Reply::Owned(s) => Reply::Owned(splice(members, &s)),
            Reply::Value(v) => Reply::Value(self.dress(v, CACHEABLE.contains(&method))),
        })
    }

    /// What makes a stateless request unanswerable before it runs: a missing or
    /// unsupported `_meta` version (-32602 / -32022), missing client capabilities
    /// (-32602), or a method this era lacks (-32601). Returns the declared capabilities.
    pub fn modern_check<'p>(&self, method: &str, params: &'p Value) -> Result<&'p Value, RpcError> {
        let meta = params.get(META);
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
                code: codes::UNSUPPORTED_PROTOCOL_VERSION,
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
            let meta = map.entry(META).or_insert_with(|| json!({}));
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
}

pub(super) fn has_modern_meta(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get(META))
        .is_some_and(|meta| meta.get(META_PROTOCOL_VERSION).is_some())
}

/// Put `members` (serialized object members) in front of those of the object `object`.
pub(super) fn splice(members: &str, object: &str) -> String {
    let rest = object.strip_prefix('{').unwrap_or("}");
    if rest.trim_start().starts_with('}') {
        format!("{{{members}}}")
    } else {
        format!("{{{members},{rest}")
    }
}
