//! What a `tools/call` result says once it has arrived: timed as a success or a tool
//! error (`isError: true`, whose text is kept as an example of why the tool failed),
//! and checked against the tool's `outputSchema`.

use super::timer::Timer;
use crate::conformance::Check;
use crate::metrics::{Outcome, Phase, ToolId};
use crate::session::Session;
use serde_json::Value;
use tokio::time::Instant;

/// A tool result, timed: `isError: true` is a tool error (a successful RPC), and its
/// text is kept as an example of why the tool failed. Returns the outcome recorded.
pub(super) fn record_call(
    timer: &mut Timer<'_>,
    tool: ToolId,
    (started, finished): (Instant, Instant),
    result: &Value,
) -> Outcome {
    let outcome = if result.get("isError").and_then(Value::as_bool) == Some(true) {
        timer.tool_error(tool, || tool_error_text(result));
        Outcome::ToolError
    } else {
        Outcome::Ok
    };
    timer.sample(Phase::ToolsCall, Some(tool), started, finished, outcome);
    outcome
}

/// A JSON-RPC error of a tool call as the tool's example: `-32602 Invalid params: …`
/// (bounded like an `isError` text).
pub(super) fn rpc_error_text(code: i64, detail: &str) -> String {
    let detail = detail
        .strip_prefix("tools/call")
        .map(|d| d.trim_start_matches(':').trim_start())
        .unwrap_or(detail);
    // The detail ends with `(code)` already (`Unknown tool: x (-32602)`): the code is
    // said once, in front.
    let detail = detail
        .strip_suffix(&format!("({code})"))
        .map_or(detail, str::trim_end);
    truncate(format!("{code} {detail}"))
}

fn truncate(text: String) -> String {
    match text.char_indices().nth(TOOL_ERROR_CHARS) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// Most characters of an `isError` result kept as an example.
const TOOL_ERROR_CHARS: usize = 200;

/// What an `isError` result says: its text content, else the result itself.
fn tool_error_text(result: &Value) -> String {
    let texts: Vec<&str> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    let text = if texts.is_empty() {
        result.to_string()
    } else {
        texts.join(" ")
    };
    truncate(text)
}

/// A successful tool result against the tool's `outputSchema`, when it has one.
pub(super) fn check_structured(session: &mut Session<'_>, name: &str, result: &Value) {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let problem = session
        .output_schema(name)
        .and_then(|schema| crate::conformance::structured_content(schema, result));
    if let Some(p) = problem {
        session.finding(Check::ToolsStructuredContentMismatch, || {
            format!("tool {name:?}: {p}")
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_error_says_what_its_text_says() {
        let r = json!({"content": [{"type": "text", "text": "no such city"},
            {"type": "image", "data": "…"}, {"type": "text", "text": "try Paris"}], "isError": true});
        assert_eq!(tool_error_text(&r), "no such city try Paris");
        let bare = json!({"isError": true});
        assert_eq!(tool_error_text(&bare), r#"{"isError":true}"#);
        let long = json!({"content": [{"type": "text", "text": "é".repeat(500)}]});
        assert_eq!(tool_error_text(&long).chars().count(), TOOL_ERROR_CHARS + 1);
    }

    #[test]
    fn a_code_is_said_once() {
        let text = rpc_error_text(-32602, "tools/call: Unknown tool: x (-32602)");
        assert_eq!(text, "-32602 Unknown tool: x");
        let text = rpc_error_text(-32602, "tools/call: bad (see -32602 docs)");
        assert_eq!(text, "-32602 bad (see -32602 docs)");
    }
}
