//! The answers to `--call`, `--read` and `--get-prompt`, read back from the session's
//! transcript: each request matched to its final response (MRTR rounds and version
//! retries of the same request belong to it), timed, with what the server asked or told
//! the client meanwhile (sampling, elicitation, roots, progress) as events.

use super::ask::Ask;
use crate::protocol::jsonrpc::codes;
use crate::protocol::methods;
use crate::session::{Direction, Entry};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// One requested call, read or prompt and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// `call`, `read` or `prompt`.
    pub kind: &'static str,
    pub method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// Whether the server's listing had it (it is asked for anyway).
    pub listed: bool,
    /// `answered` (a result, `isError: true` too), `error` (a JSON-RPC error),
    /// `unanswered` (sent, no response), `skipped` (not sent: the server did not declare
    /// the capability) or `not_sent` (the session ended before it).
    pub status: &'static str,
    /// `isError: true` in a `tools/call` result: the tool's own failure.
    pub is_error: bool,
    /// When the first request went out, milliseconds since the session began.
    pub at_ms: Option<f64>,
    /// From the first request to the final response, milliseconds.
    pub latency_ms: Option<f64>,
    /// Requests sent for it: 1, more after `input_required` rounds or a version retry.
    pub requests: u32,
    pub result: Option<Value>,
    /// `{code, message, data}` of a JSON-RPC error.
    pub error: Option<Value>,
    /// What the server sent the client while it was answering.
    pub events: Vec<ServerEvent>,
}

/// A request or notification from the server during an answer, or a client note.
#[derive(Debug, Clone, Serialize)]
pub struct ServerEvent {
    pub at_ms: f64,
    pub method: String,
    /// A few words: progress figures, the requests inside `input_required`, a note.
    pub detail: String,
    /// For a server→client request: whether the client answered it, and how.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    #[serde(skip)]
    id: Option<String>,
}

impl Answer {
    fn new(ask: &Ask, listed: bool) -> Answer {
        Answer {
            kind: ask.kind(),
            method: ask.method(),
            name: ask.key().to_string(),
            arguments: ask.arguments().cloned(),
            listed,
            status: "skipped",
            is_error: false,
            at_ms: None,
            latency_ms: None,
            requests: 0,
            result: None,
            error: None,
            events: Vec::new(),
        }
    }

    /// The capability a server declares for it.
    pub fn capability(&self) -> &'static str {
        match self.kind {
            "call" => "tools",
            "read" => "resources",
            _ => "prompts",
        }
    }

    /// Whether it got an answer a user can act on (a tool error is one).
    pub fn answered(&self) -> bool {
        self.status == "answered"
    }
}

/// Where the walk through the transcript stands with one answer.
struct Open {
    index: usize,
    started_ms: f64,
    /// A final response came (not `input_required`, not a version to retry).
    done: bool,
}

/// Match the requests of the transcript to `asks`, in order; `listed` says whether the
/// server's listing had an ask.
pub fn read(asks: &[Ask], entries: &[Entry], listed: impl Fn(&Ask) -> bool) -> Vec<Answer> {
    let mut answers: Vec<Answer> = asks.iter().map(|a| Answer::new(a, listed(a))).collect();
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut open: Option<Open> = None;
    let mut next = 0;
    for e in entries {
        let m = &e.message;
        let id = m.get("id").map(Value::to_string);
        let method = m.get("method").and_then(Value::as_str);
        match (e.direction, method, id) {
            (Direction::Sent, Some(method), Some(id)) if is_asked(method) => {
                let key = Ask::key_of(method, &m["params"]);
                let same = |a: &Ask| a.method() == method && key.as_deref() == Some(a.key());
                let index = match &open {
                    Some(o) if !o.done && same(&asks[o.index]) => o.index,
                    _ => match (next..asks.len()).find(|&j| same(&asks[j])) {
                        Some(j) => {
                            next = j + 1;
                            answers[j].at_ms = Some(e.at_ms);
                            open = Some(Open {
                                index: j,
                                started_ms: e.at_ms,
                                done: false,
                            });
                            j
                        }
                        None => continue,
                    },
                };
                answers[index].requests += 1;
                answers[index].status = "unanswered";
                ids.insert(id, index);
            }
            (Direction::Sent, None, Some(id)) => {
                // The client's reply to a server→client request.
                if let Some(o) = &open {
                    let reply = match m.get("error") {
                        Some(err) => format!("refused: {}", err["message"].as_str().unwrap_or("?")),
                        None => "answered".to_string(),
                    };
                    let events = &mut answers[o.index].events;
                    if let Some(ev) = events.iter_mut().find(|ev| ev.id.as_ref() == Some(&id)) {
                        ev.reply = Some(reply);
                    }
                }
            }
            (Direction::Received, None, Some(id)) => {
                let Some(&index) = ids.get(&id) else { continue };
                let Some(o) = open.as_mut().filter(|o| o.index == index) else {
                    continue;
                };
                let answer = &mut answers[index];
                answer.latency_ms = Some(((e.at_ms - o.started_ms) * 1e3).round() / 1e3);
                o.done = settle(answer, m, e.at_ms);
            }
            (Direction::Received, Some(method), id) => {
                if let Some(o) = open.as_ref().filter(|o| !o.done) {
                    answers[o.index].events.push(ServerEvent {
                        at_ms: e.at_ms,
                        method: method.to_string(),
                        detail: event_detail(method, &m["params"]),
                        reply: None,
                        id,
                    });
                }
            }
            (Direction::Note, _, _) => {
                if let Some(o) = open.as_ref().filter(|o| !o.done) {
                    answers[o.index].events.push(ServerEvent {
                        at_ms: e.at_ms,
                        method: "note".into(),
                        detail: m.as_str().unwrap_or_default().to_string(),
                        reply: None,
                        id: None,
                    });
                }
            }
            _ => {}
        }
    }
    answers
}

fn is_asked(method: &str) -> bool {
    [
        methods::TOOLS_CALL,
        methods::RESOURCES_READ,
        methods::PROMPTS_GET,
    ]
    .contains(&method)
}

/// Take a response into the answer; whether it is the final one.
fn settle(answer: &mut Answer, response: &Value, at_ms: f64) -> bool {
    if let Some(err) = response.get("error") {
        answer.status = "error";
        answer.result = None;
        answer.error = Some(err.clone());
        // The session retries at a version both speak; another request follows.
        return err["code"].as_i64() != Some(codes::UNSUPPORTED_PROTOCOL_VERSION);
    }
    let result = response.get("result").cloned().unwrap_or(Value::Null);
    if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
        let asked: Vec<&str> = result["inputRequests"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(_, r)| r["method"].as_str())
            .collect();
        answer.events.push(ServerEvent {
            at_ms,
            method: "input_required".into(),
            detail: format!("asks for {}", asked.join(", ")),
            reply: None,
            id: None,
        });
        return false;
    }
    answer.status = "answered";
    answer.error = None;
    answer.is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    answer.result = Some(result);
    true
}

/// A few words about a server message: progress figures, a log line, else nothing.
fn event_detail(method: &str, params: &Value) -> String {
    match method {
        methods::PROGRESS => {
            let n = |k: &str| params.get(k).map(Value::to_string);
            let mut s = n("progress").unwrap_or_else(|| "?".into());
            if let Some(total) = n("total") {
                s.push('/');
                s.push_str(&total);
            }
            if let Some(text) = params.get("message").and_then(Value::as_str) {
                s.push(' ');
                s.push_str(text);
            }
            s
        }
        _ => match params.get("level").and_then(Value::as_str) {
            Some(level) => format!("{level}: {}", params.get("data").unwrap_or(&Value::Null)),
            None => String::new(),
        },
    }
}

#[cfg(test)]
impl Answer {
    /// An answer to `t` (a tool, prompt or URI) with no response yet.
    pub fn for_test(kind: &str) -> Answer {
        let name = "t".to_string();
        let arguments = Value::Object(serde_json::Map::new());
        let ask = match kind {
            "call" => Ask::Call { name, arguments },
            "read" => Ask::Read { uri: name },
            _ => Ask::Prompt { name, arguments },
        };
        Answer::new(&ask, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(at_ms: f64, direction: Direction, message: Value) -> Entry {
        Entry {
            at_ms,
            direction,
            message,
        }
    }

    fn call(name: &str) -> Ask {
        Ask::Call {
            name: name.into(),
            arguments: json!({}),
        }
    }

    #[test]
    fn retries_belong_to_their_request_and_twins_stay_apart() {
        use Direction::{Received, Sent};
        let req = |id: u32, name: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}});
        let ok = |id: u32, text: &str| json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}});
        let entries = [
            entry(1.0, Sent, req(5, "echo")),
            entry(2.0, Received, ok(5, "one")),
            entry(3.0, Sent, req(6, "echo")),
            entry(
                4.0,
                Received,
                json!({"jsonrpc": "2.0", "id": 6, "error": {"code": codes::UNSUPPORTED_PROTOCOL_VERSION, "message": "v"}}),
            ),
            entry(5.0, Sent, req(7, "echo")),
            entry(
                5.5,
                Received,
                json!({"jsonrpc": "2.0", "id": 99, "method": "roots/list"}),
            ),
            entry(
                5.6,
                Sent,
                json!({"jsonrpc": "2.0", "id": 99, "result": {"roots": []}}),
            ),
            entry(7.0, Received, ok(7, "two")),
        ];
        let asks = [call("echo"), call("echo"), call("never")];
        let a = read(&asks, &entries, |_| true);
        assert_eq!(a[0].status, "answered");
        assert_eq!(a[0].latency_ms, Some(1.0));
        assert_eq!(a[1].status, "answered", "{:?}", a[1]);
        assert_eq!(a[1].requests, 2, "the version retry is the same call");
        assert_eq!(a[1].latency_ms, Some(4.0));
        assert_eq!(
            a[1].result.as_ref().map(|r| &r["content"][0]["text"]),
            Some(&json!("two"))
        );
        assert_eq!(a[1].events.len(), 1);
        assert_eq!(a[1].events[0].method, "roots/list");
        assert_eq!(a[1].events[0].reply.as_deref(), Some("answered"));
        assert_eq!(a[2].status, "skipped");
    }
}
