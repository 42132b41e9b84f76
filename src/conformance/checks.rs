//! The checks themselves, as pure functions over what a session saw: which finding a
//! malformed message is, what is wrong with a handshake result, whether a tool's schemas
//! hold, a fingerprint of a tool listing. Sessions call these only when something is
//! already unusual (or once per listing), so the common path allocates nothing.

use super::Check;
use crate::protocol::jsonrpc::Malformed;
use crate::transport::Carrier;
use serde_json::Value;
use std::hash::{Hash, Hasher};

/// The finding a message that is not valid JSON-RPC makes. It follows the content:
/// bytes that are not JSON are an invalid SSE event when an SSE event carried them, and
/// `jsonrpc.not-json` in a JSON body, a stdio line or a WebSocket message.
pub fn malformed(error: &Malformed, carrier: Carrier) -> Check {
    match error {
        Malformed::NotJson(_) => match carrier {
            Carrier::SseEvent => Check::SseInvalidEvent,
            Carrier::JsonBody | Carrier::StdioLine | Carrier::WsText => Check::JsonrpcNotJson,
        },
        Malformed::Batch => Check::JsonrpcBatch,
        Malformed::NotObject => Check::JsonrpcNotObject,
        Malformed::WrongVersion => Check::JsonrpcWrongVersion,
        Malformed::ResultAndError => Check::JsonrpcResultAndError,
        Malformed::BadMethod => Check::JsonrpcBadMethod,
        Malformed::BadId => Check::JsonrpcBadId,
        Malformed::BadError => Check::JsonrpcBadError,
    }
}

/// What is wrong with an `initialize` result that did not pass the shape check.
pub fn handshake(result: &Value) -> Check {
    if !result.get("protocolVersion").is_some_and(Value::is_string) {
        Check::HandshakeVersionMissing
    } else if !result.get("capabilities").is_some_and(Value::is_object) {
        Check::HandshakeCapabilitiesNotObject
    } else {
        Check::HandshakeServerInfoInvalid
    }
}

/// Whether an `inputSchema` is an object schema.
pub fn input_schema_ok(schema: Option<&Value>) -> bool {
    schema.is_some_and(|s| s.get("type").and_then(Value::as_str) == Some("object"))
}

/// Whether `structuredContent` fits `outputSchema`, as far as a cheap check goes: an
/// object, the required properties present, the declared top-level types right.
/// Returns what is wrong.
pub fn structured_content(schema: &Value, result: &Value) -> Option<String> {
    let Some(content) = result.get("structuredContent") else {
        return Some("no `structuredContent` although the tool has an `outputSchema`".into());
    };
    let Some(object) = content.as_object() else {
        return Some("`structuredContent` is not an object".into());
    };
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !object.contains_key(name) {
            return Some(format!("required property {name:?} is missing"));
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for (name, prop) in props.into_iter().flatten() {
        let (Some(value), Some(want)) =
            (object.get(name), prop.get("type").and_then(Value::as_str))
        else {
            continue;
        };
        if !type_matches(want, value) {
            return Some(format!(
                "property {name:?} is {value}, not of type {want:?}"
            ));
        }
    }
    None
}

fn type_matches(want: &str, v: &Value) -> bool {
    match want {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => true,
    }
}

/// A session id may only hold visible ASCII (0x21–0x7E).
pub fn session_id_ok(id: &[u8]) -> bool {
    !id.is_empty() && id.iter().all(|b| (0x21..=0x7e).contains(b))
}

/// The capability a method belongs to, for the capability checks.
pub fn capability_of(method: &str) -> Option<&'static str> {
    let (prefix, _) = method.split_once('/')?;
    match prefix {
        "tools" => Some("tools"),
        "resources" => Some("resources"),
        "prompts" => Some("prompts"),
        "completion" => Some("completions"),
        "logging" => Some("logging"),
        _ => None,
    }
}

/// What is wrong with the result of a list method, if anything: it must be an object
/// whose list (`tools`, `resources`, `resourceTemplates`, `prompts`) is an array of
/// objects with their required fields, and whose `nextCursor`, when present, is a
/// string (`list.invalid-result`). `None` for a good page or another method; a good
/// page allocates nothing.
pub fn list_result(method: &str, result: &Value) -> Option<String> {
    // The list's key, and each entry's required fields (`true`: an object, else a string).
    let (key, fields): (&str, &[(&str, bool)]) = match method {
        "tools/list" => ("tools", &[("name", false), ("inputSchema", true)]),
        "resources/list" => ("resources", &[("uri", false), ("name", false)]),
        "resources/templates/list" => (
            "resourceTemplates",
            &[("uriTemplate", false), ("name", false)],
        ),
        "prompts/list" => ("prompts", &[("name", false)]),
        _ => return None,
    };
    let Some(page) = result.as_object() else {
        return Some(format!("the result {} is not an object", shown(result)));
    };
    let items = match page.get(key) {
        Some(Value::Array(items)) => items,
        Some(other) => return Some(format!("{key:?} is {}, not an array", shown(other))),
        None => return Some(format!("the result has no {key:?} array")),
    };
    for (i, item) in items.iter().enumerate() {
        if !item.is_object() {
            return Some(format!("{key}[{i}] is {}, not an object", shown(item)));
        }
        for &(field, object) in fields {
            let ok =
                item.get(field)
                    .is_some_and(|v| if object { v.is_object() } else { v.is_string() });
            if !ok {
                let what = if object { "an object" } else { "a string" };
                return Some(format!("{key}[{i}] has no {field:?} that is {what}"));
            }
        }
    }
    match page.get("nextCursor") {
        None | Some(Value::String(_)) => None,
        Some(other) => Some(format!("\"nextCursor\" is {}, not a string", shown(other))),
    }
}

/// A value as JSON, cut short for an example.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// A whole `tools/list` listing (every page), folded as it arrives: a fingerprint of
/// the tools (names and schemas, in order) and the first duplicate name.
#[derive(Debug, Default)]
pub struct ToolListing {
    hash: std::collections::hash_map::DefaultHasher,
    names: std::collections::HashSet<String>,
    pub duplicate: Option<String>,
    pub bad_schema: Option<String>,
}

/// A fingerprint of a JSON value: equal values (whatever their key order on the wire)
/// hash equal. The value's tree is hashed as it is, without serializing it.
pub fn fingerprint(v: &Value) -> u64 {
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut hash);
    hash.finish()
}

/// What a POSTed notification or response was answered, when it was not a bare 202:
/// a status that is not 202 (`http.post-status-not-202`) and a body that holds a
/// JSON-RPC message (`jsonrpc.response-to-notification`).
pub fn post_ack(status: u16, body: &[u8]) -> Vec<Check> {
    let mut out = Vec::new();
    if status != 202 {
        out.push(Check::HttpPostStatusNot202);
    }
    // JSON or an SSE event carrying it: either way the message names its version.
    let text = String::from_utf8_lossy(body);
    if text.contains("\"jsonrpc\"") {
        out.push(Check::JsonrpcResponseToNotification);
    }
    out
}

impl ToolListing {
    pub fn feed(&mut self, page: &Value) {
        for tool in page
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            tool.hash(&mut self.hash);
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            if !self.names.insert(name.to_string()) && self.duplicate.is_none() {
                self.duplicate = Some(name.to_string());
            }
            if self.bad_schema.is_none() && !input_schema_ok(tool.get("inputSchema")) {
                let schema = tool
                    .get("inputSchema")
                    .map_or("none".into(), Value::to_string);
                self.bad_schema = Some(format!("tool {name:?}: inputSchema {schema}"));
            }
        }
    }

    pub fn fingerprint(&self) -> u64 {
        self.hash.finish()
    }

    /// The names the listing had.
    pub fn into_names(self) -> std::collections::HashSet<String> {
        self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structured_content_is_checked_against_the_schema() {
        let schema = json!({"type": "object", "properties": {"sum": {"type": "number"}},
            "required": ["sum"]});
        assert_eq!(
            structured_content(&schema, &json!({"structuredContent": {"sum": 3}})),
            None
        );
        assert!(structured_content(&schema, &json!({"content": []})).is_some());
        assert!(structured_content(&schema, &json!({"structuredContent": {}})).is_some());
        assert!(
            structured_content(&schema, &json!({"structuredContent": {"sum": "3"}}))
                .is_some_and(|e| e.contains("sum"))
        );
    }

    #[test]
    fn list_results_hold_arrays_of_objects_with_their_fields() {
        let tool = json!({"name": "echo", "inputSchema": {"type": "object"}});
        let good = [
            ("tools/list", json!({"tools": [tool]})),
            ("tools/list", json!({"tools": [], "nextCursor": "2"})),
            (
                "resources/list",
                json!({"resources": [{"uri": "a://1", "name": "one"}]}),
            ),
            (
                "resources/templates/list",
                json!({"resourceTemplates": [{"uriTemplate": "a://{id}", "name": "a"}]}),
            ),
            (
                "prompts/list",
                json!({"prompts": [{"name": "greeting"}], "_meta": {}}),
            ),
            ("tools/call", json!([1, 2, 3])),
        ];
        for (method, result) in good {
            assert_eq!(list_result(method, &result), None, "{method} {result}");
        }
        let bad = [
            (
                "tools/list",
                json!([1, 2, 3]),
                "the result [1,2,3] is not an object",
            ),
            (
                "tools/list",
                json!({"tools": {"echo": {}}}),
                "\"tools\" is {\"echo\":{}}, not an array",
            ),
            ("tools/list", json!({}), "the result has no \"tools\" array"),
            (
                "tools/list",
                json!({"tools": [1]}),
                "tools[0] is 1, not an object",
            ),
            (
                "tools/list",
                json!({"tools": [tool, {"name": "x"}]}),
                "tools[1] has no \"inputSchema\" that is an object",
            ),
            (
                "tools/list",
                json!({"tools": [], "nextCursor": 2}),
                "\"nextCursor\" is 2, not a string",
            ),
            (
                "resources/list",
                json!({"resources": [{"uri": "a://1"}]}),
                "resources[0] has no \"name\" that is a string",
            ),
            (
                "resources/templates/list",
                json!({"resourceTemplates": [{"uri": "a://1", "name": "a"}]}),
                "resourceTemplates[0] has no \"uriTemplate\" that is a string",
            ),
            (
                "prompts/list",
                json!({"prompts": [{"name": 7}]}),
                "prompts[0] has no \"name\" that is a string",
            ),
        ];
        for (method, result, want) in bad {
            assert_eq!(
                list_result(method, &result).as_deref(),
                Some(want),
                "{method}"
            );
        }
        let long = json!({"tools": "x".repeat(200)});
        let said = list_result("tools/list", &long).unwrap_or_default();
        assert!(said.len() < 120 && said.contains('…'), "{said}");
    }

    #[test]
    fn listings_fingerprint_and_find_duplicates() {
        let a = json!({"tools": [{"name": "x", "inputSchema": {"type": "object"}}]});
        let b = json!({"tools": [{"name": "x", "inputSchema": {"type": "string"}}]});
        let (mut la, mut la2, mut lb) = (
            ToolListing::default(),
            ToolListing::default(),
            ToolListing::default(),
        );
        la.feed(&a);
        la2.feed(&a);
        lb.feed(&b);
        assert_eq!(la.fingerprint(), la2.fingerprint());
        assert_ne!(la.fingerprint(), lb.fingerprint());
        assert!(lb.bad_schema.is_some() && la.bad_schema.is_none());
        la.feed(&a);
        assert_eq!(la.duplicate.as_deref(), Some("x"));
    }

    #[test]
    fn post_acks_other_than_a_bare_202_are_findings() {
        assert!(post_ack(202, b"").is_empty());
        assert_eq!(post_ack(200, b""), vec![Check::HttpPostStatusNot202]);
        assert_eq!(
            post_ack(202, br#"{"jsonrpc":"2.0","id":null,"result":{}}"#),
            vec![Check::JsonrpcResponseToNotification]
        );
        assert_eq!(post_ack(204, b"ok").len(), 1);
    }

    #[test]
    fn fingerprints_ignore_key_order() {
        let a: Value = serde_json::from_str(r#"{"tools":{},"prompts":{}}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{"prompts":{},"tools":{}}"#).expect("json");
        assert_eq!(fingerprint(&a), fingerprint(&b));
        assert_ne!(fingerprint(&a), fingerprint(&json!({"tools": {}})));
    }

    #[test]
    fn session_ids_are_visible_ascii() {
        assert!(session_id_ok(b"abc-123"));
        assert!(!session_id_ok(b"a b"));
        assert!(!session_id_ok(b""));
    }

    #[test]
    fn malformed_follows_the_content_not_the_transport() {
        let e = Malformed::NotJson("x".into());
        assert_eq!(malformed(&e, Carrier::SseEvent), Check::SseInvalidEvent);
        assert_eq!(malformed(&e, Carrier::StdioLine), Check::JsonrpcNotJson);
        assert_eq!(malformed(&e, Carrier::WsText), Check::JsonrpcNotJson);
        // A non-JSON `application/json` body over HTTP is not an SSE event.
        assert_eq!(malformed(&e, Carrier::JsonBody), Check::JsonrpcNotJson);
        assert_eq!(
            malformed(&Malformed::WrongVersion, Carrier::StdioLine),
            Check::JsonrpcWrongVersion
        );
    }
}
