//! `[target]`: the server under test, its connection settings, and the built-in
//! server's switches.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// The built-in server changes its tool list this often (`serve --change-every`),
    /// fanned out to every `subscriptions/listen`, e.g. `"2s"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_every: Option<String>,
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
