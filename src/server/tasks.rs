//! Tasks of the reference server (protocol 2025-11-25, `serve --tasks`): two task-capable
//! tools (`slow_report` requires a task, `quick_report` allows one), a bounded store per
//! server (ttl expiry, a cap), `tasks/get`, `tasks/result` (waits for a terminal
//! status), `tasks/cancel`, `tasks/list` (paginated) and `notifications/tasks/status` on
//! every status change where the transport can carry it; and the task faults.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::notifier::Notifier;
use crate::protocol::jsonrpc::{codes, encode_notification};
use crate::protocol::methods as m;
use crate::protocol::task::{TaskStatus, RELATED_TASK};
use crate::protocol::RpcError;

mod tools;
use tools::{arguments, report};
pub use tools::{TaskTool, MAX_MS};

/// The ttl granted when none is asked, and the most granted.
const DEFAULT_TTL_MS: u64 = 60_000;
const MAX_TTL_MS: u64 = 600_000;
/// The `pollInterval` suggested to clients.
pub const POLL_INTERVAL_MS: u64 = 50;
/// Most tasks kept at once (expired ones are dropped first).
pub const CAPACITY: usize = 4096;
/// Tasks per `tasks/list` page.
const PAGE: usize = 20;

/// The `serve --fault` mistakes about tasks.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskFaults {
    /// Tasks never leave `working` (tasks.stuck-working).
    pub stuck: bool,
    /// After a completed task was read once, it reads `working` again
    /// (tasks.status-out-of-order).
    pub regress: bool,
    /// `tasks/result` answers at once while the task is still `working`
    /// (tasks.result-before-completion).
    pub early_result: bool,
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError {
        code: codes::INVALID_PARAMS,
        message: message.into(),
        data: None,
    }
}

fn not_found(message: impl Into<String>) -> RpcError {
    RpcError {
        code: codes::METHOD_NOT_FOUND,
        message: message.into(),
        data: None,
    }
}

/// A request that concerns tasks, answered here; `None` for everything else. Task
/// methods of a session that was not told about tasks get -32601.
pub async fn dispatch(
    store: &Arc<TaskStore>,
    declared: bool,
    method: &str,
    params: &Value,
    notifier: &Notifier,
) -> Option<Result<Value, RpcError>> {
    match method {
        m::TOOLS_CALL => tools_call(store, declared, params, notifier).await,
        m::TASKS_GET | m::TASKS_RESULT | m::TASKS_CANCEL | m::TASKS_LIST if declared => {
            Some(store.request(method, params).await)
        }
        m::TASKS_GET | m::TASKS_RESULT | m::TASKS_CANCEL | m::TASKS_LIST => {
            Some(Err(not_found("Method not found")))
        }
        _ => None,
    }
}

/// The `tasks` server capability, declared to 2025-11-25 sessions.
pub fn capability() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
}

/// A `tools/call` that concerns tasks: `None` when it is an ordinary call for the
/// catalog. `declared` says the session was told `tasks.requests.tools.call`; where it
/// was not, the `task` field is ignored and the report tools run directly, as the spec
/// asks of receivers that do not declare tasks.
pub async fn tools_call(
    store: &Arc<TaskStore>,
    declared: bool,
    params: &Value,
    notifier: &Notifier,
) -> Option<Result<Value, RpcError>> {
    let tool = params
        .get("name")
        .and_then(Value::as_str)
        .and_then(TaskTool::from_name);
    let task = params.get("task").filter(|t| !t.is_null());
    match (tool, task) {
        (None, Some(_)) if declared => Some(Err(not_found(
            "Method not found: this tool does not support task-augmented calls",
        ))),
        (None, _) => None,
        (Some(tool), Some(task)) if declared => {
            let ttl = task.get("ttl").and_then(Value::as_u64);
            Some(match arguments(params) {
                Ok((ms, fail)) => store.create(tool, ms, fail, ttl, notifier),
                Err(e) => Err(e),
            })
        }
        (Some(TaskTool::SlowReport), _) if declared => Some(Err(not_found(
            "Method not found: slow_report must be called as a task (params.task)",
        ))),
        (Some(tool), _) => Some(match arguments(params) {
            Ok((ms, fail)) => Ok(tool.run(ms, fail).await.0),
            Err(e) => Err(e),
        }),
    }
}

/// One task.
#[derive(Debug)]
struct Entry {
    id: String,
    status: TaskStatus,
    created_at: String,
    updated_at: String,
    ttl_ms: u64,
    expires: Instant,
    /// The tool's result, once the work ended (or at once with `early_result`).
    result: Option<Value>,
    /// Status changes, for `tasks/result` waiters.
    changes: watch::Sender<TaskStatus>,
    /// Reads of the task since it completed (for `regress`).
    completed_reads: u32,
    work: Option<AbortHandle>,
    /// Where status notifications go: the connection of the creating request.
    notifier: Notifier,
}

impl Entry {
    fn json(&self, status: TaskStatus) -> Value {
        let message = match status {
            TaskStatus::Working => "The report is being built.",
            TaskStatus::InputRequired => "The report needs input.",
            TaskStatus::Completed => "The report is ready.",
            TaskStatus::Failed => "The report failed.",
            TaskStatus::Cancelled => "The task was cancelled by request.",
        };
        json!({"taskId": self.id, "status": status.name(), "statusMessage": message,
            "createdAt": self.created_at, "lastUpdatedAt": self.updated_at,
            "ttl": self.ttl_ms, "pollInterval": POLL_INTERVAL_MS})
    }

    fn set(&mut self, status: TaskStatus) {
        self.status = status;
        self.updated_at = now();
        self.changes.send_replace(status);
        let params = self.json(status);
        self.notifier
            .send(encode_notification(m::TASKS_STATUS, Some(&params)));
    }
}

fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// The tasks of one server.
#[derive(Debug)]
pub struct TaskStore {
    tasks: Mutex<BTreeMap<u64, Entry>>,
    next: AtomicU64,
    /// Makes task ids of different servers differ.
    salt: u32,
    faults: TaskFaults,
}

impl TaskStore {
    pub fn new(faults: TaskFaults) -> TaskStore {
        TaskStore {
            tasks: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(1),
            salt: rand::random(),
            faults,
        }
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Entry>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number of a task id of this server.
    fn number(&self, id: &str) -> Option<u64> {
        let (salt, n) = id.split_once('-')?;
        (u32::from_str_radix(salt, 16).ok()? == self.salt).then_some(())?;
        n.parse().ok()
    }

    fn create(
        self: &Arc<Self>,
        tool: TaskTool,
        ms: u64,
        fail: bool,
        ttl: Option<u64>,
        notifier: &Notifier,
    ) -> Result<Value, RpcError> {
        let ttl_ms = ttl.unwrap_or(DEFAULT_TTL_MS).clamp(1, MAX_TTL_MS);
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut tasks = self.lock();
        let now_i = Instant::now();
        tasks.retain(|_, e| e.expires > now_i);
        if tasks.len() >= CAPACITY {
            return Err(RpcError {
                code: codes::INTERNAL_ERROR,
                message: format!("too many tasks (at most {CAPACITY} are kept); retry later"),
                data: None,
            });
        }
        let stamp = now();
        let entry = Entry {
            id: format!("{:08x}-{n}", self.salt),
            status: TaskStatus::Working,
            created_at: stamp.clone(),
            updated_at: stamp,
            ttl_ms,
            expires: now_i + Duration::from_millis(ttl_ms),
            result: self.faults.early_result.then(|| report(ms, fail).0),
            changes: watch::channel(TaskStatus::Working).0,
            completed_reads: 0,
            work: None,
            notifier: notifier.clone(),
        };
        let created = json!({"task": entry.json(TaskStatus::Working)});
        tasks.insert(n, entry);
        drop(tasks);
        if !self.faults.stuck {
            let store = Arc::clone(self);
            let work = tokio::spawn(async move {
                let (result, failed) = tool.run(ms, fail).await;
                store.finish(n, result, failed);
            });
            if let Some(e) = self.lock().get_mut(&n) {
                e.work = Some(work.abort_handle());
            }
        }
        Ok(created)
    }

    /// The work ended; a cancelled task stays cancelled.
    fn finish(&self, n: u64, result: Value, failed: bool) {
        if let Some(e) = self.lock().get_mut(&n) {
            if e.status.is_terminal() {
                return;
            }
            e.result = Some(result);
            e.set(if failed {
                TaskStatus::Failed
            } else {
                TaskStatus::Completed
            });
        }
    }

    /// `tasks/get`, `tasks/result`, `tasks/cancel`, `tasks/list`.
    pub async fn request(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        if method == m::TASKS_LIST {
            return self.list(params);
        }
        let id = params
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid(format!("{method} needs params.taskId (a string)")))?;
        let n = self
            .number(id)
            .ok_or_else(|| invalid(format!("Unknown task {id:?}")))?;
        match method {
            m::TASKS_GET => self.with(n, id, |e| Ok(self.read(e))),
            m::TASKS_CANCEL => self.with(n, id, |e| {
                if e.status.is_terminal() {
                    return Err(invalid(format!(
                        "Cannot cancel a task that is already {}",
                        e.status.name()
                    )));
                }
                if let Some(w) = e.work.take() {
                    w.abort();
                }
                e.set(TaskStatus::Cancelled);
                Ok(e.json(TaskStatus::Cancelled))
            }),
            _ => self.result(n, id).await,
        }
    }

    fn with(
        &self,
        n: u64,
        id: &str,
        f: impl FnOnce(&mut Entry) -> Result<Value, RpcError>,
    ) -> Result<Value, RpcError> {
        let mut tasks = self.lock();
        match tasks.get_mut(&n).filter(|e| e.expires > Instant::now()) {
            Some(e) => f(e),
            None => Err(invalid(format!("Unknown or expired task {id:?}"))),
        }
    }

    /// A task as `tasks/get` shows it (with `regress`: `working` after the first read of
    /// a completed task).
    fn read(&self, e: &mut Entry) -> Value {
        if e.status == TaskStatus::Completed {
            e.completed_reads += 1;
            if self.faults.regress && e.completed_reads > 1 {
                return e.json(TaskStatus::Working);
            }
        }
        e.json(e.status)
    }

    /// `tasks/result`: waits for a terminal status (at most until the task expires).
    async fn result(&self, n: u64, id: &str) -> Result<Value, RpcError> {
        let (mut changes, expires) = {
            let mut tasks = self.lock();
            let e = tasks
                .get_mut(&n)
                .ok_or_else(|| invalid(format!("Unknown or expired task {id:?}")))?;
            (e.changes.subscribe(), e.expires)
        };
        loop {
            {
                let tasks = self.lock();
                let e = tasks
                    .get(&n)
                    .ok_or_else(|| invalid(format!("Unknown or expired task {id:?}")))?;
                let early = self.faults.early_result && e.result.is_some();
                if e.status.is_terminal() || early {
                    return match (&e.result, e.status) {
                        (Some(r), _) => {
                            let mut r = r.clone();
                            r["_meta"] = json!({ RELATED_TASK: {"taskId": id} });
                            Ok(r)
                        }
                        _ => Err(invalid(format!("Task {id:?} was cancelled: no result"))),
                    };
                }
            }
            match tokio::time::timeout_at(expires, changes.changed()).await {
                Ok(Ok(())) => {}
                _ => return Err(invalid(format!("Task {id:?} expired before it ended"))),
            }
        }
    }

    fn list(&self, params: &Value) -> Result<Value, RpcError> {
        let after = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(c) => c
                .as_str()
                .and_then(|c| c.parse::<u64>().ok())
                .ok_or_else(|| invalid("Invalid cursor"))?,
        };
        let now_i = Instant::now();
        let tasks = self.lock();
        let mut page: Vec<(u64, Value)> = tasks
            .range(after + 1..)
            .filter(|(_, e)| e.expires > now_i)
            .take(PAGE + 1)
            .map(|(n, e)| (*n, e.json(e.status)))
            .collect();
        let next = (page.len() > PAGE).then(|| {
            page.truncate(PAGE);
            page.last().map(|(n, _)| n.to_string())
        });
        let items: Vec<Value> = page.into_iter().map(|(_, v)| v).collect();
        Ok(match next.flatten() {
            Some(c) => json!({"tasks": items, "nextCursor": c}),
            None => json!({"tasks": items}),
        })
    }
}

#[cfg(test)]
mod tests;
