//! Profile + command-line overrides → [`Plan`]: every check and default happens here,
//! once. Nothing after the plan reads raw input again; names are interned into ids.

mod load;
mod persona;
mod thresholds;

pub use load::{Load, LoadModel, Think};
pub use persona::{Answers, ElicitationAnswer, EraMode, Persona, Route, SamplingAnswer, Shape};

use crate::metrics::{PersonaId, Phase, ToolId};
use crate::profile::{self, Profile, Step as RawStep};
use crate::protocol::methods;
use crate::report::threshold::Threshold;
use rand::distr::weighted::WeightedIndex;
use serde_json::{json, Value};
use std::time::Duration;
use url::Url;

/// Command-line values that override the profile (all optional).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub target: Option<String>,
    pub stdio: Option<String>,
    pub clients: Option<u32>,
    pub sessions: Option<u64>,
    pub duration: Option<String>,
    pub seed: Option<u64>,
    pub timeout: Option<String>,
    /// `--max-message-size`: bytes, or with a KiB/MiB suffix.
    pub max_message_size: Option<String>,
    pub headers: Vec<String>,
    /// Applied to every persona.
    pub transport: Option<String>,
    pub era: Option<String>,
    pub protocol_version: Option<String>,
    pub client_name: Option<String>,
    /// `KEY=JSON` capability declarations added to every persona.
    pub capabilities: Vec<String>,
    pub insecure: bool,
    /// `500/s`: an open model at this arrival rate.
    pub rate: Option<String>,
    /// `CLIENTS:DURATION,...`: closed-model stages.
    pub ramp: Option<String>,
    pub think: Option<String>,
    pub max_in_flight: Option<u32>,
    /// Local source addresses (`127.0.0.1-127.0.0.8` or a comma list).
    pub source_addresses: Option<String>,
    pub keep_alive: bool,
    /// `--threshold` expressions, checked after those of the profile.
    pub thresholds: Vec<String>,
}

/// What the fleet connects to.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// An HTTP(S) or WebSocket URL; the persona's transport says how it is spoken to.
    Url(Url),
    /// A command spawned once per session.
    Stdio {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// The built-in reference server, started by the run on a loopback port.
    BuiltIn,
}

impl Target {
    pub fn describe(&self) -> String {
        match self {
            Target::Url(url) => url.to_string(),
            Target::Stdio { program, args, .. } => {
                shell_words::join(std::iter::once(program).chain(args))
            }
            Target::BuiltIn => "built-in reference server".into(),
        }
    }
}

/// A resolved scenario step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A paginated list method, followed to the last page.
    List {
        phase: Phase,
        method: &'static str,
    },
    CallTool {
        tool: ToolId,
        name: String,
        arguments: Value,
    },
    ReadResource {
        uri: String,
    },
    GetPrompt {
        name: String,
        arguments: Value,
    },
    /// `count` weighted tool calls, `parallel` in flight at a time.
    Mix(Mix),
    Ping,
    Pause(Duration),
}

/// A weighted mix of tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Mix {
    pub calls: Vec<MixCall>,
    pub weights: Vec<u32>,
    pub count: u32,
    pub parallel: u32,
}

/// One tool of a mix; `arguments: None` = generate from the tool's `inputSchema`.
#[derive(Debug, Clone, PartialEq)]
pub struct MixCall {
    pub tool: ToolId,
    pub name: String,
    pub arguments: Option<Value>,
}

impl Step {
    /// The server capability this step needs, if any.
    pub fn required_capability(&self) -> Option<&'static str> {
        match self {
            Step::List { method, .. } => methods::required_server_capability(method),
            Step::CallTool { .. } | Step::Mix(_) => Some("tools"),
            Step::ReadResource { .. } => Some("resources"),
            Step::GetPrompt { .. } => Some("prompts"),
            Step::Ping | Step::Pause(_) => None,
        }
    }

    pub fn phase(&self) -> Option<Phase> {
        match self {
            Step::List { phase, .. } => Some(*phase),
            Step::CallTool { .. } | Step::Mix(_) => Some(Phase::ToolsCall),
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
}

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub target: Target,
    /// Extra HTTP headers (name, value), validated.
    pub headers: Vec<(http::HeaderName, http::HeaderValue)>,
    pub timeout: Duration,
    /// The largest server message a session holds (`--max-message-size`).
    pub max_message_bytes: usize,
    /// Accept any TLS certificate.
    pub insecure: bool,
    /// Local addresses to connect from, in turn (empty: the system's choice).
    pub source_addresses: Vec<std::net::IpAddr>,
    /// Streamable HTTP connections outlive sessions and are reused.
    pub keep_alive: bool,
    pub load: Load,
    pub personas: Vec<Persona>,
    pub persona_weights: WeightedIndex<u32>,
    pub scenarios: Vec<Scenario>,
    /// Interned tool names; [`ToolId`] indexes this.
    pub tools: Vec<String>,
    /// Pass/fail rules checked against the summary (profile first, then `--threshold`).
    pub thresholds: Vec<Threshold>,
    /// The profile after overrides, as written to the results folder.
    pub effective_profile: Profile,
}

/// A problem in the profile: where, what, and how to fix it.
#[derive(Debug, thiserror::Error)]
#[error("{origin}: `{key}`: {problem}\nfix: {fix}")]
pub struct PlanError {
    pub origin: String,
    pub key: String,
    pub problem: String,
    pub fix: String,
}

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

impl Plan {
    /// Apply `overrides` to `profile` and resolve. `origin` names the profile in errors.
    pub fn resolve(
        mut profile: Profile,
        overrides: &Overrides,
        origin: &str,
    ) -> Result<Plan, PlanError> {
        let err = |key: &str, problem: String, fix: &str| PlanError {
            origin: origin.to_string(),
            key: key.to_string(),
            problem,
            fix: fix.to_string(),
        };
        apply_overrides(&mut profile, overrides, origin)?;

        let target = resolve_target(&profile.target, origin)?;
        let timeout = match &profile.target.timeout {
            Some(t) => parse_duration(t, "target.timeout", origin)?,
            None => DEFAULT_TIMEOUT,
        };
        if timeout.is_zero() {
            return Err(err(
                "target.timeout",
                "must be more than zero".into(),
                "use e.g. timeout = \"10s\"",
            ));
        }
        let max_message_bytes = match &profile.target.max_message_size {
            Some(t) => parse_size(t, "target.max_message_size", origin)?,
            None => crate::transport::DEFAULT_MAX_MESSAGE_BYTES,
        };
        let mut headers = Vec::new();
        for (name, value) in &profile.target.headers {
            let n = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                err(
                    &format!("target.headers.{name}"),
                    "not a valid HTTP header name".into(),
                    "use letters, digits and '-' only",
                )
            })?;
            let v = http::HeaderValue::from_str(value).map_err(|_| {
                err(
                    &format!("target.headers.{name}"),
                    "not a valid HTTP header value".into(),
                    "use visible ASCII characters only",
                )
            })?;
            headers.push((n, v));
        }

        let load = load::resolve_load(&profile.load, origin)?;

        // Scenarios (default: discovery of the three lists).
        if profile.scenarios.is_empty() {
            profile.scenarios.push(profile::ScenarioSection {
                name: "discovery".into(),
                weight: None,
                steps: vec![
                    RawStep::ToolsList {},
                    RawStep::ResourcesList {},
                    RawStep::PromptsList {},
                ],
            });
        }
        let mut tools: Vec<String> = Vec::new();
        let mut scenarios = Vec::new();
        for (i, s) in profile.scenarios.iter().enumerate() {
            let key = format!("scenario[{i}]");
            if scenarios.iter().any(|o: &Scenario| o.name == s.name) {
                return Err(err(
                    &format!("{key}.name"),
                    format!("scenario name {:?} is used twice", s.name),
                    "give each scenario its own name",
                ));
            }
            let weight = s.weight.unwrap_or(1);
            let mut steps = Vec::new();
            for (j, raw) in s.steps.iter().enumerate() {
                steps.push(resolve_step(
                    raw,
                    &format!("{key}.steps[{j}]"),
                    origin,
                    &mut tools,
                )?);
            }
            scenarios.push(Scenario {
                name: s.name.clone(),
                weight,
                steps,
            });
        }

        // Personas (default: one generic modern-SDK-like client).
        if profile.personas.is_empty() {
            profile.personas.push(profile::PersonaSection {
                name: "default".into(),
                ..Default::default()
            });
        }
        let mut personas: Vec<Persona> = Vec::new();
        for (i, p) in profile.personas.iter().enumerate() {
            let key = format!("persona[{i}]");
            if p.name.is_empty() {
                return Err(err(
                    &format!("{key}.name"),
                    "is empty".into(),
                    "give the persona a name",
                ));
            }
            if personas.iter().any(|o| o.name == p.name) {
                return Err(err(
                    &format!("{key}.name"),
                    format!("persona name {:?} is used twice", p.name),
                    "give each persona its own name",
                ));
            }
            let id = PersonaId::try_from(i).map_err(|_| {
                err(
                    "persona",
                    "too many personas".into(),
                    "use at most 65535 personas",
                )
            })?;
            personas.push(persona::resolve_persona(
                p, id, &scenarios, &target, &key, origin,
            )?);
        }
        let weights: Vec<u32> = personas.iter().map(|p| p.weight).collect();
        let persona_weights = WeightedIndex::new(weights).map_err(|_| {
            err(
                "persona.weight",
                "every persona has weight 0".into(),
                "give at least one persona a weight of 1 or more",
            )
        })?;
        if tools.len() > usize::from(ToolId::MAX) {
            return Err(err(
                "scenario",
                "too many distinct tools".into(),
                "use fewer than 65535 tool names",
            ));
        }

        let thresholds = thresholds::resolve(&profile, overrides, &personas, origin)?;
        profile
            .thresholds
            .extend(overrides.thresholds.iter().cloned());

        Ok(Plan {
            name: profile.name.clone().unwrap_or_else(|| "run".into()),
            seed: profile.seed.unwrap_or_else(rand::random),
            target,
            headers,
            timeout,
            max_message_bytes,
            insecure: profile.target.insecure.unwrap_or(false),
            source_addresses: load::resolve_sources(&profile.target.source_addresses, origin)?,
            keep_alive: profile.target.keep_alive.unwrap_or(false),
            load,
            personas,
            persona_weights,
            scenarios,
            tools,
            thresholds,
            effective_profile: profile,
        })
    }

    /// A readable account of the plan (for `validate` and the run banner).
    pub fn describe(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(s, "plan {:?}  seed {}", self.name, self.seed);
        let _ = writeln!(s, "  target   {}", self.target.describe());
        let _ = write!(s, "  load     {}", self.load.describe());
        if let Some(n) = self.load.sessions {
            let _ = write!(s, ", stop after {n} sessions");
        }
        if let Some(d) = self.load.duration {
            let _ = write!(s, ", stop after {}", humantime::format_duration(d));
        }
        let _ = writeln!(
            s,
            ", think {}, request timeout {}",
            self.load.think.describe(),
            humantime::format_duration(self.timeout)
        );
        let total: u32 = self.personas.iter().map(|p| p.weight).sum();
        for p in &self.personas {
            let scen: Vec<&str> = p
                .scenarios
                .iter()
                .map(|&i| self.scenarios[i].name.as_str())
                .collect();
            let _ = writeln!(
                s,
                "  persona  {:<20} {:>5.1}%  {} {} {}  capabilities {}  scenarios {}",
                p.name,
                f64::from(p.weight) * 100.0 / f64::from(total.max(1)),
                p.route.transport.name(),
                p.era.name(),
                p.protocol_version,
                p.capabilities,
                scen.join(", ")
            );
            if p.route.target != self.target {
                let _ = writeln!(s, "           → {}", p.route.target.describe());
            }
        }
        for sc in &self.scenarios {
            let steps: Vec<String> = sc.steps.iter().map(describe_step).collect();
            let _ = writeln!(
                s,
                "  scenario {:<20} weight {}  {}",
                sc.name,
                sc.weight,
                steps.join(" → ")
            );
        }
        s
    }
}

fn describe_step(step: &Step) -> String {
    match step {
        Step::List { method, .. } => (*method).to_string(),
        Step::CallTool { name, .. } => format!("tools/call({name})"),
        Step::ReadResource { uri } => format!("resources/read({uri})"),
        Step::GetPrompt { name, .. } => format!("prompts/get({name})"),
        Step::Mix(m) => {
            let names: Vec<String> = m
                .calls
                .iter()
                .zip(&m.weights)
                .map(|(c, w)| format!("{}×{w}", c.name))
                .collect();
            format!(
                "mix[{}] ×{} ({} at a time)",
                names.join(" "),
                m.count,
                m.parallel
            )
        }
        Step::Ping => "ping".into(),
        Step::Pause(d) => format!("pause {}", humantime::format_duration(*d)),
    }
}

fn parse_duration(text: &str, key: &str, origin: &str) -> Result<Duration, PlanError> {
    humantime::parse_duration(text.trim()).map_err(|e| PlanError {
        origin: origin.to_string(),
        key: key.to_string(),
        problem: format!("{text:?} is not a duration ({e})"),
        fix: "write a number with a unit, e.g. \"250ms\", \"10s\", \"5m\"".into(),
    })
}

/// A size in bytes: `65536`, `512KiB`, `16MiB` (more than zero).
fn parse_size(text: &str, key: &str, origin: &str) -> Result<usize, PlanError> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let scale: usize = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1024,
        "MiB" => 1024 * 1024,
        "GiB" => 1024 * 1024 * 1024,
        _ => 0,
    };
    number
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|n| *n > 0)
        .ok_or_else(|| PlanError {
            origin: origin.to_string(),
            key: key.to_string(),
            problem: format!("{text:?} is not a size in bytes"),
            fix:
                "write a positive number of bytes, optionally with KiB, MiB or GiB, e.g. \"16MiB\""
                    .into(),
        })
}

fn apply_overrides(p: &mut Profile, o: &Overrides, origin: &str) -> Result<(), PlanError> {
    if let Some(url) = &o.target {
        p.target.url = Some(url.clone());
        p.target.command = None;
    }
    if let Some(cmd) = &o.stdio {
        p.target.command = Some(profile::Command::Line(cmd.clone()));
        p.target.url = None;
    }
    if let Some(n) = o.clients {
        p.load.clients = Some(n);
    }
    if let Some(n) = o.sessions {
        p.load.sessions = Some(n);
    }
    if let Some(d) = &o.duration {
        p.load.duration = Some(d.clone());
    }
    if let Some(r) = &o.rate {
        p.load.rate = Some(r.clone());
        p.load.clients = None;
        p.load.stages = None;
    }
    if let Some(r) = &o.ramp {
        p.load.stages = Some(load::parse_ramp(r, origin)?);
        p.load.clients = None;
        p.load.rate = None;
    }
    if o.clients.is_some() {
        p.load.rate = None;
        p.load.stages = None;
    }
    if let Some(t) = &o.think {
        p.load.think = Some(t.clone());
    }
    if let Some(n) = o.max_in_flight {
        p.load.max_in_flight = Some(n);
    }
    if let Some(a) = &o.source_addresses {
        p.target.source_addresses = load::parse_source_list(a, origin)?;
    }
    if let Some(s) = o.seed {
        p.seed = Some(s);
    }
    if let Some(t) = &o.timeout {
        p.target.timeout = Some(t.clone());
    }
    if let Some(s) = &o.max_message_size {
        p.target.max_message_size = Some(s.clone());
    }
    if o.insecure {
        p.target.insecure = Some(true);
    }
    if o.keep_alive {
        p.target.keep_alive = Some(true);
    }
    let capability_overrides = parse_capability_overrides(&o.capabilities, origin)?;
    if p.personas.is_empty()
        && (o.transport.is_some()
            || o.era.is_some()
            || o.protocol_version.is_some()
            || o.client_name.is_some()
            || !capability_overrides.is_empty())
    {
        p.personas.push(profile::PersonaSection {
            name: "default".into(),
            ..Default::default()
        });
    }
    for persona in &mut p.personas {
        if let Some(t) = &o.transport {
            persona.transport = Some(t.clone());
        }
        if let Some(e) = &o.era {
            persona.era = Some(e.clone());
        }
        if let Some(v) = &o.protocol_version {
            persona.protocol_version = Some(v.clone());
            // An explicit version is sent as is: accept whatever is sent back by default.
            if o.era.as_deref() != Some("auto") {
                persona.legacy_version = None;
            }
        }
        if let Some(n) = &o.client_name {
            let mut info = persona.client_info.clone().unwrap_or_default();
            info.name = Some(n.clone());
            persona.client_info = Some(info);
        }
        if !capability_overrides.is_empty() {
            let mut caps = persona
                .capabilities
                .clone()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            for (k, v) in &capability_overrides {
                caps[k] = v.clone();
            }
            persona.capabilities = Some(caps);
        }
    }
    for h in &o.headers {
        let Some((name, value)) = h.split_once(':') else {
            return Err(PlanError {
                origin: origin.to_string(),
                key: "--header".into(),
                problem: format!("{h:?} has no ':'"),
                fix: "write it as 'Name: value'".into(),
            });
        };
        p.target
            .headers
            .insert(name.trim().to_string(), value.trim().to_string());
    }
    Ok(())
}

/// `--capability KEY=JSON` (the value defaults to `{}`).
fn parse_capability_overrides(
    items: &[String],
    origin: &str,
) -> Result<Vec<(String, Value)>, PlanError> {
    items
        .iter()
        .map(|item| {
            let (k, v) = item.split_once('=').unwrap_or((item, "{}"));
            let value: Value = serde_json::from_str(v).map_err(|e| PlanError {
                origin: origin.to_string(),
                key: "--capability".into(),
                problem: format!("{item:?}: the value is not JSON ({e})"),
                fix: "write it as KEY=JSON, e.g. --capability 'roots={\"listChanged\":true}'"
                    .into(),
            })?;
            if k.is_empty() || !value.is_object() {
                return Err(PlanError {
                    origin: origin.to_string(),
                    key: "--capability".into(),
                    problem: format!("{item:?}: needs a name and a JSON object"),
                    fix: "write it as KEY=JSON, e.g. --capability sampling={}".into(),
                });
            }
            Ok((k.to_string(), value))
        })
        .collect()
}

/// A target URL: http(s) or ws(s).
fn parse_url(raw: &str, key: &str, origin: &str) -> Result<Target, PlanError> {
    let err = |problem: String, fix: &str| PlanError {
        origin: origin.to_string(),
        key: key.to_string(),
        problem,
        fix: fix.to_string(),
    };
    let url = Url::parse(raw).map_err(|e| {
        err(
            format!("{raw:?} is not a URL ({e})"),
            "write it like \"http://127.0.0.1:3000/mcp\"",
        )
    })?;
    match url.scheme() {
        "http" | "https" | "ws" | "wss" => Ok(Target::Url(url)),
        other => Err(err(
            format!("scheme {other:?} is not supported"),
            "use http:// or https:// (Streamable HTTP, or legacy SSE with transport = \"sse\"), ws:// or wss:// (WebSocket), or `command` for stdio",
        )),
    }
}

/// A command line to spawn per session.
fn parse_command(cmd: &profile::Command, key: &str, origin: &str) -> Result<Target, PlanError> {
    let err = |problem: String, fix: &str| PlanError {
        origin: origin.to_string(),
        key: key.to_string(),
        problem,
        fix: fix.to_string(),
    };
    let argv = match cmd {
        profile::Command::Line(line) => shell_words::split(line).map_err(|e| {
            err(
                format!("cannot split {line:?}: {e}"),
                "balance the quotes, or write the command as a list",
            )
        })?,
        profile::Command::Argv(v) => v.clone(),
    };
    let mut it = argv.into_iter();
    let program = it.next().filter(|p| !p.is_empty()).ok_or_else(|| {
        err(
            "is empty".into(),
            "name the server program, e.g. \"npx -y @modelcontextprotocol/server-everything\"",
        )
    })?;
    Ok(Target::Stdio {
        program,
        args: it.collect(),
        env: Vec::new(),
    })
}

fn resolve_target(t: &profile::TargetSection, origin: &str) -> Result<Target, PlanError> {
    let err = |key: &str, problem: String, fix: &str| PlanError {
        origin: origin.to_string(),
        key: key.to_string(),
        problem,
        fix: fix.to_string(),
    };
    match (&t.url, &t.command) {
        (Some(_), Some(_)) => Err(err(
            "target",
            "both `url` and `command` are set".into(),
            "keep one: `url` for HTTP, `command` for stdio",
        )),
        (Some(raw), None) => parse_url(raw, "target.url", origin),
        (None, Some(cmd)) => match parse_command(cmd, "target.command", origin)? {
            Target::Stdio { program, args, .. } => Ok(Target::Stdio {
                program,
                args,
                env: t.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            }),
            other => Ok(other),
        },
        (None, None) => Ok(Target::BuiltIn),
    }
}

/// The id of tool `name`, adding it to the table the first time.
fn intern(tools: &mut Vec<String>, name: &str) -> ToolId {
    let id = match tools.iter().position(|t| t == name) {
        Some(i) => i,
        None => {
            tools.push(name.to_string());
            tools.len() - 1
        }
    };
    ToolId::try_from(id).unwrap_or(ToolId::MAX)
}

fn resolve_step(
    raw: &RawStep,
    key: &str,
    origin: &str,
    tools: &mut Vec<String>,
) -> Result<Step, PlanError> {
    let object_or_empty = |v: &Option<Value>, what: &str| -> Result<Value, PlanError> {
        match v {
            None => Ok(json!({})),
            Some(v @ Value::Object(_)) => Ok(v.clone()),
            Some(_) => Err(PlanError {
                origin: origin.to_string(),
                key: format!("{key}.{what}"),
                problem: "is not a table".into(),
                fix: format!("write {what} = {{ name = \"value\" }}"),
            }),
        }
    };
    Ok(match raw {
        RawStep::ToolsList {} => Step::List {
            phase: Phase::ToolsList,
            method: methods::TOOLS_LIST,
        },
        RawStep::ResourcesList {} => Step::List {
            phase: Phase::ResourcesList,
            method: methods::RESOURCES_LIST,
        },
        RawStep::ResourcesTemplatesList {} => Step::List {
            phase: Phase::ResourcesTemplatesList,
            method: methods::RESOURCES_TEMPLATES_LIST,
        },
        RawStep::PromptsList {} => Step::List {
            phase: Phase::PromptsList,
            method: methods::PROMPTS_LIST,
        },
        RawStep::Mix {
            calls,
            count,
            parallel,
        } => {
            if calls.is_empty() {
                return Err(PlanError {
                    origin: origin.to_string(),
                    key: format!("{key}.calls"),
                    problem: "is empty".into(),
                    fix: "list the tools, e.g. calls = [{ tool = \"echo\", weight = 3 }]".into(),
                });
            }
            let mut out = Vec::new();
            let mut weights = Vec::new();
            for (i, c) in calls.iter().enumerate() {
                let ckey = format!("{key}.calls[{i}]");
                if c.tool.is_empty() {
                    return Err(PlanError {
                        origin: origin.to_string(),
                        key: format!("{ckey}.tool"),
                        problem: "is empty".into(),
                        fix: "name the tool to call".into(),
                    });
                }
                let arguments = match &c.arguments {
                    None => None,
                    some => Some(object_or_empty(some, &format!("calls[{i}].arguments"))?),
                };
                out.push(MixCall {
                    tool: intern(tools, &c.tool),
                    name: c.tool.clone(),
                    arguments,
                });
                weights.push(c.weight.unwrap_or(1));
            }
            if weights.iter().all(|w| *w == 0) {
                return Err(PlanError {
                    origin: origin.to_string(),
                    key: format!("{key}.calls"),
                    problem: "every weight is 0".into(),
                    fix: "give at least one call a weight of 1 or more".into(),
                });
            }
            let count = count.unwrap_or(1);
            let parallel = parallel.unwrap_or(1);
            if count == 0 || parallel == 0 {
                return Err(PlanError {
                    origin: origin.to_string(),
                    key: format!("{key}.{}", if count == 0 { "count" } else { "parallel" }),
                    problem: "is 0".into(),
                    fix: "use 1 or more".into(),
                });
            }
            Step::Mix(Mix {
                calls: out,
                weights,
                count,
                parallel,
            })
        }
        RawStep::ToolsCall { tool, arguments } => {
            if tool.is_empty() {
                return Err(PlanError {
                    origin: origin.to_string(),
                    key: format!("{key}.tool"),
                    problem: "is empty".into(),
                    fix: "name the tool to call".into(),
                });
            }
            Step::CallTool {
                tool: intern(tools, tool),
                name: tool.clone(),
                arguments: object_or_empty(arguments, "arguments")?,
            }
        }
        RawStep::ResourcesRead { uri } => Step::ReadResource { uri: uri.clone() },
        RawStep::PromptsGet { prompt, arguments } => Step::GetPrompt {
            name: prompt.clone(),
            arguments: object_or_empty(arguments, "arguments")?,
        },
        RawStep::Ping {} => Step::Ping,
        RawStep::Pause { duration } => Step::Pause(parse_duration(
            duration,
            &format!("{key}.duration"),
            origin,
        )?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Result<Plan, PlanError> {
        Plan::resolve(
            Profile::parse(text, "p.toml").expect("parses"),
            &Overrides::default(),
            "p.toml",
        )
    }

    #[test]
    fn empty_profile_gets_defaults() {
        let p = plan("").expect("defaults");
        assert_eq!(p.target, Target::BuiltIn);
        assert_eq!(
            p.load.model,
            LoadModel::Closed {
                clients: crate::fleet::schedule::Curve::constant(10.0, None)
            }
        );
        assert_eq!(p.load.sessions, Some(100));
        assert_eq!(p.personas.len(), 1);
        assert_eq!(
            p.personas[0].initialize_params["protocolVersion"],
            "2025-11-25"
        );
        assert_eq!(p.scenarios[0].name, "discovery");
        assert_eq!(p.scenarios[0].steps.len(), 3);
        assert!(p.tools.is_empty(), "discovery calls no tool");
    }

    #[test]
    fn overrides_win_over_the_profile() {
        let profile = Profile::parse(
            "[target]\nurl = \"http://a/mcp\"\n[load]\nclients = 2\nsessions = 5\n",
            "p",
        )
        .expect("parses");
        let o = Overrides {
            stdio: Some("server --flag 'a b'".into()),
            clients: Some(7),
            duration: Some("2s".into()),
            seed: Some(9),
            headers: vec!["Authorization: Bearer t".into()],
            ..Default::default()
        };
        let p = Plan::resolve(profile, &o, "p").expect("resolves");
        assert_eq!(
            p.target,
            Target::Stdio {
                program: "server".into(),
                args: vec!["--flag".into(), "a b".into()],
                env: vec![]
            }
        );
        assert_eq!(
            p.load.model,
            LoadModel::Closed {
                clients: crate::fleet::schedule::Curve::constant(7.0, None)
            }
        );
        assert_eq!(p.load.sessions, Some(5));
        assert_eq!(p.load.duration, Some(Duration::from_secs(2)));
        assert_eq!(p.seed, 9);
        assert_eq!(p.headers[0].0.as_str(), "authorization");
        assert_eq!(p.effective_profile.load.clients, Some(7));
    }

    #[test]
    fn tools_are_interned_once() {
        let p = plan(
            r#"
[[scenario]]
name = "a"
steps = [{ op = "tools/call", tool = "echo" }, { op = "tools/call", tool = "add" }]
[[scenario]]
name = "b"
steps = [{ op = "tools/call", tool = "echo", arguments = { message = "x" } }]
"#,
        )
        .expect("resolves");
        assert_eq!(p.tools, ["echo", "add"]);
        assert!(matches!(
            p.scenarios[1].steps[0],
            Step::CallTool { tool: 0, .. }
        ));
    }

    #[test]
    fn errors_name_file_key_and_fix() {
        let cases = [
            ("[load]\nclients = 0\n", "p.toml: `load.clients`: is 0, so nothing would run\nfix: set clients = 1 or more"),
            ("[load]\nduration = \"soon\"\n", "p.toml: `load.duration`: \"soon\" is not a duration"),
            ("[target]\nurl = \"ftp://x\"\n", "p.toml: `target.url`: scheme \"ftp\" is not supported"),
            ("[target]\nurl = \"http://x\"\ncommand = \"y\"\n", "p.toml: `target`: both `url` and `command` are set"),
            ("[target]\ncommand = \"\"\n", "p.toml: `target.command`: is empty"),
            ("[[persona]]\nname = \"a\"\n[[persona]]\nname = \"a\"\n", "p.toml: `persona[1].name`: persona name \"a\" is used twice"),
            ("[[persona]]\nname = \"a\"\nweight = 0\n", "p.toml: `persona.weight`: every persona has weight 0"),
            ("[[persona]]\nname = \"a\"\nscenarios = [\"nope\"]\n", "p.toml: `persona[0].scenarios`: no scenario is named \"nope\"\nfix: use one of: discovery"),
            ("[[persona]]\nname = \"a\"\ncapabilities = 3\n", "p.toml: `persona[0].capabilities`: is not a table"),
            ("[[persona]]\nname = \"a\"\naccept_versions = []\n", "p.toml: `persona[0].accept_versions`: is empty"),
            ("[[scenario]]\nname = \"s\"\nsteps = [{ op = \"pause\", duration = \"x\" }]\n", "p.toml: `scenario[0].steps[0].duration`: \"x\" is not a duration"),
            ("[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/call\", tool = \"t\", arguments = 5 }]\n", "p.toml: `scenario[0].steps[0].arguments`: is not a table"),
            ("[target]\nheaders = { \"Bad Name\" = \"x\" }\n", "p.toml: `target.headers.Bad Name`: not a valid HTTP header name"),
        ];
        for (text, expected) in cases {
            let e = plan(text).expect_err(text).to_string();
            assert!(
                e.starts_with(expected),
                "for {text:?}\n got: {e}\nwant: {expected}"
            );
        }
    }

    #[test]
    fn max_message_size_is_bytes_with_binary_suffixes() {
        let resolve = |size: Option<&str>| {
            let o = Overrides {
                target: Some("http://127.0.0.1:1/mcp".into()),
                max_message_size: size.map(String::from),
                ..Default::default()
            };
            Plan::resolve(Profile::default(), &o, "cli")
        };
        let bytes = |size| resolve(Some(size)).expect(size).max_message_bytes;
        assert_eq!(bytes("65536"), 65536);
        assert_eq!(bytes("512KiB"), 512 * 1024);
        assert_eq!(bytes(" 16MiB "), 16 * 1024 * 1024);
        let default = resolve(None).expect("default").max_message_bytes;
        assert_eq!(default, crate::transport::DEFAULT_MAX_MESSAGE_BYTES);
        for bad in ["0", "1MB", "x", "KiB", "-5"] {
            let e = resolve(Some(bad)).expect_err(bad).to_string();
            assert!(e.contains("target.max_message_size"), "{e}");
        }
    }

    #[test]
    fn bad_header_override_is_explained() {
        let o = Overrides {
            headers: vec!["NoColon".into()],
            ..Default::default()
        };
        let e = Plan::resolve(Profile::default(), &o, "cli")
            .expect_err("bad header")
            .to_string();
        assert_eq!(
            e,
            "cli: `--header`: \"NoColon\" has no ':'\nfix: write it as 'Name: value'"
        );
    }
}
