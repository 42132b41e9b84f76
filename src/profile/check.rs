//! `checks = [{ name = …, pointer = …, equals = … }, …]`: named conditions on a step's
//! result (k6's `check()`), counted per name.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One check as written: a name and exactly one condition.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    pub name: String,
    /// A JSON pointer into the result (`/structuredContent/sum`, `/content/0/text`)
    /// that `equals`, `contains` and `matches` read; default the whole result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// A JSONPath query (RFC 9535) instead of a pointer, e.g.
    /// `$.content[?@.type == 'text'].text`: the condition holds when any node it
    /// selects passes, and fails when it selects none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Value>,
    /// A substring of a string, an element of an array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<Value>,
    /// A regular expression over a string (other values: over their JSON text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<String>,
    /// `is_error = false`: the result is not a tool error (`isError: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `output_schema = true`: `structuredContent` is valid against the tool's
    /// `outputSchema` (`tools/call` steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<bool>,
    /// A failed check fails the step and ends the session, failed (default: counted
    /// only, as in k6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_session: Option<bool>,
}
