//! `[[scenario]]`: the steps a session performs, in order.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::capture::Captures;
use super::check::CheckSpec;

/// `[[scenario]]`: the steps a session performs after the handshake.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSection {
    pub name: String,
    /// Relative share among the scenarios a persona runs; default 1.
    pub weight: Option<u32>,
    #[serde(default)]
    pub steps: Vec<Step>,
    /// After a JSON-RPC error of a step (a list, a call, a read, a prompt, a ping):
    /// `"continue"` (default: a counted failure, the session goes on and is not failed
    /// by it) or `"end-session"` (the session ends, failed). Other failures (transport,
    /// HTTP status, timeout …) end the session whatever this says.
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
    /// Arguments pin those values and the required properties they lack are generated
    /// from the tool's `inputSchema` (optional ones too with `optional = SHARE` here or
    /// in `[arguments]`), unless `generate = false` (then exactly these are sent).
    /// Values may hold `${…}` (pool, capture, discovery).
    #[serde(rename = "tools/call")]
    ToolsCall {
        tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        generate: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        optional: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capture: Option<Captures>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checks: Option<Vec<CheckSpec>>,
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
    /// Any JSON-RPC request: `method` with `params` (a table; `${…}` allowed), timed
    /// as its own phase, `phase` (default: the method's name).
    #[serde(rename = "request")]
    Request {
        method: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        params: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checks: Option<Vec<CheckSpec>>,
    },
    /// `"250ms"`, a uniform range `"100ms..2s"` or an exponential mean `"exp:1s"`.
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
    /// As in a `tools/call` step: the share of optional properties generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<Captures>,
}
