//! The legacy lifecycle's `initialize`: the version negotiated (echoed when served,
//! else our latest, as a counter-offer), the params a server can work with, the
//! capabilities remembered for the session.

use serde_json::{json, Value};

use super::reply::{invalid_params, rpc_error, Reply};
use super::{Handler, Session};
use crate::protocol::jsonrpc::codes;
use crate::protocol::version::{legacy_versions, LATEST_LEGACY};
use crate::protocol::RpcError;

impl Handler {
    pub(super) fn initialize(
        &self,
        session: &Session,
        params: Option<&Value>,
    ) -> Result<Reply<'_>, RpcError> {
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .or(self
                .faults
                .has(crate::server::Fault::AcceptInvalid)
                .then_some(LATEST_LEGACY))
            .ok_or_else(|| invalid_params("initialize needs params.protocolVersion (a string)"))?;
        if !self.faults.has(crate::server::Fault::AcceptInvalid) {
            check_initialize(params)?;
        }
        let version = negotiate(requested);
        if session.version.set(version).is_err() {
            return Err(rpc_error(
                codes::INVALID_REQUEST,
                "Server already initialized",
            ));
        }
        let caps = params
            .and_then(|p| p.get("capabilities"))
            .filter(|c| c.is_object())
            .cloned()
            .unwrap_or_else(|| json!({}));
        let _ = session.client_capabilities.set(caps);
        self.faults.session_started();
        let tail = match self.tasks {
            Some(_) if version == LATEST_LEGACY => &self.init_tail_tasks,
            _ => &self.init_tail,
        };
        Ok(Reply::Owned(format!(
            "{{\"protocolVersion\":\"{version}\"{tail}"
        )))
    }
}

/// `initialize` params a server can work with: `capabilities` an object and `clientInfo`
/// with a name, as the schema requires. A bare `{protocolVersion}` (minimal probes and
/// older tests send no more) is still served; a client that says something about
/// itself must say it right.
fn check_initialize(params: Option<&Value>) -> Result<(), RpcError> {
    let field = |k: &str| params.and_then(|p| p.get(k));
    let (caps, info) = (field("capabilities"), field("clientInfo"));
    if caps.is_none() && info.is_none() {
        return Ok(());
    }
    if !caps.is_some_and(Value::is_object) {
        return Err(invalid_params(
            "initialize needs params.capabilities (an object)",
        ));
    }
    if !info
        .and_then(|c| c.get("name"))
        .is_some_and(Value::is_string)
    {
        return Err(invalid_params(
            "initialize needs params.clientInfo with a name",
        ));
    }
    Ok(())
}

/// Echo a legacy version we speak; otherwise counter-offer our latest (a result, not an
/// error, as the legacy spec and the SDK servers do).
pub fn negotiate(requested: &str) -> &'static str {
    legacy_versions()
        .find(|v| *v == requested)
        .unwrap_or(LATEST_LEGACY)
}
