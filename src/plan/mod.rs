//! Profile + command-line overrides → [`Plan`]: every check and default happens here,
//! once. Nothing after the plan reads raw input again; names are interned into ids.
//! [`Plan::resolve`] is a short driver: each resolved part builds itself from its own
//! profile section (`Target::from_section`, `Load::from_section`, …).

mod arguments;
mod auth;
pub mod capture;
mod checkpoint;
mod client_faults;
pub mod data;
mod describe;
mod error;
mod habits;
mod load;
mod overrides;
mod pause;
mod persona;
mod quantity;
mod reply;
mod scenario;
mod secrets;
mod soak;
mod target;
mod tasks;
pub mod template;
pub mod threshold;
mod watch;

pub use auth::{AuthPlan, ClientCredentials, TokenSource};
pub use client_faults::FaultMix;
pub use error::{PlanError, SourceError};
pub use habits::Habits;
pub use load::{Curve, Load, LoadEvent, LoadModel, Stage, Storm};
pub use overrides::{ClientArgs, Overrides};
pub use pause::{Backoff, Think};
pub use persona::{EraMode, Persona, Shape};
pub use reply::{ElicitationReply, ReplyPolicy, SamplingReply};
pub use scenario::{Call, Mix, OnError, Scenario, Step};
pub use soak::{SoakPlan, Span};
pub use target::{Connection, Route, Target, DEFAULT_MAX_MESSAGE_BYTES};
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
    /// Interned tool names; [`crate::metrics::ToolId`] indexes this.
    pub tools: Vec<String>,
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
    /// The one way from the command line to a plan: read the source, apply the overrides,
    /// resolve.
    pub fn from_source(source: &Source, overrides: &Overrides) -> Result<Plan, SourceError> {
        Ok(Plan::resolve(
            source.profile()?,
            overrides,
            &source.origin(),
        )?)
    }

    /// Apply `overrides` to `profile` and resolve. `origin` names the profile in errors.
    pub fn resolve(
        mut profile: Profile,
        overrides: &Overrides,
        origin: &str,
    ) -> Result<Plan, PlanError> {
        overrides.apply(&mut profile, origin)?;
        let target = Target::from_section(&profile.target, origin)?;
        let connection = Connection::from_section(&profile.target, origin)?;
        let load = Load::from_section(&profile.load, origin)?;
        let checkpoint = checkpoint::resolve(profile.load.checkpoint.as_deref(), &load, origin)?;
        if profile.scenarios.is_empty() {
            profile.scenarios.push(scenario::default_section());
        }
        let pools = data::Pools::from_sections(&profile.data, origin)?;
        let arguments = ArgumentPolicy::from_section(&profile.arguments, origin)?;
        let mut tools = ToolTable::default();
        let mut ctx = template::TemplateContext::new(&pools);
        let mut scenarios =
            Scenario::all_from_sections(&profile.scenarios, &mut tools, &mut ctx, origin)?;
        arguments::settle(&mut scenarios, profile.arguments.optional);
        if profile.personas.is_empty() {
            profile.personas.push(Persona::default_section());
        }
        let (personas, persona_weights) =
            Persona::all_from_sections(&profile.personas, &scenarios, &target, origin)?;
        let tools = tools.into_names(origin)?;
        let thresholds = threshold::resolve_all(
            &profile.thresholds,
            &overrides.thresholds,
            &personas,
            &tools,
            origin,
        )?;
        profile
            .thresholds
            .extend(overrides.thresholds.iter().cloned());
        let interval = interval(overrides.interval.as_deref())?;
        let mut soak = SoakPlan::from_section(&profile.soak, load.duration, interval, origin)?;
        soak.server_inside = target == Target::BuiltIn
            && personas
                .iter()
                .any(|p| p.route.transport != crate::protocol::TransportKind::Stdio);
        let watch = Watch::from_section(&profile.watch, origin)?;
        let (effective_profile, redacted) = secrets::written_profile(&profile);
        Ok(Plan {
            name: profile.name.clone().unwrap_or_else(|| "run".into()),
            seed: profile.seed.unwrap_or_else(rand::random),
            target,
            headers: connection.headers,
            timeout: connection.timeout,
            max_message_bytes: connection.max_message_bytes,
            insecure: connection.insecure,
            source_addresses: connection.source_addresses,
            keep_alive: connection.keep_alive,
            load,
            personas,
            persona_weights,
            scenarios,
            tools,
            thresholds,
            interval,
            checkpoint,
            effective_profile,
            redacted,
            soak,
            watch,
            pools: std::sync::Arc::new(pools),
            arguments,
            builtin_app_tools: profile.target.app_tools == Some(true),
            builtin_tasks: profile.target.tasks == Some(true),
            builtin_auth: profile.target.auth == Some(true),
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
                clients: Curve::constant(10.0, None)
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
            client: ClientArgs {
                headers: vec!["Authorization: Bearer t".into()],
                ..Default::default()
            },
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
                clients: Curve::constant(7.0, None)
            }
        );
        assert_eq!(p.load.sessions, Some(5));
        assert_eq!(p.load.duration, Some(Duration::from_secs(2)));
        assert_eq!(p.seed, 9);
        assert_eq!(p.headers[0].0.as_str(), "authorization");
        assert_eq!(p.effective_profile.load.clients, Some(7));
    }

    #[test]
    fn an_accepted_threshold_names_a_tool_the_scenarios_call() {
        let profile = |t: &str| {
            format!(
                "thresholds = [\"{t}\"]\n[[scenario]]\nname = \"a\"\n\
                 steps = [{{ op = \"mix\", calls = [{{ tool = \"echo\" }}] }}]\n"
            )
        };
        assert!(plan(&profile("accepted(echo) > 95%")).is_ok());
        assert!(plan(&profile("accepted(tools/call) > 95%")).is_ok());
        let e = plan(&profile("accepted(ecoh) > 95%"))
            .expect_err("a typo")
            .to_string();
        assert!(
            e.contains("thresholds[0]") && e.contains("no scenario calls tool `ecoh`"),
            "{e}"
        );
        assert!(
            e.contains("use one of the tools the scenarios call: echo"),
            "{e}"
        );
        let none = plan("thresholds = [\"accepted(echo) > 0.5\"]").expect_err("no calls");
        assert!(
            none.to_string().contains("no scenario calls a tool"),
            "{none}"
        );
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
            Step::CallTool(Call { tool: 0, .. })
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
    fn interval_is_resolved_in_the_plan() {
        let o = Overrides {
            interval: Some("250ms".into()),
            ..Default::default()
        };
        let p = Plan::resolve(Profile::default(), &o, "cli").expect("resolves");
        assert_eq!(p.interval, Duration::from_millis(250));
        assert_eq!(
            plan("").expect("defaults").interval,
            crate::metrics::DEFAULT_INTERVAL
        );
        let o = Overrides {
            interval: Some("1ms".into()),
            ..Default::default()
        };
        let e = Plan::resolve(Profile::default(), &o, "cli").expect_err("too short");
        assert_eq!(
            e.to_string(),
            "command line: `--interval`: \"1ms\" is not a duration of 10ms or more\nfix: use e.g. --interval 1s"
        );
    }

    #[test]
    fn sources_are_chosen_in_order() {
        let none = Overrides::default();
        let with_target = Overrides {
            target: Some("http://127.0.0.1:1/mcp".into()),
            ..Default::default()
        };
        let file = Path::new("p.toml");
        assert_eq!(
            Source::choose(Some(file), &with_target),
            Source::File(file.into())
        );
        assert_eq!(Source::choose(None, &with_target), Source::CommandLine);
        assert_eq!(Source::choose(None, &none), Source::Quickstart);
        let p = Plan::from_source(&Source::Quickstart, &none).expect("the quickstart resolves");
        assert_eq!(p.name, "quickstart");
        let e = Plan::from_source(&Source::File("/nonexistent/p.toml".into()), &none)
            .expect_err("no file");
        assert!(e
            .to_string()
            .starts_with("cannot read profile /nonexistent/p.toml"));
    }

    #[test]
    fn cli_thresholds_are_named_as_cli_and_kept_in_the_profile() {
        let o = Overrides {
            thresholds: vec!["p99(initialize) < 50ms".into()],
            ..Default::default()
        };
        let profile = Profile::parse("thresholds = [\"error_rate < 1%\"]\n", "p").expect("parses");
        let p = Plan::resolve(profile, &o, "p").expect("resolves");
        assert_eq!(p.thresholds.len(), 2);
        assert_eq!(p.effective_profile.thresholds.len(), 2);
        let o = Overrides {
            thresholds: vec!["p99(nope) < 1ms".into()],
            ..Default::default()
        };
        let e = Plan::resolve(Profile::default(), &o, "p")
            .expect_err("bad")
            .to_string();
        assert!(
            e.starts_with("command line: `--threshold`: `p99(nope) < 1ms`: unknown phase"),
            "{e}"
        );
    }

    #[test]
    fn bad_header_override_is_explained() {
        let o = Overrides {
            client: ClientArgs {
                headers: vec!["NoColon".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        let e = Plan::resolve(Profile::default(), &o, "cli")
            .expect_err("bad header")
            .to_string();
        assert_eq!(
            e,
            "cli: `--header`: has no ':'\nfix: write it as 'Name: value' (or @FILE to read it from a file)"
        );
    }

    #[test]
    fn a_profile_file_reads_its_pools_from_its_own_folder() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("data")).expect("mkdir");
        std::fs::write(
            dir.path().join("data/tz.csv"),
            "zone,city\nUTC,London\nEurope/Paris,Paris\n",
        )
        .expect("csv");
        let profile = dir.path().join("p.toml");
        std::fs::write(
            &profile,
            r#"
[data.tz]
file = "data/tz.csv"
order = "random"
[arguments]
optional = 0.25
allow_destructive = true
[[scenario]]
name = "s"
on_error = "end-session"
steps = [
  { op = "tools/call", tool = "get_time", arguments = { timezone = "${pool.tz}", label = "in ${pool.tz.city}" } },
]
"#,
        )
        .expect("profile");
        // From another working directory than the profile's folder: the test's own.
        let p = Plan::from_source(&Source::File(profile), &Overrides::default()).expect("resolves");
        assert_eq!(
            p.pools.describe(),
            ["tz: 2 rows from data/tz.csv, random, column zone"]
        );
        assert_eq!(
            p.arguments,
            ArgumentPolicy {
                optional: 0.25,
                allow_destructive: true
            }
        );
        assert_eq!(p.scenarios[0].on_error, OnError::EndSession);
        let Step::CallTool(call) = &p.scenarios[0].steps[0] else {
            panic!("a call: {:?}", p.scenarios[0].steps[0])
        };
        assert!(call.generate, "pinned arguments generate the rest");
        let vars: Vec<String> = call.arguments.vars().iter().map(|v| v.describe()).collect();
        assert_eq!(vars, ["pool#0.city", "pool#0"], "label, timezone");
        // The profile written to the results keeps what the user wrote.
        assert!(p.profile_toml().contains("${pool.tz}"));
    }

    #[test]
    fn calls_without_arguments_generate_and_fixed_ones_stay_fixed() {
        let p = plan(
            r#"
[[scenario]]
name = "s"
steps = [
  { op = "tools/call", tool = "a" },
  { op = "tools/call", tool = "b", arguments = { x = 1, y = [2, "z"] }, generate = false },
  { op = "mix", calls = [{ tool = "c" }, { tool = "d", generate = false }] },
]
"#,
        )
        .expect("resolves");
        let steps = &p.scenarios[0].steps;
        assert_eq!(p.scenarios[0].on_error, OnError::Continue);
        let Step::CallTool(a) = &steps[0] else {
            panic!("a")
        };
        assert!(a.generate);
        assert_eq!(a.arguments, template::Template::empty_object());
        let Step::CallTool(b) = &steps[1] else {
            panic!("b")
        };
        assert!(!b.generate);
        assert_eq!(
            b.arguments,
            template::Template::Fixed(serde_json::json!({"x": 1, "y": [2, "z"]}))
        );
        let Step::Mix(m) = &steps[2] else {
            panic!("mix")
        };
        assert!(m.calls[0].generate);
        assert!(!m.calls[1].generate);
    }

    #[test]
    fn captured_variables_must_be_captured_before_they_are_used() {
        let ok = plan(
            r#"
[[scenario]]
name = "s"
steps = [
  { op = "tools/call", tool = "create", capture = { id = "/id", note = { regex = "note: (\\w+)" } } },
  { op = "resources/read", uri = "mem://${id}", capture = { body = "$.items[*].text" } },
  { op = "tools/call", tool = "read", arguments = { id = "${id}", about = "${body}" }, capture = { id = "/next" } },
  { op = "prompts/get", prompt = "${prompt.name}", arguments = { n = "${note}" } },
  { op = "mix", calls = [
      { tool = "list", capture = { file = { path = "$.files[*]", pick = "random" } } },
      { tool = "read_file", arguments = { path = "${file}", uri = "${resource.uri}" } },
  ] },
]
"#,
        )
        .expect("resolves");
        let steps = &ok.scenarios[0].steps;
        let Step::CallTool(create) = &steps[0] else {
            panic!("create")
        };
        let names: Vec<&str> = create.capture.iter().map(|c| c.var.as_str()).collect();
        assert_eq!(names, ["id", "note"]);
        let Step::ReadResource { uri, capture } = &steps[1] else {
            panic!("read")
        };
        assert_eq!(uri.describe_with(&ok.pools), "mem://${id}");
        assert_eq!(capture[0].var, "body");
        let Step::Mix(m) = &steps[4] else {
            panic!("mix")
        };
        assert_eq!(m.calls[0].capture[0].pick, capture::Pick::Random);
        assert_eq!(m.calls[1].arguments.captured(), ["file"]);

        let cases = [
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${note}\" } }]",
                "p.toml: `scenario[0].steps[0].arguments.a`: `${note}` is not captured by an earlier step\n\
                 fix: capture it in an earlier step of this scenario, e.g. capture = { note = \"/id\" } on a tools/call",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", capture = { id = \"/id\" } },\n\
                 { op = \"resources/read\", uri = \"x://${idd}\" }]",
                "p.toml: `scenario[0].steps[1].uri`: `${idd}` is not captured by an earlier step\n\
                 fix: capture it in an earlier step, or use one of: id",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${id}\" }, capture = { id = \"/id\" } }]",
                "p.toml: `scenario[0].steps[0].arguments.a`: `${id}` is not captured by an earlier step",
            ),
            (
                "steps = [{ op = \"prompts/get\", prompt = \"${p}\" }]",
                "p.toml: `scenario[0].steps[0].prompt`: `${p}` is not captured by an earlier step",
            ),
            (
                "steps = [{ op = \"mix\", calls = [{ tool = \"a\", arguments = { w = 1, x = [\"a\", { z = \"${resource.uri}\" }, \"${y}\"] } }] }]",
                "p.toml: `scenario[0].steps[0].calls[0].arguments.x[2]`: `${y}` is not captured by an earlier step",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${pool.nope}\" } }]",
                "p.toml: `scenario[0].steps[0].arguments.a`: `${pool.nope}`: no pool is named \"nope\"\n\
                 fix: add a [data.nope] section with a file, or fix the name",
            ),
            (
                "steps = [{ op = \"tools/call\", tool = \"t\", capture = { x = \"id\" } }]",
                "p.toml: `scenario[0].steps[0].capture.x`: \"id\" is neither a JSON pointer nor a path",
            ),
            (
                "steps = [{ op = \"mix\", calls = [{ tool = \"a\", capture = { x = { regex = \"(\" } } }] }]",
                "p.toml: `scenario[0].steps[0].calls[0].capture.x`: the regex does not compile",
            ),
            (
                "steps = [{ op = \"resources/read\", uri = \"\" }]",
                "p.toml: `scenario[0].steps[0].uri`: is empty",
            ),
            (
                "on_error = \"stop\"\nsteps = []",
                "p.toml: `scenario[0].on_error`: unknown value \"stop\"\n\
                 fix: use on_error = \"continue\" or on_error = \"end-session\"",
            ),
        ];
        for (steps, want) in cases {
            let text = format!("[[scenario]]\nname = \"s\"\n{steps}\n");
            let got = plan(&text).expect_err(&text).to_string();
            assert!(
                got.starts_with(want),
                "for {text}\n got: {got}\nwant: {want}"
            );
        }
        // Captures do not cross scenarios.
        let text = "[[scenario]]\nname = \"a\"\nsteps = [{ op = \"tools/call\", tool = \"t\", capture = { id = \"/id\" } }]\n\
                    [[scenario]]\nname = \"b\"\nsteps = [{ op = \"tools/call\", tool = \"t\", arguments = { a = \"${id}\" } }]\n";
        let got = plan(text).expect_err("other scenario").to_string();
        assert!(
            got.starts_with("p.toml: `scenario[1].steps[0].arguments.a`: `${id}` is not captured"),
            "{got}"
        );
    }

    #[test]
    fn arguments_optional_is_a_share() {
        assert_eq!(
            plan("").expect("defaults").arguments,
            ArgumentPolicy::default()
        );
        assert_eq!(
            plan("[arguments]\noptional = 0\n")
                .expect("0")
                .arguments
                .optional,
            0.0
        );
        assert_eq!(
            plan("[arguments]\noptional = 1.0\n")
                .expect("1")
                .arguments
                .optional,
            1.0
        );
        for bad in ["1.5", "-0.1", "nan"] {
            let e = plan(&format!("[arguments]\noptional = {bad}\n"))
                .expect_err(bad)
                .to_string();
            assert!(
                e.starts_with("p.toml: `arguments.optional`: ")
                    && e.contains("is not a share from 0 to 1\nfix: use e.g. optional = 0.5"),
                "{e}"
            );
        }
    }
}
