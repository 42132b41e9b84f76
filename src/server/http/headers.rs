//! The HTTP surface every `/mcp` method shares: header names, the Origin and
//! `MCP-Protocol-Version` checks, and the JSON / SSE response shapes (errors carry an
//! id-less JSON-RPC error body, as SDK clients expect).

use axum::body::Body;
use axum::http::header::ORIGIN;
use axum::http::header::{HeaderMap, HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::super::handler::error_without_id;
use super::super::origin::is_local_origin;
use crate::protocol::headers::{MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use crate::protocol::jsonrpc::codes;
use crate::protocol::version::legacy_versions;

const X_ACCEL_BUFFERING: HeaderName = HeaderName::from_static("x-accel-buffering");

/// An SSE response around `body` (already framed events).
pub(super) fn sse_response(body: Body, session_id: Option<String>) -> Response {
    let mut response = (
        StatusCode::OK,
        [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
            (X_ACCEL_BUFFERING, "no"),
        ],
        body,
    )
        .into_response();
    add_session_header(&mut response, session_id);
    response
}

pub(super) fn json_response(
    status: StatusCode,
    body: Vec<u8>,
    session_id: Option<String>,
) -> Response {
    let mut response = (status, [(CONTENT_TYPE, "application/json")], body).into_response();
    add_session_header(&mut response, session_id);
    response
}

fn add_session_header(response: &mut Response, session_id: Option<String>) {
    if let Some(value) = session_id.and_then(|id| HeaderValue::try_from(id).ok()) {
        response.headers_mut().insert(MCP_SESSION_ID, value);
    }
}

/// An HTTP error whose body is an id-less JSON-RPC error, as SDK clients expect.
pub(super) fn error_response(status: StatusCode, message: &str) -> Response {
    json_response(status, error_without_id(codes::SERVER_ERROR, message), None)
}

/// What the TS SDK server answers for an unknown session, byte for byte; clients key
/// re-init on the 404.
pub(super) fn session_not_found() -> Response {
    let body = format!(
        r#"{{"jsonrpc":"2.0","error":{{"code":{},"message":"Session not found"}},"id":null}}"#,
        codes::SESSION_NOT_FOUND
    );
    json_response(StatusCode::NOT_FOUND, body.into_bytes(), None)
}

/// A random 128-bit id; `rand::random` draws from the thread-local CSPRNG.
pub(super) fn new_session_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// All values of `name`, joined and lowercased, for substring checks.
pub(super) fn header_text(headers: &HeaderMap, name: &HeaderName) -> String {
    let mut text = String::new();
    for value in headers.get_all(name) {
        if let Ok(v) = value.to_str() {
            text.push_str(&v.to_ascii_lowercase());
            text.push(',');
        }
    }
    text
}

/// DNS-rebinding defence: a browser page from another host must not reach a local
/// server. Returns the 403 to send, if any.
pub(super) fn origin_refusal(headers: &HeaderMap) -> Option<Response> {
    let origin = headers.get(ORIGIN)?;
    (!origin.to_str().is_ok_and(is_local_origin))
        .then(|| error_response(StatusCode::FORBIDDEN, "Forbidden: Origin not allowed"))
}

/// `MCP-Protocol-Version`, when present, must name a version we speak; absent means
/// 2025-03-26, which we speak. Returns the 400 to send, if any.
pub(super) fn version_refusal(headers: &HeaderMap) -> Option<Response> {
    let value = headers.get(&MCP_PROTOCOL_VERSION)?;
    let supported = value
        .to_str()
        .is_ok_and(|v| legacy_versions().any(|known| known == v.trim()));
    (!supported).then(|| {
        json_response(
            StatusCode::BAD_REQUEST,
            error_without_id(
                codes::INVALID_REQUEST,
                "Bad Request: Unsupported protocol version",
            ),
            None,
        )
    })
}
