//! The session's `subscriptions/listen` (2026-07-28): sent after the handshake with what
//! the persona asks to hear of (as far as the server's capabilities can change it), held
//! for the session's life, and sent again after the server ends it (at once) or drops it
//! (with backoff). Its messages arrive among everything else the session reads: while
//! it waits for answers, and, for a listening session, while it idles.
//!
//! What it measures: the `subscriptions/listen` phase (send → acknowledgement), the
//! `fanout` phase (a change's way from the server to this listener, when the server
//! stamps its changes as `mcp-fleet serve` does), and the changes it was owed and never
//! got. What it judges: the `listen.*` findings.

use super::{Failure, Session};
use crate::conformance::Check;
use crate::metrics::{Counter, FailureKind, Origin, Outcome, Phase, Sample, Span};
use crate::protocol::jsonrpc::{encode_notification, encode_request};
use crate::protocol::meta::{
    META, META_CHANGE, META_CHANGED_AT, META_CHANGE_SERVER, META_SUBSCRIPTION_ID,
};
use crate::protocol::{methods, Era, RawResult, RpcError};
use crate::transport::Received;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The first wait before sending again a listen that dropped; doubled per drop in a row.
const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// How long a best-effort `notifications/cancelled` may take at the end.
const CANCEL_LIMIT: Duration = Duration::from_secs(1);

/// A session's listen state (empty for a persona that does not listen).
#[derive(Debug, Default)]
pub(crate) struct Listens {
    /// `params.notifications` sent; `None`: this session does not listen.
    filter: Option<Value>,
    log: Option<Arc<ChangeLog>>,
    stream: Option<Stream>,
    /// When to send the listen again (it ended, dropped, or could not be sent).
    reopen: Option<Instant>,
    /// Drops in a row, for the backoff; an acknowledgement resets it.
    drops: u32,
    /// The connection is gone: nothing more will arrive while idle.
    gone: bool,
}

#[derive(Debug)]
struct Stream {
    id: u64,
    sent: Instant,
    /// Acknowledged (or, without an acknowledgement, its first message came).
    opened: bool,
    /// No acknowledgement within the request timeout (counted once).
    late: bool,
    /// The last change before it opened (the acknowledgement's `dev.mcp-fleet/change`).
    owed_from: Option<u64>,
    /// The highest change number it carried.
    last: Option<u64>,
    /// The server process that numbers its changes.
    server: Option<u64>,
}

impl Stream {
    /// The number after which every change is owed to this listen, when known.
    fn owed_after(&self) -> Option<u64> {
        match (self.owed_from, self.last) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

fn is_change(method: &str) -> bool {
    matches!(
        method,
        methods::TOOLS_LIST_CHANGED
            | methods::PROMPTS_LIST_CHANGED
            | methods::RESOURCES_LIST_CHANGED
            | methods::RESOURCES_UPDATED
    )
}

/// Whether the filter sent asked for this notification.
fn asked(filter: &Value, method: &str, params: Option<&Value>) -> bool {
    let flag = |k: &str| filter.get(k).and_then(Value::as_bool).unwrap_or(false);
    match method {
        methods::TOOLS_LIST_CHANGED => flag("toolsListChanged"),
        methods::PROMPTS_LIST_CHANGED => flag("promptsListChanged"),
        methods::RESOURCES_LIST_CHANGED => flag("resourcesListChanged"),
        _ => {
            let uri = params.and_then(|p| p.get("uri"));
            filter
                .get("resourceSubscriptions")
                .and_then(Value::as_array)
                .is_some_and(|uris| uri.is_some_and(|u| uris.contains(u)))
        }
    }
}

fn meta_u64(params: Option<&Value>, key: &str) -> Option<u64> {
    params?.get(META)?.get(key)?.as_u64()
}

mod changes;
pub use changes::ChangeLog;

impl Session<'_> {
    /// After the handshake of a modern session whose persona listens: send the listen.
    /// Nothing is sent when the server can change none of what the persona asks for.
    pub async fn start_listening(&mut self, log: Arc<ChangeLog>) {
        let Some(plan) = &self.persona.listen else {
            return;
        };
        if self.era != Era::Modern {
            return;
        }
        // A server that did not say (no `server/discover`) is assumed to change anything.
        let all = json!({"tools": {"listChanged": true}, "prompts": {"listChanged": true},
            "resources": {"listChanged": true, "subscribe": true}});
        let caps = self.server.as_ref().map(|s| s.capabilities.clone());
        let caps = caps.as_deref().filter(|c| !c.is_null()).unwrap_or(&all);
        let Some(filter) = plan.filter(Some(caps)) else {
            return;
        };
        self.listens.filter = Some(filter);
        self.listens.log = Some(log);
        self.send_listen().await;
    }

    /// Whether the session reads the server while idle: it listens.
    pub fn listening(&self) -> bool {
        self.listens.filter.is_some() && !self.listens.gone
    }

    async fn send_listen(&mut self) {
        let Some(filter) = self.listens.filter.clone() else {
            return;
        };
        let method = methods::SUBSCRIPTIONS_LISTEN;
        let (params, headers) =
            self.decorate(method, Some(json!({ "notifications": filter })), None);
        let id = self.fresh_id();
        // Traced like every request (persona `trace = true`).
        let (params, headers) = match &self.trace {
            Some(trace) => (trace.params(Some(&params), id), trace.headers(&headers, id)),
            None => (params, headers),
        };
        let bytes = encode_request(id, method, Some(&params));
        if let Some(t) = &self.transcript {
            t.sent(&bytes);
        }
        let sent = Instant::now();
        match self.transport.send_request(id, bytes, &headers).await {
            Ok(()) => {
                self.listens.stream = Some(Stream {
                    id,
                    sent,
                    opened: false,
                    late: false,
                    owed_from: None,
                    last: None,
                    server: None,
                });
            }
            Err(e) => {
                let f = Failure::from(e);
                self.sample_own(Phase::Listen, sent, &Err::<(), _>(f));
                self.reopen_later();
            }
        }
    }

    fn reopen_later(&mut self) {
        let exp = self.listens.drops.min(6);
        self.listens.drops += 1;
        let wait = BACKOFF_FIRST.saturating_mul(1 << exp).min(BACKOFF_MAX);
        self.listens.reopen = Some(Instant::now() + wait);
    }

    fn is_listen(&self, id: u64) -> bool {
        self.listens.stream.as_ref().is_some_and(|s| s.id == id)
    }

    /// The listen is over: count the changes it was owed and never got.
    fn listen_over(&mut self, stream: &Stream) {
        let known = stream.server.zip(stream.owed_after());
        if let (Some(log), Some((server, after))) = (&self.listens.log, known) {
            let by = Instant::now()
                .checked_sub(self.timeout)
                .unwrap_or(stream.sent);
            let owed = log.owed(server, after, by);
            self.recorder.count_n(Counter::ListenChangesMissed, owed);
        }
    }

    /// A response under our listen's id: the server ended it (`complete`), or refused
    /// or ended it with an error. Returns whether it was the listen's.
    pub(super) fn listen_response(
        &mut self,
        id: u64,
        outcome: &Result<RawResult, RpcError>,
    ) -> bool {
        if !self.is_listen(id) {
            return false;
        }
        let Some(stream) = self.listens.stream.take() else {
            return false;
        };
        self.listen_over(&stream);
        match outcome {
            Ok(_) => {
                if !stream.opened {
                    self.finding(Check::ListenNotAcknowledgedFirst, || {
                        "the listen's final response came with no acknowledgement before it".into()
                    });
                    self.listen_opened(&stream);
                }
                self.recorder.count(Counter::ListenEnded);
                self.listens.reopen = Some(Instant::now());
            }
            Err(e) if !stream.opened => {
                // Refused: asking again would not change the server's mind.
                let f = Failure::new(
                    FailureKind::RpcError(e.code),
                    format!("subscriptions/listen: {} ({})", e.message, e.code),
                );
                self.sample_own(Phase::Listen, stream.sent, &Err::<(), _>(f));
                self.recorder.count(Counter::ListenRefused);
            }
            Err(_) => {
                self.recorder.count(Counter::ListenEnded);
                self.reopen_later();
            }
        }
        true
    }

    /// The server's `notifications/cancelled` naming our listen: a clean end (the spec's
    /// cancellation page says a server ends a listen so). Returns whether it was ours.
    fn listen_cancelled(&mut self, id: u64) -> bool {
        if !self.is_listen(id) {
            return false;
        }
        if let Some(stream) = self.listens.stream.take() {
            self.listen_over(&stream);
        }
        self.recorder.count(Counter::ListenEnded);
        self.listens.reopen = Some(Instant::now());
        true
    }

    /// A failure of our listen's stream (it broke, or could not be read). Returns
    /// whether it was the listen's.
    pub(super) fn listen_failed(&mut self, id: u64, kind: FailureKind, detail: &str) -> bool {
        if !self.is_listen(id) {
            return false;
        }
        let Some(stream) = self.listens.stream.take() else {
            return false;
        };
        self.listen_over(&stream);
        if stream.opened {
            self.recorder.count(Counter::ListenDropped);
            if kind == FailureKind::TransportClosed {
                self.finding(Check::ListenEndedWithoutNotice, || {
                    format!("the listen stream ended with no final response: {detail}")
                });
            }
        } else if !stream.late {
            let f = Failure::new(kind, format!("subscriptions/listen: {detail}"));
            self.sample_own(Phase::Listen, stream.sent, &Err::<(), _>(f));
        }
        self.reopen_later();
        true
    }

    fn listen_opened(&mut self, stream: &Stream) {
        if !stream.late {
            self.sample_own(Phase::Listen, stream.sent, &Ok::<(), Failure>(()));
        }
        self.recorder.count(Counter::ListenOpened);
    }

    /// Listen bookkeeping and checks for a notification; `false` when nothing more is
    /// to be done with it (an acknowledgement).
    pub(super) fn listen_notification(&mut self, method: &str, params: Option<&Value>) -> bool {
        if method == methods::CANCELLED {
            let id = params
                .and_then(|p| p.get("requestId"))
                .and_then(Value::as_u64);
            return !id.is_some_and(|id| self.listen_cancelled(id));
        }
        let ack = method == methods::SUBSCRIPTIONS_ACKNOWLEDGED;
        if self.era != Era::Modern || !(ack || is_change(method)) {
            return true;
        }
        let listen_id = self.listens.stream.as_ref().map(|s| s.id);
        if let Some(via) = self.transport.last_via() {
            if Some(via) != listen_id {
                self.finding(Check::ListenNotificationOffListen, || {
                    format!("{method} came on the stream of our request {via}, not on a subscriptions/listen")
                });
                return !ack;
            }
        }
        let sub = params
            .and_then(|p| p.get(META))
            .and_then(|m| m.get(META_SUBSCRIPTION_ID));
        match (sub, listen_id) {
            (None, Some(_)) => self.finding(Check::ListenMissingSubscriptionId, || {
                format!("{method} on the listen stream has no _meta[\"{META_SUBSCRIPTION_ID}\"]")
            }),
            (None, None) => {
                self.finding(Check::ListenMissingSubscriptionId, || {
                    format!(
                        "{method} came with no subscription id and no listen of ours to belong to"
                    )
                });
                return !ack;
            }
            (Some(s), Some(id)) if s.as_u64() == Some(id) => {}
            (Some(s), _) => {
                self.finding(Check::ListenMissingSubscriptionId, || {
                    format!("{method} names subscription {s}, which is no open listen of ours")
                });
                return !ack;
            }
        }
        let Some(mut stream) = self.listens.stream.take() else {
            return !ack;
        };
        if ack {
            if !stream.opened {
                stream.opened = true;
                stream.owed_from = meta_u64(params, META_CHANGE);
                stream.server = meta_u64(params, META_CHANGE_SERVER);
                self.listens.drops = 0;
                self.listen_opened(&stream);
            }
            self.listens.stream = Some(stream);
            return false;
        }
        if !stream.opened {
            stream.opened = true;
            self.finding(Check::ListenNotAcknowledgedFirst, || {
                format!("{method} came before notifications/subscriptions/acknowledged")
            });
            self.listen_opened(&stream);
        }
        let filter = self.listens.filter.as_ref();
        if filter.is_some_and(|f| !asked(f, method, params)) {
            self.finding(Check::ListenUnrequestedNotification, || {
                format!("{method} on a listen that did not ask for it")
            });
        }
        self.recorder.count(Counter::ListenNotifications);
        if let Some(at) = meta_u64(params, META_CHANGED_AT) {
            self.fan_out_sample(at);
        }
        let server = meta_u64(params, META_CHANGE_SERVER);
        if stream.server.is_none() {
            stream.server = server;
        }
        if let (Some(n), true) = (meta_u64(params, META_CHANGE), server == stream.server) {
            if let (Some(log), Some(server)) = (&self.listens.log, server) {
                log.saw(server, n);
            }
            if let Some(after) = stream.owed_after() {
                self.recorder
                    .count_n(Counter::ListenChangesMissed, n.saturating_sub(after + 1));
            }
            stream.last = Some(stream.last.map_or(n, |l| l.max(n)));
        }
        self.listens.stream = Some(stream);
        true
    }

    /// One `fanout` sample: now − the server's stamp (a stamp ahead of our clock, which
    /// loopback cannot have, counts as zero).
    fn fan_out_sample(&self, changed_at_us: u64) {
        let now_us = crate::protocol::meta::now_us();
        let delay = Duration::from_micros(now_us.saturating_sub(changed_at_us));
        let finished = Instant::now();
        let started = finished.checked_sub(delay).unwrap_or(finished);
        let span = Span {
            intended: started,
            started,
            finished,
        };
        let origin = Origin {
            session: self.number,
            persona: self.persona.id,
            era: self.era,
            version: self.version,
        };
        self.recorder
            .sample(Sample::new(Phase::FanOut, origin, None, span, Outcome::Ok));
    }

    /// Read and handle what the server sends until `until` (or until a changed list is
    /// to be fetched again), sending the listen again when it is due.
    pub async fn listen_until(&mut self, until: Instant) {
        loop {
            if !self.pending_refetch.is_empty() || self.listens.gone {
                return;
            }
            let now = Instant::now();
            if self.listens.reopen.is_some_and(|at| at <= now) {
                self.listens.reopen = None;
                self.recorder.count(Counter::ListenReopened);
                self.send_listen().await;
                continue;
            }
            let ack_due = self
                .listens
                .stream
                .as_ref()
                .filter(|s| !s.opened && !s.late)
                .map(|s| s.sent + self.timeout);
            if ack_due.is_some_and(|at| at <= now) {
                if let Some(s) = self.listens.stream.as_mut() {
                    s.late = true;
                    let sent = s.sent;
                    let f = Failure::new(
                        FailureKind::Timeout,
                        format!(
                            "subscriptions/listen: no acknowledgement within {}",
                            humantime::format_duration(self.timeout)
                        ),
                    );
                    self.sample_own(Phase::Listen, sent, &Err::<(), _>(f));
                }
                continue;
            }
            let wake = [Some(until), self.listens.reopen, ack_due]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(until);
            if wake <= now {
                return;
            }
            match tokio::time::timeout_at(wake, self.transport.recv()).await {
                Err(_) => {
                    if wake >= until {
                        return;
                    }
                }
                Ok(Received::Closed { .. }) => {
                    // The next request finds out; idle reading stops here.
                    self.listens.gone = true;
                    return;
                }
                Ok(received) => {
                    if let (Some(t), Received::Message(m)) = (&self.transcript, &received) {
                        t.received(m);
                    }
                    self.take(&mut [], received).await;
                }
            }
        }
    }

    /// Make one change the fleet asked for (a list-changed storm): the server's
    /// `notify_list_changed` tool, as `mcp-fleet serve` offers it. A refusal is kept as an
    /// example and not counted as made.
    pub async fn trigger_change(&mut self) {
        let params = json!({"name": "notify_list_changed", "arguments": {"list": "tools"}});
        match self.request(methods::TOOLS_CALL, Some(params)).await {
            Ok(_) => self.recorder.count(Counter::ChangesTriggered),
            Err(f) => self.recorder.send(crate::metrics::Event::Example {
                kind: f.kind,
                text: format!("a list-changed storm's change was not made: {}", f.detail),
            }),
        }
    }

    /// A session that vanishes: its open listen's owed changes are counted.
    pub(super) fn forget_listen(&mut self) {
        if let Some(stream) = self.listens.stream.take() {
            self.listen_over(&stream);
        }
    }

    /// The end of the session: the open listen's owed changes are counted and, on stdio
    /// and WebSocket, the listen is cancelled (over HTTP closing its stream ends it).
    pub(super) async fn stop_listening(&mut self) {
        let Some(stream) = self.listens.stream.take() else {
            return;
        };
        self.listen_over(&stream);
        if self.transport.http_stats().is_none() {
            let params = json!({"requestId": stream.id, "reason": "the client is closing"});
            let bytes = encode_notification(methods::CANCELLED, Some(&params));
            let _ =
                tokio::time::timeout(CANCEL_LIMIT, self.transport.send_notification(bytes)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_says_what_was_asked() {
        let f = json!({"toolsListChanged": true, "promptsListChanged": false,
            "resourceSubscriptions": ["a://1"]});
        assert!(asked(&f, methods::TOOLS_LIST_CHANGED, None));
        assert!(!asked(&f, methods::PROMPTS_LIST_CHANGED, None));
        assert!(asked(
            &f,
            methods::RESOURCES_UPDATED,
            Some(&json!({"uri": "a://1"}))
        ));
        assert!(!asked(
            &f,
            methods::RESOURCES_UPDATED,
            Some(&json!({"uri": "a://2"}))
        ));
    }
}
