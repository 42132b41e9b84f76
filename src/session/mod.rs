//! One MCP connection lifecycle on top of a transport: request/response correlation by
//! id, timeouts with `notifications/cancelled`, answers to what the server asks of a
//! client, and counting what the server tells us. Both eras run through here: a modern
//! session adds `_meta` and the 2026-07-28 headers to every request and fulfils
//! `input_required` results (MRTR). The session drives its own receive loop (no task
//! per session): while it waits for a response it also serves everything else.

mod cache;
mod conformance_hooks;
mod exchange;
mod extensions;
mod handshake;
mod listen;
mod modern;
mod server_requests;
pub(crate) mod shared;
mod tasks;
mod trace;
mod transcript;

pub use cache::ResponseCache;
pub use handshake::ServerInfo;
pub use listen::ChangeLog;
pub use trace::traceparent;
pub use transcript::{Direction, Entry, Transcript};

use crate::conformance::SessionChecks;

use crate::metrics::{Counter, Event, FailureKind, Origin, Outcome, Phase, Recorder, Sample, Span};
use crate::plan::Persona;
use crate::protocol::jsonrpc::{encode_notification, encode_response};
use crate::protocol::{Era, RequestId, VersionId};
use crate::transport::{Transport, TransportError};
use http::HeaderName;
use rand::rngs::SmallRng;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Why an exchange failed, with a message worth showing a person.
#[derive(Debug, Clone)]
pub struct Failure {
    pub kind: FailureKind,
    pub detail: String,
    /// For RPC errors: the error's `data`, kept for version negotiation.
    pub data: Option<Value>,
}

impl Failure {
    pub fn new(kind: FailureKind, detail: impl Into<String>) -> Self {
        Failure {
            kind,
            detail: detail.into(),
            data: None,
        }
    }
}

impl From<TransportError> for Failure {
    fn from(e: TransportError) -> Self {
        Failure {
            kind: e.kind,
            detail: e.detail,
            data: e.data,
        }
    }
}

pub struct Session<'p> {
    transport: Transport,
    next_id: u64,
    timeout: Duration,
    persona: &'p Persona,
    recorder: Recorder,
    rng: SmallRng,
    /// The era this session speaks (for `auto`: the probe's verdict).
    era: Era,
    /// Modern era: the version sent in `_meta` (may change after -32022).
    modern_version: String,
    /// The version this session speaks (offered, then negotiated), interned for samples.
    version: VersionId,
    /// What the handshake told us.
    pub server: Option<ServerInfo>,
    /// Lists the server said changed, to be fetched again (personas that honour it).
    pub pending_refetch: Vec<&'static str>,
    /// Modern era: tool argument → `Mcp-Param-*` header, learnt from `tools/list`.
    tool_headers: HashMap<String, Vec<(String, HeaderName)>>,
    /// Each listed tool's `inputSchema`, for generated arguments (shared between the
    /// sessions that were listed the same one: `shared.rs`).
    tool_schemas: HashMap<String, Arc<Value>>,
    /// Listed tools annotated `destructiveHint: true` and not `readOnlyHint`.
    destructive_tools: Vec<String>,
    /// Conformance state (findings already reported, the run's tracker).
    pub(crate) checks: SessionChecks,
    /// Every message, when inspecting.
    transcript: Option<Transcript>,
    /// Tasks: tools' task support, status notifications (`tasks.rs`).
    tasks: tasks::SessionTasks,
    /// `auto` over stdio: the probe went unanswered, and the process may read it yet.
    probe_unanswered: bool,
    /// The persona's `subscriptions/listen`, when it listens (`listen.rs`).
    listens: listen::Listens,
    /// W3C trace context on every request (persona `trace = true`; `trace.rs`).
    trace: Option<trace::Trace>,
    /// Extensions the server offers that the persona did not declare, not yet seen
    /// required (`extensions.rs`).
    undeclared_extensions: Vec<String>,
    /// The session's number in the run, for its samples (0 until set: an untimed
    /// session of its own, such as a client fault's check of a fresh session).
    number: u64,
}

impl<'p> Session<'p> {
    pub fn new(
        transport: Transport,
        timeout: Duration,
        persona: &'p Persona,
        recorder: Recorder,
        rng: SmallRng,
    ) -> Session<'p> {
        let modern_version = persona.modern_version.as_str().to_string();
        Session {
            transport,
            next_id: 1,
            timeout,
            version: VersionId::of(match persona.era {
                crate::plan::EraMode::Legacy => persona.legacy_version.as_str(),
                _ => &modern_version,
            }),
            modern_version,
            persona,
            recorder,
            rng,
            era: Era::Legacy,
            server: None,
            pending_refetch: Vec::new(),
            tool_headers: HashMap::new(),
            tool_schemas: HashMap::new(),
            destructive_tools: Vec::new(),
            checks: SessionChecks::default(),
            transcript: None,
            tasks: Default::default(),
            probe_unanswered: false,
            listens: listen::Listens::default(),
            trace: persona.trace.then(|| trace::Trace::new(persona.id)),
            undeclared_extensions: Vec::new(),
            number: 0,
        }
    }

    /// The session's number in the run ([`crate::metrics::Recorder::next_session`]).
    pub fn set_number(&mut self, number: u64) {
        self.number = number;
        if let Some(t) = self.trace.as_ref().filter(|_| number > 0) {
            self.recorder.send(crate::metrics::Event::SessionTraced {
                session: number,
                trace: t.id,
            });
        }
    }

    pub fn era(&self) -> Era {
        self.era
    }

    /// The protocol version the session speaks (for samples and the by-version breakdown).
    pub fn version(&self) -> VersionId {
        self.version
    }

    pub fn persona(&self) -> &Persona {
        self.persona
    }

    /// The session's random generator (seeded from the run's seed).
    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }

    /// The `inputSchema` of a tool the server listed in this session.
    pub fn tool_schema(&self, tool: &str) -> Option<&Value> {
        self.tool_schemas.get(tool).map(|s| &**s)
    }

    /// What the listing said of `tool` (its `inputSchema`, whether it is destructive),
    /// beside the session's generator, to generate its arguments.
    pub fn tool_and_rng(&mut self, tool: &str) -> (Option<&Value>, bool, &mut SmallRng) {
        let destructive = self.tool_is_destructive(tool);
        let schema = self.tool_schemas.get(tool).map(|s| &**s);
        (schema, destructive, &mut self.rng)
    }

    /// Whether the server's listing annotates `tool` as destructive (`destructiveHint:
    /// true`, and not `readOnlyHint: true`): a hint that calling it deletes or overwrites.
    pub fn tool_is_destructive(&self, tool: &str) -> bool {
        self.destructive_tools.iter().any(|t| t == tool)
    }

    /// Remember what a `tools/list` page says: schemas for generated arguments and, in
    /// the modern era, `x-mcp-header` annotations.
    pub fn learn_tools(&mut self, page: &Value) {
        for tool in page
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("inputSchema"),
            ) {
                self.tool_schemas
                    .insert(name.to_string(), shared::intern(schema));
            }
            self.learn_task_support(tool);
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                let destructive = is_destructive(tool);
                let known = self.destructive_tools.iter().position(|t| t == name);
                match (destructive, known) {
                    (true, None) => self.destructive_tools.push(name.to_string()),
                    (false, Some(i)) => {
                        self.destructive_tools.swap_remove(i);
                    }
                    _ => {}
                }
            }
            if let (Some(name), Some(schema)) = (
                tool.get("name").and_then(Value::as_str),
                tool.get("outputSchema"),
            ) {
                self.checks
                    .output_schemas
                    .insert(name.to_string(), shared::intern(schema));
            }
        }
        if self.era == Era::Modern {
            self.learn_tool_headers(page);
        }
    }

    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    pub fn transport_mut(&mut self) -> &mut Transport {
        &mut self.transport
    }

    /// Whether the legacy fallback needs a connection of its own: the `auto` probe went
    /// unanswered on stdio, and a slow server that reads it late locks its process to
    /// the modern era and refuses the `initialize` behind it (the TypeScript SDK probes
    /// in a sibling process for this).
    pub fn needs_fresh_transport(&self) -> bool {
        self.probe_unanswered
    }

    /// Go on over `transport` (a fresh server process); the old one is dropped, which
    /// kills its process group.
    pub fn replace_transport(&mut self, transport: Transport) {
        self.count_transport_stats();
        if let Some(t) = &self.transcript {
            t.note("the probe went unanswered: initialize goes to a fresh server process");
        }
        self.transport = transport;
        self.probe_unanswered = false;
    }

    /// Send a request and wait for its response, serving the server meanwhile. In the
    /// modern era the request carries `_meta` and headers, and `input_required` results
    /// are fulfilled and retried; in the legacy era a forgotten session (404) is
    /// re-initialized and the request retried once, when the persona does that.
    pub async fn request(&mut self, method: &str, params: Option<Value>) -> Result<Value, Failure> {
        let result = self.request_in_era(method, params).await;
        if let Err(f) = &result {
            self.check_failure(method, f);
        }
        result
    }

    async fn request_in_era(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, Failure> {
        match self.era {
            Era::Modern => self.request_modern(method, params).await,
            Era::Legacy => {
                let first = self.exchange(method, params.as_ref(), &[]).await;
                match first {
                    Err(f) if f.kind == FailureKind::SessionExpired && self.can_reinitialize() => {
                        self.reinitialize().await?;
                        self.exchange(method, params.as_ref(), &[]).await
                    }
                    other => other,
                }
            }
        }
    }

    /// Send a notification (over HTTP: and wait for its 202).
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), Failure> {
        let bytes = encode_notification(method, params.as_ref());
        if let Some(t) = &self.transcript {
            t.sent(&bytes);
        }
        let sent = self.send_bounded(bytes, method).await;
        match &sent {
            Ok(()) => self.check_post_ack(method),
            Err(f) => self.check_failure(method, f),
        }
        sent
    }

    async fn send_bounded(&mut self, bytes: Vec<u8>, what: &str) -> Result<(), Failure> {
        match tokio::time::timeout(self.timeout, self.transport.send_notification(bytes)).await {
            Ok(r) => r.map_err(Failure::from),
            Err(_) => Err(Failure::new(
                FailureKind::Timeout,
                format!(
                    "{what} not accepted within {}",
                    humantime::format_duration(self.timeout)
                ),
            )),
        }
    }

    /// Answer a server→client request as the persona would; the time it takes (the
    /// persona's configured delay included) is the `answer` phase.
    async fn serve_request(
        &mut self,
        id: RequestId,
        method: String,
        params: Option<Value>,
    ) -> Result<(), Failure> {
        let started = Instant::now();
        let server_requests::Response { result, delay } = server_requests::respond(
            &self.persona.replies,
            &method,
            params.as_ref(),
            &mut self.rng,
        );
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let reply = encode_response(&id, result.as_ref());
        if let Some(t) = &self.transcript {
            t.sent(&reply);
        }
        self.recorder.send(Event::ServerMessage { method });
        let sent = self
            .send_bounded(reply, "our answer to a server request")
            .await;
        if sent.is_ok() {
            self.check_post_ack("response to a server request");
        }
        self.sample_own(Phase::Answer, started, &sent);
        sent
    }

    /// Record a phase the session runs on its own (answering the server,
    /// re-initializing): it starts when it is needed, so it has no intended start of its
    /// own, and it finishes now. The client's phases are recorded by its timer.
    fn sample_own<T>(&self, phase: Phase, started: Instant, result: &Result<T, Failure>) {
        let outcome = match result {
            Ok(_) => Outcome::Ok,
            Err(f) => Outcome::Failed(f.kind),
        };
        let origin = Origin {
            session: self.number,
            persona: self.persona.id,
            era: self.era,
            version: self.version,
        };
        let sample = Sample::new(phase, origin, None, Span::since(started), outcome);
        self.recorder.sample(sample);
    }

    /// Legacy Streamable HTTP: open the standalone GET stream as the SDK clients do.
    /// Optional in the spec, so a refusal is counted, not a session failure.
    pub async fn open_get_stream(&mut self) {
        match self.transport.open_get_stream().await {
            Ok(true) => self.recorder.count(Counter::GetStreamOpened),
            Ok(false) => self.recorder.count(Counter::GetStreamNotOffered),
            Err(e) => {
                self.recorder.count(Counter::GetStreamRefused);
                self.recorder.send(Event::Example {
                    kind: e.kind,
                    text: format!("GET stream (counted, not a failure): {}", e.detail),
                });
            }
        }
    }

    /// End the session (DELETE / close frame / stdin EOF and signals).
    pub async fn close(mut self) -> Result<(), Failure> {
        self.stop_listening().await;
        self.count_transport_stats();
        self.transport.close().await.map_err(Failure::from)
    }

    /// Vanish without a goodbye, as a crashed host does: no DELETE, no close frame, no
    /// stdin EOF — the handles are dropped (a stdio child is killed and reaped by the
    /// transport's drop), and the server finds out when it next reads.
    pub fn abandon(mut self) {
        self.forget_listen();
        self.count_transport_stats();
        drop(self.transport);
    }

    fn count_transport_stats(&self) {
        if let Some(stats) = self.transport.http_stats() {
            self.recorder
                .count_n(Counter::SseResumptions, u64::from(stats.resumptions));
            self.recorder.count_n(
                Counter::GetStreamReconnects,
                u64::from(stats.get_stream_reconnects),
            );
            self.recorder.count_n(
                Counter::HttpConnections,
                u64::from(stats.connections_opened),
            );
        }
    }

    /// A fresh request id, for a message the client builds itself (a faulty one).
    pub fn fresh_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The transcript `inspect` records, if any.
    pub fn transcript(&self) -> Option<&Transcript> {
        self.transcript.as_ref()
    }

    /// Modern era: the `_meta`-decorated params and the headers of a request.
    pub fn decorated(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> (Value, Vec<(HeaderName, http::HeaderValue)>) {
        self.decorate(method, params, None)
    }

    pub fn diagnostics(&self) -> Option<String> {
        self.transport.diagnostics()
    }
}

/// The start of a JSON value, for an example.
pub(super) fn excerpt_of(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(160) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

impl FailureKind {
    /// A failure not tied to one request that the session may ignore while it waits
    /// (a GET stream that could not be resumed, say).
    fn is_recoverable_off_request(self) -> bool {
        !matches!(
            self,
            FailureKind::ProtocolViolation | FailureKind::MessageTooLarge
        )
    }
}

/// A `tools/list` entry annotated `destructiveHint: true` and not `readOnlyHint: true`.
/// (The spec's default for an absent `destructiveHint` is true, but most servers leave
/// annotations out altogether; only an explicit hint counts here.)
pub fn is_destructive(tool: &Value) -> bool {
    let hint = |k: &str| {
        tool.get("annotations")
            .and_then(|a| a.get(k))
            .and_then(Value::as_bool)
    };
    hint("destructiveHint") == Some(true) && hint("readOnlyHint") != Some(true)
}

#[cfg(test)]
mod tests;
