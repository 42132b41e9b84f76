//! What goes back to the client: a request's result before it is encoded ([`Reply`]),
//! the encoded bytes, JSON-RPC errors, and the two shapes of a `tools/call` result.

use serde_json::{json, Value};

use crate::protocol::jsonrpc::{codes, encode_response, Malformed};
use crate::protocol::{RequestId, RpcError};

/// A successful result: pre-serialized JSON from the catalog, or built per request.
pub(super) enum Reply<'a> {
    Static(&'a str),
    Owned(String),
    Value(Value),
}

/// One encoded reply, with its error code when it is an error (HTTP maps modern error
/// codes to statuses).
#[derive(Debug)]
pub struct EncodedReply {
    pub bytes: Vec<u8>,
    pub error: Option<i64>,
}

pub(super) fn method_not_found() -> RpcError {
    rpc_error(codes::METHOD_NOT_FOUND, "Method not found")
}

pub(super) fn rpc_error(code: i64, message: impl Into<String>) -> RpcError {
    RpcError {
        code,
        message: message.into(),
        data: None,
    }
}

pub(super) fn invalid_params(message: impl Into<String>) -> RpcError {
    rpc_error(codes::INVALID_PARAMS, message)
}

pub(super) fn encode(id: &RequestId, outcome: Result<Reply<'_>, RpcError>) -> Vec<u8> {
    let raw = match outcome {
        Ok(Reply::Value(v)) => return encode_response(id, Ok(&v)),
        Err(e) => return encode_response(id, Err(&e)),
        Ok(Reply::Static(s)) => s,
        Ok(Reply::Owned(ref s)) => s.as_str(),
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

/// The reply to a message over the server's size limit.
pub fn too_large_reply(limit: usize) -> Vec<u8> {
    error_without_id(
        codes::INVALID_REQUEST,
        &format!("Invalid Request: message larger than {limit} bytes"),
    )
}

pub(super) fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// A tool execution error: a result with `isError`, not a protocol error.
pub(super) fn error_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}
