//! Request/response correlation: send one request or several at once, then receive until
//! each has its answer or its deadline passes — serving everything else the server sends
//! meanwhile (its requests, notifications, stray lines) — and cancel what timed out.

use super::{excerpt_of, Failure, Session};
use crate::conformance::Check;
use crate::metrics::{Counter, Event, FailureKind};
use crate::protocol::jsonrpc::{encode_notification, encode_request, encode_request_encoded};
use crate::protocol::{methods, Era, Incoming, RawResult, RequestId, RpcError};
use crate::transport::Received;
use http::{HeaderName, HeaderValue};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// How long we give a best-effort `notifications/cancelled` after a timeout.
const CANCEL_SEND_LIMIT: Duration = Duration::from_secs(1);

/// A result as it arrived (most callers read it whole: [`Session::exchange`]).
pub(super) type ExchangeResult = Result<RawResult, Failure>;

/// One request to send, borrowed from the caller: nothing is copied on the way out
/// but the encoded bytes.
pub(super) struct Outgoing<'a> {
    pub(super) method: &'a str,
    pub(super) params: Option<&'a Value>,
    /// `params` encoded ahead (a persona's `initialize`), sent instead of `params`.
    pub(super) encoded: Option<&'a str>,
    pub(super) headers: &'a [(HeaderName, HeaderValue)],
}

type Waiting<'a> = (u64, &'a str, Option<(Instant, ExchangeResult)>);

/// The still-unanswered request with our id `id`.
fn slot<'p, 'a>(pending: &'p mut [Waiting<'a>], id: u64) -> Option<&'p mut Waiting<'a>> {
    pending
        .iter_mut()
        .find(|(pid, _, r)| *pid == id && r.is_none())
}

/// A failure that ends every request still waiting.
fn fail_all(pending: &mut [Waiting<'_>], f: &Failure) {
    for (_, _, r) in pending.iter_mut().filter(|(_, _, r)| r.is_none()) {
        *r = Some((Instant::now(), Err(f.clone())));
    }
}

/// Settle the waiting request `request` with `f`, or, when it names none of them, every
/// request still waiting.
fn settle_or_fail_all(pending: &mut [Waiting<'_>], request: Option<u64>, f: &Failure) {
    match request.and_then(|id| slot(pending, id)) {
        Some((_, _, r)) => *r = Some((Instant::now(), Err(f.clone()))),
        None => fail_all(pending, f),
    }
}

/// List methods a `notifications/<list>/list_changed` asks to fetch again.
pub(super) fn list_for(notification: &str) -> Option<&'static str> {
    match notification {
        methods::TOOLS_LIST_CHANGED => Some(methods::TOOLS_LIST),
        methods::PROMPTS_LIST_CHANGED => Some(methods::PROMPTS_LIST),
        methods::RESOURCES_LIST_CHANGED => Some(methods::RESOURCES_LIST),
        _ => None,
    }
}

impl Session<'_> {
    pub(super) fn on_notification(&mut self, method: String) {
        if method == methods::TOOLS_LIST_CHANGED {
            if let Some(t) = self.tracker() {
                t.tools_list_changed();
            }
        }
        if let Some(list) = list_for(&method) {
            if self.persona.refetch_on_list_changed {
                if !self.pending_refetch.contains(&list) {
                    self.pending_refetch.push(list);
                }
            } else {
                self.recorder.count(Counter::ListChangedIgnored);
            }
        }
        self.recorder.send(Event::ServerMessage { method });
    }

    /// One request/response exchange: send, then receive until our answer arrives.
    pub(super) async fn exchange(
        &mut self,
        method: &str,
        params: Option<&Value>,
        headers: &[(HeaderName, HeaderValue)],
    ) -> Result<Value, Failure> {
        self.exchange_one(Outgoing {
            method,
            params,
            encoded: None,
            headers,
        })
        .await
        .map(RawResult::into_value)
    }

    /// [`Session::exchange`] of a request whose `params` were encoded ahead; its result
    /// as it arrived.
    pub(super) async fn exchange_encoded(&mut self, method: &str, params: &str) -> ExchangeResult {
        self.exchange_one(Outgoing {
            method,
            params: None,
            encoded: Some(params),
            headers: &[],
        })
        .await
    }

    async fn exchange_one(&mut self, out: Outgoing<'_>) -> ExchangeResult {
        match self.exchange_all(&[out]).await.pop() {
            Some((_, result)) => result,
            None => Err(Failure::new(FailureKind::Io, "no exchange took place")),
        }
    }

    /// Send every request at once, then receive until each has its answer (or its
    /// deadline passes), serving the server meanwhile. Each result carries the instant
    /// its answer arrived, so parallel calls are timed one by one.
    pub(super) async fn exchange_all<'a>(
        &mut self,
        batch: &[Outgoing<'a>],
    ) -> Vec<(Instant, ExchangeResult)> {
        let sent = Instant::now();
        let mut pending = self.send_all(batch).await;
        let deadline = Instant::now() + self.timeout;
        while pending.iter().any(|(_, _, r)| r.is_none()) {
            let Ok(received) = tokio::time::timeout_at(deadline, self.transport.recv()).await
            else {
                self.time_out(&mut pending).await;
                break;
            };
            if let (Some(t), Received::Message(m)) = (&self.transcript, &received) {
                t.received(m);
            }
            self.take(&mut pending, received).await;
        }
        if let Some(trace) = &self.trace {
            for (id, method, r) in &pending {
                if let Some((at, _)) = r {
                    self.recorder.send(Event::Traced {
                        phase: super::trace::phase_of(method),
                        latency_us: u64::try_from(at.duration_since(sent).as_micros())
                            .unwrap_or(u64::MAX),
                        trace: trace.id,
                        span: trace.span(*id),
                    });
                }
            }
        }
        pending
            .into_iter()
            .map(|(_, _, r)| {
                r.unwrap_or_else(|| {
                    (
                        Instant::now(),
                        Err(Failure::new(FailureKind::Io, "request lost")),
                    )
                })
            })
            .collect()
    }

    /// Send each request under a fresh id; one that cannot be sent is settled at once.
    async fn send_all<'a>(&mut self, batch: &[Outgoing<'a>]) -> Vec<Waiting<'a>> {
        let mut pending: Vec<Waiting<'a>> = Vec::with_capacity(batch.len());
        for out in batch {
            let id = self.next_id;
            self.next_id += 1;
            let (bytes, traced_headers) = match &self.trace {
                None => match out.encoded {
                    Some(params) => (encode_request_encoded(id, out.method, params), None),
                    None => (encode_request(id, out.method, out.params), None),
                },
                // Traced: the context in `_meta` and in the HTTP headers.
                Some(trace) => {
                    let bytes = match out.encoded {
                        Some(params) => {
                            encode_request_encoded(id, out.method, &trace.encoded(params, id))
                        }
                        None => encode_request(id, out.method, Some(&trace.params(out.params, id))),
                    };
                    (bytes, Some(trace.headers(out.headers, id)))
                }
            };
            if let Some(t) = &self.transcript {
                t.sent(&bytes);
            }
            let headers = traced_headers.as_deref().unwrap_or(out.headers);
            let sent = self.transport.send_request(id, bytes, headers).await;
            let done = sent.err().map(|e| (Instant::now(), Err(Failure::from(e))));
            pending.push((id, out.method, done));
        }
        pending
    }

    /// The deadline passed: cancel every request still waiting and fail it as a timeout.
    async fn time_out(&mut self, pending: &mut [Waiting<'_>]) {
        let late: Vec<(u64, &str)> = pending
            .iter()
            .filter(|(_, _, r)| r.is_none())
            .map(|(id, m, _)| (*id, *m))
            .collect();
        for (id, method) in late {
            self.cancel(id).await;
            let f = Failure::new(
                FailureKind::Timeout,
                format!(
                    "no answer to {method} within {}",
                    humantime::format_duration(self.timeout)
                ),
            );
            if let Some((_, _, r)) = slot(pending, id) {
                *r = Some((Instant::now(), Err(f)));
            }
        }
    }

    /// One thing the transport received while requests wait: an answer settles its
    /// request; the server's requests are served, its notifications counted; failures
    /// settle the requests they concern.
    pub(super) async fn take(&mut self, pending: &mut [Waiting<'_>], received: Received) {
        match received {
            Received::Message(Incoming::Response { id, outcome }) => {
                let own = id.as_ref().and_then(RequestId::as_own);
                if own.is_some_and(|id| self.listen_response(id, &outcome)) {
                    return;
                }
                self.take_response(pending, id, outcome);
            }
            Received::Message(Incoming::Request { id, method, params }) => {
                self.check_early(&method);
                if let Err(f) = self.serve_request(id, method, params).await {
                    fail_all(pending, &f);
                }
            }
            Received::Message(Incoming::Notification { method, params }) => {
                self.check_early(&method);
                if method == methods::TASKS_STATUS {
                    self.task_status(params.as_ref());
                }
                if self.listen_notification(&method, params.as_ref()) {
                    self.on_notification(method);
                }
            }
            Received::Malformed {
                error,
                excerpt,
                carrier,
                request,
            } => {
                let check = crate::conformance::malformed(&error, carrier);
                let text = format!("{error}: {excerpt}");
                if let Some(t) = &self.transcript {
                    t.note(format!("malformed ({text})"));
                }
                self.finding(check, || text.clone());
                self.recorder.send(Event::Malformed {
                    persona: self.persona.id,
                    text: text.clone(),
                });
                // The same fault is the same failure on every transport: bytes that are
                // not JSON-RPC fail the request they answer at once (or, when nothing
                // says which, every request waiting), never left to time out.
                let f = Failure::new(
                    FailureKind::ProtocolViolation,
                    format!("malformed answer: {text}"),
                );
                settle_or_fail_all(pending, request, &f);
            }
            Received::Failed {
                request: Some(id),
                kind,
                detail,
            } => {
                if self.listen_failed(id, kind, &detail) {
                    return;
                }
                if let Some((_, _, r)) = slot(pending, id) {
                    *r = Some((Instant::now(), Err(Failure::new(kind, detail))));
                }
            }
            Received::Failed {
                request: None,
                kind,
                detail,
            } => {
                if !kind.is_recoverable_off_request() {
                    fail_all(pending, &Failure::new(kind, detail));
                }
            }
            Received::Closed { detail } => {
                fail_all(pending, &Failure::new(FailureKind::TransportClosed, detail));
            }
        }
    }

    /// A response: it settles the waiting request of its id.
    fn take_response(
        &mut self,
        pending: &mut [Waiting<'_>],
        id: Option<RequestId>,
        outcome: Result<RawResult, RpcError>,
    ) {
        let Some(rid) = id else {
            // An error may lack an id (the request could not be read); a result never
            // may: it answers something that had no id.
            if let Ok(result) = outcome {
                self.finding(Check::JsonrpcResponseToNotification, || {
                    format!("a result with no id: {}", excerpt_of(&result.value()))
                });
            }
            return;
        };
        // Anything else is a late answer to a request we gave up on (ignored), or to an
        // id we never used (a finding).
        let next_id = self.next_id;
        if rid.as_own().is_none_or(|id| id >= next_id || id == 0) {
            // A string spelling one of our numbers answers nothing: JSON-RPC requires
            // the request's id, of the same type.
            let why = match rid.retyped_own() {
                Some(n) if n > 0 && n < next_id => {
                    format!("a response with the string id {rid} to our request {n}: JSON-RPC requires the same id, of the same type")
                }
                _ => format!("a response with id {rid}, which no request of ours has (ids in use are 1..{next_id})"),
            };
            self.finding(Check::JsonrpcUnknownId, || why.clone());
            // An answer under an id nobody asked for is an answer lost to the request
            // that waits for it: a protocol violation now, not a timeout later.
            let f = Failure::new(FailureKind::ProtocolViolation, why);
            fail_all(pending, &f);
            return;
        }
        if let Some((_, method, r)) = rid.as_own().and_then(|id| slot(pending, id)) {
            let result = outcome.map_err(|e| Failure {
                kind: FailureKind::RpcError(e.code),
                detail: with_code(method, &e.message, e.code),
                data: e.data,
            });
            *r = Some((Instant::now(), result));
        }
    }

    /// Several requests in flight at once (as hosts issue parallel tool calls). Modern
    /// results that ask for input are completed one by one afterwards.
    pub async fn request_many(
        &mut self,
        batch: Vec<(&'static str, Value)>,
    ) -> Vec<(Instant, Result<Value, Failure>)> {
        // Modern requests carry their own `_meta` and headers: build those first, then
        // lend everything to the exchange.
        let decorated: Vec<(Value, Vec<(HeaderName, HeaderValue)>)> = match self.era {
            Era::Modern => batch
                .iter()
                .map(|(method, params)| self.decorate(method, Some(params.clone()), None))
                .collect(),
            Era::Legacy => Vec::new(),
        };
        let outgoing: Vec<Outgoing<'_>> = batch
            .iter()
            .enumerate()
            .map(|(i, (method, params))| match decorated.get(i) {
                Some((p, h)) => Outgoing {
                    method,
                    params: Some(p),
                    encoded: None,
                    headers: h,
                },
                None => Outgoing {
                    method,
                    params: Some(params),
                    encoded: None,
                    headers: &[],
                },
            })
            .collect();
        let mut results: Vec<(Instant, Result<Value, Failure>)> = self
            .exchange_all(&outgoing)
            .await
            .into_iter()
            .map(|(at, r)| (at, r.map(RawResult::into_value)))
            .collect();
        drop(outgoing);
        if self.era == Era::Modern {
            for (i, (method, params)) in batch.into_iter().enumerate() {
                let needs_input = matches!(&results[i].1, Ok(v)
                    if v.get("resultType").and_then(Value::as_str) == Some("input_required"));
                if needs_input {
                    let r = self.request_modern(method, Some(params)).await;
                    results[i] = (Instant::now(), r);
                }
            }
        }
        results
    }

    /// Tell the server we gave up on request `id` (best effort, bounded). Over modern
    /// Streamable HTTP closing the stream is the cancellation, but a notification does
    /// no harm to a server that ignores it.
    pub(super) async fn cancel(&mut self, id: u64) {
        let params = json!({"requestId": id, "reason": "timeout"});
        let bytes = encode_notification(methods::CANCELLED, Some(&params));
        let _ =
            tokio::time::timeout(CANCEL_SEND_LIMIT, self.transport.send_notification(bytes)).await;
    }
}

/// `method: message (code)`, the code said once: some servers put it in the message
/// already (`Invalid Request (-32600)`).
fn with_code(method: &str, message: &str, code: i64) -> String {
    let code_text = format!("({code})");
    if message.trim_end().ends_with(&code_text) {
        format!("{method}: {}", message.trim_end())
    } else {
        format!("{method}: {message} {code_text}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_code_is_said_once() {
        let said = super::with_code("initialize", "Invalid Request (-32600)", -32600);
        assert_eq!(said, "initialize: Invalid Request (-32600)");
        let said = super::with_code("initialize", "Invalid Request", -32600);
        assert_eq!(said, "initialize: Invalid Request (-32600)");
    }
}
