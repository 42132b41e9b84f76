//! One recorded session → what a profile needs to replay it: a persona (its identity and
//! habits, `persona.rs`) and the steps it took after the handshake, in order, with the
//! time the client waited before each (the pauses) and values quoted back from earlier
//! answers turned into captures (`substitute.rs`).

use super::exchange::{Exchange, Exchanges};
use super::names::{sanitize, toml_safe};
use super::DeriveError;
use crate::profile::{PersonaSection, Step};
use crate::protocol::methods;
use crate::trace::{ClosedBy, RecordedSession, Summary, Transport};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One recorded session, read as a persona and its steps.
#[derive(Debug, Clone)]
pub struct DerivedSession {
    /// The trace's session number.
    pub id: u64,
    /// When it opened and closed, µs since the trace's start (`closed`: `None` in a
    /// partial trace).
    pub opened: u64,
    pub closed: Option<u64>,
    /// The persona it plays; `name` and `scenarios` are the caller's to fill.
    pub persona: PersonaSection,
    /// Its client's name and version, sanitized (`claude-code-1.2.0`).
    pub label: String,
    /// The steps after the handshake, without pauses.
    pub steps: Vec<Step>,
    /// `gaps[i]`: µs the client waited before `steps[i]`, from the answer before it;
    /// the last entry: before it closed. `None`: no wait to replay (it did not wait for
    /// the answer before, or there was nothing to measure from).
    pub gaps: Vec<Option<u64>>,
    /// What a person should know about how it was read.
    pub notes: Vec<String>,
}

/// A step being read, with what substitution and the gaps need.
#[derive(Debug, Clone)]
pub(super) struct Draft<'a> {
    pub step: Step,
    pub start: u64,
    pub end: Option<u64>,
    /// The answer captures are taken from (`tools/call`, `resources/read`).
    pub result: Option<&'a Value>,
}

const LISTS: [&str; 4] = [
    methods::TOOLS_LIST,
    methods::RESOURCES_LIST,
    methods::RESOURCES_TEMPLATES_LIST,
    methods::PROMPTS_LIST,
];

/// Read `session`; an error when it shows no identity (the client never got as far as
/// an `initialize` or a modern request).
pub fn derive(session: &RecordedSession) -> Result<DerivedSession, DeriveError> {
    let summary = Summary::of(session);
    if summary.era != "legacy" && summary.era != "modern" {
        return Err(DeriveError::NoIdentity {
            session: session.id,
        });
    }
    let exchanges = Exchanges::of(session);
    let mut reading = Reading::new(&summary);
    for r in &exchanges.requests {
        reading.request(r);
    }
    let mut notes = Vec::new();
    let mut drafts = reading.drafts;
    super::substitute::apply(&mut drafts, &mut notes);
    let mut gaps = Vec::with_capacity(drafts.len() + 1);
    let mut before = reading.handshake_end;
    let mut overlapping = 0;
    for d in &drafts {
        gaps.push(match before {
            Some(b) if d.start >= b => Some(d.start - b),
            Some(_) => {
                overlapping += 1;
                None
            }
            None => None,
        });
        before = Some(d.end.unwrap_or(d.start).max(before.unwrap_or(0)));
    }
    gaps.push(closing_gap(session, &summary, before));
    if overlapping > 0 {
        notes.push(format!(
            "{overlapping} request(s) were sent before the one before was answered (parallel \
             calls); they are replayed one after another, in the order sent"
        ));
    }
    if exchanges.retries > 0 {
        notes.push(format!(
            "{} input_required round(s) folded into their requests (the persona answers them)",
            exchanges.retries
        ));
    }
    count_left_out(&exchanges, reading.left_out, &mut notes);
    let persona =
        super::persona::persona(session, &summary, &exchanges, &reading.habits, &mut notes);
    let label = label(&summary);
    Ok(DerivedSession {
        id: session.id,
        opened: session.opened,
        closed: session.closed.as_ref().map(|c| c.0),
        persona,
        label,
        steps: drafts.into_iter().map(|d| d.step).collect(),
        gaps,
        notes,
    })
}

/// `name-version` of the client, sanitized.
fn label(summary: &Summary) -> String {
    let info = summary.client_info.as_ref();
    let field = |k: &str| info.and_then(|i| i.get(k)).and_then(Value::as_str);
    let text = match (field("name"), field("version")) {
        (Some(n), Some(v)) => format!("{n}-{v}"),
        (Some(n), None) => n.to_string(),
        _ => "client".into(),
    };
    sanitize(&text, "client")
}

/// The wait before a close the client chose (not one the server, a failure or the
/// recorder's end made, nor an HTTP connection that merely went away).
fn closing_gap(session: &RecordedSession, summary: &Summary, before: Option<u64>) -> Option<u64> {
    let (t, by, _) = session.closed.as_ref()?;
    let chosen =
        *by == ClosedBy::Client && (session.transport != Transport::Http || summary.habits.delete);
    if chosen {
        t.checked_sub(before?)
    } else {
        None
    }
}

/// Requests and notifications that are not steps, counted for the notes.
fn count_left_out(ex: &Exchanges, left_out: BTreeMap<String, usize>, notes: &mut Vec<String>) {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for n in &ex.notifications {
        if *n != methods::INITIALIZED {
            *counts.entry(n).or_default() += 1;
        }
    }
    if !counts.is_empty() {
        let list: Vec<String> = counts.iter().map(|(m, n)| format!("{m} ×{n}")).collect();
        notes.push(format!(
            "client notifications not replayed: {}",
            list.join(", ")
        ));
    }
    for (why, n) in left_out {
        notes.push(format!("{n} {why}"));
    }
}

/// What the walk over the requests found besides steps: the persona reads these.
#[derive(Debug, Default)]
pub(super) struct Habits<'a> {
    /// The params of the modern `subscriptions/listen`.
    pub listen: Option<&'a Value>,
    /// Tool calls made as tasks, and how many of those tasks the client cancelled.
    pub task_calls: usize,
    pub tasks_cancelled: usize,
}

/// The walk over a session's requests.
struct Reading<'a> {
    era_probe: bool,
    handshaking: bool,
    handshake_end: Option<u64>,
    drafts: Vec<Draft<'a>>,
    /// Task ids the session's task calls were given, and the step of each.
    tasks: Vec<(&'a str, usize)>,
    habits: Habits<'a>,
    /// Requests that are no step: why → how many.
    left_out: BTreeMap<String, usize>,
}

impl<'a> Reading<'a> {
    fn new(summary: &Summary) -> Reading<'a> {
        Reading {
            era_probe: summary.era == "modern" || summary.probed,
            handshaking: true,
            handshake_end: None,
            drafts: Vec::new(),
            tasks: Vec::new(),
            habits: Habits::default(),
            left_out: BTreeMap::new(),
        }
    }

    fn leave_out(&mut self, why: String) {
        *self.left_out.entry(why).or_default() += 1;
    }

    fn request(&mut self, r: &Exchange<'a>) {
        let param = |k: &str| r.params.and_then(|p| p.get(k));
        let handshake = match r.method {
            methods::INITIALIZE => true,
            methods::SERVER_DISCOVER => self.handshaking && self.era_probe,
            _ => false,
        };
        if handshake && self.handshaking {
            self.handshake_end = Some(r.answered.unwrap_or(r.sent));
            return;
        }
        if r.method == methods::INITIALIZE {
            return self.leave_out("initialize request(s) after the handshake not replayed (a re-initialize is the persona's own)".into());
        }
        if r.method == methods::SUBSCRIPTIONS_LISTEN {
            self.habits.listen = r.params;
            return;
        }
        self.handshaking = false;
        if let Some(step) = param("taskId")
            .and_then(Value::as_str)
            .and_then(|id| self.tasks.iter().find(|(t, _)| *t == id))
            .map(|(_, step)| *step)
        {
            return self.task_poll(r, step);
        }
        let last_is_same_list = self
            .drafts
            .last()
            .is_some_and(|d| list_method(&d.step) == Some(r.method));
        if LISTS.contains(&r.method) && param("cursor").is_some() && last_is_same_list {
            // The next page: the list step follows nextCursor itself.
            if let Some(d) = self.drafts.last_mut() {
                d.end = r.answered.or(d.end);
            }
            return;
        }
        let missing = |k: &str| param(k).and_then(Value::as_str).is_none_or(str::is_empty);
        let unnamed = match r.method {
            methods::TOOLS_CALL => missing("name"),
            methods::RESOURCES_READ => missing("uri"),
            _ => false,
        };
        if unnamed {
            return self.leave_out(format!(
                "{} request(s) without a name or uri not replayed",
                r.method
            ));
        }
        let step = match r.method {
            methods::PING => Step::Ping {},
            methods::TOOLS_LIST => Step::ToolsList {},
            methods::RESOURCES_LIST => Step::ResourcesList {},
            methods::RESOURCES_TEMPLATES_LIST => Step::ResourcesTemplatesList {},
            methods::PROMPTS_LIST => Step::PromptsList {},
            methods::TOOLS_CALL => self.tool_call(r),
            methods::RESOURCES_READ => Step::ResourcesRead {
                uri: string(param("uri")),
                capture: None,
            },
            methods::PROMPTS_GET => Step::PromptsGet {
                prompt: string(param("name")),
                arguments: self.table(param("arguments")),
            },
            _ => self.other(r),
        };
        let takes_captures = matches!(step, Step::ToolsCall { .. } | Step::ResourcesRead { .. });
        self.drafts.push(Draft {
            step,
            start: r.sent,
            end: r.answered,
            result: r.result.filter(|_| takes_captures),
        });
    }

    fn tool_call(&mut self, r: &Exchange<'a>) -> Step {
        let params = r.params;
        let tool = string(params.and_then(|p| p.get("name")));
        if params.and_then(|p| p.get("task")).is_some() {
            self.habits.task_calls += 1;
            let task = r
                .result
                .and_then(|v| v.pointer("/task/taskId"))
                .and_then(Value::as_str);
            if let Some(id) = task {
                self.tasks.push((id, self.drafts.len()));
            }
        }
        Step::ToolsCall {
            tool,
            arguments: self.table(params.and_then(|p| p.get("arguments"))),
            generate: Some(false),
            optional: None,
            capture: None,
            checks: None,
        }
    }

    /// `tasks/get`, `tasks/result`, `tasks/cancel` of a task this session's call made:
    /// the persona polls its tasks itself, so they belong to that call's step.
    fn task_poll(&mut self, r: &Exchange<'a>, step: usize) {
        let d = &mut self.drafts[step];
        d.end = r.answered.max(d.end);
        match r.method {
            methods::TASKS_RESULT if r.result.is_some() => d.result = r.result,
            methods::TASKS_CANCEL => self.habits.tasks_cancelled += 1,
            _ => {}
        }
        self.leave_out(format!("{} request(s) of the session's own tasks folded into their tools/call (the persona polls its tasks)", r.method));
    }

    /// Any other request: sent as recorded, without `_meta` (the persona writes its own).
    fn other(&mut self, r: &Exchange<'a>) -> Step {
        let params = match r.params {
            Some(Value::Object(m)) => {
                let mut m: Map<String, Value> = m.clone();
                let had_only_meta = m.remove("_meta").is_some() && m.is_empty();
                (!had_only_meta).then_some(Value::Object(m))
            }
            _ => None,
        };
        let params = self.table(params.as_ref());
        let phase = crate::plan::check_phase_name(r.method).is_err().then(|| {
            sanitize(
                &format!("replayed-{}", r.method.replace('/', "-")),
                "replayed",
            )
        });
        Step::Request {
            method: r.method.to_string(),
            params,
            phase,
            checks: None,
        }
    }

    /// Recorded arguments or params as the profile can hold them: a table (MCP's are
    /// objects), without null (TOML has none).
    fn table(&mut self, v: Option<&Value>) -> Option<Value> {
        let v = v?;
        if !v.is_object() {
            self.leave_out(
                "arguments or params that are not an object left out (a profile sends a table)"
                    .into(),
            );
            return None;
        }
        let mut v = v.clone();
        if toml_safe(&mut v) {
            self.leave_out("value(s) with null (or an integer beyond i64) written without it: TOML has no null".into());
        }
        Some(v)
    }
}

fn list_method(step: &Step) -> Option<&'static str> {
    match step {
        Step::ToolsList {} => Some(methods::TOOLS_LIST),
        Step::ResourcesList {} => Some(methods::RESOURCES_LIST),
        Step::ResourcesTemplatesList {} => Some(methods::RESOURCES_TEMPLATES_LIST),
        Step::PromptsList {} => Some(methods::PROMPTS_LIST),
        _ => None,
    }
}

fn string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}
