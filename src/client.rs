//! One virtual client's session: connect → handshake (per the persona's era) → scenario
//! steps → close, every phase timed into a sample. A failure is recorded where it
//! happened; failures that leave the connection unusable end the session, others let the
//! scenario go on.

use crate::metrics::{
    Event, FailureKind, Outcome, PersonaId, Phase, Recorder, Sample, SessionOutcome, ToolId,
};
use crate::plan::{EraMode, Persona, Scenario, Step};
use crate::protocol::{methods, Era, VersionId};
use crate::session::{Failure, ResponseCache, Session};
use crate::transport::{Endpoint, TransportKind};
use rand::rngs::SmallRng;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Most pages a list may take before we call it a loop.
const MAX_PAGES: usize = 10_000;

/// What a session needs from the run.
#[derive(Debug, Clone)]
pub struct SessionContext {
    /// Where each persona connects, indexed by persona id.
    pub endpoints: Arc<Vec<Endpoint>>,
    pub recorder: Recorder,
    pub timeout: Duration,
}

/// Times phases for one session and remembers the first failure.
struct Timer<'a> {
    recorder: &'a Recorder,
    persona: PersonaId,
    era: Era,
    version: VersionId,
    first_failure: Option<FailureKind>,
}

impl Timer<'_> {
    fn record(&mut self, phase: Phase, tool: Option<ToolId>, started: Instant, outcome: Outcome) {
        self.recorder.sample(Sample {
            phase,
            persona: self.persona,
            era: self.era,
            version: self.version,
            tool,
            intended: started,
            started,
            finished: Instant::now(),
            outcome,
        });
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
                let kind = f.kind;
                self.record(phase, tool, started, Outcome::Failed(kind));
                self.fail(phase, f, diagnostics());
                Err(kind)
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
    rng: SmallRng,
    cache: &mut ResponseCache,
) -> SessionOutcome {
    let rec = &ctx.recorder;
    rec.send(Event::SessionStarted {
        persona: persona.id,
    });
    let mut timer = Timer {
        recorder: rec,
        persona: persona.id,
        era: match persona.era {
            EraMode::Modern => Era::Modern,
            _ => Era::Legacy,
        },
        version: VersionId::of(persona.protocol_version.as_str()),
        first_failure: None,
    };
    let session_start = Instant::now();

    let t = Instant::now();
    let endpoint = &ctx.endpoints[usize::from(persona.id)];
    let connected = endpoint.connect().await.map_err(Failure::from);
    let Ok(transport) = timer.finish(Phase::Connect, None, t, connected, || None) else {
        return end(&mut timer, session_start, persona.id);
    };
    let mut session = Session::new(transport, ctx.timeout, persona, rec.clone(), rng);

    if handshake(&mut session, &mut timer, persona).await.is_ok() {
        timer.era = session.era();
        timer.version = session.version();
        run_steps(&mut session, &mut timer, scenario, cache).await;
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

/// The era's handshake: legacy `initialize`; modern `server/discover` (falling back to
/// `initialize` when only legacy versions are shared); auto probes first.
async fn handshake(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    persona: &Persona,
) -> Result<(), FailureKind> {
    let legacy = match persona.era {
        EraMode::Legacy => true,
        EraMode::Modern | EraMode::Auto => {
            let probing = persona.era == EraMode::Auto;
            let phase = if probing {
                Phase::Probe
            } else {
                Phase::Discover
            };
            let t = Instant::now();
            let r = session.discover(probing).await;
            timer.era = session.era();
            timer.version = session.version();
            let diag = session.diagnostics();
            let verdict = timer.finish(phase, None, t, r, || diag)?;
            timer.recorder.count(match verdict {
                Era::Modern => "era_modern",
                Era::Legacy => "era_legacy",
            });
            verdict == Era::Legacy
        }
    };
    if !legacy {
        return Ok(());
    }
    timer.era = Era::Legacy;
    let t = Instant::now();
    let r = session.initialize().await;
    timer.version = session.version();
    let diag = session.diagnostics();
    timer.finish(Phase::Initialize, None, t, r, || diag)?;
    let t = Instant::now();
    let r = session.initialized().await;
    let diag = session.diagnostics();
    timer.finish(Phase::Initialized, None, t, r, || diag)?;
    if persona.get_stream && persona.route.transport == TransportKind::StreamableHttp {
        session.open_get_stream().await;
    }
    Ok(())
}

async fn run_steps(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    scenario: &Scenario,
    cache: &mut ResponseCache,
) {
    for step in &scenario.steps {
        // `ping` does not exist in the 2026-07-28 era: skipped like an undeclared
        // capability, not sent to fail.
        let exists = !(matches!(step, Step::Ping) && session.era() == Era::Modern);
        if let Some(cap) = step.required_capability().or((!exists).then_some("")) {
            let declared = exists && session.server.as_ref().is_some_and(|s| s.declares(cap));
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
            Step::List { phase, method } => list_all(session, timer, *phase, method, cache).await,
            Step::CallTool {
                tool,
                name,
                arguments,
            } => call_tool(session, timer, *tool, name, arguments).await,
            Step::ReadResource { uri } => {
                let params = json!({"uri": uri});
                timed(
                    session,
                    timer,
                    Phase::ResourcesRead,
                    methods::RESOURCES_READ,
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
                    methods::PROMPTS_GET,
                    Some(params),
                )
                .await
            }
            Step::Ping => timed(session, timer, Phase::Ping, methods::PING, None).await,
        };
        if let Err(kind) = result {
            if kind.ends_session() {
                return;
            }
        }
        if refetch_changed_lists(session, timer, cache).await.is_err() {
            return;
        }
    }
}

/// Lists the server announced as changed, fetched again (personas that honour it).
async fn refetch_changed_lists(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    cache: &mut ResponseCache,
) -> Result<(), FailureKind> {
    while let Some(method) = session.pending_refetch.pop() {
        cache.invalidate(method);
        let phase = Phase::from_name(method).unwrap_or(Phase::ToolsList);
        timer.recorder.count("list_refetch");
        if let Err(kind) = list_all(session, timer, phase, method, cache).await {
            if kind.ends_session() {
                return Err(kind);
            }
        }
    }
    Ok(())
}

async fn call_tool(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    tool: ToolId,
    name: &str,
    arguments: &Value,
) -> Result<(), FailureKind> {
    let params = json!({"name": name, "arguments": arguments});
    let t = Instant::now();
    match session.request(methods::TOOLS_CALL, Some(params)).await {
        Ok(result) => {
            let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
            let outcome = if is_error {
                Outcome::ToolError
            } else {
                Outcome::Ok
            };
            timer.record(Phase::ToolsCall, Some(tool), t, outcome);
            Ok(())
        }
        Err(f) => {
            let diag = session.diagnostics();
            timer.finish::<()>(Phase::ToolsCall, Some(tool), t, Err(f), || diag)
        }
    }
}

/// One request timed as one phase; the result body is not needed.
async fn timed(
    session: &mut Session<'_>,
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
/// Modern personas that cache serve fresh pages from the cache instead.
async fn list_all(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    phase: Phase,
    method: &'static str,
    cache: &mut ResponseCache,
) -> Result<(), FailureKind> {
    let caching = session.era() == Era::Modern && session.persona().cache;
    let mut cursor: Option<String> = None;
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..MAX_PAGES {
        let cached = caching
            .then(|| cache.get(method, cursor.as_deref()).cloned())
            .flatten();
        let result = match cached {
            Some(hit) => {
                timer.recorder.count("cache_hit");
                hit
            }
            None => {
                let params = cursor.as_ref().map(|c| json!({"cursor": c}));
                let t = Instant::now();
                let r = session.request(method, params).await;
                let diag = session.diagnostics();
                let result = timer.finish(phase, None, t, r, || diag)?;
                if caching {
                    cache.put(method, cursor.as_deref(), &result);
                }
                result
            }
        };
        if method == methods::TOOLS_LIST && session.era() == Era::Modern {
            session.learn_tool_headers(&result);
        }
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
