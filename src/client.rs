//! One virtual client's session: connect → handshake → scenario steps → close, every
//! phase timed into a sample. A failure is recorded where it happened; failures that
//! leave the connection unusable end the session, others let the scenario go on.

use crate::metrics::{
    Event, FailureKind, Outcome, PersonaId, Phase, Recorder, SessionOutcome, ToolId,
};
use crate::plan::{Persona, Scenario, Step};
use crate::session::{Failure, Session};
use crate::transport::Endpoint;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// Most pages a list may take before we call it a loop.
const MAX_PAGES: usize = 10_000;

/// What a session needs from the run.
#[derive(Debug, Clone)]
pub struct SessionContext {
    pub endpoint: Endpoint,
    pub recorder: Recorder,
    pub timeout: Duration,
}

/// Times phases for one session and remembers the first failure.
struct Timer<'a> {
    recorder: &'a Recorder,
    persona: PersonaId,
    first_failure: Option<FailureKind>,
}

impl Timer<'_> {
    fn record(&mut self, phase: Phase, tool: Option<ToolId>, started: Instant, outcome: Outcome) {
        self.recorder.sample(
            phase,
            self.persona,
            tool,
            started,
            started,
            Instant::now(),
            outcome,
        );
    }

    /// Record `result` for `phase`; on failure keep an example and return the kind.
    fn finish<T>(
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
                self.record(phase, tool, started, Outcome::Failed(f.kind));
                self.fail(phase, f, diagnostics());
                Err(self.first_failure.unwrap_or(FailureKind::Io))
            }
        }
    }

    fn fail(&mut self, phase: Phase, f: Failure, diagnostics: Option<String>) {
        let mut text = format!("{}: {}", phase.name(), f.detail);
        if let Some(d) = diagnostics.filter(|_| !text.contains("stderr:")) {
            text.push_str(" | server stderr: ");
            text.push_str(&d);
        }
        self.recorder.send(Event::Example { kind: f.kind, text });
        self.first_failure.get_or_insert(f.kind);
    }
}

/// Run one whole session and report how it ended (samples are recorded as it goes).
pub async fn run_session(
    ctx: &SessionContext,
    persona: &Persona,
    scenario: &Scenario,
) -> SessionOutcome {
    let rec = &ctx.recorder;
    rec.send(Event::SessionStarted {
        persona: persona.id,
    });
    let mut timer = Timer {
        recorder: rec,
        persona: persona.id,
        first_failure: None,
    };
    let session_start = Instant::now();

    let t = Instant::now();
    let connected = ctx.endpoint.connect().await.map_err(Failure::from);
    let Ok(transport) = timer.finish(Phase::Connect, None, t, connected, || None) else {
        return end(&mut timer, session_start, persona.id);
    };
    let mut session = Session::new(transport, ctx.timeout, persona.id, rec.clone());

    if handshake(&mut session, &mut timer, persona).await.is_ok() {
        run_steps(&mut session, &mut timer, scenario).await;
    }

    let t = Instant::now();
    let closed = session.close().await;
    let _ = timer.finish(Phase::Close, None, t, closed, || None);
    end(&mut timer, session_start, persona.id)
}

fn end(timer: &mut Timer<'_>, session_start: Instant, persona: PersonaId) -> SessionOutcome {
    let (outcome, sample) = match timer.first_failure {
        None => (SessionOutcome::Completed, Outcome::Ok),
        Some(kind) => (SessionOutcome::Failed, Outcome::Failed(kind)),
    };
    timer.record(Phase::Session, None, session_start, sample);
    timer
        .recorder
        .send(Event::SessionEnded { persona, outcome });
    outcome
}

async fn handshake(
    session: &mut Session,
    timer: &mut Timer<'_>,
    persona: &Persona,
) -> Result<(), FailureKind> {
    let t = Instant::now();
    let r = session.initialize(persona).await;
    let diag = session.diagnostics();
    timer.finish(Phase::Initialize, None, t, r, || diag)?;
    let t = Instant::now();
    let r = session.initialized().await;
    let diag = session.diagnostics();
    timer.finish(Phase::Initialized, None, t, r, || diag)
}

async fn run_steps(session: &mut Session, timer: &mut Timer<'_>, scenario: &Scenario) {
    for step in &scenario.steps {
        if let Some(cap) = step.required_capability() {
            let declared = session.server.as_ref().is_some_and(|s| s.declares(cap));
            if !declared {
                if let Some(phase) = step.phase() {
                    timer.recorder.send(Event::Skipped {
                        persona: timer.persona,
                        phase,
                    });
                }
                continue;
            }
        }
        let result = match step {
            Step::Pause(d) => {
                tokio::time::sleep(*d).await;
                Ok(())
            }
            Step::List { phase, method } => list_all(session, timer, *phase, method).await,
            Step::CallTool {
                tool,
                name,
                arguments,
            } => {
                let params = json!({"name": name, "arguments": arguments});
                let t = Instant::now();
                match session
                    .request(crate::protocol::methods::TOOLS_CALL, Some(params))
                    .await
                {
                    Ok(result) => {
                        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
                        let outcome = if is_error {
                            Outcome::ToolError
                        } else {
                            Outcome::Ok
                        };
                        timer.record(Phase::ToolsCall, Some(*tool), t, outcome);
                        Ok(())
                    }
                    Err(f) => {
                        let diag = session.diagnostics();
                        timer.finish::<()>(Phase::ToolsCall, Some(*tool), t, Err(f), || diag)
                    }
                }
            }
            Step::ReadResource { uri } => {
                let params = json!({"uri": uri});
                timed(
                    session,
                    timer,
                    Phase::ResourcesRead,
                    crate::protocol::methods::RESOURCES_READ,
                    Some(params),
                )
                .await
            }
            Step::GetPrompt { name, arguments } => {
                let params = json!({"name": name, "arguments": arguments});
                timed(
                    session,
                    timer,
                    Phase::PromptsGet,
                    crate::protocol::methods::PROMPTS_GET,
                    Some(params),
                )
                .await
            }
            Step::Ping => {
                timed(
                    session,
                    timer,
                    Phase::Ping,
                    crate::protocol::methods::PING,
                    None,
                )
                .await
            }
        };
        if let Err(kind) = result {
            if kind.ends_session() {
                return;
            }
        }
    }
}

/// One request timed as one phase; the result body is not needed.
async fn timed(
    session: &mut Session,
    timer: &mut Timer<'_>,
    phase: Phase,
    method: &str,
    params: Option<Value>,
) -> Result<(), FailureKind> {
    let t = Instant::now();
    let r = session.request(method, params).await;
    let diag = session.diagnostics();
    timer.finish(phase, None, t, r, || diag).map(drop)
}

/// A paginated list, followed to the last page; each page is one sample of `phase`.
async fn list_all(
    session: &mut Session,
    timer: &mut Timer<'_>,
    phase: Phase,
    method: &str,
) -> Result<(), FailureKind> {
    let mut cursor: Option<String> = None;
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({"cursor": c}));
        let t = Instant::now();
        let r = session.request(method, params).await;
        let diag = session.diagnostics();
        let result = timer.finish(phase, None, t, r, || diag)?;
        let next = result
            .get("nextCursor")
            .and_then(Value::as_str)
            .filter(|c| !c.is_empty());
        match next {
            None => return Ok(()),
            Some(c) if seen.iter().any(|s| s == c) => {
                let f = Failure::new(
                    FailureKind::ProtocolViolation,
                    format!("{method}: the server returned cursor {c:?} twice (pagination loops)"),
                );
                timer.fail(phase, f, None);
                return Err(FailureKind::ProtocolViolation);
            }
            Some(c) => {
                seen.push(c.to_string());
                cursor = Some(c.to_string());
            }
        }
    }
    let f = Failure::new(
        FailureKind::ProtocolViolation,
        format!("{method}: more than {MAX_PAGES} pages"),
    );
    timer.fail(phase, f, None);
    Err(FailureKind::ProtocolViolation)
}
