//! Times a session's phases into samples: which era they belong to (an `auto` session's
//! first samples wait for the probe's verdict), when each was meant to start, and the
//! session's first failure.

use crate::metrics::{
    Event, FailureKind, Outcome, PersonaId, Phase, Recorder, Sample, SessionOutcome, ToolId,
};
use crate::plan::{EraMode, Persona};
use crate::protocol::{Era, VersionId};
use crate::session::Failure;
use tokio::time::Instant;

pub struct Timer<'a> {
    recorder: &'a Recorder,
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
}

impl<'a> Timer<'a> {
    pub fn new(recorder: &'a Recorder, persona: &Persona, intended: Instant) -> Timer<'a> {
        Timer {
            recorder,
            persona: persona.id,
            era: match persona.era {
                EraMode::Legacy => Some(Era::Legacy),
                EraMode::Modern => Some(Era::Modern),
                EraMode::Auto => None,
            },
            held: Vec::new(),
            version: VersionId::of(persona.protocol_version.as_str()),
            intended: Some(intended),
            session_intended: intended,
            session_started: Instant::now(),
            first_failure: None,
        }
    }

    pub fn recorder(&self) -> &'a Recorder {
        self.recorder
    }

    pub fn persona(&self) -> PersonaId {
        self.persona
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

    /// The next phase was meant to start at `due`.
    pub fn intend(&mut self, due: Instant) {
        self.intended = Some(due);
    }

    pub fn record(
        &mut self,
        phase: Phase,
        tool: Option<ToolId>,
        started: Instant,
        outcome: Outcome,
    ) {
        self.record_at(phase, tool, started, Instant::now(), outcome);
    }

    pub fn record_at(
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
        let sample = Sample {
            phase,
            persona: self.persona,
            era: self.era.unwrap_or(Era::Legacy),
            version: self.version,
            tool,
            intended,
            started,
            finished,
            outcome,
        };
        match self.era {
            Some(_) => self.recorder.sample(sample),
            None => self.held.push(sample),
        }
    }

    /// Record `result` for `phase`; on failure keep an example and return the kind.
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
                self.record(phase, tool, started, Outcome::Ok);
                Ok(v)
            }
            Err(f) => {
                let kind = f.kind;
                self.record(phase, tool, started, Outcome::Failed(kind));
                self.fail(phase, f, diagnostics());
                Err(kind)
            }
        }
    }

    pub fn fail(&mut self, phase: Phase, f: Failure, diagnostics: Option<String>) {
        let mut text = format!("{}: {}", phase.name(), f.detail);
        if let Some(d) = diagnostics.filter(|_| !text.contains("stderr:")) {
            text.push_str(" | server stderr: ");
            text.push_str(&d);
        }
        self.recorder.send(Event::Example { kind: f.kind, text });
        self.first_failure.get_or_insert(f.kind);
    }

    /// The `session` sample (from its intended start) and the session's outcome.
    pub fn end(mut self) -> SessionOutcome {
        if self.era.is_none() {
            self.set_era(Era::Legacy, self.version);
        }
        let (outcome, sample) = match self.first_failure {
            None => (SessionOutcome::Completed, Outcome::Ok),
            Some(kind) => (SessionOutcome::Failed, Outcome::Failed(kind)),
        };
        self.intended = Some(self.session_intended);
        self.record(Phase::Session, None, self.session_started, sample);
        self.recorder.send(Event::SessionEnded {
            persona: self.persona,
            outcome,
        });
        outcome
    }
}
