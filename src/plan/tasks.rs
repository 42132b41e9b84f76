//! `tasks = {...}` of a persona resolved: which tool calls become task-augmented
//! (protocol 2025-11-25), how they are polled and how many are cancelled.

use super::PlanError;
use crate::profile::PersonaSection;
use std::time::Duration;

/// Which tools a persona calls as tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskCalls {
    /// Never as tasks (a tool that requires one is then refused by the server).
    Never,
    /// Only tools whose `execution.taskSupport` is `required`.
    Required,
    /// Tools whose `execution.taskSupport` is `required` or `optional`.
    Allowed,
}

/// A persona's task policy.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPolicy {
    pub calls: TaskCalls,
    /// Share of tasks cancelled after their first poll.
    pub cancel: f64,
    /// The `ttl` asked for each task.
    pub ttl: Option<Duration>,
    /// Poll interval when the server gives no `pollInterval`.
    pub poll_interval: Duration,
}

impl Default for TaskPolicy {
    /// Without a `tasks` section a persona still calls task-required tools as tasks
    /// (else they cannot be called at all), never cancels.
    fn default() -> Self {
        TaskPolicy {
            calls: TaskCalls::Required,
            cancel: 0.0,
            ttl: None,
            poll_interval: Duration::from_millis(100),
        }
    }
}

impl TaskPolicy {
    pub fn from_section(
        _p: &PersonaSection,
        _key: &str,
        _origin: &str,
    ) -> Result<TaskPolicy, PlanError> {
        // Contract stub: the tasks part fills this in.
        Ok(TaskPolicy::default())
    }
}
