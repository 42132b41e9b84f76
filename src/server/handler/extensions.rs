//! Protocol extensions (SEP-2133) as the reference server treats a `tools/call`:
//! `serve --require-extension ID` refuses a client that did not declare ID, and the
//! `task-undeclared` fault answers with the tasks extension's `resultType: "task"` a
//! client that did not declare it.

use serde_json::json;

use super::reply::Reply;
use super::{Ctx, Handler};
use crate::protocol::jsonrpc::codes;
use crate::protocol::RpcError;

impl Handler {
    /// What a `tools/call` gets instead of running, for its client's extensions.
    pub(super) fn extension_answer(&self, ctx: &Ctx<'_>) -> Option<Result<Reply<'_>, RpcError>> {
        if let Some(id) = self.lacks_extension(ctx) {
            return Some(Err(RpcError {
                code: codes::INVALID_PARAMS,
                message: format!(
                    "This server requires the extension {id}: declare it in capabilities.extensions"
                ),
                data: Some(json!({ "requiredExtensions": [id] })),
            }));
        }
        self.task_undeclared(ctx).then(|| {
            Ok(Reply::Value(json!({
                "resultType": "task",
                "task": {"taskId": "fleet-task-1", "status": "working"},
            })))
        })
    }

    /// The `task-undeclared` fault: a modern client without the tasks extension.
    fn task_undeclared(&self, ctx: &Ctx<'_>) -> bool {
        self.faults.has(crate::server::Fault::TaskUndeclared)
            && matches!(ctx, Ctx::Modern { caps, .. }
                if caps.get("extensions").and_then(|e| e.get("io.modelcontextprotocol/tasks")).is_none())
    }

    /// The first required extension the client of `ctx` did not declare.
    fn lacks_extension(&self, ctx: &Ctx<'_>) -> Option<&str> {
        let caps = match ctx {
            Ctx::Legacy { session, .. } => session.client_capabilities.get(),
            Ctx::Modern { caps, .. } => Some(*caps),
        };
        let declared = caps.and_then(|c| c.get("extensions"));
        self.require_extensions
            .iter()
            .find(|id| declared.and_then(|d| d.get(id.as_str())).is_none())
            .map(String::as_str)
    }
}
