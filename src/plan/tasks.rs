//! `tasks = {...}` of a persona resolved: which tool calls become task-augmented
//! (protocol 2025-11-25), how they are polled and how many are cancelled.

use super::error::PlanError;
use crate::profile::PersonaSection;
use crate::protocol::version::LATEST_LEGACY;
use serde_json::{json, Value};
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

/// Longest `ttl` a persona may ask for: a task is polled at most this long (plus the
/// request timeout), so it bounds how long one session can wait.
pub const MAX_TTL: Duration = Duration::from_secs(3600);

impl TaskPolicy {
    /// Resolve `tasks = {...}`; without one, [`TaskPolicy::default`].
    pub fn from_section(
        p: &PersonaSection,
        key: &str,
        origin: &str,
    ) -> Result<TaskPolicy, PlanError> {
        let Some(t) = &p.tasks else {
            return Ok(TaskPolicy::default());
        };
        let err = |k: &str, problem: String, fix: &str| {
            PlanError::new(origin, format!("{key}.tasks.{k}"), problem, fix)
        };
        let calls = match t.call.as_deref() {
            None | Some("allowed") => TaskCalls::Allowed,
            Some("required") => TaskCalls::Required,
            Some("never") => TaskCalls::Never,
            Some(other) => {
                return Err(err(
                    "call",
                    format!("{other:?} is not a task policy"),
                    "use \"required\", \"allowed\" or \"never\"",
                ))
            }
        };
        let cancel = t.cancel.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&cancel) {
            return Err(err(
                "cancel",
                format!("{cancel} is not a share"),
                "write a share from 0 to 1, e.g. 0.1 for one task in ten",
            ));
        }
        let duration = |k: &str, text: &str| {
            let d = super::quantity::parse_duration(text, &format!("{key}.tasks.{k}"), origin)?;
            if d.is_zero() || d > MAX_TTL {
                return Err(err(
                    k,
                    format!("{text:?} is out of range"),
                    "use more than 0 and at most 1h, e.g. \"60s\"",
                ));
            }
            Ok(d)
        };
        let ttl = t.ttl.as_deref().map(|d| duration("ttl", d)).transpose()?;
        let poll_interval = match t.poll_interval.as_deref() {
            None => TaskPolicy::default().poll_interval,
            Some(d) => duration("poll_interval", d)?,
        };
        Ok(TaskPolicy {
            calls,
            cancel,
            ttl,
            poll_interval,
        })
    }

    /// What the persona declares in `initialize`: a persona that calls tasks declares
    /// `tasks: {}` (it knows tasks, and accepts none itself: no `list`, `cancel` or
    /// `requests`), in 2025-11-25 only (the capability was removed in 2026-07-28 and did
    /// not exist before). Capabilities the profile wrote are kept as written.
    pub fn declare(&self, p: &PersonaSection, legacy_version: &str, capabilities: &mut Value) {
        let calls_tasks = p.tasks.is_some() && self.calls != TaskCalls::Never;
        if calls_tasks && legacy_version == LATEST_LEGACY && capabilities.get("tasks").is_none() {
            if let Some(caps) = capabilities.as_object_mut() {
                caps.insert("tasks".into(), json!({}));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::TasksSection;

    fn policy(t: TasksSection) -> Result<TaskPolicy, PlanError> {
        let p = PersonaSection {
            name: "p".into(),
            tasks: Some(t),
            ..Default::default()
        };
        TaskPolicy::from_section(&p, "persona[0]", "test.toml")
    }

    #[test]
    fn a_tasks_section_is_resolved_with_its_defaults() {
        let none = PersonaSection::default();
        let default = TaskPolicy::from_section(&none, "persona[0]", "t.toml").expect("ok");
        assert_eq!(default, TaskPolicy::default());
        assert_eq!(default.calls, TaskCalls::Required);
        let p = policy(TasksSection::default()).expect("ok");
        assert_eq!((p.calls, p.cancel, p.ttl), (TaskCalls::Allowed, 0.0, None));
        let p = policy(TasksSection {
            call: Some("never".into()),
            cancel: Some(0.25),
            ttl: Some("30s".into()),
            poll_interval: Some("20ms".into()),
        })
        .expect("ok");
        assert_eq!(p.calls, TaskCalls::Never);
        assert_eq!(p.ttl, Some(Duration::from_secs(30)));
        assert_eq!(p.poll_interval, Duration::from_millis(20));
    }

    #[test]
    fn bad_values_name_their_key() {
        let bad = |t: TasksSection, key: &str| {
            let e = policy(t).expect_err("refused").to_string();
            assert!(e.contains(key), "{e}");
        };
        bad(
            TasksSection {
                call: Some("always".into()),
                ..Default::default()
            },
            "persona[0].tasks.call",
        );
        bad(
            TasksSection {
                cancel: Some(1.5),
                ..Default::default()
            },
            "persona[0].tasks.cancel",
        );
        bad(
            TasksSection {
                ttl: Some("0s".into()),
                ..Default::default()
            },
            "persona[0].tasks.ttl",
        );
        bad(
            TasksSection {
                ttl: Some("soon".into()),
                ..Default::default()
            },
            "persona[0].tasks.ttl",
        );
        bad(
            TasksSection {
                poll_interval: Some("2h".into()),
                ..Default::default()
            },
            "poll_interval",
        );
    }

    #[test]
    fn a_task_persona_declares_tasks_in_2025_11_25_only() {
        let with = PersonaSection {
            tasks: Some(TasksSection::default()),
            ..Default::default()
        };
        let policy = TaskPolicy::from_section(&with, "p", "t").expect("ok");
        let mut caps = json!({"sampling": {}});
        policy.declare(&with, "2025-11-25", &mut caps);
        assert_eq!(caps, json!({"sampling": {}, "tasks": {}}));
        let mut old = json!({});
        policy.declare(&with, "2025-06-18", &mut old);
        assert_eq!(old, json!({}));
        let mut written = json!({"tasks": {"list": {}}});
        policy.declare(&with, "2025-11-25", &mut written);
        assert_eq!(written, json!({"tasks": {"list": {}}}));
        let mut plain = json!({});
        TaskPolicy::default().declare(&PersonaSection::default(), "2025-11-25", &mut plain);
        assert_eq!(plain, json!({}), "no tasks section, nothing declared");
    }
}
