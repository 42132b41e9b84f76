//! The reply hook: an encoded reply bent by the faults that concern it (a wrong
//! `jsonrpc`, a changed id, capabilities removed, a tool list that loops or drifts, …).

use serde_json::{json, Value};
use std::sync::atomic::Ordering;

use super::fault::Fault;
use super::{Asked, Faults};
use crate::protocol::jsonrpc::codes;
use crate::protocol::methods as m;

impl Faults {
    /// The encoded reply, bent by the faults that concern it.
    pub fn reply(&self, asked: &Asked, bytes: Vec<u8>) -> Vec<u8> {
        let Ok(mut msg) = serde_json::from_slice::<Value>(&bytes) else {
            return bytes;
        };
        if let Some(result) = msg.get_mut("result") {
            self.bend_result(asked, result);
        }
        if self.has(Fault::WrongErrorCodes) {
            if let Some(code) = msg.get_mut("error").and_then(|e| e.get_mut("code")) {
                let right = [
                    codes::PARSE_ERROR,
                    codes::INVALID_REQUEST,
                    codes::METHOD_NOT_FOUND,
                ];
                if right
                    .iter()
                    .chain([&codes::INVALID_PARAMS])
                    .any(|c| code == c)
                {
                    *code = json!(codes::INTERNAL_ERROR);
                }
            }
        }
        if asked.method == m::TOOLS_LIST {
            if self.has(Fault::WrongJsonrpc) {
                msg["jsonrpc"] = json!("1.0");
            }
            if self.has(Fault::ResultAndError) {
                msg["error"] = json!({"code": codes::INTERNAL_ERROR, "message": "and an error"});
            }
            if self.has(Fault::WrongId) {
                msg["id"] = match msg.get("id").and_then(Value::as_i64) {
                    Some(n) => json!(n + 1000),
                    None => json!("not-your-id"),
                };
            }
        }
        serde_json::to_vec(&msg).unwrap_or(bytes)
    }

    fn bend_result(&self, asked: &Asked, result: &mut Value) {
        match asked.method.as_str() {
            m::INITIALIZE | m::SERVER_DISCOVER => {
                if self.has(Fault::CapabilitiesNotObject) {
                    result["capabilities"] = json!([]);
                }
                if let Some(caps) = result
                    .get_mut("capabilities")
                    .and_then(Value::as_object_mut)
                {
                    if self.has(Fault::UndeclaredPrompts) {
                        caps.remove("prompts");
                    }
                    if self.has(Fault::UndeclaredTools) {
                        caps.remove("tools");
                    }
                    if self.has(Fault::UndeclaredResourcesError) {
                        caps.remove("resources");
                    }
                    let n = self.handshakes.fetch_add(1, Ordering::Relaxed);
                    if self.has(Fault::FlappingCapabilities) && n % 2 == 1 {
                        caps.remove("completions");
                    }
                }
                if self.has(Fault::NoServerInfoVersion) {
                    if let Some(info) = result.get_mut("serverInfo").and_then(Value::as_object_mut)
                    {
                        info.remove("version");
                    }
                }
                if self.has(Fault::UnknownVersion) && asked.method == m::INITIALIZE {
                    result["protocolVersion"] = json!("2099-12-31");
                }
                if let (true, Some(v)) = (self.has(Fault::EchoVersion), &asked.version) {
                    result["protocolVersion"] = json!(v);
                }
            }
            m::TOOLS_LIST => self.bend_tools(result),
            m::TOOLS_CALL
                if asked.tool.as_deref() == Some("add")
                    && self.has(Fault::BadStructuredContent) =>
            {
                result["structuredContent"] = json!({"sum": "three"});
            }
            _ => {}
        }
    }

    fn bend_tools(&self, result: &mut Value) {
        let n = self.tool_lists.fetch_add(1, Ordering::Relaxed);
        if self.has(Fault::PaginationLoop) {
            result["nextCursor"] = json!("loop");
        }
        if self.has(Fault::EmptyCursor) {
            result["nextCursor"] = json!("");
        }
        let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
            return;
        };
        if self.has(Fault::DuplicateTools) {
            if let Some(first) = tools.first().cloned() {
                tools.push(first);
            }
        }
        if let Some(first) = tools.first_mut() {
            if self.has(Fault::BadInputSchema) {
                first["inputSchema"] = json!({"type": "string"});
            }
            if self.has(Fault::ToolsDrift) && n % 2 == 1 {
                first["inputSchema"]["properties"]["drift"] = json!({"type": "string"});
            }
        }
    }
}
