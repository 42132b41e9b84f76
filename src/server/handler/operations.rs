//! The operations that compute their answer per request, the same in both eras:
//! `tools/call` (the `ask_*` tools hand over to `ask`), `prompts/get` and
//! `completion/complete`, with their argument checks.

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::ask::Question;
use super::reply::{error_result, invalid_params, text_result};
use super::Ctx;
use crate::protocol::jsonrpc::encode_notification;
use crate::protocol::meta::{META, PROGRESS_TOKEN};
use crate::protocol::methods as m;
use crate::protocol::RpcError;
use crate::server::catalog::{Prompt, Tool};

const LANGUAGES: [&str; 8] = [
    "c",
    "cpp",
    "go",
    "java",
    "javascript",
    "python",
    "rust",
    "typescript",
];
const MAX_SLEEP_MS: u64 = 60_000;
const MAX_PROGRESS_STEPS: u64 = 100;

pub(super) async fn call_tool(ctx: &Ctx<'_>, params: &Value) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("tools/call needs params.name (a string)"))?;
    let tool =
        Tool::from_name(name).ok_or_else(|| invalid_params(format!("Unknown tool: {name}")))?;
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return Err(invalid_params("arguments must be an object")),
    };
    match tool {
        Tool::Echo => {
            let message = args
                .get("message")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid_params("echo needs `message` (a string)"))?;
            Ok(text_result(message))
        }
        Tool::Add => add(args),
        Tool::Sleep => {
            let ms = integer_arg(args, "ms", None, 0, MAX_SLEEP_MS)?;
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(text_result(&format!("slept {ms} ms")))
        }
        Tool::Fail => Ok(error_result("The fail tool always fails, on purpose.")),
        Tool::Progress => {
            let steps = integer_arg(args, "steps", Some(3), 1, MAX_PROGRESS_STEPS)?;
            let token = params.get(META).and_then(|m| m.get(PROGRESS_TOKEN));
            if let Some(token) = token {
                for i in 1..=steps {
                    let note = json!({PROGRESS_TOKEN: token, "progress": i, "total": steps});
                    ctx.notifier()
                        .send(encode_notification(m::PROGRESS, Some(&note)));
                }
            }
            Ok(text_result(&format!("completed {steps} steps")))
        }
        Tool::AskSampling | Tool::AskElicitation | Tool::AskRoots => {
            let question = Question::new(tool, args)?;
            match ctx {
                Ctx::Legacy { session, notifier } => Ok(question.ask(session, notifier).await),
                Ctx::Modern { caps, .. } => question.round_trip(caps, args, params),
            }
        }
        Tool::NotifyListChanged => notify_list_changed(ctx, args),
    }
}

/// `add`: the sum as text and as `structuredContent` (the tool declares an output schema).
fn add(args: &Map<String, Value>) -> Result<Value, RpcError> {
    let (a, b) = (number_arg(args, "a")?, number_arg(args, "b")?);
    // Keep integers integral ("3", not "3.0") when both operands are integers.
    let sum = match (a.as_i64(), b.as_i64()) {
        (Some(x), Some(y)) if x.checked_add(y).is_some() => json!(x + y),
        _ => json!(a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0)),
    };
    let text = json!({ "sum": sum }).to_string();
    Ok(json!({"content": [{"type": "text", "text": text}],
              "structuredContent": {"sum": sum}}))
}

/// `notify_list_changed`: a legacy session gets the notification (on its standalone
/// stream, else this request's); in the modern era the change is made, and every
/// `subscriptions/listen` that asked for it hears of it (with `uri`: that resource's
/// `notifications/resources/updated`).
fn notify_list_changed(ctx: &Ctx<'_>, args: &Map<String, Value>) -> Result<Value, RpcError> {
    let list = match args.get("list") {
        None | Some(Value::Null) => "tools",
        Some(Value::String(l)) if ["tools", "prompts", "resources"].contains(&l.as_str()) => {
            l.as_str()
        }
        Some(_) => {
            return Err(invalid_params(
                "`list` must be one of \"tools\", \"prompts\", \"resources\"",
            ))
        }
    };
    let uri = match args.get("uri") {
        None | Some(Value::Null) => None,
        Some(Value::String(u)) => Some(u.as_str()),
        Some(_) => return Err(invalid_params("`uri` must be a string")),
    };
    match ctx {
        Ctx::Legacy { session, notifier } => {
            let method = match list {
                "prompts" => m::PROMPTS_LIST_CHANGED,
                "resources" => m::RESOURCES_LIST_CHANGED,
                _ => m::TOOLS_LIST_CHANGED,
            };
            let note = encode_notification(method, None);
            // Unrelated to this request: the standalone stream when one is open.
            if !session.send_standalone(note.clone()) {
                notifier.send(note);
            }
            Ok(text_result("sent"))
        }
        Ctx::Modern { hub, .. } => {
            let kind = match uri {
                Some(u) => crate::server::listen::Kind::Updated(u.into()),
                None => crate::server::listen::Kind::from_list(list)
                    .unwrap_or(crate::server::listen::Kind::Tools),
            };
            let (change, handed) = hub.change(kind);
            Ok(text_result(&format!(
                "change {} sent to {handed} listens",
                change.seq
            )))
        }
    }
}

fn number_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a Value, RpcError> {
    args.get(key)
        .filter(|v| v.is_number())
        .ok_or_else(|| invalid_params(format!("`{key}` must be a number")))
}

fn integer_arg(
    args: &Map<String, Value>,
    key: &str,
    default: Option<u64>,
    min: u64,
    max: u64,
) -> Result<u64, RpcError> {
    let value = match (args.get(key), default) {
        (None, Some(d)) => d,
        (v, _) => v
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid_params(format!("`{key}` must be an integer")))?,
    };
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(invalid_params(format!(
            "`{key}` must be between {min} and {max}"
        )))
    }
}

pub(super) fn get_prompt(params: &Value) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("prompts/get needs params.name (a string)"))?;
    let prompt =
        Prompt::from_name(name).ok_or_else(|| invalid_params(format!("Unknown prompt: {name}")))?;
    let args = params.get("arguments");
    let arg = |key: &str| -> Result<Option<&str>, RpcError> {
        match args.and_then(|a| a.get(key)) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid_params(format!("argument `{key}` must be a string"))),
        }
    };
    for (key, required) in prompt.arguments() {
        if *required && arg(key)?.is_none() {
            return Err(invalid_params(format!(
                "prompt `{name}` needs the argument `{key}`"
            )));
        }
    }
    let text = match prompt {
        Prompt::Greeting => format!("Please greet {} warmly.", arg("name")?.unwrap_or_default()),
        Prompt::Review => {
            let code = arg("code")?.unwrap_or_default();
            match arg("language")? {
                Some(lang) => format!("Please review this {lang} code:\n\n{code}"),
                None => format!("Please review this code:\n\n{code}"),
            }
        }
    };
    Ok(json!({"description": prompt.description(),
              "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}))
}

/// `completion/complete`: language names for the `review` prompt, nothing elsewhere.
pub(super) fn complete(params: &Value) -> Value {
    let is_review = params.pointer("/ref/name").and_then(Value::as_str) == Some("review");
    let argument = params.pointer("/argument/name").and_then(Value::as_str);
    let prefix = params
        .pointer("/argument/value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let values: Vec<&str> = if is_review && argument == Some("language") {
        LANGUAGES
            .into_iter()
            .filter(|l| l.starts_with(prefix))
            .collect()
    } else {
        Vec::new()
    };
    json!({"completion": {"values": values, "total": values.len(), "hasMore": false}})
}
