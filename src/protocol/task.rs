//! The words of MCP tasks (protocol 2025-11-25, `basic/utilities/tasks`): a tool's
//! `execution.taskSupport`, a task's status, the `related-task` `_meta` key, and the
//! `Task` object as both the client and the reference server read it.

use serde_json::Value;

/// `_meta` key that ties a message (here: a `tasks/result`) to its task.
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// A tool's `execution.taskSupport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSupport {
    /// Absent or `"forbidden"`: the tool MUST NOT be called as a task.
    Forbidden,
    Optional,
    /// The tool MUST be called as a task; a direct call gets -32601.
    Required,
}

impl TaskSupport {
    /// What a `Tool` object of `tools/list` declares.
    pub fn of_tool(tool: &Value) -> TaskSupport {
        match tool
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStatus {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn from_name(name: &str) -> Option<TaskStatus> {
        Some(match name {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// `completed`, `failed` and `cancelled` are terminal: no status follows them.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// What the client needs of a `Task` object (`CreateTaskResult.task`, a `tasks/get`
/// result, a status notification's params).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskState {
    pub id: String,
    pub status: TaskStatus,
    /// Granted lifetime in ms (`None`: unlimited or not given).
    pub ttl_ms: Option<u64>,
    pub poll_interval_ms: Option<u64>,
}

impl TaskState {
    /// Read a `Task` object; `None` when `taskId` or a known `status` is missing.
    pub fn parse(task: &Value) -> Option<TaskState> {
        Some(TaskState {
            id: task.get("taskId")?.as_str()?.to_string(),
            status: TaskStatus::from_name(task.get("status")?.as_str()?)?,
            ttl_ms: task.get("ttl").and_then(Value::as_u64),
            poll_interval_ms: task.get("pollInterval").and_then(Value::as_u64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_object_is_read_with_its_status_and_intervals() {
        let t = json!({"taskId": "t1", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": 60000, "pollInterval": 50});
        let s = TaskState::parse(&t).expect("a task");
        assert_eq!((s.id.as_str(), s.status), ("t1", TaskStatus::Working));
        assert_eq!((s.ttl_ms, s.poll_interval_ms), (Some(60000), Some(50)));
        assert!(TaskState::parse(&json!({"taskId": "t1", "status": "done"})).is_none());
        assert!(TaskStatus::Cancelled.is_terminal() && !TaskStatus::InputRequired.is_terminal());
    }

    #[test]
    fn task_support_defaults_to_forbidden() {
        let tool = |e: Value| json!({"name": "x", "execution": e});
        assert_eq!(
            TaskSupport::of_tool(&json!({"name": "x"})),
            TaskSupport::Forbidden
        );
        assert_eq!(
            TaskSupport::of_tool(&tool(json!({"taskSupport": "required"}))),
            TaskSupport::Required
        );
        assert_eq!(
            TaskSupport::of_tool(&tool(json!({"taskSupport": "optional"}))),
            TaskSupport::Optional
        );
        assert_eq!(
            TaskSupport::of_tool(&tool(json!({"taskSupport": "sometimes"}))),
            TaskSupport::Forbidden
        );
    }
}
