//! The profile file, mirrored by serde: every section and key a user can write, with
//! `deny_unknown_fields` so a typo is an error, and no logic. `plan/` gives it meaning.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// A whole profile file.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// A short name, used for the results folder.
    pub name: Option<String>,
    pub description: Option<String>,
    /// Seed for every random choice; random when absent (and printed).
    pub seed: Option<u64>,
    /// Pass/fail rules checked after the run, e.g. `["p99(initialize) < 50ms"]`; a failed
    /// one makes the exit code 1 (see `plan::threshold` for the forms).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<String>,
    #[serde(default)]
    pub target: TargetSection,
    #[serde(default)]
    pub load: LoadSection,
    #[serde(default, rename = "persona", skip_serializing_if = "Vec::is_empty")]
    pub personas: Vec<PersonaSection>,
    #[serde(default, rename = "scenario", skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioSection>,
    #[serde(default, skip_serializing_if = "SoakSection::is_empty")]
    pub soak: SoakSection,
    #[serde(default, skip_serializing_if = "WatchSection::is_empty")]
    pub watch: WatchSection,
    /// `[data.NAME]`: pools of values that arguments draw with `${pool.NAME}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, DataSection>,
    /// `[arguments]`: how arguments are generated from `inputSchema`s.
    #[serde(default, skip_serializing_if = "ArgumentsSection::is_empty")]
    pub arguments: ArgumentsSection,
}

/// `[soak]`: which part of a long run the soak verdicts (leak slopes, drift) read.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SoakSection {
    /// Left out at the start: a share of the run (`"10%"`, the default) or a duration
    /// (`"2m"`).
    pub warmup: Option<String>,
    /// The drift windows' length: a share of the steady part (`"10%"`) or a duration;
    /// default 10 % of the run.
    pub window: Option<String>,
}

impl SoakSection {
    pub fn is_empty(&self) -> bool {
        self.warmup.is_none() && self.window.is_none()
    }
}

/// `[watch]`: the server's resources to sample during the run (stdio children are
/// watched without asking).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WatchSection {
    /// Processes of the server (`--server-pid`): RSS, CPU, FDs, threads from procfs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_pid: Vec<u32>,
    /// A cgroup v2 folder holding the server (`--server-cgroup`).
    pub server_cgroup: Option<String>,
    /// The server's Prometheus text endpoint (`--server-metrics`), `${VAR}` allowed.
    pub server_metrics: Option<String>,
    /// More metrics to keep from that endpoint, each as `scrape.NAME` (summed over
    /// label sets), e.g. `["mcp_active_sessions"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<String>,
}

impl WatchSection {
    pub fn is_empty(&self) -> bool {
        self.server_pid.is_empty()
            && self.server_cgroup.is_none()
            && self.server_metrics.is_none()
            && self.series.is_empty()
    }
}

/// `[target]`: the server under test. Absent `url` and `command` → the built-in server.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSection {
    /// `http://` or `https://` → Streamable HTTP.
    pub url: Option<String>,
    /// A command to spawn per session (stdio): a string split like a shell, or a list.
    pub command: Option<Command>,
    /// Environment variables for the spawned command.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Extra HTTP headers on every request, e.g. `Authorization = "Bearer ${MCP_TOKEN}"`
    /// (`${VAR}` is read from the environment; so are `url` and `env` values).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Files holding more headers, one `Name: value` line each (`--header @file`), read
    /// when the run starts so the secret stays in the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_files: Vec<String>,
    /// Per-request timeout, e.g. `"10s"`.
    pub timeout: Option<String>,
    /// Largest message a server may send, e.g. `"16MiB"`, `"512KiB"`, `"65536"`.
    pub max_message_size: Option<String>,
    /// Accept any TLS certificate (self-signed test servers).
    pub insecure: Option<bool>,
    /// Streamable HTTP: reuse connections across sessions, as an SDK client on a pooled
    /// HTTP agent (Node's fetch) does, instead of each session opening its own.
    pub keep_alive: Option<bool>,
    /// Local addresses to connect from, in turn (e.g. `["127.0.0.1", "127.0.0.2"]`), to
    /// go beyond one source address's ephemeral ports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_addresses: Vec<String>,
    /// The built-in server also serves its application tools (`serve --app-tools`:
    /// schemas with every JSON Schema feature, notes to create, read and delete). Only
    /// the built-in server has them; another target offers its own tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_tools: Option<bool>,
    /// The built-in server also serves its task tools (`serve --tasks`: `slow_report`
    /// requires a task, `quick_report` allows one; protocol 2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<bool>,
    /// The built-in server requires bearer tokens (`serve --auth`): it accepts the
    /// tokens of every persona's tokens file and mints tokens for the client
    /// `mcp-fleet` / `mcp-fleet-secret` at its `/token` endpoint. HTTP transports only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<bool>,
}

/// A command line, written either way.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Command {
    Line(String),
    Argv(Vec<String>),
}

/// `[load]`: how much load, for how long. Closed (`clients`, or `stages` of clients) or
/// open (`rate`, or `stages` of rates).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSection {
    /// Concurrent virtual clients (closed model).
    pub clients: Option<u32>,
    /// Sessions arriving per unit of time, e.g. `"500/s"` (open model).
    pub rate: Option<String>,
    /// Ramping: `[{ clients = 50, duration = "30s" }, …]` (closed) or
    /// `[{ rate = "200/s", duration = "1m" }, …]` (open), linear from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<StageSection>>,
    /// Open model: most sessions in flight; arrivals beyond are counted as `dropped`.
    pub max_in_flight: Option<u32>,
    /// Stop after this many sessions in total.
    pub sessions: Option<u64>,
    /// Stop after this long, e.g. `"30s"`.
    pub duration: Option<String>,
    /// Pause between one session's end and the client's next session (closed model):
    /// `"100ms"`, a uniform range `"100ms..1s"`, or an exponential mean `"exp:200ms"`.
    pub think: Option<String>,
    /// How long sessions still running at the deadline may take to finish, e.g. `"5s"`.
    pub grace: Option<String>,
    /// After a session that could not reach the target, a closed-model client waits
    /// before the next: `"100ms..5s"` (exponential from the first delay up to the cap,
    /// jittered), one duration for a fixed wait, or `"off"`. Default `"100ms..5s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_backoff: Option<String>,
    /// Stop the run (exit 2, results written) when the target has been unreachable this
    /// long, e.g. `"30s"`. Default: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_on_unreachable: Option<String>,
    /// Rewrite the results from the figures so far this often, e.g. `"1m"`, or `"off"`.
    /// Default: `"1m"` for runs over 5 minutes or without a duration, else off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// Things that happen to the fleet at set times: `[{ at = "10m", storm = "reconnect" }]`
    /// drops every long-lived session at once (as a load balancer restart does).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<EventSection>>,
}

/// One `[load] events` entry: `{ at = "10m", storm = "reconnect" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventSection {
    /// When, from the start of the run.
    pub at: String,
    /// `reconnect`: every long-lived session drops its connection and reconnects.
    pub storm: String,
}

/// One load stage.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StageSection {
    pub clients: Option<u32>,
    pub rate: Option<String>,
    pub duration: String,
}

/// `[[persona]]`: a kind of virtual client.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PersonaSection {
    pub name: String,
    /// Relative share of sessions; default 1.
    pub weight: Option<u32>,
    /// `legacy` (initialize handshake), `modern` (2026-07-28, stateless) or `auto`
    /// (probe with `server/discover`, fall back to the handshake). Default: the era of
    /// `protocol_version`.
    pub era: Option<String>,
    /// The version offered: in `initialize` (legacy) or in every request's `_meta`
    /// (modern). Any string, so wrong or unknown versions can be tested.
    pub protocol_version: Option<String>,
    /// `auto` only: the version `initialize` offers when the server turns out legacy.
    pub legacy_version: Option<String>,
    /// Versions the persona accepts back; default: every known version.
    pub accept_versions: Option<Vec<String>>,
    pub client_info: Option<ClientInfoSection>,
    /// Declared client capabilities, free-form: `{ roots = { listChanged = true } }`.
    pub capabilities: Option<Value>,
    /// Names of the scenarios this persona runs; default: all.
    pub scenarios: Option<Vec<String>>,
    /// `stdio`, `http` (Streamable HTTP), `sse` (legacy HTTP+SSE) or `ws` (WebSocket).
    /// Default: from the URL scheme (`ws://` → ws, else http) or stdio for a command.
    pub transport: Option<String>,
    /// This persona's own server URL (else `[target].url`).
    pub url: Option<String>,
    /// This persona's own server command (else `[target].command`).
    pub command: Option<Command>,
    /// Streamable HTTP, legacy era: open the standalone GET stream after the handshake,
    /// as the TypeScript and Python SDK clients do. Default false.
    pub get_stream: Option<bool>,
    /// What `notifications/*/list_changed` makes the persona do: `refetch` the list
    /// (default) or `ignore` it (counted either way).
    pub list_changed: Option<String>,
    /// Modern era: honour `ttlMs` and serve repeated lists from a cache. Default false.
    pub cache: Option<bool>,
    /// Modern era: most `input_required` rounds before a request is given up. Default 8.
    pub max_input_rounds: Option<u32>,
    /// Start a new session (re-initialize) when the server answers 404 for the session,
    /// as the SDK clients can. Default true.
    pub reinitialize: Option<bool>,
    /// How the persona answers `sampling/createMessage` (needs `sampling` declared).
    pub sampling: Option<SamplingSection>,
    /// How the persona answers `elicitation/create` (needs `elicitation` declared).
    pub elicitation: Option<ElicitationSection>,
    /// What `roots/list` returns (needs `roots` declared).
    pub roots: Option<Vec<RootSection>>,
    /// `churn` (default: each session opens, runs its scenario once, closes) or
    /// `long-lived` (the session stays open for the whole run, repeating its scenario).
    pub shape: Option<String>,
    /// Long-lived sessions: scenario iterations per second per session, e.g. `"0.5/s"`.
    pub pace: Option<String>,
    /// Share of sessions (0…1) that vanish at the end instead of closing: no DELETE, no
    /// close frame, no stdin EOF — the connection is just dropped. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandon: Option<f64>,
    /// Long-lived, legacy era: send `ping` this often while otherwise idle, e.g. `"30s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_every: Option<String>,
    /// Long-lived: a pause between iterations, `"5s"` or a uniform range `"1s..30s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<String>,
    /// Long-lived: how long one session lasts before it closes (or is abandoned) and its
    /// client opens the next, `"10m"` or a uniform range `"5m..20m"`, as a chat lasts a
    /// while. Default: until the run drains.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<String>,
    /// Client-side faults, each committed by a share of this persona's sessions (at most
    /// one a session): `faults = [{ fault = "invalid-json", share = 0.02 }]`. Names:
    /// `metrics::ClientFault`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<Vec<FaultSection>>,
    /// HTTP transports: how this persona's virtual clients authenticate (bearer tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthSection>,
    /// Task-augmented tool calls (protocol 2025-11-25): when to call tools as tasks, how
    /// many to cancel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<TasksSection>,
}

/// `{ fault = "invalid-json", share = 0.02 }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSection {
    pub fault: String,
    /// Share (0…1) of the persona's sessions that commit it; the shares of one persona
    /// add up to at most 1.
    pub share: f64,
}

/// `auth = { tokens = "file:tokens.txt" }` or
/// `auth = { client_credentials = { token_url = "…", client_id = "…", client_secret = "${SECRET}" } }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSection {
    /// `file:PATH` (relative to the profile's folder): one bearer token a line, handed
    /// to the virtual clients round-robin. The tokens are never written anywhere.
    pub tokens: Option<String>,
    /// The OAuth client-credentials grant against a token endpoint.
    pub client_credentials: Option<ClientCredentialsSection>,
    /// Walk the discovery on a session's first 401 (`WWW-Authenticate` → protected
    /// resource metadata → authorization server metadata), timed as `auth`. Default true.
    pub discover: Option<bool>,
}

/// The client-credentials grant (RFC 6749 §4.4, the MCP `oauth-client-credentials`
/// extension).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientCredentialsSection {
    /// The token endpoint; default: the one the authorization server metadata names.
    pub token_url: Option<String>,
    pub client_id: String,
    /// A secret: write `"${ENV_NAME}"`; a literal is redacted in the copied profile.
    pub client_secret: String,
    pub scope: Option<String>,
    /// RFC 8707 `resource`; default: the target's URL.
    pub resource: Option<String>,
    /// Get a new token this long before the cached one expires. Default `"30s"`.
    pub refresh_before: Option<String>,
}

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

/// `sampling = { text = "…", delay = "20ms" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingSection {
    pub text: Option<String>,
    pub model: Option<String>,
    pub delay: Option<String>,
}

/// `elicitation = { accept = 8, decline = 1, cancel = 1, delay = "50ms" }`: weights of
/// the three actions.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ElicitationSection {
    pub accept: Option<u32>,
    pub decline: Option<u32>,
    pub cancel: Option<u32>,
    pub delay: Option<String>,
}

/// `{ uri = "file:///work", name = "work" }`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RootSection {
    pub uri: String,
    pub name: Option<String>,
}

/// `clientInfo` as sent in `initialize`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientInfoSection {
    pub name: Option<String>,
    pub version: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
    #[serde(rename = "websiteUrl")]
    pub website_url: Option<String>,
}

/// `[data.NAME]`: a pool of values from a file, drawn by `${pool.NAME}` (the pool's
/// `column`, else its first CSV column or the whole JSON line) or `${pool.NAME.FIELD}`.
/// All references to one pool in one call take the same row.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// CSV with a header line, or JSON lines (one value per line); relative paths are
    /// relative to the profile's folder.
    pub file: String,
    /// `"csv"` or `"jsonl"`; default from the file's extension (`.csv`, else JSON lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The field `${pool.NAME}` gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// `"sequential"` (default: each virtual client walks the rows in order from a row
    /// of its own), `"random"` (seeded), or `"unique"` (each row once across the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}

/// `[arguments]`: generation of tool arguments from their `inputSchema`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArgumentsSection {
    /// The share of optional properties a generated call includes (0 to 1, default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<f64>,
    /// Call tools annotated `destructiveHint: true` (and not `readOnlyHint`) with
    /// generated arguments too (default false: they are left out, and said so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_destructive: Option<bool>,
}

impl ArgumentsSection {
    pub fn is_empty(&self) -> bool {
        *self == ArgumentsSection::default()
    }
}

/// What a step captures from its result into a session variable: `"/a/0/b"` (a JSON
/// pointer) or `"$.a[0].b"` / `"$.a[*].b"` (a path; `[*]` any element) into
/// `structuredContent`, else into the JSON of the text content; or a table
/// `{ regex = "id: (\\w+)", pick = "first" | "random" }` over the text content (the
/// first group, else the whole match), or `{ pointer = … }` / `{ path = … }`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum CaptureSpec {
    Text(String),
    Table(CaptureTable),
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaptureTable {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Which of several matches (array elements under `[*]`, regex matches): `"first"`
    /// (default) or `"random"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
}

/// Captures of one step: variable name → where its value is.
pub type Captures = BTreeMap<String, CaptureSpec>;

/// `[[scenario]]`: the steps a session performs after the handshake.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSection {
    pub name: String,
    /// Relative share among the scenarios a persona runs; default 1.
    pub weight: Option<u32>,
    #[serde(default)]
    pub steps: Vec<Step>,
    /// After a JSON-RPC error of a call (`tools/call`, a `mix` call, `resources/read`,
    /// `prompts/get`): `"continue"` (default: the call is a counted failure, the session
    /// goes on and is not failed by it) or `"end-session"` (the session ends, failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_error: Option<String>,
}

/// One scenario step, written as `{ op = "tools/call", tool = "echo", … }`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "op", deny_unknown_fields)]
pub enum Step {
    #[serde(rename = "tools/list")]
    ToolsList {},
    #[serde(rename = "resources/list")]
    ResourcesList {},
    #[serde(rename = "resources/templates/list")]
    ResourcesTemplatesList {},
    #[serde(rename = "prompts/list")]
    PromptsList {},
    /// Arguments pin those values and the rest is generated from the tool's
    /// `inputSchema`, unless `generate = false` (then exactly these are sent). Values may
    /// hold `${…}` (pool, capture, discovery).
    #[serde(rename = "tools/call")]
    ToolsCall {
        tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generate: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capture: Option<Captures>,
    },
    #[serde(rename = "resources/read")]
    ResourcesRead {
        uri: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capture: Option<Captures>,
    },
    #[serde(rename = "prompts/get")]
    PromptsGet {
        prompt: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
    },
    /// Weighted `tools/call`s: `count` calls (default 1), `parallel` at a time.
    #[serde(rename = "mix")]
    Mix {
        calls: Vec<MixCall>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        count: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parallel: Option<u32>,
    },
    #[serde(rename = "ping")]
    Ping {},
    #[serde(rename = "pause")]
    Pause { duration: String },
}

/// One entry of a `mix` step. Without `arguments`, they are generated from the tool's
/// `inputSchema` (the session lists tools first if it has not).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MixCall {
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// As in a `tools/call` step: `false` sends exactly `arguments`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<Captures>,
}

/// A profile that could not be read or parsed; the message names the file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read profile {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
}

impl Profile {
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Profile::parse(&text, &path.display().to_string())
    }

    /// Parse profile text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        toml::from_str(text).map_err(|e| ProfileError::Parse {
            path: origin.to_string(),
            message: explain_toml_error(&e),
        })
    }

    /// The profile as TOML (for the results folder).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# could not render: {e}\n"))
    }
}

/// toml's message already carries line, column and a caret; add the fix for the common
/// mistakes.
fn explain_toml_error(e: &toml::de::Error) -> String {
    let msg = e.message();
    let fix = if msg.contains("unknown field") {
        "\nfix: remove or rename the key; the expected keys are listed above"
    } else if msg.contains("unknown variant") {
        "\nfix: `op` must be one of the step kinds listed above"
    } else if msg.contains("missing field") {
        "\nfix: add the key named above"
    } else {
        ""
    };
    format!("{}{fix}", e.to_string().trim_end())
}

#[cfg(test)]
mod tests;
