//! Task-augmented tool calls (protocol 2025-11-25, `basic/utilities/tasks`): when the
//! server declares `tasks.requests.tools.call` and the tool's `execution.taskSupport`
//! and the persona's policy say so, a `tools/call` carries `task: { ttl }`. Its answer
//! (the `tools/call` sample) creates the task; `tasks/get` polls it at the server's
//! `pollInterval` (else the persona's) until a terminal status, which a status
//! notification may bring sooner; a drawn share is cancelled after the first poll; at
//! `completed` (or `failed`) `tasks/result` fetches the tool's result. The `task` sample
//! spans creation → terminal status, and polling stops at ttl + the request timeout.
//!
//! The first task of a session that is not cancelled is the *checked* one: after its
//! first poll it waits on `tasks/result` (the blocking pattern SDK clients also use)
//! and then reads its status twice; a result while the task still reads `working` is
//! `tasks.result-before-completion`, a terminal status that goes back is
//! `tasks.status-out-of-order`. The 2026-07-28 tasks extension is not spoken.

use super::timer::Timer;
use crate::conformance::Check;
use crate::metrics::{Counter, FailureKind, Outcome, Phase};
use crate::plan::{OnError, TaskCalls};
use crate::protocol::methods;
use crate::protocol::task::{TaskState, TaskStatus, TaskSupport};
use crate::session::{Failure, Session};
use rand::Rng;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// The ttl polled for when neither the server nor the persona gives one.
const DEFAULT_TTL: Duration = Duration::from_secs(60);
/// Bounds on the wait between two polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(1);
const MAX_POLL: Duration = Duration::from_secs(10);

/// Whether a call of `tool` is task-augmented in this session.
pub fn as_task(session: &Session<'_>, tool: &str) -> bool {
    if !session.server_runs_tool_tasks() {
        return false;
    }
    let calls = session.persona().tasks.calls;
    match session.task_support(tool) {
        TaskSupport::Required => calls != TaskCalls::Never,
        TaskSupport::Optional => calls == TaskCalls::Allowed,
        TaskSupport::Forbidden => false,
    }
}

/// Whether a direct call of `tool` is to be refused with -32601 (it requires a task).
pub fn refusal_expected(session: &Session<'_>, tool: &str) -> bool {
    session.server_runs_tool_tasks() && session.task_support(tool) == TaskSupport::Required
}

/// A task-augmented `tools/call` from creation to its end: the create's span and,
/// when the creation succeeded, the tool's result if one was fetched (`None`: the task
/// was cancelled, failed without a result, or got stuck — each counted in its phase).
pub async fn call(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    mut params: Value,
    on_error: OnError,
) -> ((Instant, Instant), Result<Option<Value>, Failure>) {
    let intended = timer.take_intended();
    let ttl = session.persona().tasks.ttl;
    params["task"] = match ttl {
        Some(d) => json!({"ttl": d.as_millis() as u64}),
        None => json!({}),
    };
    let t0 = Instant::now();
    let created = session.request(methods::TOOLS_CALL, Some(params)).await;
    let span = (t0, Instant::now());
    let outcome = match created {
        Err(f) => Err(f),
        Ok(r) => match r.get("task") {
            // The server ran it directly (it may ignore the task field): the result.
            None => Ok(Some(r)),
            Some(task) => match TaskState::parse(task) {
                Some(task) => Ok(Poll::new(session, task, t0, on_error)
                    .run(session, timer)
                    .await),
                None => Err(Failure::new(
                    FailureKind::InvalidResult,
                    "tools/call: CreateTaskResult.task lacks taskId or a known status",
                )),
            },
        },
    };
    if let Some(i) = intended {
        timer.intend(i);
    }
    (span, outcome)
}

/// What `tasks/result` gave.
enum Fetched {
    Result(Value),
    /// Failed, counted (the task with it).
    Failed,
    /// The checked task's wait timed out: the task is still running.
    StillRunning,
}

/// One task being followed.
struct Poll {
    id: String,
    status: TaskStatus,
    /// A terminal status was seen (poll or notification).
    seen_terminal: bool,
    /// When the task was first known to be terminal (or its result came).
    ended: Option<Instant>,
    interval: Option<Duration>,
    created: Instant,
    /// When the granted ttl ends: a server may forget the task from then on.
    expires: Instant,
    deadline: Instant,
    cancel: bool,
    checked: bool,
    on_error: OnError,
}

impl Poll {
    fn new(
        session: &mut Session<'_>,
        task: TaskState,
        created: Instant,
        on_error: OnError,
    ) -> Poll {
        let policy = session.persona().tasks.clone();
        let cancel = policy.cancel > 0.0 && session.rng().random_bool(policy.cancel);
        let checked = !cancel && session.take_checked_task();
        let ttl = task
            .ttl_ms
            .map(Duration::from_millis)
            .or(policy.ttl)
            .unwrap_or(DEFAULT_TTL)
            .min(crate::plan::MAX_TASK_TTL);
        Poll {
            id: task.id,
            status: task.status,
            seen_terminal: task.status.is_terminal(),
            ended: task.status.is_terminal().then(Instant::now),
            interval: task.poll_interval_ms.map(Duration::from_millis),
            created,
            expires: created + ttl,
            deadline: created + ttl + session.timeout(),
            cancel,
            checked,
            on_error,
        }
    }

    fn params(&self) -> Value {
        json!({"taskId": self.id})
    }

    /// A status seen through `source`; a terminal status that changes is out of order.
    fn observe(&mut self, session: &mut Session<'_>, status: TaskStatus, source: &str) {
        if self.seen_terminal && status != self.status {
            let (id, was) = (&self.id, self.status.name());
            session.finding(Check::TasksStatusOutOfOrder, || {
                format!(
                    "task {id:?} was {was}, then {source} said {}",
                    status.name()
                )
            });
            return;
        }
        self.status = status;
        if status.is_terminal() && !self.seen_terminal {
            self.seen_terminal = true;
            self.ended = Some(Instant::now());
        }
    }

    fn absorb_notices(&mut self, session: &mut Session<'_>) {
        for s in session.take_task_notices(&self.id) {
            self.observe(session, s, "notifications/tasks/status");
        }
    }

    async fn run(mut self, session: &mut Session<'_>, timer: &mut Timer<'_>) -> Option<Value> {
        let policy_interval = session.persona().tasks.poll_interval;
        let mut polls = 0u32;
        let result = loop {
            let mut wait_for_result = false;
            loop {
                self.absorb_notices(session);
                if self.status.is_terminal() || self.status == TaskStatus::InputRequired {
                    break;
                }
                let wait = self
                    .interval
                    .unwrap_or(policy_interval)
                    .clamp(MIN_POLL, MAX_POLL);
                if Instant::now() + wait > self.deadline {
                    return self.stuck(session, timer);
                }
                tokio::time::sleep(wait).await;
                let status = self.get(session, timer).await?;
                self.observe(session, status, "tasks/get");
                polls += 1;
                if polls == 1 && !self.status.is_terminal() {
                    if self.cancel && self.cancelled(session, timer).await? {
                        return None;
                    }
                    if self.checked {
                        wait_for_result = true;
                        break;
                    }
                }
            }
            self.absorb_notices(session);
            if self.status == TaskStatus::Cancelled {
                let f = Failure::new(
                    FailureKind::TaskFailed,
                    format!("task {:?} was cancelled by the server", self.id),
                );
                self.task_failed(session, timer, f);
                return None;
            }
            match self.result(session, timer, wait_for_result).await {
                Fetched::Result(v) => break v,
                Fetched::Failed => return None,
                // A task longer than the request timeout: poll on, as the spec says.
                Fetched::StillRunning => self.checked = false,
            }
        };
        let ended = self.ended.unwrap_or_else(Instant::now);
        if self.checked {
            self.confirm(session, timer).await;
        }
        if self.status == TaskStatus::Failed {
            let f = Failure::new(
                FailureKind::TaskFailed,
                format!("task {:?} ended failed", self.id),
            );
            self.task_failed(session, timer, f);
        } else {
            timer.sample(Phase::Task, None, self.created, ended, Outcome::Ok);
        }
        Some(result)
    }

    /// One `tasks/get`; its status (`None`: it failed, counted, and the task with it).
    async fn get(
        &mut self,
        session: &mut Session<'_>,
        timer: &mut Timer<'_>,
    ) -> Option<TaskStatus> {
        let t = Instant::now();
        let r = session
            .request(methods::TASKS_GET, Some(self.params()))
            .await;
        let span = (t, Instant::now());
        let state = r.and_then(|v| {
            TaskState::parse(&v).ok_or_else(|| {
                Failure::new(
                    FailureKind::InvalidResult,
                    "tasks/get: the result lacks taskId or a known status",
                )
            })
        });
        match state {
            Ok(s) => {
                timer.sample(Phase::TasksGet, None, span.0, span.1, Outcome::Ok);
                if let Some(ms) = s.poll_interval_ms {
                    self.interval = Some(Duration::from_millis(ms));
                }
                Some(s.status)
            }
            Err(f) => {
                self.failed_in(session, timer, Phase::TasksGet, span, f);
                None
            }
        }
    }

    /// `tasks/cancel` after the first poll: `Some(true)` when the task is cancelled,
    /// `Some(false)` when it ended first (-32602: the server is right to refuse).
    async fn cancelled(
        &mut self,
        session: &mut Session<'_>,
        timer: &mut Timer<'_>,
    ) -> Option<bool> {
        let t = Instant::now();
        let r = session
            .request(methods::TASKS_CANCEL, Some(self.params()))
            .await;
        let span = (t, Instant::now());
        match r {
            Ok(_) => {
                timer.sample(Phase::TasksCancel, None, span.0, span.1, Outcome::Ok);
                timer.recorder().count(Counter::TasksCancelled);
                timer.sample(Phase::Task, None, self.created, span.1, Outcome::Ok);
                Some(true)
            }
            Err(f)
                if f.kind
                    == FailureKind::RpcError(crate::protocol::jsonrpc::codes::INVALID_PARAMS) =>
            {
                Some(false)
            }
            Err(f) => {
                self.failed_in(session, timer, Phase::TasksCancel, span, f);
                None
            }
        }
    }

    /// `tasks/result`: the tool's result. `waiting`: asked before a terminal status (the
    /// checked task), so a timeout only means the task runs longer than the request
    /// timeout — not counted, the task is polled on.
    async fn result(
        &mut self,
        session: &mut Session<'_>,
        timer: &mut Timer<'_>,
        waiting: bool,
    ) -> Fetched {
        let t = Instant::now();
        let r = session
            .request(methods::TASKS_RESULT, Some(self.params()))
            .await;
        let span = (t, Instant::now());
        match r {
            Ok(v) => {
                timer.sample(Phase::TasksResult, None, span.0, span.1, Outcome::Ok);
                self.ended.get_or_insert(span.1);
                Fetched::Result(v)
            }
            Err(f) if waiting && f.kind == FailureKind::Timeout => Fetched::StillRunning,
            Err(f) => {
                self.failed_in(session, timer, Phase::TasksResult, span, f);
                Fetched::Failed
            }
        }
    }

    /// The checked task's two status reads after its result.
    async fn confirm(&mut self, session: &mut Session<'_>, timer: &mut Timer<'_>) {
        for _ in 0..2 {
            self.absorb_notices(session);
            let Some(status) = self.get(session, timer).await else {
                return;
            };
            if !status.is_terminal() && !self.seen_terminal {
                let id = &self.id;
                session.finding(Check::TasksResultBeforeCompletion, || {
                    format!(
                        "tasks/result of task {id:?} answered, then tasks/get said {}",
                        status.name()
                    )
                });
                return;
            }
            self.observe(session, status, "tasks/get");
        }
    }

    /// Still not terminal at ttl + the request timeout.
    fn stuck(&self, session: &mut Session<'_>, timer: &mut Timer<'_>) -> Option<Value> {
        let waited = Instant::now() - self.created;
        let waited = humantime::format_duration(Duration::from_millis(waited.as_millis() as u64));
        let (id, status) = (&self.id, self.status.name());
        session.finding(Check::TasksStuckWorking, || {
            format!("task {id:?} still {status} after {waited}, past its ttl")
        });
        let f = Failure::new(
            FailureKind::Timeout,
            format!("task {id:?} still {status} after {waited}"),
        );
        let diagnostics = session.diagnostics();
        let span = (self.created, Instant::now());
        timer.step_failed(Phase::Task, None, span, f, diagnostics, self.on_error);
        None
    }

    fn task_failed(&self, session: &mut Session<'_>, timer: &mut Timer<'_>, f: Failure) {
        let diagnostics = session.diagnostics();
        let span = (self.created, Instant::now());
        timer.step_failed(Phase::Task, None, span, f, diagnostics, self.on_error);
    }

    /// A task request failed: counted in its phase, and the task fails with it.
    fn failed_in(
        &self,
        session: &mut Session<'_>,
        timer: &mut Timer<'_>,
        phase: Phase,
        span: (Instant, Instant),
        f: Failure,
    ) {
        // Past its ttl a task may be forgotten (an error answer is then right): the
        // mistake is that it never ended.
        let expired = Instant::now() >= self.expires;
        if !self.seen_terminal && expired && matches!(f.kind, FailureKind::RpcError(_)) {
            self.stuck(session, timer);
            return;
        }
        let diagnostics = session.diagnostics();
        let kind = timer.step_failed(phase, None, span, f.clone(), diagnostics, self.on_error);
        let task = Failure::new(
            kind,
            format!("task {:?}: {} failed: {}", self.id, phase.name(), f.detail),
        );
        self.task_failed(session, timer, task);
    }
}
