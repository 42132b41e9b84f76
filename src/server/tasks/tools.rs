//! The task-capable tools of the reference server: `slow_report` (`execution.taskSupport
//! = "required"`) and `quick_report` (`"optional"`), both building a report for `ms`
//! milliseconds, failing on `fail: true`.

use std::time::Duration;

use serde_json::{json, Value};

use super::invalid;
use crate::protocol::task::TaskSupport;
use crate::protocol::RpcError;

/// Longest `ms` a report tool accepts.
pub const MAX_MS: u64 = 60_000;

/// The task-capable tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskTool {
    SlowReport,
    QuickReport,
}

impl TaskTool {
    pub const ALL: [TaskTool; 2] = [TaskTool::SlowReport, TaskTool::QuickReport];

    pub fn name(self) -> &'static str {
        match self {
            TaskTool::SlowReport => "slow_report",
            TaskTool::QuickReport => "quick_report",
        }
    }

    pub fn support(self) -> TaskSupport {
        match self {
            TaskTool::SlowReport => TaskSupport::Required,
            TaskTool::QuickReport => TaskSupport::Optional,
        }
    }

    pub(super) fn from_name(name: &str) -> Option<TaskTool> {
        TaskTool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Its `Tool` object in `tools/list`.
    pub fn definition(self) -> Value {
        let (title, description, default_ms) = match self {
            TaskTool::SlowReport => ("Slow report",
                "Builds a report for `ms` milliseconds; must be called as a task (protocol 2025-11-25). `fail: true` makes the task fail.", 200),
            TaskTool::QuickReport => ("Quick report",
                "Builds a report for `ms` milliseconds; may be called as a task or directly. `fail: true` makes it fail.", 20),
        };
        json!({"name": self.name(), "title": title, "description": description,
            "inputSchema": {"type": "object", "properties": {
                "ms": {"type": "integer", "minimum": 0, "maximum": MAX_MS, "default": default_ms},
                "fail": {"type": "boolean", "default": false}},
                "required": []},
            "execution": {"taskSupport": self.support().name()},
            "annotations": {"title": title, "readOnlyHint": true, "destructiveHint": false,
                "idempotentHint": true, "openWorldHint": false}})
    }

    /// The work: wait `ms`, then the tool's result and whether it failed.
    pub(super) async fn run(self, ms: u64, fail: bool) -> (Value, bool) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        report(ms, fail)
    }
}

pub(super) fn report(ms: u64, fail: bool) -> (Value, bool) {
    if fail {
        let text = format!("the report failed after {ms} ms (fail: true)");
        (
            json!({"content": [{"type": "text", "text": text}], "isError": true}),
            true,
        )
    } else {
        let text = format!("report ready after {ms} ms");
        (
            json!({"content": [{"type": "text", "text": text}],
                "structuredContent": {"ms": ms}}),
            false,
        )
    }
}

/// `ms` and `fail` of a call, checked.
pub(super) fn arguments(params: &Value) -> Result<(u64, bool), RpcError> {
    let args = params.get("arguments").unwrap_or(&Value::Null);
    let ms = match args.get("ms") {
        None | Some(Value::Null) => 100,
        Some(v) => v
            .as_u64()
            .filter(|ms| *ms <= MAX_MS)
            .ok_or_else(|| invalid(format!("ms must be an integer from 0 to {MAX_MS}")))?,
    };
    let fail = match args.get("fail") {
        None | Some(Value::Null) => false,
        Some(v) => v
            .as_bool()
            .ok_or_else(|| invalid("fail must be a boolean"))?,
    };
    Ok((ms, fail))
}
