//! Profile + command-line overrides → [`Plan`]: every check and default happens here,
//! once. Nothing after the plan reads raw input again; names are interned into ids.
//! [`Plan::resolve`] is a short driver: each resolved part builds itself from its own
//! profile section (`Target::from_section`, `Load::from_section`, …).

mod arguments;
mod auth;
pub mod capture;
pub mod check;
mod checkpoint;
mod client_faults;
mod connection;
pub mod data;
mod describe;
mod error;
mod extensions;
mod habits;
pub mod library;
mod listen;
mod load;
mod names;
mod outputs;
mod overrides;
mod pause;
mod persona;
pub mod quantity;
mod reply;
mod request;
mod scenario;
mod secrets;
mod session_kind;
mod soak;
mod target;
mod tasks;
pub mod template;
pub mod threshold;
mod watch;

pub use auth::{AuthPlan, ClientCredentials, TokenSource};
pub use client_faults::FaultMix;
pub use connection::{Connection, DEFAULT_MAX_MESSAGE_BYTES};
pub use error::{PlanError, SourceError};
pub use extensions::is_extension_id;
pub use habits::Habits;
pub use listen::ListenPlan;
pub use load::{Arrival, Curve, Load, LoadEvent, LoadModel, Stage, Storm};
pub use outputs::{Outputs, PushKind, PushTarget};
pub use overrides::{ClientArgs, Overrides};
pub use pause::{Backoff, Think};
pub use persona::Persona;
pub use reply::{ElicitationReply, ReplyPolicy, SamplingReply};
pub use request::check_phase_name;
pub use scenario::{Call, Mix, OnError, Request, Scenario, Step};
pub use session_kind::{EraMode, Shape};
pub use soak::{SoakPlan, Span};
pub use target::{Route, Target};
pub use tasks::{TaskCalls, TaskPolicy, MAX_TTL as MAX_TASK_TTL};
pub use threshold::Threshold;
pub use watch::Watch;

use crate::profile::Profile;
use rand::distr::weighted::WeightedIndex;
use scenario::ToolTable;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The quickstart profile, embedded so `mcp-fleet run` works from any directory.
pub const QUICKSTART: &str = include_str!("../../profiles/quickstart.toml");

/// The shortest `--interval`: shorter ones would flood the interval files.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// Everything a run needs, validated.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub target: Target,
    /// How every session connects (headers, timeout, message limit, TLS, source
    /// addresses, keep-alive); each endpoint embeds it.
    pub connection: Connection,
    pub load: Load,
    pub personas: Vec<Persona>,
    /// How a session's persona is drawn; `None` when `[load] arrivals` name each
    /// session's own (see [`Plan::session_persona`]).
    pub persona_weights: Option<WeightedIndex<u32>>,
    pub scenarios: Vec<Scenario>,
    /// Interned tool names; [`crate::metrics::ToolId`] indexes this.
    pub tools: Vec<String>,
    /// The phase names of the `request` steps; a `request` sample's id indexes this.
    pub requests: Vec<String>,
    /// The names of the steps' checks; a check event's id indexes this.
    pub checks: Vec<String>,
    /// Pass/fail rules checked against the summary (profile first, then `--threshold`).
    pub thresholds: Vec<Threshold>,
    /// Length of the intervals in the interval files and the live view (`--interval`).
    pub interval: Duration,
    /// How often the results are rewritten from the figures so far (`--checkpoint`,
    /// `[load] checkpoint`); `None`: only at the end.
    pub checkpoint: Option<Duration>,
    /// The profile after overrides, as written to the results folder: secrets redacted
    /// (see [`Plan::profile_toml`]).
    pub effective_profile: Profile,
    /// The keys of `effective_profile` whose secrets were redacted.
    pub redacted: Vec<String>,
    /// Which part of the run the soak verdicts read (`[soak]`, `--warmup`,
    /// `--drift-window`).
    pub soak: SoakPlan,
    /// The server's processes, cgroup and metrics endpoint to sample (`[watch]`).
    pub watch: Watch,
    /// `[data]` pools, shared by every session.
    pub pools: std::sync::Arc<data::Pools>,
    /// `[arguments]`: how arguments are generated.
    pub arguments: ArgumentPolicy,
    /// `[target] app_tools`: the built-in server serves its application tools too.
    pub builtin_app_tools: bool,
    /// `[target] tasks`: the built-in server serves its task tools too.
    pub builtin_tasks: bool,
    /// `[target] auth`: the built-in server requires bearer tokens.
    pub builtin_auth: bool,
    /// `[target] change_every`: the built-in server changes its tool list this often.
    pub builtin_change_every: Option<std::time::Duration>,
    /// `[outputs]`: where the figures are pushed as the run goes.
    pub outputs: Outputs,
}

/// `[arguments]`, resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArgumentPolicy {
    /// The share of optional properties a generated call includes.
    pub optional: f64,
    /// Tools annotated destructive are called with generated arguments too.
    pub allow_destructive: bool,
}

impl Default for ArgumentPolicy {
    fn default() -> Self {
        ArgumentPolicy {
            optional: 0.5,
            allow_destructive: false,
        }
    }
}

impl ArgumentPolicy {
    /// `[arguments]`: `optional` a share from 0 to 1.
    pub fn from_section(
        s: &crate::profile::ArgumentsSection,
        origin: &str,
    ) -> Result<ArgumentPolicy, PlanError> {
        let default = ArgumentPolicy::default();
        let optional = s.optional.unwrap_or(default.optional);
        if !(0.0..=1.0).contains(&optional) {
            return Err(PlanError::new(
                origin,
                "arguments.optional",
                format!("{optional} is not a share from 0 to 1"),
                "use e.g. optional = 0.5 (half the optional properties), 0 or 1",
            ));
        }
        Ok(ArgumentPolicy {
            optional,
            allow_destructive: s.allow_destructive.unwrap_or(default.allow_destructive),
        })
    }
}

/// How long `run --target URL` (no profile, no `--sessions` or `--duration`) runs.
pub const COMMAND_LINE_DURATION: &str = "10s";

/// Where the profile comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A profile file.
    File(PathBuf),
    /// A target on the command line and no profile: handshake + discovery, no tool calls.
    CommandLine,
    /// Neither: the built-in quickstart against the built-in server.
    Quickstart,
}

impl Source {
    /// The profile named, else the command line's target alone, else the quickstart.
    pub fn choose(profile: Option<&Path>, overrides: &Overrides) -> Source {
        match profile {
            Some(path) => Source::File(path.to_path_buf()),
            None if overrides.target.is_some() || overrides.stdio.is_some() => Source::CommandLine,
            None => Source::Quickstart,
        }
    }

    /// How errors name this source.
    pub fn origin(&self) -> String {
        match self {
            Source::File(path) => path.display().to_string(),
            Source::CommandLine => "command line".into(),
            Source::Quickstart => "quickstart (built in)".into(),
        }
    }

    fn profile(&self) -> Result<Profile, crate::profile::ProfileError> {
        match self {
            Source::File(path) => Profile::load(path),
            Source::CommandLine => Ok(Profile::default()),
            Source::Quickstart => Profile::parse(QUICKSTART, &self.origin()),
        }
    }
}

impl Plan {
    /// Each persona's name and transport, in plan order (what a persona id indexes): the
    /// names outputs label their figures with.
    pub fn persona_routes(&self) -> Vec<(String, crate::protocol::TransportKind)> {
        self.personas
            .iter()
            .map(|p| (p.name.clone(), p.route.transport))
            .collect()
    }

    /// The name of the run's default results folder (before its time): the profile's
    /// name, or for a run without one what it ran against (`builtin-http`,
    /// `127.0.0.1-3000`, `stdio-npx`), since "run" says nothing.
    pub fn folder_name(&self) -> String {
        if self.name != "run" {
            return self.name.clone();
        }
        let mut transports = self.personas.iter().map(|p| p.route.transport);
        let only = transports
            .next()
            .filter(|first| transports.all(|t| t == *first));
        self.target.folder_label(only)
    }

    /// The one way from the command line to a plan: read the source, apply the overrides,
    /// resolve.
    pub fn from_source(source: &Source, overrides: &Overrides) -> Result<Plan, SourceError> {
        let mut profile = source.profile()?;
        // `run --target URL` alone: as long as the quickstart (the old default, 100
        // sessions, was over in hundredths of a second and drew charts of single dots).
        let says_when_to_stop = overrides.sessions.is_some()
            || overrides.duration.is_some()
            || overrides.ramp.is_some();
        if *source == Source::CommandLine && !says_when_to_stop {
            profile.load.duration = Some(COMMAND_LINE_DURATION.into());
        }
        Ok(Plan::resolve(profile, overrides, &source.origin())?)
    }

    /// Apply `overrides` to `profile` and resolve. `origin` names the profile in errors.
    pub fn resolve(
        mut profile: Profile,
        overrides: &Overrides,
        origin: &str,
    ) -> Result<Plan, PlanError> {
        library::expand(&mut profile.personas, origin)?;
        overrides.apply(&mut profile, origin)?;
        let target = Target::from_section(&profile.target, origin)?;
        let builtin_change_every = match &profile.target.change_every {
            None => None,
            Some(text) => {
                let d = quantity::parse_duration(text, "target.change_every", origin)?;
                if target != Target::BuiltIn || d.is_zero() {
                    return Err(PlanError::new(
                        origin,
                        "target.change_every",
                        "only the built-in server changes on a timer, and not every 0 s",
                        "remove url/command from [target] (your server makes its own changes), or give a period such as \"2s\"",
                    ));
                }
                Some(d)
            }
        };
        let connection = Connection::from_section(&profile.target, origin)?;
        let load = Load::from_section(&profile.load, &persona::names(&profile.personas), origin)?;
        let checkpoint = checkpoint::resolve(profile.load.checkpoint.as_deref(), &load, origin)?;
        let paced = load.iteration_rate.is_some();
        if profile.scenarios.is_empty() {
            profile.scenarios.push(scenario::default_section(paced));
        }
        let pools = data::Pools::from_sections(&profile.data, origin)?;
        let arguments = ArgumentPolicy::from_section(&profile.arguments, origin)?;
        let mut tools = ToolTable::default();
        let mut ctx = template::TemplateContext::new(&pools);
        let mut scenarios =
            Scenario::all_from_sections(&profile.scenarios, &mut tools, &mut ctx, origin)?;
        arguments::settle(&mut scenarios, profile.arguments.optional);
        if profile.personas.is_empty() {
            let mut p = Persona::default_section();
            if paced {
                p.shape = Some("long-lived".into());
            }
            profile.personas.push(p);
        }
        let personas = Persona::all_from_sections(&profile.personas, &scenarios, &target, origin)?;
        let persona_weights = persona::weights(&personas, &load.model, origin)?;
        persona::check_iteration_rate(&personas, load.iteration_rate, origin)?;
        let [tools, requests, checks] = tools.into_names(origin)?;
        let mut thresholds = threshold::resolve_all(
            &profile.thresholds,
            &overrides.thresholds,
            &personas,
            (&tools, &requests, &checks),
            origin,
        )?;
        threshold::abort_after(
            &mut thresholds,
            &profile.thresholds,
            overrides.abort_on_fail.as_deref(),
            origin,
        )?;
        profile
            .thresholds
            .extend(overrides.thresholds.iter().cloned().map(Into::into));
        let interval = interval(overrides.interval.as_deref())?;
        let mut soak = SoakPlan::from_section(&profile.soak, load.duration, interval, origin)?;
        soak.server_inside = target == Target::BuiltIn
            && personas
                .iter()
                .any(|p| p.route.transport != crate::protocol::TransportKind::Stdio);
        let watch = Watch::from_section(&profile.watch, origin)?;
        let mut outputs = Outputs::from_section(&profile.outputs, origin)?;
        outputs.requests.clone_from(&overrides.requests);
        let (effective_profile, redacted) = secrets::written_profile(&profile);
        Ok(Plan {
            name: profile.name.clone().unwrap_or_else(|| "run".into()),
            seed: profile.seed.unwrap_or_else(rand::random),
            target,
            connection,
            load,
            personas,
            persona_weights,
            scenarios,
            tools,
            requests,
            checks,
            thresholds,
            interval,
            checkpoint,
            effective_profile,
            redacted,
            soak,
            watch,
            outputs,
            pools: std::sync::Arc::new(pools),
            arguments,
            builtin_app_tools: profile.target.app_tools == Some(true),
            builtin_tasks: profile.target.tasks == Some(true),
            builtin_auth: profile.target.auth == Some(true),
            builtin_change_every,
        })
    }
}

/// `--interval`: at least [`MIN_INTERVAL`]; default [`crate::metrics::DEFAULT_INTERVAL`].
fn interval(text: Option<&str>) -> Result<Duration, PlanError> {
    let Some(text) = text else {
        return Ok(crate::metrics::DEFAULT_INTERVAL);
    };
    humantime::parse_duration(text.trim())
        .ok()
        .filter(|d| *d >= MIN_INTERVAL)
        .ok_or_else(|| {
            PlanError::new(
                "command line",
                "--interval",
                format!("{text:?} is not a duration of 10ms or more"),
                "use e.g. --interval 1s",
            )
        })
}

#[cfg(test)]
mod tests;
