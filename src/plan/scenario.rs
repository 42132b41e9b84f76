//! `[[scenario]]` sections resolved: the steps a session performs, with tool names
//! interned into [`ToolId`]s so the hot path indexes arrays instead of hashing names.

use super::capture::Capture;
use super::quantity::parse_duration;
use super::template::Template;
use super::PlanError;
use crate::metrics::{Phase, ToolId};
use crate::profile::{self, ScenarioSection, Step as RawStep};
use crate::protocol::methods;
use serde_json::{json, Value};
use std::time::Duration;

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
    Pause(Duration),
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
    pub capture: Vec<Capture>,
}

/// A weighted mix of tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    pub calls: Vec<Call>,
    pub weights: Vec<u32>,
    pub count: u32,
    pub parallel: u32,
}

/// What a session does after a JSON-RPC error of one of its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// The call is a counted failure; the session goes on and is not failed by it.
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
            Step::Ping | Step::Pause(_) => None,
        }
    }

    pub fn phase(&self) -> Option<Phase> {
        match self {
            Step::List { phase, .. } => Some(*phase),
            Step::CallTool(_) | Step::Mix(_) => Some(Phase::ToolsCall),
            Step::ReadResource { .. } => Some(Phase::ResourcesRead),
            Step::GetPrompt { .. } => Some(Phase::PromptsGet),
            Step::Ping => Some(Phase::Ping),
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

/// The tool names the scenarios call; [`ToolId`] indexes it.
#[derive(Debug, Default)]
pub struct ToolTable(Vec<String>);

impl ToolTable {
    /// The id of tool `name`, adding it to the table the first time.
    fn intern(&mut self, name: &str) -> ToolId {
        let id = match self.0.iter().position(|t| t == name) {
            Some(i) => i,
            None => {
                self.0.push(name.to_string());
                self.0.len() - 1
            }
        };
        ToolId::try_from(id).unwrap_or(ToolId::MAX)
    }

    pub fn into_names(self, origin: &str) -> Result<Vec<String>, PlanError> {
        if self.0.len() > usize::from(ToolId::MAX) {
            return Err(PlanError::new(
                origin,
                "scenario",
                "too many distinct tools",
                "use fewer than 65535 tool names",
            ));
        }
        Ok(self.0)
    }
}

/// The scenario a profile without one runs: discovery of the three lists.
pub fn default_section() -> ScenarioSection {
    ScenarioSection {
        name: "discovery".into(),
        weight: None,
        steps: vec![
            RawStep::ToolsList {},
            RawStep::ResourcesList {},
            RawStep::PromptsList {},
        ],
        on_error: None,
    }
}

impl Scenario {
    /// Every `[[scenario]]`, in order; names must be unique.
    pub fn all_from_sections(
        sections: &[ScenarioSection],
        tools: &mut ToolTable,
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
            scenarios.push(Scenario::from_section(s, &key, tools, origin)?);
        }
        Ok(scenarios)
    }

    pub fn from_section(
        s: &ScenarioSection,
        key: &str,
        tools: &mut ToolTable,
        origin: &str,
    ) -> Result<Scenario, PlanError> {
        let steps = s
            .steps
            .iter()
            .enumerate()
            .map(|(j, raw)| Step::from_raw(raw, &format!("{key}.steps[{j}]"), tools, origin))
            .collect::<Result<_, _>>()?;
        Ok(Scenario {
            name: s.name.clone(),
            weight: s.weight.unwrap_or(1),
            steps,
            // CONTRACT: the data part parses `on_error` (and refuses unknown values).
            on_error: OnError::Continue,
        })
    }
}

impl Step {
    fn from_raw(
        raw: &RawStep,
        key: &str,
        tools: &mut ToolTable,
        origin: &str,
    ) -> Result<Step, PlanError> {
        let list = |phase, method| Step::List { phase, method };
        Ok(match raw {
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
            } => Step::Mix(Mix::from_raw(calls, *count, *parallel, key, tools, origin)?),
            RawStep::ToolsCall {
                tool,
                arguments,
                generate,
                capture: _,
            } => {
                if tool.is_empty() {
                    return Err(PlanError::new(
                        origin,
                        format!("{key}.tool"),
                        "is empty",
                        "name the tool to call",
                    ));
                }
                // CONTRACT: the data part parses templates and captures here.
                Step::CallTool(Call {
                    tool: tools.intern(tool),
                    name: tool.clone(),
                    arguments: Template::Fixed(object_or_empty(
                        arguments,
                        key,
                        "arguments",
                        origin,
                    )?),
                    generate: generate.unwrap_or(true),
                    capture: Vec::new(),
                })
            }
            RawStep::ResourcesRead { uri, capture: _ } => Step::ReadResource {
                uri: Template::Fixed(Value::String(uri.clone())),
                capture: Vec::new(),
            },
            RawStep::PromptsGet { prompt, arguments } => Step::GetPrompt {
                name: Template::Fixed(Value::String(prompt.clone())),
                arguments: Template::Fixed(object_or_empty(arguments, key, "arguments", origin)?),
            },
            RawStep::Ping {} => Step::Ping,
            RawStep::Pause { duration } => Step::Pause(parse_duration(
                duration,
                &format!("{key}.duration"),
                origin,
            )?),
        })
    }
}

impl Mix {
    fn from_raw(
        calls: &[profile::MixCall],
        count: Option<u32>,
        parallel: Option<u32>,
        key: &str,
        tools: &mut ToolTable,
        origin: &str,
    ) -> Result<Mix, PlanError> {
        if calls.is_empty() {
            return Err(PlanError::new(
                origin,
                format!("{key}.calls"),
                "is empty",
                "list the tools, e.g. calls = [{ tool = \"echo\", weight = 3 }]",
            ));
        }
        let mut out = Vec::new();
        let mut weights = Vec::new();
        for (i, c) in calls.iter().enumerate() {
            if c.tool.is_empty() {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.calls[{i}].tool"),
                    "is empty",
                    "name the tool to call",
                ));
            }
            out.push(Call {
                tool: tools.intern(&c.tool),
                name: c.tool.clone(),
                arguments: Template::Fixed(object_or_empty(
                    &c.arguments,
                    key,
                    &format!("calls[{i}].arguments"),
                    origin,
                )?),
                generate: c.generate.unwrap_or(true),
                capture: Vec::new(),
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
