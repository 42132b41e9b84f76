//! The undeclared-capability probe: a session calls the list method of each capability
//! the server did not declare and expects -32601, a check rather than load.

use crate::conformance::Check;
use crate::metrics::FailureKind;
use crate::protocol::jsonrpc::codes;
use crate::protocol::methods;
use crate::session::Session;
use serde_json::Value;

/// Who probes the list methods of the capabilities the server did not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// `--probe-undeclared`: every session, and an error other than -32601 is a finding.
    EverySession,
    /// A default run, once per run and target: only a list that works although its
    /// capability is undeclared (the common "tools registered, `tools: {}` forgotten").
    OncePerTarget,
}

/// Call the list method of each capability the server did not declare and expect
/// -32601. Not timed: it is a check, not load.
pub async fn probe_undeclared(session: &mut Session<'_>, probe: Probe) {
    let Some(caps) = session.server.as_ref().map(|s| s.capabilities.clone()) else {
        return;
    };
    if !caps.is_object() {
        return; // unknown capabilities (a modern server without discover): nothing to probe
    }
    for (cap, method) in [
        ("tools", methods::TOOLS_LIST),
        ("resources", methods::RESOURCES_LIST),
        ("prompts", methods::PROMPTS_LIST),
    ] {
        if caps.get(cap).is_some_and(Value::is_object) {
            continue;
        }
        match session.request(method, None).await {
            // `{}` is not a list: the method does not work, it answers wrongly.
            Ok(result) => match crate::conformance::list_result(method, &result) {
                Some(problem) if probe == Probe::EverySession => session
                    .finding(Check::ListInvalidResult, || {
                        format!("{method} ({cap:?} not declared): {problem}")
                    }),
                Some(_) => {}
                None => session.finding(Check::CapabilityUndeclaredButWorks, || {
                    format!(
                        "{method} works although the capabilities do not declare {cap:?}; \
                     clients will not call it: add \"{cap}\": {{}} to the capabilities"
                    )
                }),
            },
            Err(f) => match f.kind {
                FailureKind::RpcError(codes::METHOD_NOT_FOUND) => {}
                FailureKind::RpcError(_) | FailureKind::HttpStatus(_)
                    if probe == Probe::EverySession =>
                {
                    session.finding(Check::CapabilityUndeclaredWrongError, || {
                        format!("{method} ({cap:?} not declared): {}", f.detail)
                    })
                }
                FailureKind::RpcError(_) | FailureKind::HttpStatus(_) => {}
                // The connection is gone: nothing more to learn.
                _ => return,
            },
        }
    }
}
