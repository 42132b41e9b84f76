//! What a session learns about tasks (protocol 2025-11-25) for the client to use: each
//! listed tool's `execution.taskSupport`, whether the server takes task-augmented
//! `tools/call`, and the `notifications/tasks/status` that arrived (counted, kept until
//! the client polling that task takes them).

use super::Session;
use crate::metrics::Counter;
use crate::protocol::task::{TaskState, TaskStatus, TaskSupport};
use crate::protocol::Era;
use serde_json::Value;
use std::collections::HashMap;

/// Most status notifications kept for polling clients; older ones are dropped.
const MAX_NOTICES: usize = 256;

/// A session's task state.
#[derive(Debug, Default)]
pub(crate) struct SessionTasks {
    support: HashMap<String, TaskSupport>,
    notices: Vec<(String, TaskStatus)>,
    /// The call in flight is expected to be refused with -32601 (a task-required tool
    /// called directly): not a missing capability.
    pub(crate) refusal_expected: bool,
    /// The session already ran its checked task (see `client::tasks`).
    pub(crate) checked: bool,
}

impl Session<'_> {
    /// Whether the server declared `tasks.requests.tools.call` (2025-11-25 sessions).
    pub fn server_runs_tool_tasks(&self) -> bool {
        self.era == Era::Legacy
            && self.server.as_ref().is_some_and(|s| {
                s.capabilities
                    .pointer("/tasks/requests/tools/call")
                    .is_some_and(Value::is_object)
            })
    }

    /// Whether this session has listed any tool yet.
    pub fn tools_listed(&self) -> bool {
        !self.tool_schemas.is_empty()
    }

    /// What the listing said of `tool`'s `execution.taskSupport`.
    pub fn task_support(&self, tool: &str) -> TaskSupport {
        self.tasks
            .support
            .get(tool)
            .copied()
            .unwrap_or(TaskSupport::Forbidden)
    }

    pub(super) fn learn_task_support(&mut self, tool: &Value) {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            let support = TaskSupport::of_tool(tool);
            if support == TaskSupport::Forbidden {
                self.tasks.support.remove(name);
            } else {
                self.tasks.support.insert(name.to_string(), support);
            }
        }
    }

    /// A `notifications/tasks/status` arrived: counted, and kept for the task's poller.
    pub(super) fn task_status(&mut self, params: Option<&Value>) {
        self.recorder.count(Counter::TaskStatusNotifications);
        if let Some(t) = params.and_then(TaskState::parse) {
            if self.tasks.notices.len() == MAX_NOTICES {
                self.tasks.notices.remove(0);
            }
            self.tasks.notices.push((t.id, t.status));
        }
    }

    /// The statuses notified for task `id` since the last call, oldest first.
    pub fn take_task_notices(&mut self, id: &str) -> Vec<TaskStatus> {
        let mut taken = Vec::new();
        self.tasks.notices.retain(|(t, s)| {
            if t == id {
                taken.push(*s);
            }
            t != id
        });
        taken
    }

    /// The next call is (or is no longer) expected to be refused with -32601.
    pub fn expect_refusal(&mut self, expected: bool) {
        self.tasks.refusal_expected = expected;
    }

    /// Whether this session's checked task is still to come; marks it taken.
    pub fn take_checked_task(&mut self) -> bool {
        !std::mem::replace(&mut self.tasks.checked, true)
    }
}
