//! The legacy-era handshake (2024-11-05 … 2025-11-25): `initialize`, check the answer,
//! then `notifications/initialized`. A server that answers a version the persona does
//! not accept ends the session as `version_rejected`, as the spec tells a client to.

use super::{Failure, Session};
use crate::metrics::FailureKind;
use crate::plan::Persona;
use crate::protocol::{methods, ProtocolVersion};
use serde_json::Value;

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone)]
pub struct ServerInfo {
    pub protocol_version: String,
    pub capabilities: Value,
    pub name: String,
    pub version: String,
}

impl ServerInfo {
    /// Whether the server declared capability `key` (present and an object).
    pub fn declares(&self, key: &str) -> bool {
        self.capabilities.get(key).is_some_and(Value::is_object)
    }

    /// Check the shape of an `InitializeResult`.
    pub fn from_result(result: &Value) -> Result<ServerInfo, Failure> {
        let bad = |what: &str| {
            Failure::new(
                FailureKind::InvalidResult,
                format!("initialize result: {what}"),
            )
        };
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`protocolVersion` is missing or not a string"))?;
        let capabilities = result
            .get("capabilities")
            .filter(|c| c.is_object())
            .ok_or_else(|| bad("`capabilities` is missing or not an object"))?;
        let info = result
            .get("serverInfo")
            .filter(|c| c.is_object())
            .ok_or_else(|| bad("`serverInfo` is missing or not an object"))?;
        let name = info
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`serverInfo.name` is missing or not a string"))?;
        let server_version = info
            .get("version")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("`serverInfo.version` is missing or not a string"))?;
        Ok(ServerInfo {
            protocol_version: version.to_string(),
            capabilities: capabilities.clone(),
            name: name.to_string(),
            version: server_version.to_string(),
        })
    }
}

impl Session {
    /// `initialize` and its checks. The caller times it as the `initialize` phase.
    pub async fn initialize(&mut self, persona: &Persona) -> Result<(), Failure> {
        let result = self
            .request(methods::INITIALIZE, Some(persona.initialize_params.clone()))
            .await?;
        let info = ServerInfo::from_result(&result)?;
        if !persona
            .accept_versions
            .iter()
            .any(|v| v == &info.protocol_version)
        {
            return Err(Failure::new(
                FailureKind::VersionRejected,
                format!(
                    "the server answered protocol version {:?}; persona {:?} accepts {}",
                    info.protocol_version,
                    persona.name,
                    persona.accept_versions.join(", ")
                ),
            ));
        }
        let negotiated = ProtocolVersion::new(info.protocol_version.clone());
        let header = negotiated
            .sends_version_header()
            .then_some(info.protocol_version.as_str());
        self.transport.set_protocol_version(header);
        self.server = Some(info);
        Ok(())
    }

    /// `notifications/initialized`; timed as the `initialized` phase.
    pub async fn initialized(&mut self) -> Result<(), Failure> {
        self.notify(methods::INITIALIZED, None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_a_complete_result() {
        let info = ServerInfo::from_result(&json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "s", "version": "1"}
        }))
        .expect("valid");
        assert!(info.declares("tools"));
        assert!(!info.declares("prompts"));
    }

    #[test]
    fn names_what_is_missing() {
        let cases = [
            (json!({}), "`protocolVersion` is missing"),
            (
                json!({"protocolVersion": 3}),
                "`protocolVersion` is missing or not a string",
            ),
            (
                json!({"protocolVersion": "x", "capabilities": []}),
                "`capabilities` is missing or not an object",
            ),
            (
                json!({"protocolVersion": "x", "capabilities": {}}),
                "`serverInfo` is missing",
            ),
            (
                json!({"protocolVersion": "x", "capabilities": {}, "serverInfo": {"name": "n"}}),
                "`serverInfo.version` is missing",
            ),
        ];
        for (v, want) in cases {
            let e = ServerInfo::from_result(&v).expect_err("invalid");
            assert_eq!(e.kind, FailureKind::InvalidResult);
            assert!(e.detail.contains(want), "{} vs {want}", e.detail);
        }
    }
}
