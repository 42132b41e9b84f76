//! The 2026-07-28 request model: every request carries `_meta` (version, capabilities,
//! clientInfo) and, over HTTP, `Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers;
//! -32022 is answered by retrying at a mutually supported version; `input_required`
//! results are fulfilled from the persona's answers and retried with a new id, the
//! `inputResponses` and the byte-exact `requestState`, up to the persona's round cap.

use super::{server_requests, Failure, Session};
use crate::metrics::{Counter, FailureKind, Phase};
use crate::protocol::headers::{MCP_METHOD, MCP_NAME, MCP_PARAM_PREFIX, X_MCP_HEADER};
use crate::protocol::jsonrpc::codes;
use crate::protocol::meta::META;
use crate::protocol::{methods, ProtocolVersion};
use base64::Engine;
use http::{HeaderName, HeaderValue};
use serde_json::{json, Map, Value};
use tokio::time::Instant;

const SENTINEL_PREFIX: &str = "=?base64?";

impl Session<'_> {
    /// Switch this session to the modern era (headers follow the `_meta` version).
    pub(super) fn enter_modern(&mut self) {
        // No handshake window in this era (an `auto` fallback's refused `initialize`
        // may have opened one).
        self.checks.handshaking = false;
        self.era = crate::protocol::Era::Modern;
        self.version = crate::protocol::VersionId::of(&self.modern_version);
        let v = self.modern_version.clone();
        self.transport.set_protocol_version(Some(&v));
    }

    pub(super) fn set_modern_version(&mut self, version: &str) {
        self.modern_version = version.to_string();
        self.version = crate::protocol::VersionId::of(version);
        self.transport.set_protocol_version(Some(version));
    }

    /// A modern version from a -32022 `data.supported` list that the persona accepts.
    pub(super) fn mutual_version(&self, data: Option<&Value>, modern: bool) -> Option<String> {
        data?
            .get("supported")?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .find(|v| {
                let era = ProtocolVersion::new(*v).era();
                (era == crate::protocol::Era::Modern) == modern && self.persona.accepts(v)
            })
            .map(String::from)
    }

    pub(super) async fn request_modern(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, Failure> {
        let base = match params {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let mut renegotiated = false;
        let mut relisted = false;
        let mut rounds = 0u32;
        let mut retry: Option<(Value, Option<Value>)> = None;
        let base = Value::Object(base);
        loop {
            let (params, headers) = self.decorate(method, Some(base.clone()), retry.as_ref());
            let result = match self.exchange(method, Some(&params), &headers).await {
                // -32020 on a tool call: our `Mcp-Param-*` headers may be stale (or the
                // tools were never listed); re-fetch tools/list and retry once, as the
                // spec tells a client to.
                Err(f)
                    if f.kind == FailureKind::RpcError(codes::HEADER_MISMATCH)
                        && method == methods::TOOLS_CALL
                        && !relisted =>
                {
                    relisted = true;
                    self.recorder.count(Counter::ToolsRelisted);
                    self.relist_tools().await?;
                    continue;
                }
                Err(f)
                    if f.kind == FailureKind::RpcError(codes::UNSUPPORTED_PROTOCOL_VERSION)
                        && !renegotiated =>
                {
                    if !usable_supported(f.data.as_ref()) {
                        let data = f.data.as_ref().map_or("no data".into(), Value::to_string);
                        self.finding(
                            crate::conformance::Check::VersionUnsupportedWithoutList,
                            || format!("{method}: -32022 with {data}"),
                        );
                    }
                    match self.mutual_version(f.data.as_ref(), true) {
                        Some(v) if v != self.modern_version => {
                            renegotiated = true;
                            self.set_modern_version(&v);
                            continue;
                        }
                        _ => return Err(f),
                    }
                }
                other => other?,
            };
            match result.get("resultType").and_then(Value::as_str) {
                None | Some("complete") => return Ok(result),
                Some("input_required") => {
                    rounds += 1;
                    self.recorder.count(Counter::InputRounds);
                    if rounds > self.persona.max_input_rounds {
                        return Err(Failure::new(
                            FailureKind::ProtocolViolation,
                            format!(
                                "{method}: still input_required after {} rounds",
                                self.persona.max_input_rounds
                            ),
                        ));
                    }
                    let responses = self.fulfil(method, result.get("inputRequests")).await?;
                    retry = Some((responses, result.get("requestState").cloned()));
                }
                Some(other) => {
                    self.check_extension_result(method, other);
                    return Err(Failure::new(
                        FailureKind::InvalidResult,
                        format!("{method}: unknown resultType {other:?}"),
                    ));
                }
            }
        }
    }

    /// The params and headers of a modern request: our `_meta` merged over the caller's,
    /// plus `inputResponses`/`requestState` when retrying after `input_required`.
    pub(super) fn decorate(
        &self,
        method: &str,
        params: Option<Value>,
        retry: Option<&(Value, Option<Value>)>,
    ) -> (Value, Vec<(HeaderName, HeaderValue)>) {
        let mut p = match params {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let mut meta = match p.remove(META) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        // Built per request rather than kept per session (issue 12: every session held
        // one copy): the entries are cloned into each request either way.
        if let Value::Object(ours) = self.persona.modern_meta(&self.modern_version) {
            meta.extend(ours);
        }
        p.insert(META.into(), Value::Object(meta));
        if let Some((responses, state)) = retry {
            p.insert("inputResponses".into(), responses.clone());
            if let Some(s) = state {
                p.insert("requestState".into(), s.clone());
            }
        }
        let params = Value::Object(p);
        let headers = self.modern_headers(method, &params);
        (params, headers)
    }

    /// Every page of `tools/list`, to learn the tools' `x-mcp-header` annotations.
    async fn relist_tools(&mut self) -> Result<(), Failure> {
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = cursor.as_ref().map(|c| json!({"cursor": c}));
            let page = Box::pin(self.request_modern(methods::TOOLS_LIST, params)).await?;
            self.learn_tools(&page);
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() && cursor.as_deref() != Some(c) => {
                    cursor = Some(c.to_string())
                }
                _ => return Ok(()),
            }
        }
        Ok(())
    }

    /// Answer every entry of `inputRequests` as the persona would.
    async fn fulfil(&mut self, method: &str, requests: Option<&Value>) -> Result<Value, Failure> {
        let mut out = Map::new();
        let Some(requests) = requests.and_then(Value::as_object) else {
            return Ok(Value::Object(out)); // only requestState: retry at once
        };
        for (key, req) in requests {
            let started = Instant::now();
            let asked = req
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let server_requests::Response { result, delay } = server_requests::respond(
                &self.persona.replies,
                asked,
                req.get("params"),
                &mut self.rng,
            );
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let result = result.map_err(|e| {
                Failure::new(
                    FailureKind::ProtocolViolation,
                    format!(
                        "{method}: the server asked for {asked:?}, which persona {:?} did not declare ({})",
                        self.persona.name, e.message
                    ),
                )
            });
            self.sample_own(Phase::Answer, started, &result);
            out.insert(key.clone(), result?);
        }
        Ok(Value::Object(out))
    }

    /// `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` for a modern request.
    fn modern_headers(&self, method: &str, params: &Value) -> Vec<(HeaderName, HeaderValue)> {
        let mut out = Vec::new();
        if let Ok(v) = HeaderValue::from_str(method) {
            out.push((MCP_METHOD, v));
        }
        let name = match method {
            methods::TOOLS_CALL | methods::PROMPTS_GET => params.get("name"),
            methods::RESOURCES_READ => params.get("uri"),
            _ => None,
        };
        if let Some(v) = name.and_then(Value::as_str).and_then(header_value) {
            out.push((MCP_NAME, v));
        }
        if method == methods::TOOLS_CALL {
            let tool = params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if let Some(mapping) = self.tool_headers.get(tool) {
                for (arg, header) in mapping {
                    let value = params.get("arguments").and_then(|a| a.get(arg));
                    let text = match value {
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(Value::Bool(b)) => Some(b.to_string()),
                        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(n.to_string()),
                        _ => None, // absent or null: no header
                    };
                    if let Some(v) = text.as_deref().and_then(header_value) {
                        out.push((header.clone(), v));
                    }
                }
            }
        }
        out
    }

    /// Learn `x-mcp-header` annotations from a `tools/list` page.
    pub fn learn_tool_headers(&mut self, page: &Value) {
        let tools = page.get("tools").and_then(Value::as_array);
        for tool in tools.into_iter().flatten() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let props = tool
                .get("inputSchema")
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object);
            let mut mapping = Vec::new();
            for (arg, schema) in props.into_iter().flatten() {
                let Some(h) = schema.get(X_MCP_HEADER).and_then(Value::as_str) else {
                    continue;
                };
                match HeaderName::from_bytes(format!("{MCP_PARAM_PREFIX}{h}").as_bytes()) {
                    Ok(header) if !h.is_empty() => mapping.push((arg.clone(), header)),
                    _ => self.recorder.count(Counter::InvalidXMcpHeader),
                }
            }
            if !mapping.is_empty() {
                self.tool_headers.insert(name.to_string(), mapping);
            }
        }
    }
}

/// A header value per SEP-2243: plain when it is safe visible ASCII, else base64 in the
/// `=?base64?…?=` sentinel.
fn header_value(text: &str) -> Option<HeaderValue> {
    let plain = text.is_ascii()
        && !text.chars().any(|c| c.is_ascii_control())
        && text.trim() == text
        && !text.starts_with(SENTINEL_PREFIX);
    if plain {
        HeaderValue::from_str(text).ok()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        HeaderValue::from_str(&format!("{SENTINEL_PREFIX}{encoded}?=")).ok()
    }
}

/// Whether an HTTP error body carries one of the modern-era JSON-RPC errors (which
/// tells a probing client the server is modern even though the status is 4xx).
pub fn has_modern_error(detail: &str) -> bool {
    [
        codes::HEADER_MISMATCH,
        codes::MISSING_CLIENT_CAPABILITY,
        codes::UNSUPPORTED_PROTOCOL_VERSION,
    ]
    .iter()
    .any(|code| detail.contains(&format!("\"code\":{code}")))
}

/// Whether a -32022 `data` lists versions to retry with (a non-empty string array).
fn usable_supported(data: Option<&Value>) -> bool {
    data.and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .is_some_and(|list| !list.is_empty() && list.iter().all(Value::is_string))
}

/// Params of `server/discover` (only `_meta`, added by the request path).
pub fn discover_params() -> Value {
    json!({})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_follow_the_base64_rule() {
        let v = |s: &str| {
            header_value(s)
                .expect("valid")
                .to_str()
                .expect("ascii")
                .to_string()
        };
        assert_eq!(v("Seattle"), "Seattle");
        assert_eq!(v("Zürich"), "=?base64?WsO8cmljaA==?=");
        assert_eq!(v(" padded"), "=?base64?IHBhZGRlZA==?=");
        assert_eq!(v("a\nb"), "=?base64?YQpi?=");
        assert_eq!(v("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
    }

    #[test]
    fn modern_errors_are_recognised_in_bodies() {
        assert!(has_modern_error(
            r#"HTTP 400: {"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x"}}"#
        ));
        assert!(!has_modern_error(r#"HTTP 400: {"error":{"code":-32600}}"#));
    }
}
