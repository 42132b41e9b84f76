//! The faulty messages themselves, built from what the session knows (the persona's
//! `initialize` params, a listed tool's `inputSchema`): pure functions, so each fault's
//! bytes can be read and tested on their own.

use crate::metrics::ClientFault;
use crate::protocol::jsonrpc::encode_request;
use crate::protocol::methods;
use serde_json::{json, Map, Value};

/// A version no MCP revision has.
pub const UNKNOWN_VERSION: &str = "1900-01-01";

/// How large the `oversized` request is.
pub const OVERSIZED_BYTES: usize = 5 * 1024 * 1024;

/// The faulty `initialize` of a handshake fault (None for other faults).
pub fn initialize(fault: ClientFault, id: u64, params: &Value) -> Option<Vec<u8>> {
    let mut params = params.clone();
    let mut method = methods::INITIALIZE;
    let mut jsonrpc = true;
    match fault {
        ClientFault::NoJsonrpc => jsonrpc = false,
        ClientFault::WrongMethod => method = "init",
        ClientFault::CapabilitiesNotObject => params["capabilities"] = json!(true),
        ClientFault::NoClientInfo => drop(params.as_object_mut()?.remove("clientInfo")),
        ClientFault::UnknownVersion => params["protocolVersion"] = json!(UNKNOWN_VERSION),
        ClientFault::NoVersion => drop(params.as_object_mut()?.remove("protocolVersion")),
        _ => return None,
    }
    let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    if !jsonrpc {
        msg.as_object_mut()?.remove("jsonrpc");
    }
    serde_json::to_vec(&msg).ok()
}

/// A request that is not JSON: a `ping` cut off mid-object.
pub fn invalid_json(id: u64) -> Vec<u8> {
    format!("{{\"jsonrpc\": \"2.0\", \"id\": {id}, \"method\": \"ping\", \"params\": {{")
        .into_bytes()
}

/// A `ping` carrying several MiB of padding.
pub fn oversized_params() -> Value {
    json!({ "padding": "x".repeat(OVERSIZED_BYTES) })
}

/// A request of a capability the server did not declare: the first of completions,
/// logging, resources, prompts it lacks; else `sampling/createMessage`, a client's
/// capability that no server declares.
pub fn undeclared(declares: impl Fn(&str) -> bool) -> (&'static str, Value) {
    let candidates = [
        (
            "completions",
            methods::COMPLETION_COMPLETE,
            json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
        ),
        (
            "logging",
            methods::LOGGING_SET_LEVEL,
            json!({"level": "info"}),
        ),
        ("resources", methods::RESOURCES_LIST, json!({})),
        ("prompts", methods::PROMPTS_LIST, json!({})),
    ];
    for (cap, method, params) in candidates {
        if !declares(cap) {
            return (method, params);
        }
    }
    (
        "sampling/createMessage",
        json!({"messages": [], "maxTokens": 1}),
    )
}

/// Arguments that break `schema`: every typed property given a value of another type.
/// None when the schema types nothing (no arguments can break it).
pub fn breaking_arguments(schema: &Value) -> Option<Value> {
    let props = schema.get("properties")?.as_object()?;
    let mut args = Map::new();
    for (name, p) in props {
        let wrong = match p.get("type").and_then(Value::as_str) {
            Some("string") => json!({"not": "a string"}),
            Some("number" | "integer") => json!("not a number"),
            Some("boolean") => json!("not a boolean"),
            Some("object") => json!(7),
            Some("array") => json!(7),
            _ => continue,
        };
        args.insert(name.clone(), wrong);
    }
    (!args.is_empty()).then_some(Value::Object(args))
}

/// `tools/call` params.
pub fn call(tool: &str, arguments: Value) -> Value {
    json!({"name": tool, "arguments": arguments})
}

/// A plain request's bytes.
pub fn request(id: u64, method: &str, params: &Value) -> Vec<u8> {
    encode_request(id, method, Some(params))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_faults_break_what_they_say() {
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}});
        let get = |f| -> Value {
            serde_json::from_slice(&initialize(f, 3, &params).expect("a handshake fault"))
                .expect("json")
        };
        assert!(get(ClientFault::NoJsonrpc).get("jsonrpc").is_none());
        assert_eq!(get(ClientFault::WrongMethod)["method"], "init");
        assert_eq!(
            get(ClientFault::CapabilitiesNotObject)["params"]["capabilities"],
            true
        );
        assert!(get(ClientFault::NoClientInfo)["params"]
            .get("clientInfo")
            .is_none());
        assert_eq!(
            get(ClientFault::UnknownVersion)["params"]["protocolVersion"],
            UNKNOWN_VERSION
        );
        assert!(get(ClientFault::NoVersion)["params"]
            .get("protocolVersion")
            .is_none());
        assert_eq!(get(ClientFault::NoVersion)["id"], 3);
        assert!(initialize(ClientFault::Vanish, 3, &params).is_none());
        assert!(serde_json::from_slice::<Value>(&invalid_json(4)).is_err());
    }

    #[test]
    fn arguments_break_the_schema() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "s": {"type": "string"}, "free": {}}});
        let args = breaking_arguments(&schema).expect("typed");
        assert!(args["a"].is_string());
        assert!(args["s"].is_object());
        assert!(args.get("free").is_none());
        assert!(breaking_arguments(&json!({"type": "object", "properties": {}})).is_none());
    }

    #[test]
    fn undeclared_picks_what_is_missing() {
        assert_eq!(undeclared(|c| c != "logging").0, methods::LOGGING_SET_LEVEL);
        assert_eq!(undeclared(|_| true).0, "sampling/createMessage");
    }
}
