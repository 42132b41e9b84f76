//! `tasks = {…}` of a persona: which tools are called as tasks, and how many are
//! cancelled.

use serde::{Deserialize, Serialize};

/// `tasks = { call = "allowed", cancel = 0.1 }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TasksSection {
    /// Which tools are called as tasks: `required` (only tools whose
    /// `execution.taskSupport` is `required`), `allowed` (also `optional`; the default)
    /// or `never`.
    pub call: Option<String>,
    /// Share (0…1) of tasks cancelled (`tasks/cancel`) after their first poll. Default 0.
    pub cancel: Option<f64>,
    /// The `ttl` requested for each task, e.g. `"60s"`. Default: none (the server's).
    pub ttl: Option<String>,
    /// Poll interval when the server gives no `pollInterval`. Default `"100ms"`.
    pub poll_interval: Option<String>,
}
