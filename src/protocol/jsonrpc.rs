//! JSON-RPC 2.0 framing: classify what arrives, encode what leaves.
//!
//! Incoming messages are parsed once into [`Incoming`]; anything that is not a valid
//! JSON-RPC 2.0 object becomes a [`Malformed`] value the session counts as a protocol
//! violation instead of an error that aborts the run.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// A JSON-RPC id: a number or a string, never null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
    String(String),
}

impl RequestId {
    /// Our own requests use integer ids, and JSON-RPC requires a response to carry the
    /// request's id as it was sent: `"1"` does not answer request `1` (an SDK client
    /// keyed by number waits for it forever).
    pub fn as_own(&self) -> Option<u64> {
        match self {
            RequestId::Number(n) => u64::try_from(*n).ok(),
            RequestId::String(_) => None,
        }
    }

    /// A string id that spells one of our numeric ids (`"1"` for `1`): the server
    /// changed the id's type.
    pub fn retyped_own(&self) -> Option<u64> {
        match self {
            RequestId::String(s) => s.parse().ok(),
            RequestId::Number(_) => None,
        }
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// The `error` member of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// One message received from the server, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A server→client request that must be answered.
    Request {
        id: RequestId,
        method: String,
        params: Option<Value>,
    },
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response to one of our requests (`id` may be absent when the server could not
    /// parse what we sent).
    Response {
        id: Option<RequestId>,
        outcome: Result<RawResult, RpcError>,
    },
}

/// A response's `result` as the server sent it: well-formed JSON, within serde_json's
/// nesting limit, not yet built into a [`Value`] tree. Most results are read whole
/// ([`RawResult::into_value`]); `initialize`'s is read in place (`session/handshake.rs`),
/// which spares every session the tree it would build and drop (BENCHMARKS, issue 15).
#[derive(Debug, Clone)]
pub struct RawResult(Box<RawValue>);

impl RawResult {
    /// The JSON text, compact as it came (no surrounding whitespace).
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// The result as a tree.
    pub fn into_value(self) -> Value {
        self.value()
    }

    pub fn value(&self) -> Value {
        // `Incoming::parse` admitted only JSON that parses within the nesting limit, so
        // this cannot fail; `Null` keeps it total all the same.
        serde_json::from_str(self.json()).unwrap_or(Value::Null)
    }
}

impl From<Value> for RawResult {
    fn from(value: Value) -> RawResult {
        RawResult(
            serde_json::value::to_raw_value(&value).unwrap_or_else(|_| RawValue::NULL.to_owned()),
        )
    }
}

/// Equal when the JSON is: key order and spacing do not matter.
impl PartialEq for RawResult {
    fn eq(&self, other: &RawResult) -> bool {
        self.json() == other.json() || self.value() == other.value()
    }
}

/// Why a received message is not valid JSON-RPC 2.0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("a JSON-RPC batch (array), which this protocol version does not allow")]
    Batch,
    #[error("not a JSON object")]
    NotObject,
    #[error("`jsonrpc` is missing or not \"2.0\"")]
    WrongVersion,
    #[error("a response with both `result` and `error`, or neither")]
    ResultAndError,
    #[error("`method` is not a string")]
    BadMethod,
    #[error("`id` is null or not a string or integer")]
    BadId,
    #[error("`error` is not an object with an integer `code`")]
    BadError,
}

/// The raw shape, deserialized in one pass without an intermediate `Value` tree for the
/// envelope; `jsonrpc` and `result` are borrowed from the message as they are.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    #[serde(default, borrow, deserialize_with = "present_raw")]
    result: Option<&'a RawValue>,
    error: Option<Value>,
}

/// Distinguishes `"id": null` (present) from an absent key.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Distinguishes `"result": null` (present) from an absent key.
fn present_raw<'de: 'a, 'a, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<&'a RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The deepest a `result` may nest: serde_json refuses a message 128 deep, and the
/// envelope is one level of it. A result kept as text is held to the same limit as one
/// built into a tree, so a hostile nesting is still malformed where it arrives.
const RESULT_DEPTH: usize = 126;

/// Why serde_json would refuse to build `json` (well-formed) into a tree, as it says it:
/// arrays and objects nested deeper than `limit`, or a number beyond `f64`'s range.
/// `None` when it would build it. One pass; strings are skipped with `memchr`.
fn tree_refusal(json: &[u8], limit: usize) -> Option<&'static str> {
    if !may_be_refused(json, limit) {
        return None;
    }
    let (mut depth, mut i) = (0usize, 0usize);
    while let Some(&b) = json.get(i) {
        match b {
            b'"' => {
                // To the closing quote, past escaped characters.
                i += 1;
                loop {
                    let k = memchr::memchr2(b'"', b'\\', json.get(i..)?)?;
                    if json[i + k] == b'"' {
                        i += k + 1;
                        break;
                    }
                    i += k + 2;
                }
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some("recursion limit exceeded");
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while json
                    .get(i)
                    .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    i += 1;
                }
                // Only an exponent or ~309 digits reach past f64::MAX (serde_json's
                // "number out of range"; a tiny number becomes 0, as it does there).
                let number = &json[start..i];
                let may_overflow = number.len() > 300 || number.iter().any(|b| (b | 0x20) == b'e');
                if may_overflow
                    && !std::str::from_utf8(number)
                        .ok()
                        .and_then(|n| n.parse::<f64>().ok())
                        .is_some_and(f64::is_finite)
                {
                    return Some("number out of range");
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A cheap over-estimate of [`tree_refusal`], strings not told apart: `false` proves
/// serde_json would build the tree. Nesting deeper than `limit` needs more than `limit`
/// opening brackets. A number beyond `f64` needs an exponent (in JSON, an `e` right after
/// a digit) or an integer part of 309 digits, and a run of 300 digits covers a multiple
/// of 300, so a few sampled bytes rule that out. Passes of a byte at a time over the
/// whole text cost as much as the full check, so there are none here but the
/// vectorized ones.
fn may_be_refused(json: &[u8], limit: usize) -> bool {
    memchr::memchr2_iter(b'[', b'{', json).count() > limit
        || json.iter().step_by(300).any(u8::is_ascii_digit)
        || exponent_like(json)
}

/// Whether a digit is followed by `e` or `E` anywhere in `json`, in a branch-free pass
/// the compiler vectorizes (an `e` is common in text; a digit before one is not).
fn exponent_like(json: &[u8]) -> bool {
    let after = json.get(1..).unwrap_or_default();
    let hits = json.iter().zip(after).fold(0u8, |hits, (&a, &b)| {
        hits | (u8::from(a.wrapping_sub(b'0') < 10) & u8::from(b | 0x20 == b'e'))
    });
    hits != 0
}

impl Incoming {
    /// Parse one message from bytes (a stdio line, an SSE `data` payload, a JSON body).
    pub fn parse(bytes: &[u8]) -> Result<Incoming, Malformed> {
        let trimmed = trim_ascii(bytes);
        if trimmed.first() == Some(&b'[') {
            return Err(Malformed::Batch);
        }
        if trimmed.first() != Some(&b'{') {
            return match serde_json::from_slice::<Value>(trimmed) {
                Ok(_) => Err(Malformed::NotObject),
                Err(e) => Err(Malformed::NotJson(e.to_string())),
            };
        }
        let env: Envelope =
            serde_json::from_slice(trimmed).map_err(|e| Malformed::NotJson(e.to_string()))?;
        Self::classify(env)
    }

    fn classify(env: Envelope<'_>) -> Result<Incoming, Malformed> {
        let version_ok = env.jsonrpc.is_some_and(|v| {
            v.get() == "\"2.0\""
                || serde_json::from_str::<String>(v.get()).is_ok_and(|s| s == "2.0")
        });
        if !version_ok {
            return Err(Malformed::WrongVersion);
        }
        let id = match env.id {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(RequestId::String(s)),
            Some(Value::Number(n)) => Some(RequestId::Number(n.as_i64().ok_or(Malformed::BadId)?)),
            Some(_) => return Err(Malformed::BadId),
        };
        if let Some(method) = env.method {
            let Value::String(method) = method else {
                return Err(Malformed::BadMethod);
            };
            return Ok(match id {
                Some(id) => Incoming::Request {
                    id,
                    method,
                    params: env.params,
                },
                None => Incoming::Notification {
                    method,
                    params: env.params,
                },
            });
        }
        match (env.result, env.error) {
            (Some(result), None) => {
                if let Some(why) = tree_refusal(result.get().as_bytes(), RESULT_DEPTH) {
                    return Err(Malformed::NotJson(why.into()));
                }
                Ok(Incoming::Response {
                    id,
                    outcome: Ok(RawResult(result.to_owned())),
                })
            }
            (None, Some(error)) => {
                let error: RpcError =
                    serde_json::from_value(error).map_err(|_| Malformed::BadError)?;
                Ok(Incoming::Response {
                    id,
                    outcome: Err(error),
                })
            }
            _ => Err(Malformed::ResultAndError),
        }
    }
}

/// The `id` of a message that failed [`Incoming::parse`], when it is still JSON with
/// a usable id: a malformed answer to one of our requests fails that request at once
/// instead of leaving it to time out. Only called on the failure path.
pub fn stray_id(bytes: &[u8]) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<Value>,
        method: Option<Value>,
    }
    let env: IdOnly = serde_json::from_slice(trim_ascii(bytes)).ok()?;
    // A request's id is the server's own, not one of ours.
    if env.method.is_some() {
        return None;
    }
    serde_json::from_value(env.id?).ok()
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |p| p + 1);
    &bytes[start..end]
}

/// Encode a request. Compact JSON never contains a raw newline, which stdio framing needs.
pub fn encode_request(id: u64, method: &str, params: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Out<'a> {
        jsonrpc: &'static str,
        id: u64,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<&'a Value>,
    }
    to_vec(&Out {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

/// Encode a request whose `params` were encoded ahead (JSON, compact): the same bytes as
/// [`encode_request`] with those params, without serializing them again.
pub fn encode_request_encoded(id: u64, method: &str, params: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + method.len() + params.len());
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b",\"method\":");
    // A method name is a JSON string like any other (escaped when it must be).
    let _ = serde_json::to_writer(&mut out, method);
    out.extend_from_slice(b",\"params\":");
    out.extend_from_slice(params.as_bytes());
    out.push(b'}');
    out
}

pub fn encode_notification(method: &str, params: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Out<'a> {
        jsonrpc: &'static str,
        method: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        params: Option<&'a Value>,
    }
    to_vec(&Out {
        jsonrpc: "2.0",
        method,
        params,
    })
}

/// Encode our answer to a server→client request.
pub fn encode_response(id: &RequestId, outcome: Result<&Value, &RpcError>) -> Vec<u8> {
    #[derive(Serialize)]
    struct Out<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<&'a Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'a RpcError>,
    }
    let (result, error) = match outcome {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e)),
    };
    to_vec(&Out {
        jsonrpc: "2.0",
        id,
        result,
        error,
    })
}

fn to_vec<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing plain structs of strings and `Value`s cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

/// JSON-RPC error codes used by both sides: the standard ones, then those MCP defines in
/// the implementation-defined server range.
pub mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// A refusal before any method runs (a bad HTTP request, a missing subprotocol), as
    /// the SDKs send it in an id-less error body.
    pub const SERVER_ERROR: i64 = -32000;
    /// Streamable HTTP: the `Mcp-Session-Id` names no live session (with a 404).
    pub const SESSION_NOT_FOUND: i64 = -32001;
    /// `resources/read` of an unknown URI, until 2025-11-25 (-32602 from 2026-07-28).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// 2026-07-28: an `Mcp-*` header disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request needs a client capability its `_meta` does not declare.
    pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
    /// 2026-07-28: the `_meta` version is not spoken here; `data.supported` lists those that are.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

#[cfg(test)]
mod tests;
