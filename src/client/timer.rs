//! Where a session's phase samples are recorded: every phase the client times goes
//! through [`Timer::sample`], which knows the era they belong to (an `auto` session's
//! first samples wait for the probe's verdict), when each was meant to start, and the
//! session's first failure. (The session times the phases it runs on its own —
//! answering the server, re-initializing — in `session/mod.rs`.)

use crate::metrics::{
    Event, FailureKind, Origin, Outcome, PersonaId, Phase, Recorder, Sample, SessionOutcome, Span,
    ToolId,
};
use crate::plan::{EraMode, OnError, Persona};
use crate::protocol::{Era, VersionId};
use crate::session::Failure;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::time::Instant;

pub struct Timer<'a> {
    recorder: &'a Recorder,
    /// The session's number in the run ([`Recorder::next_session`]).
    session: u64,
    persona: PersonaId,
    /// `None` until an `auto` session knows its era; samples wait in `held`.
    era: Option<Era>,
    /// The version the session speaks (offered, then negotiated).
    version: VersionId,
    held: Vec<Sample>,
    /// When the next phase was meant to start (the session's intended start for its
    /// first phase; a paced iteration's due time).
    intended: Option<Instant>,
    session_intended: Instant,
    session_started: Instant,
    first_failure: Option<FailureKind>,
    /// `isError` texts sent as examples, per tool: a session sends the first few only,
    /// so a tool that fails on every call costs no allocation per call.
    tool_errors_sent: Vec<(ToolId, u8)>,
    /// The session's outcome was sent (by [`Timer::end`] or for an unreachable session).
    ended: bool,
    /// Set when the timer is dropped unended after a failure: the run's abort cut the
    /// session short (in its close, say), and a session that had failed stays failed.
    failed_when_dropped: Option<&'a AtomicBool>,
}

/// How many `isError` texts one session sends per tool (the report keeps 3 per run).
const TOOL_ERRORS_PER_SESSION: u8 = 3;

impl<'a> Timer<'a> {
    /// The timer of session number `session` of `persona`, meant to start at `intended`.
    pub fn new(
        recorder: &'a Recorder,
        session: u64,
        persona: &Persona,
        intended: Instant,
    ) -> Timer<'a> {
        let era = match persona.era {
            EraMode::Legacy => Some(Era::Legacy),
            EraMode::Modern => Some(Era::Modern),
            EraMode::Auto => None,
        };
        let version = VersionId::of(persona.protocol_version.as_str());
        let mut timer = Timer::starting(recorder, persona.id, era, version, intended);
        timer.session = session;
        timer
    }

    /// A timer for a session that starts now; `era` is `None` until an `auto` session's
    /// probe decides.
    fn starting(
        recorder: &'a Recorder,
        persona: PersonaId,
        era: Option<Era>,
        version: VersionId,
        intended: Instant,
    ) -> Timer<'a> {
        Timer {
            recorder,
            session: 0,
            persona,
            era,
            held: Vec::new(),
            version,
            intended: Some(intended),
            session_intended: intended,
            session_started: Instant::now(),
            first_failure: None,
            tool_errors_sent: Vec::new(),
            ended: false,
            failed_when_dropped: None,
        }
    }

    /// If the session is dropped before it ends (the run's abort), a failure it had
    /// already had is recorded as its outcome (with its `session` sample) and `flag` is
    /// set; without one the caller counts it interrupted.
    pub fn on_drop_failed(&mut self, flag: &'a AtomicBool) {
        self.failed_when_dropped = Some(flag);
    }

    /// The session's outcome was sent by the caller (an unreachable session).
    pub fn ended(&mut self) {
        self.ended = true;
    }

    pub fn recorder(&self) -> &'a Recorder {
        self.recorder
    }

    pub fn persona(&self) -> PersonaId {
        self.persona
    }

    /// The session's number in the run.
    pub fn session(&self) -> u64 {
        self.session
    }

    /// The session's era and version are known (or changed): release held samples
    /// under them.
    pub fn set_era(&mut self, era: Era, version: VersionId) {
        self.era = Some(era);
        self.version = version;
        for mut s in self.held.drain(..) {
            s.era = era;
            s.version = version;
            self.recorder.sample(s);
        }
    }

    /// The pending intended start, taken (a task-augmented call gives it back to its
    /// `tools/call` sample, recorded after the task's own samples).
    pub fn take_intended(&mut self) -> Option<Instant> {
        self.intended.take()
    }

    /// The next phase was meant to start at `due`.
    pub fn intend(&mut self, due: Instant) {
        self.intended = Some(due);
    }

    /// Record one phase: its sample is measured from the pending intended start (if it
    /// is not later than `started`), and held while the era is unknown.
    pub fn sample(
        &mut self,
        phase: Phase,
        tool: Option<ToolId>,
        started: Instant,
        finished: Instant,
        outcome: Outcome,
    ) {
        let intended = self
            .intended
            .take()
            .filter(|i| *i <= started)
            .unwrap_or(started);
        let origin = Origin {
            session: self.session,
            persona: self.persona,
            era: self.era.unwrap_or(Era::Legacy),
            version: self.version,
        };
        let span = Span {
            intended,
            started,
            finished,
        };
        let sample = Sample::new(phase, origin, tool, span, outcome);
        match self.era {
            Some(_) => self.recorder.sample(sample),
            None => self.held.push(sample),
        }
    }

    /// Record `result` for `phase` (finished now); on failure keep an example, with the
    /// session's `diagnostics` (a stdio server's stderr tail) asked for only then, and
    /// return the kind.
    pub fn finish<T>(
        &mut self,
        phase: Phase,
        tool: Option<ToolId>,
        started: Instant,
        result: Result<T, Failure>,
        diagnostics: impl FnOnce() -> Option<String>,
    ) -> Result<T, FailureKind> {
        match result {
            Ok(v) => {
                self.sample(phase, tool, started, Instant::now(), Outcome::Ok);
                Ok(v)
            }
            Err(f) => Err(self.failed(phase, tool, (started, Instant::now()), f, diagnostics())),
        }
    }

    /// A failure of `phase` over `span` (started, finished): its failed sample, an
    /// example, and the session's first failure. The one way a session fails, so a
    /// failed session always has a failure counted in the phase where it happened.
    pub fn failed(
        &mut self,
        phase: Phase,
        tool: Option<ToolId>,
        (started, finished): (Instant, Instant),
        f: Failure,
        diagnostics: Option<String>,
    ) -> FailureKind {
        let kind = f.kind;
        self.sample(phase, tool, started, finished, Outcome::Failed(kind));
        let mut text = example_text(phase.name(), &f.detail);
        if let Some(d) = diagnostics.filter(|_| !text.contains("stderr:")) {
            text.push_str(" | server stderr: ");
            text.push_str(&d);
        }
        self.recorder.send(Event::Example { kind, text });
        self.first_failure.get_or_insert(kind);
        kind
    }

    /// A failure of a scenario step (a list, a call, a read, a prompt, a ping, a task):
    /// counted and kept as an example like any failure, and failing the session exactly
    /// when it ends it ([`ends_session`]). The handshake's failures go through
    /// [`Timer::failed`]: without a handshake there is no session to go on with.
    pub fn step_failed(
        &mut self,
        phase: Phase,
        tool: Option<ToolId>,
        span: (Instant, Instant),
        f: Failure,
        diagnostics: Option<String>,
        on_error: OnError,
    ) -> FailureKind {
        let before = self.first_failure;
        let kind = self.failed(phase, tool, span, f, diagnostics);
        if !ends_session(kind, on_error) {
            self.first_failure = before;
        }
        kind
    }

    /// A `tools/call` of `tool` returned `isError: true`: keep its text (made only for
    /// the first few per session) as an example of why the tool failed.
    pub fn tool_error(&mut self, tool: ToolId, text: impl FnOnce() -> String) {
        let sent = match self.tool_errors_sent.iter_mut().find(|(t, _)| *t == tool) {
            Some((_, n)) => n,
            None => {
                self.tool_errors_sent.push((tool, 0));
                let last = self.tool_errors_sent.len() - 1;
                &mut self.tool_errors_sent[last].1
            }
        };
        if *sent < TOOL_ERRORS_PER_SESSION {
            *sent += 1;
            let text = text();
            self.recorder.send(Event::ToolError { tool, text });
        }
    }

    /// The `session` sample (from its intended start) and the session's outcome.
    pub fn end(mut self) -> SessionOutcome {
        self.finish_session()
    }

    fn finish_session(&mut self) -> SessionOutcome {
        self.ended = true;
        if self.era.is_none() {
            self.set_era(Era::Legacy, self.version);
        }
        let (outcome, sample) = match self.first_failure {
            None => (SessionOutcome::Completed, Outcome::Ok),
            Some(kind) => (SessionOutcome::Failed, Outcome::Failed(kind)),
        };
        self.intended = Some(self.session_intended);
        let started = self.session_started;
        self.sample(Phase::Session, None, started, Instant::now(), sample);
        self.recorder.send(Event::SessionEnded {
            session: self.session,
            persona: self.persona,
            outcome,
        });
        outcome
    }
}

impl Drop for Timer<'_> {
    /// The first failure decides a session's outcome; its close is cleanup. A session
    /// that had failed and was then cut short by the run's end (a close that outlasted
    /// the grace, a stdio server that ignores EOF) is failed, not interrupted.
    fn drop(&mut self) {
        if self.ended || self.first_failure.is_none() {
            return;
        }
        if let Some(flag) = self.failed_when_dropped {
            self.finish_session();
            flag.store(true, Ordering::Relaxed);
        }
    }
}

/// The one rule for whether a scenario step's failure ends the session, failed: a
/// failure the scenario cannot go on after ([`FailureKind::ends_session`]: transport,
/// HTTP status, timeout, protocol, invalid result …) always; a JSON-RPC error (and its
/// kin: `unknown_tool`, `no_value`, `task_failed`) only under `on_error = "end-session"`.
/// The same in every phase, lists and pings as much as calls.
pub fn ends_session(kind: FailureKind, on_error: OnError) -> bool {
    kind.ends_session() || on_error == OnError::EndSession
}

/// A failure's example: `phase: detail`, each part said once. The detail may name the
/// phase already (`tools/call: Unknown tool`, `connect to 127.0.0.1:9: …`, `no answer to
/// initialize within 1s`), and an error may repeat its source's text (`Connection
/// refused (os error 111): Connection refused (os error 111)`); empty trailing parts go.
pub fn example_text(phase: &str, detail: &str) -> String {
    let detail = detail.trim();
    let detail = detail
        .strip_prefix(phase)
        .and_then(|rest| rest.strip_prefix(':'))
        .map(str::trim_start)
        .unwrap_or(detail);
    let detail = detail.replacen(
        &format!("no answer to {phase} within"),
        "no answer within",
        1,
    );
    let mut parts: Vec<&str> = Vec::new();
    for part in detail.split(": ") {
        let part = part.trim_end_matches(':').trim();
        // "HTTP 400 Bad Request: Bad Request: …" says the reason twice too.
        let repeated = parts
            .last()
            .is_some_and(|p| p.to_ascii_lowercase().ends_with(&part.to_ascii_lowercase()));
        if !part.is_empty() && !repeated {
            parts.push(part);
        }
    }
    let detail = parts.join(": ");
    let names_phase = detail
        .strip_prefix(phase)
        .is_some_and(|rest| rest.starts_with(' '));
    match (detail.is_empty(), names_phase) {
        (true, _) => phase.to_string(),
        (false, true) => detail,
        (false, false) => format!("{phase}: {detail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_texts_say_each_part_once() {
        let cases = [
            (
                "initialize",
                "HTTP 404 Not Found: ",
                "initialize: HTTP 404 Not Found",
            ),
            (
                "tools/call",
                "tools/call: Unknown tool: nope (-32602)",
                "tools/call: Unknown tool: nope (-32602)",
            ),
            (
                "initialize",
                "no answer to initialize within 1s",
                "initialize: no answer within 1s",
            ),
            (
                "connect",
                "connect to 127.0.0.1:9: Connection refused (os error 111)",
                "connect to 127.0.0.1:9: Connection refused (os error 111)",
            ),
            (
                "connect",
                "connection refused (os error 111): Connection refused (os error 111)",
                "connect: connection refused (os error 111)",
            ),
            (
                "initialized",
                "HTTP 400 Bad Request: Bad Request: MCP-Protocol-Version is not accepted (-32000)",
                "initialized: HTTP 400 Bad Request: MCP-Protocol-Version is not accepted (-32000)",
            ),
            ("close", "", "close"),
        ];
        for (phase, detail, want) in cases {
            assert_eq!(example_text(phase, detail), want, "{phase} / {detail}");
        }
    }
    use crate::metrics::Collector;
    use crate::protocol::TransportKind;
    use std::cell::Cell;

    #[tokio::test]
    async fn diagnostics_are_asked_for_only_when_a_phase_fails() {
        let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 0);
        let stats = tokio::spawn(collector.run());
        let asked = Cell::new(0);
        let diagnostics = || {
            asked.set(asked.get() + 1);
            Some("stderr tail".to_string())
        };
        let mut timer =
            Timer::starting(&rec, 0, Some(Era::Legacy), VersionId::OTHER, Instant::now());
        let ok: Result<(), Failure> = Ok(());
        assert!(timer
            .finish(Phase::Ping, None, Instant::now(), ok, diagnostics)
            .is_ok());
        assert_eq!(
            asked.get(),
            0,
            "a successful phase must not read diagnostics"
        );
        let failed: Result<(), Failure> = Err(Failure::new(FailureKind::Timeout, "slow"));
        let kind = timer.finish(Phase::Ping, None, Instant::now(), failed, diagnostics);
        assert_eq!(kind, Err(FailureKind::Timeout));
        assert_eq!(asked.get(), 1);
        assert_eq!(timer.end(), SessionOutcome::Failed);
        drop(rec);
        let stats = stats.await.expect("collector");
        assert_eq!(stats.phases.get(Phase::Ping).count(), 2);
    }

    #[tokio::test]
    async fn a_session_sends_the_first_few_tool_error_texts_per_tool() {
        let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 2);
        let stats = tokio::spawn(collector.run());
        let mut timer =
            Timer::starting(&rec, 0, Some(Era::Legacy), VersionId::OTHER, Instant::now());
        let made = Cell::new(0);
        for i in 0..5 {
            timer.tool_error(0, || {
                made.set(made.get() + 1);
                format!("no such city #{i}")
            });
        }
        timer.tool_error(1, || "other tool".to_string());
        assert_eq!(made.get(), 3, "texts are made only for the first few");
        timer.end();
        drop(rec);
        let stats = stats.await.expect("collector");
        assert_eq!(stats.tool_error_examples[&0].len(), 3);
        assert_eq!(
            stats.tool_error_examples[&1],
            vec!["other tool".to_string()]
        );
    }

    #[tokio::test]
    async fn a_step_fails_the_session_by_its_kind_and_on_error_alone() {
        use FailureKind::{HttpStatus, RpcError, UnknownTool};
        let cases = [
            (HttpStatus(500), OnError::Continue, SessionOutcome::Failed),
            (
                RpcError(-32601),
                OnError::Continue,
                SessionOutcome::Completed,
            ),
            (UnknownTool, OnError::Continue, SessionOutcome::Completed),
            (
                RpcError(-32601),
                OnError::EndSession,
                SessionOutcome::Failed,
            ),
        ];
        let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 0);
        let stats = tokio::spawn(collector.run());
        for (kind, on_error, outcome) in cases {
            let mut timer =
                Timer::starting(&rec, 0, Some(Era::Legacy), VersionId::OTHER, Instant::now());
            let t = Instant::now();
            let f = Failure::new(kind, "x");
            // A list as much as a call: the phase has no say.
            timer.step_failed(Phase::PromptsList, None, (t, t), f, None, on_error);
            assert_eq!(timer.end(), outcome, "{kind:?} {on_error:?}");
        }
        drop(rec);
        stats.await.expect("collector");
    }

    #[tokio::test]
    async fn a_failure_is_a_failed_sample_of_its_phase() {
        let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 0);
        let stats = tokio::spawn(collector.run());
        let mut timer =
            Timer::starting(&rec, 0, Some(Era::Legacy), VersionId::OTHER, Instant::now());
        let t = Instant::now();
        let f = Failure::new(FailureKind::ProtocolViolation, "cursor twice");
        timer.failed(Phase::ToolsList, None, (t, Instant::now()), f, None);
        assert_eq!(timer.end(), SessionOutcome::Failed);
        drop(rec);
        let stats = stats.await.expect("collector");
        assert_eq!(
            stats.failures().get(&FailureKind::ProtocolViolation),
            Some(&1)
        );
        assert_eq!(stats.phases.get(Phase::ToolsList).errors(), 1);
    }

    #[tokio::test]
    async fn an_auto_session_holds_its_samples_until_the_era_is_known() {
        let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 0);
        let stats = tokio::spawn(collector.run());
        let intended = Instant::now();
        let mut timer = Timer::starting(&rec, 0, None, VersionId::OTHER, intended);
        let t = Instant::now();
        timer.sample(Phase::Probe, None, t, Instant::now(), Outcome::Ok);
        assert_eq!(timer.held.len(), 1);
        assert_eq!(
            timer.held[0].intended, intended,
            "measured from the intended start"
        );
        timer.set_era(Era::Modern, VersionId::of("2026-07-28"));
        assert!(timer.held.is_empty());
        timer.end();
        drop(rec);
        let stats = stats.await.expect("collector");
        assert_eq!(stats.by_era[&Era::Modern].get(Phase::Probe).count(), 1);
        assert!(!stats.by_era.contains_key(&Era::Legacy));
    }
}
