//! What the user asked `inspect` to do after discovery — `--call`, `--read`,
//! `--get-prompt` — checked before connecting (bad JSON names the flag and the fix) and
//! turned into the scenario steps the ordinary session runs.
//!
//! clap hands `--call` and `--get-prompt` over as one flat list of values (the derive
//! API keeps no occurrence boundaries), so the list is grouped here: a value that could
//! be a tool or prompt name (letters, digits, `_ - . /`, as the MCP names them) starts a
//! request; anything else is the JSON arguments of the name before it.

use crate::cli::InspectArgs;
use crate::metrics::ToolId;
use crate::plan::template::Template;
use crate::plan::{Call, Step};
use crate::protocol::methods;
use serde_json::{Map, Value};

/// One request the user asked for, in the order it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    Call { name: String, arguments: Value },
    Read { uri: String },
    Prompt { name: String, arguments: Value },
}

/// A flag's value the user must fix; the message names the flag and the fix.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{flag} {name}: {problem}")]
pub struct AskError {
    flag: &'static str,
    name: String,
    problem: String,
}

impl Ask {
    /// Every request of the command line: the calls, then the reads, then the prompts.
    pub fn from_args(args: &InspectArgs) -> Result<Vec<Ask>, AskError> {
        let mut asks = Vec::new();
        for (name, arguments) in grouped("--call", &args.call)? {
            asks.push(Ask::Call { name, arguments });
        }
        for uri in &args.read {
            asks.push(Ask::Read { uri: uri.clone() });
        }
        for (name, arguments) in grouped("--get-prompt", &args.get_prompt)? {
            asks.push(Ask::Prompt { name, arguments });
        }
        Ok(asks)
    }

    /// `tools/call`, `resources/read` or `prompts/get`.
    pub fn method(&self) -> &'static str {
        match self {
            Ask::Call { .. } => methods::TOOLS_CALL,
            Ask::Read { .. } => methods::RESOURCES_READ,
            Ask::Prompt { .. } => methods::PROMPTS_GET,
        }
    }

    /// The tool or prompt name, or the resource URI.
    pub fn key(&self) -> &str {
        match self {
            Ask::Call { name, .. } | Ask::Prompt { name, .. } => name,
            Ask::Read { uri } => uri,
        }
    }

    /// The same key as found in a request's `params`.
    pub fn key_of(method: &str, params: &Value) -> Option<String> {
        let field = if method == methods::RESOURCES_READ {
            "uri"
        } else {
            "name"
        };
        params.get(field)?.as_str().map(String::from)
    }

    pub fn arguments(&self) -> Option<&Value> {
        match self {
            Ask::Call { arguments, .. } | Ask::Prompt { arguments, .. } => Some(arguments),
            Ask::Read { .. } => None,
        }
    }

    /// `call`, `read` or `prompt`: the JSON's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Ask::Call { .. } => "call",
            Ask::Read { .. } => "read",
            Ask::Prompt { .. } => "prompt",
        }
    }

    /// The step the session runs for it; `tool` indexes the call in the collector.
    pub fn step(&self, tool: ToolId) -> Step {
        match self.clone() {
            Ask::Call { name, arguments } => Step::CallTool(Call {
                tool,
                name,
                // `--call NAME` alone: arguments generated from the tool's schema, as a
                // run would make them; with JSON: exactly those.
                generate: arguments.as_object().is_some_and(Map::is_empty),
                optional: None,
                arguments: Template::Fixed(arguments),
                capture: Vec::new(),
                checks: Vec::new(),
            }),
            Ask::Read { uri } => Step::ReadResource {
                uri: Template::Fixed(Value::String(uri)),
                capture: Vec::new(),
            },
            Ask::Prompt { name, arguments } => Step::GetPrompt {
                name: Template::Fixed(Value::String(name)),
                arguments: Template::Fixed(arguments),
            },
        }
    }
}

/// Whether `value` can be a tool or prompt name rather than JSON arguments.
fn is_name(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
}

/// The flat values of a repeatable `NAME [JSON]` flag as (name, arguments) pairs.
fn grouped(flag: &'static str, values: &[String]) -> Result<Vec<(String, Value)>, AskError> {
    let mut out: Vec<(String, Value)> = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let name = &values[i];
        if !is_name(name) {
            return Err(AskError {
                flag,
                name: format!("{name:?}"),
                problem: format!(
                    "is not a name; give the name first and the arguments after it, \
                     e.g. {flag} echo '{{\"message\":\"hi\"}}'"
                ),
            });
        }
        let text = values.get(i + 1).filter(|v| !is_name(v));
        i += 1 + usize::from(text.is_some());
        out.push((name.clone(), arguments(flag, name, text)?));
    }
    Ok(out)
}

/// The JSON object of `text` (default `{}`).
fn arguments(flag: &'static str, name: &str, text: Option<&String>) -> Result<Value, AskError> {
    let error = |name: &str, problem: String| AskError {
        flag,
        name: name.to_string(),
        problem,
    };
    let Some(text) = text else {
        return Ok(Value::Object(Map::new()));
    };
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(error(
            name,
            format!(
                "the arguments must be a JSON object, not {other}; write them as \
                 '{{\"key\": value}}' (in single quotes in a shell)"
            ),
        )),
        Err(e) => Err(error(
            name,
            format!(
                "the arguments {text:?} are not JSON ({e}); write them as one JSON object in \
                 single quotes, e.g. {flag} {name} '{{\"key\": \"value\"}}', and put the \
                 target before {flag}"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(call: &[&[&str]], read: &[&str], prompt: &[&[&str]]) -> InspectArgs {
        let own = |v: &[&[&str]]| -> Vec<String> {
            v.iter()
                .flat_map(|a| a.iter().map(|s| s.to_string()))
                .collect()
        };
        InspectArgs {
            call: own(call),
            read: read.iter().map(|s| s.to_string()).collect(),
            get_prompt: own(prompt),
            ..InspectArgs::default()
        }
    }

    #[test]
    fn calls_then_reads_then_prompts() {
        let a = args(
            &[&["echo", r#"{"message":"hi"}"#], &["fail"]],
            &["fleet://resources/1"],
            &[&["greeting", r#"{"name":"Ada"}"#]],
        );
        let asks = Ask::from_args(&a).expect("valid");
        assert_eq!(
            asks,
            [
                Ask::Call {
                    name: "echo".into(),
                    arguments: json!({"message": "hi"})
                },
                Ask::Call {
                    name: "fail".into(),
                    arguments: json!({})
                },
                Ask::Read {
                    uri: "fleet://resources/1".into()
                },
                Ask::Prompt {
                    name: "greeting".into(),
                    arguments: json!({"name": "Ada"})
                },
            ]
        );
    }

    #[test]
    fn bad_json_names_the_flag_and_the_fix() {
        let e =
            Ask::from_args(&args(&[&["echo", "{message: hi}"]], &[], &[])).expect_err("not JSON");
        let text = e.to_string();
        assert!(text.starts_with("--call echo: the arguments"), "{text}");
        assert!(text.contains("single quotes"), "{text}");
        let e = Ask::from_args(&args(&[&["{}"]], &[], &[])).expect_err("no name");
        assert!(e.to_string().contains("give the name first"), "{e}");
        let e = Ask::from_args(&args(&[], &[], &[&["review", "[1]"]])).expect_err("array");
        assert!(
            e.to_string()
                .starts_with("--get-prompt review: the arguments must be a JSON object"),
            "{e}"
        );
    }
}
