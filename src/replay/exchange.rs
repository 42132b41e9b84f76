//! A recorded session's messages paired up: each request the client sent with the
//! server's answer (a modern `input_required` round folded into the request it
//! retries), each request the server asked of the client with the client's answer, and
//! the client's notifications. What a session *did*, before it is read as steps.

use crate::trace::{method_of, From, RecordedSession};
use serde_json::Value;

/// One request the client sent, with the server's final answer.
#[derive(Debug, Clone)]
pub struct Exchange<'a> {
    /// When it was sent (µs since the trace's start).
    pub sent: u64,
    pub method: &'a str,
    pub params: Option<&'a Value>,
    /// When the final answer came (`None`: never).
    pub answered: Option<u64>,
    /// The final answer's `result` (`None`: an error, or no answer).
    pub result: Option<&'a Value>,
}

/// What the client answered to a request of the server (`roots/list`,
/// `sampling/createMessage`, `elicitation/create`), legacy or inside a modern retry.
#[derive(Debug, Clone)]
pub struct Answer {
    pub method: String,
    /// `None`: the client answered with an error.
    pub result: Option<Value>,
    /// From the question to the answer.
    pub delay_us: u64,
}

/// A session's messages, paired.
#[derive(Debug, Default)]
pub struct Exchanges<'a> {
    /// In the order sent, modern retries folded into the request they retry.
    pub requests: Vec<Exchange<'a>>,
    pub answers: Vec<Answer>,
    /// The methods of the client's notifications, in order.
    pub notifications: Vec<&'a str>,
    /// How many modern retries were folded.
    pub retries: usize,
}

impl<'a> Exchanges<'a> {
    pub fn of(session: &'a RecordedSession) -> Exchanges<'a> {
        let mut out = Exchanges::default();
        // Unanswered requests of each side: (id, index, time asked).
        let mut pending: Vec<(&Value, usize)> = Vec::new();
        let mut asked: Vec<(&Value, &str, u64)> = Vec::new();
        let mut retried: Vec<bool> = Vec::new();
        for (t, from, m) in &session.messages {
            let id = m.get("id").filter(|id| !id.is_null());
            match (from, method_of(m), id) {
                (From::Client, Some(method), Some(id)) => {
                    pending.push((id, out.requests.len()));
                    retried.push(is_retry(m.get("params")));
                    out.requests.push(Exchange {
                        sent: *t,
                        method,
                        params: m.get("params"),
                        answered: None,
                        result: None,
                    });
                }
                (From::Client, Some(method), None) => out.notifications.push(method),
                (From::Server, Some(method), Some(id)) => asked.push((id, method, *t)),
                (From::Server, None, Some(id)) => {
                    if let Some(i) = pending.iter().position(|(p, _)| *p == id) {
                        let (_, index) = pending.remove(i);
                        let r = &mut out.requests[index];
                        r.answered = Some(*t);
                        r.result = m.get("result");
                    }
                }
                (From::Client, None, Some(id)) => {
                    if let Some(i) = asked.iter().position(|(a, _, _)| *a == id) {
                        let (_, method, at) = asked.remove(i);
                        out.answers.push(Answer {
                            method: method.to_string(),
                            result: m.get("result").cloned(),
                            delay_us: t.saturating_sub(at),
                        });
                    }
                }
                _ => {}
            }
        }
        out.fold_retries(&retried);
        out
    }

    /// Each modern retry (`inputResponses` / `requestState`) becomes the final answer of
    /// the request it retries; what it answered joins [`Exchanges::answers`].
    fn fold_retries(&mut self, retried: &[bool]) {
        let mut keep = Vec::with_capacity(self.requests.len());
        for (i, is_retry) in retried.iter().enumerate() {
            let r = self.requests[i].clone();
            let original = keep.iter().rposition(|&k: &usize| {
                let o = &self.requests[k];
                o.method == r.method && needs_input(o.result)
            });
            let (true, Some(k)) = (*is_retry, original.map(|o| keep[o])) else {
                keep.push(i);
                continue;
            };
            let asked = self.requests[k].result;
            let asked_at = self.requests[k].answered.unwrap_or(r.sent);
            let responses = r
                .params
                .and_then(|p| p.get("inputResponses"))
                .and_then(Value::as_object);
            for (key, response) in responses.into_iter().flatten() {
                let method = asked
                    .and_then(|a| a.get("inputRequests"))
                    .and_then(|q| q.get(key))
                    .and_then(method_of);
                if let Some(method) = method {
                    self.answers.push(Answer {
                        method: method.to_string(),
                        result: Some(response.clone()),
                        delay_us: r.sent.saturating_sub(asked_at),
                    });
                }
            }
            let o = &mut self.requests[k];
            o.answered = r.answered;
            o.result = r.result;
            self.retries += 1;
        }
        let mut kept = vec![false; self.requests.len()];
        for &k in &keep {
            kept[k] = true;
        }
        let mut flags = kept.into_iter();
        self.requests.retain(|_| flags.next().unwrap_or(false));
    }
}

fn is_retry(params: Option<&Value>) -> bool {
    params.is_some_and(|p| p.get("inputResponses").is_some() || p.get("requestState").is_some())
}

fn needs_input(result: Option<&Value>) -> bool {
    result
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str)
        == Some("input_required")
}
