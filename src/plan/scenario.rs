//! `[[scenario]]` sections resolved: the steps a session performs, with tool names
//! interned into [`ToolId`]s so the hot path indexes arrays instead of hashing names.

use super::capture::Capture;
use super::check::Check;
use super::error::PlanError;
pub use super::names::ToolTable;
use super::pause::Think;
pub use super::request::Request;
use super::template::{Template, TemplateContext};
use crate::metrics::{Phase, ToolId};
use crate::profile::{self, ScenarioSection, Step as RawStep};
use crate::protocol::methods;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// A resolved scenario step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A paginated list method, followed to the last page.
    List {
        phase: Phase,
        method: &'static str,
    },
    CallTool(Call),
    ReadResource {
        uri: Template,
        capture: Vec<Capture>,
    },
    GetPrompt {
        name: Template,
        arguments: Template,
    },
    /// `count` weighted tool calls, `parallel` in flight at a time.
    Mix(Mix),
    Ping,
    /// Any JSON-RPC request, timed as its own phase.
    Request(Request),
    /// A fixed pause, a uniform range or an exponential mean (as `[load] think`).
    Pause(Think),
}

/// One tool call: a `tools/call` step, or one tool of a mix.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub tool: ToolId,
    pub name: String,
    /// The profile's arguments (an object template; empty when none are given).
    pub arguments: Template,
    /// Generate the properties `arguments` does not pin from the tool's `inputSchema`
    /// (`generate = false`: send exactly `arguments`).
    pub generate: bool,
    /// The share of optional properties generated (`None`: `[arguments] optional`); a
    /// call that gives arguments has one (`plan/arguments.rs`).
    pub optional: Option<f64>,
    pub capture: Vec<Capture>,
    /// Conditions on each result, counted per check (none for a mix's calls).
    pub checks: Vec<Check>,
}

/// A weighted mix of tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    pub calls: Vec<Call>,
    pub weights: Vec<u32>,
    pub count: u32,
    pub parallel: u32,
}

/// What a session does after a JSON-RPC error of one of its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// The step is a counted failure; the session goes on and is not failed by it.
    #[default]
    Continue,
    /// The session ends there, failed.
    EndSession,
}

impl Step {
    /// The server capability this step needs, if any.
    pub fn required_capability(&self) -> Option<&'static str> {
        match self {
            Step::List { method, .. } => methods::required_server_capability(method),
            Step::CallTool(_) | Step::Mix(_) => Some("tools"),
            Step::ReadResource { .. } => Some("resources"),
            Step::GetPrompt { .. } => Some("prompts"),
            // Sent as written: a server without the capability answers an error,
            // which the step's phase counts.
            Step::Ping | Step::Pause(_) | Step::Request(_) => None,
        }
    }

    pub fn phase(&self) -> Option<Phase> {
        match self {
            Step::List { phase, .. } => Some(*phase),
            Step::CallTool(_) | Step::Mix(_) => Some(Phase::ToolsCall),
            Step::ReadResource { .. } => Some(Phase::ResourcesRead),
            Step::GetPrompt { .. } => Some(Phase::PromptsGet),
            Step::Ping => Some(Phase::Ping),
            Step::Request(_) => Some(Phase::Request),
            Step::Pause(_) => None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub weight: u32,
    pub steps: Vec<Step>,
    pub on_error: OnError,
}

/// The scenario a profile without one runs: discovery of the three lists; `paced` (`-q`,
/// held sessions on the fleet's schedule): one `tools/list` an iteration, a request every
/// server answers and that changes nothing.
pub fn default_section(paced: bool) -> ScenarioSection {
    use RawStep::{PromptsList, ResourcesList, ToolsList};
    let (name, steps) = if paced {
        ("list", vec![ToolsList {}])
    } else {
        (
            "discovery",
            vec![ToolsList {}, ResourcesList {}, PromptsList {}],
        )
    };
    ScenarioSection {
        name: name.into(),
        weight: None,
        steps,
        on_error: None,
    }
}

impl Scenario {
    /// Every `[[scenario]]`, in order; names must be unique.
    pub fn all_from_sections(
        sections: &[ScenarioSection],
        tools: &mut ToolTable,
        ctx: &mut TemplateContext,
        origin: &str,
    ) -> Result<Vec<Scenario>, PlanError> {
        let mut scenarios: Vec<Scenario> = Vec::new();
        for (i, s) in sections.iter().enumerate() {
            let key = format!("scenario[{i}]");
            if scenarios.iter().any(|o| o.name == s.name) {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.name"),
                    format!("scenario name {:?} is used twice", s.name),
                    "give each scenario its own name",
                ));
            }
            scenarios.push(Scenario::from_section(s, &key, tools, ctx, origin)?);
        }
        Ok(scenarios)
    }

    /// One scenario; every `${NAME}` must be captured by an earlier step (or by a call
    /// of the same mix).
    pub fn from_section(
        s: &ScenarioSection,
        key: &str,
        tools: &mut ToolTable,
        ctx: &mut TemplateContext,
        origin: &str,
    ) -> Result<Scenario, PlanError> {
        let on_error = match s.on_error.as_deref() {
            None | Some("continue") => OnError::Continue,
            Some("end-session") => OnError::EndSession,
            Some(other) => {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.on_error"),
                    format!("unknown value {other:?}"),
                    "use on_error = \"continue\" or on_error = \"end-session\"",
                ))
            }
        };
        let mut captured = BTreeSet::new();
        let mut steps = Vec::with_capacity(s.steps.len());
        for (j, raw) in s.steps.iter().enumerate() {
            let at = StepContext {
                key: format!("{key}.steps[{j}]"),
                origin,
                captured: &mut captured,
            };
            steps.push(Step::from_raw(raw, at, tools, ctx)?);
        }
        Ok(Scenario {
            name: s.name.clone(),
            weight: s.weight.unwrap_or(1),
            steps,
            on_error,
        })
    }
}

/// Where a step is, and the variables the steps before it captured.
struct StepContext<'a> {
    key: String,
    origin: &'a str,
    captured: &'a mut BTreeSet<String>,
}

impl StepContext<'_> {
    /// `value` at `key` parsed, each `${NAME}` it uses checked against `known`.
    fn template(
        &self,
        value: &Value,
        key: &str,
        known: &BTreeSet<String>,
        ctx: &mut TemplateContext,
    ) -> Result<Template, PlanError> {
        let t = Template::parse(value, ctx, key, self.origin)?;
        if let Some(name) = t.captured().into_iter().find(|n| !known.contains(*n)) {
            let fix = if known.is_empty() {
                format!(
                    "capture it in an earlier step of this scenario, e.g. \
                     capture = {{ {name} = \"/id\" }} on a tools/call"
                )
            } else {
                let names: Vec<&str> = known.iter().map(String::as_str).collect();
                format!(
                    "capture it in an earlier step, or use one of: {}",
                    names.join(", ")
                )
            };
            let at = key_using(value, key, name, ctx, self.origin);
            return Err(PlanError::new(
                self.origin,
                at,
                format!("`${{{name}}}` is not captured by an earlier step"),
                fix,
            ));
        }
        Ok(t)
    }
}

/// The key of the string below `value` that uses captured variable `name` (else `key`).
fn key_using(
    value: &Value,
    key: &str,
    name: &str,
    ctx: &mut TemplateContext,
    origin: &str,
) -> String {
    find_key(value, key, name, ctx, origin).unwrap_or_else(|| key.to_string())
}

fn find_key(
    value: &Value,
    key: &str,
    name: &str,
    ctx: &mut TemplateContext,
    origin: &str,
) -> Option<String> {
    match value {
        Value::String(_) => Template::parse(value, ctx, key, origin)
            .is_ok_and(|t| t.captured().contains(&name))
            .then(|| key.to_string()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_key(v, &format!("{key}[{i}]"), name, ctx, origin)),
        Value::Object(fields) => fields
            .iter()
            .find_map(|(f, v)| find_key(v, &format!("{key}.{f}"), name, ctx, origin)),
        _ => None,
    }
}

impl Step {
    fn from_raw(
        raw: &RawStep,
        at: StepContext,
        tools: &mut ToolTable,
        ctx: &mut TemplateContext,
    ) -> Result<Step, PlanError> {
        let key = at.key.as_str();
        let origin = at.origin;
        let list = |phase, method| Step::List { phase, method };
        let step = match raw {
            RawStep::ToolsList {} => list(Phase::ToolsList, methods::TOOLS_LIST),
            RawStep::ResourcesList {} => list(Phase::ResourcesList, methods::RESOURCES_LIST),
            RawStep::ResourcesTemplatesList {} => list(
                Phase::ResourcesTemplatesList,
                methods::RESOURCES_TEMPLATES_LIST,
            ),
            RawStep::PromptsList {} => list(Phase::PromptsList, methods::PROMPTS_LIST),
            RawStep::Mix {
                calls,
                count,
                parallel,
            } => Step::Mix(Mix::from_raw(calls, *count, *parallel, &at, tools, ctx)?),
            RawStep::ToolsCall {
                tool,
                arguments,
                generate,
                optional,
                capture,
                checks,
            } => {
                if tool.is_empty() {
                    return Err(PlanError::new(
                        origin,
                        format!("{key}.tool"),
                        "is empty",
                        "name the tool to call",
                    ));
                }
                let args = object_or_empty(arguments, key, "arguments", origin)?;
                let arguments =
                    at.template(&args, &format!("{key}.arguments"), at.captured, ctx)?;
                Step::CallTool(Call {
                    tool: tools.intern(tool),
                    name: tool.clone(),
                    arguments,
                    generate: generate.unwrap_or(true),
                    optional: super::arguments::step_share(*optional, key, origin)?,
                    capture: Capture::all_from_specs(capture, key, origin)?,
                    checks: Check::all_from_specs(checks, key, origin, true, tools)?,
                })
            }
            RawStep::ResourcesRead { uri, capture } => {
                if uri.is_empty() {
                    return Err(PlanError::new(
                        origin,
                        format!("{key}.uri"),
                        "is empty",
                        "name the resource, e.g. uri = \"${resource.uri}\"",
                    ));
                }
                Step::ReadResource {
                    uri: at.template(
                        &Value::String(uri.clone()),
                        &format!("{key}.uri"),
                        at.captured,
                        ctx,
                    )?,
                    capture: Capture::all_from_specs(capture, key, origin)?,
                }
            }
            RawStep::PromptsGet { prompt, arguments } => {
                let args = object_or_empty(arguments, key, "arguments", origin)?;
                Step::GetPrompt {
                    name: at.template(
                        &Value::String(prompt.clone()),
                        &format!("{key}.prompt"),
                        at.captured,
                        ctx,
                    )?,
                    arguments: at.template(&args, &format!("{key}.arguments"), at.captured, ctx)?,
                }
            }
            RawStep::Ping {} => Step::Ping,
            RawStep::Request {
                method,
                params,
                phase,
                checks,
            } => {
                let checks = Check::all_from_specs(checks, key, origin, false, tools)?;
                let raw = (method.as_str(), params, phase.as_deref());
                let params = match params {
                    Some(p) => Some(at.template(p, &format!("{key}.params"), at.captured, ctx)?),
                    None => None,
                };
                let mut r = Request::from_raw(raw, params, key, origin, tools)?;
                r.checks = checks;
                Step::Request(r)
            }
            RawStep::Pause { duration } => Step::Pause(Think::parse_key(
                duration,
                &format!("{key}.duration"),
                origin,
            )?),
        };
        for c in step.captures() {
            at.captured.insert(c.var.clone());
        }
        Ok(step)
    }

    /// What the step captures (every call's, for a mix).
    pub fn captures(&self) -> Vec<&Capture> {
        match self {
            Step::CallTool(c) => c.capture.iter().collect(),
            Step::ReadResource { capture, .. } => capture.iter().collect(),
            Step::Mix(m) => m.calls.iter().flat_map(|c| c.capture.iter()).collect(),
            _ => Vec::new(),
        }
    }
}

impl Mix {
    fn from_raw(
        calls: &[profile::MixCall],
        count: Option<u32>,
        parallel: Option<u32>,
        at: &StepContext,
        tools: &mut ToolTable,
        ctx: &mut TemplateContext,
    ) -> Result<Mix, PlanError> {
        let key = at.key.as_str();
        let origin = at.origin;
        if calls.is_empty() {
            return Err(PlanError::new(
                origin,
                format!("{key}.calls"),
                "is empty",
                "list the tools, e.g. calls = [{ tool = \"echo\", weight = 3 }]",
            ));
        }
        // A call may use what any call of the same mix captures (no value yet on the
        // first draw is the runtime's `no_value`).
        let mut known = at.captured.clone();
        let mut captures = Vec::with_capacity(calls.len());
        for (i, c) in calls.iter().enumerate() {
            let cs = Capture::all_from_specs(&c.capture, &format!("{key}.calls[{i}]"), origin)?;
            known.extend(cs.iter().map(|c| c.var.clone()));
            captures.push(cs);
        }
        let mut out = Vec::new();
        let mut weights = Vec::new();
        for ((i, c), capture) in calls.iter().enumerate().zip(captures) {
            if c.tool.is_empty() {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.calls[{i}].tool"),
                    "is empty",
                    "name the tool to call",
                ));
            }
            let what = format!("calls[{i}].arguments");
            let args = object_or_empty(&c.arguments, key, &what, origin)?;
            let arguments = at.template(&args, &format!("{key}.{what}"), &known, ctx)?;
            out.push(Call {
                tool: tools.intern(&c.tool),
                name: c.tool.clone(),
                arguments,
                generate: c.generate.unwrap_or(true),
                optional: super::arguments::step_share(
                    c.optional,
                    &format!("{key}.calls[{i}]"),
                    origin,
                )?,
                capture,
                checks: Vec::new(),
            });
            weights.push(c.weight.unwrap_or(1));
        }
        if weights.iter().all(|w| *w == 0) {
            return Err(PlanError::new(
                origin,
                format!("{key}.calls"),
                "every weight is 0",
                "give at least one call a weight of 1 or more",
            ));
        }
        let count = count.unwrap_or(1);
        let parallel = parallel.unwrap_or(1);
        if count == 0 || parallel == 0 {
            let which = if count == 0 { "count" } else { "parallel" };
            return Err(PlanError::new(
                origin,
                format!("{key}.{which}"),
                "is 0",
                "use 1 or more",
            ));
        }
        Ok(Mix {
            calls: out,
            weights,
            count,
            parallel,
        })
    }
}

/// Arguments: absent → `{}`, a table → itself, anything else → an error at `key.what`.
fn object_or_empty(
    v: &Option<Value>,
    key: &str,
    what: &str,
    origin: &str,
) -> Result<Value, PlanError> {
    match v {
        None => Ok(json!({})),
        Some(v @ Value::Object(_)) => Ok(v.clone()),
        Some(_) => Err(PlanError::new(
            origin,
            format!("{key}.{what}"),
            "is not a table",
            format!("write {what} = {{ name = \"value\" }}"),
        )),
    }
}
