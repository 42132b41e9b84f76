//! 2026-07-28 POSTs: no session; the routing headers (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`) must agree with the body, and error replies get the era's
//! HTTP statuses.

use std::convert::Infallible;

use axum::body::Body;
use axum::http::header::{HeaderMap, HeaderName};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::mpsc;

use super::super::handler::{error_without_id, Session};
use super::super::notifier::Notifier;
use super::headers::{json_response, sse_response};
use super::stream::frame_event;
use super::AppState;
use crate::protocol::headers::{MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION};
use crate::protocol::jsonrpc::{codes, encode_response};
use crate::protocol::meta::{META, META_PROTOCOL_VERSION};
use crate::protocol::methods as m;
use crate::protocol::{Incoming, RpcError};

/// A 2026-07-28 request: no session. The routing headers must agree with the body; errors
/// get their era's HTTP statuses.
pub(super) async fn post_stateless(
    state: &AppState,
    headers: &HeaderMap,
    msg: Incoming,
) -> Response {
    let Incoming::Request { method, params, .. } = &msg else {
        return StatusCode::ACCEPTED.into_response();
    };
    let params = params.as_ref().unwrap_or(&Value::Null);
    // Without a `_meta` version there is nothing to compare the headers with; the handler
    // answers the missing key (-32602), or refuses a legacy request in a modern-only server.
    if params
        .get(META)
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some()
    {
        if let Err(mismatch) = check_routing_headers(headers, method, params) {
            let error = RpcError {
                code: codes::HEADER_MISMATCH,
                message: format!("Header mismatch: {mismatch}"),
                data: None,
            };
            return json_response(StatusCode::BAD_REQUEST, encode_error(&msg, &error), None);
        }
    }
    let session = Session::new(); // stateless: nothing in it is ever read
    let streams = state.sse_responses || state.handler.wants_stream(&msg);
    if streams {
        if let Err(error) = state.handler.modern_check(method, params) {
            let status = modern_status(error.code);
            return json_response(status, encode_error(&msg, &error), None);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let handler = state.handler.clone();
        tokio::spawn(async move {
            let notifier = Notifier::new(tx.clone());
            if let Some(reply) = handler.handle(&session, msg, &notifier).await {
                let _ = tx.send(reply);
            }
        });
        // No resumability in this era: events carry no ids.
        let events = futures::stream::unfold(rx, |mut rx| async move {
            let msg = rx.recv().await?;
            Some((Ok::<_, Infallible>(frame_event(None, &msg)), rx))
        });
        return sse_response(Body::from_stream(events), None);
    }
    match state.handler.reply(&session, msg, &Notifier::none()).await {
        Some(reply) => {
            let status = reply.error.map_or(StatusCode::OK, modern_status);
            json_response(status, reply.bytes, None)
        }
        None => StatusCode::ACCEPTED.into_response(),
    }
}

/// `MCP-Protocol-Version` equal to the `_meta` version, `Mcp-Method` to the method, and
/// `Mcp-Name` to the name or URI for the methods that have one.
fn check_routing_headers(headers: &HeaderMap, method: &str, params: &Value) -> Result<(), String> {
    let expect = |name: &HeaderName, want: Option<&str>| -> Result<(), String> {
        let got = headers.get(name).and_then(|v| v.to_str().ok());
        match (got, want) {
            (Some(got), Some(want)) if got.trim() == want => Ok(()),
            (None, _) => Err(format!("{name} header is missing")),
            (Some(got), want) => Err(format!(
                "{name} is {got:?} but the body says {:?}",
                want.unwrap_or_default()
            )),
        }
    };
    let version = params
        .get(META)
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    expect(&MCP_PROTOCOL_VERSION, version)?;
    expect(&MCP_METHOD, Some(method))?;
    let name_key = match method {
        m::TOOLS_CALL | m::PROMPTS_GET => Some("name"),
        m::RESOURCES_READ => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key {
        expect(&MCP_NAME, params.get(key).and_then(Value::as_str))?;
    }
    if method == m::TOOLS_CALL {
        check_param_headers(headers, params)?;
    }
    Ok(())
}

/// `Mcp-Param-*` (SEP-2243): each argument the tool's schema marks with `x-mcp-header`
/// travels as a header too, plain or as `=?base64?…?=`; it must agree with the body.
fn check_param_headers(headers: &HeaderMap, params: &Value) -> Result<(), String> {
    let tool = params
        .get("name")
        .and_then(Value::as_str)
        .and_then(super::super::catalog::Tool::from_name);
    let Some(tool) = tool else { return Ok(()) };
    for (arg, header) in tool.header_params() {
        let want = match params.get("arguments").and_then(|a| a.get(*arg)) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Bool(b)) => Some(b.to_string()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None, // absent or null: no header expected
        };
        let got = headers
            .get(*header)
            .and_then(|v| v.to_str().ok())
            .map(decode_param);
        match (got, want) {
            (None, None) => {}
            (Some(Some(got)), Some(want)) if got == want => {}
            (None, Some(_)) => return Err(format!("{header} header is missing")),
            (got, want) => {
                return Err(format!(
                    "{header} is {:?} but the argument `{arg}` is {want:?}",
                    got.flatten()
                ))
            }
        }
    }
    Ok(())
}

/// A header value as sent: plain, or the base64 sentinel for values that cannot be.
fn decode_param(raw: &str) -> Option<String> {
    use base64::Engine;
    match raw
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(raw.to_string()),
    }
}

/// HTTP status of a modern error reply (reference §7.3).
fn modern_status(code: i64) -> StatusCode {
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::INVALID_PARAMS
        | codes::INVALID_REQUEST
        | codes::HEADER_MISMATCH
        | codes::MISSING_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn encode_error(msg: &Incoming, error: &RpcError) -> Vec<u8> {
    match msg {
        Incoming::Request { id, .. } => encode_response(id, Err(error)),
        _ => error_without_id(error.code, &error.message),
    }
}
