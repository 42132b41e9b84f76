//! The `ask_*` tools, which need the client: in the legacy era a real server→client
//! request (sampling, elicitation, roots) on the call's stream, awaited; in the 2026-07-28
//! era a Multi Round-Trip Request answered `input_required` with a tamper-checked
//! `requestState`, finished when the call comes back with `inputResponses`.

use serde_json::{json, Map, Value};

use super::reply::{error_result, invalid_params, text_result};
use super::session::{declares, AskFailure, ASK_TIMEOUT};
use super::{Notifier, Session};
use crate::protocol::jsonrpc::codes;
use crate::protocol::methods as m;
use crate::protocol::RpcError;
use crate::server::catalog::{self, Tool};

/// What an `ask_*` tool asks the client: the request, and how to read the answer.
pub(super) struct Question {
    tool: Tool,
    /// The client capability needed, and the `inputRequests` key in the modern era.
    capability: &'static str,
    method: &'static str,
    params: Value,
}

impl Question {
    pub(super) fn new(tool: Tool, args: &Map<String, Value>) -> Result<Question, RpcError> {
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
                ("sampling", m::SAMPLING_CREATE_MESSAGE, params)
            }
            Tool::AskElicitation => {
                let message = match args.get("message") {
                    None | Some(Value::Null) => "Please tell us about yourself.",
                    Some(Value::String(s)) => s.as_str(),
                    Some(_) => return Err(invalid_params("`message` must be a string")),
                };
                let params = json!({"mode": "form", "message": message,
                                    "requestedSchema": catalog::elicitation_schema()});
                ("elicitation", m::ELICITATION_CREATE, params)
            }
            _ => ("roots", m::ROOTS_LIST, json!({})),
        };
        Ok(Question {
            tool,
            capability,
            method,
            params,
        })
    }

    /// Legacy: a real request on the tools/call's stream, awaited (bounded).
    pub(super) async fn ask(&self, session: &Session, notifier: &Notifier) -> Value {
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
    pub(super) fn round_trip(
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
                code: codes::MISSING_CLIENT_CAPABILITY,
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
