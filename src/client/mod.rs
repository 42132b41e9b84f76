//! One virtual client's sessions: pick a persona and scenario (seeded), connect,
//! handshake per the persona's era, run the scenario once (churn) or for the whole run
//! (long-lived), close — every phase timed into a sample. A failure is recorded where
//! it happened; failures that leave the connection unusable end the session, others let
//! the scenario go on. A session whose connect phase fails never reached the server: it
//! ends as unreachable, with no `session` sample, so a dead target's instant failures
//! do not pass for sessions per second. [`FleetWork`] is what the fleet's scheduler runs.

pub mod arguments;
pub mod auth;
mod env;
mod faults;
mod long_lived;
mod memory;
mod steps;
mod tasks;
mod timer;
mod tool_result;
mod work;

pub use env::CallData;
pub use long_lived::FleetPace;
pub use memory::ClientMemory;
pub use work::{LiveSession, StopSignals, StormSignal, Work};

use crate::metrics::{
    Counter, Event, Origin, Outcome, Phase, Recorder, Sample, SessionOutcome, Span,
};
use crate::plan::{EraMode, Persona, Plan, Scenario, Shape};
use crate::protocol::TransportKind;
use crate::protocol::{Era, VersionId};
use crate::session::{Failure, Session};
use crate::transport::Endpoint;
use rand::distr::Distribution;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use timer::Timer;
use tokio::time::Instant;

/// What sessions need from the run.
#[derive(Debug, Clone)]
pub struct SessionContext {
    /// Where each persona connects, indexed by persona id.
    pub endpoints: Arc<Vec<Endpoint>>,
    pub recorder: Recorder,
    pub timeout: Duration,
    /// Cross-session conformance state and options.
    pub conformance: Arc<crate::conformance::Tracker>,
    /// `inspect`: record every message of the session here.
    pub transcript: Option<crate::session::Transcript>,
    /// `[data]` pools and `[arguments]`, for the calls of the scenarios.
    pub calls: CallData,
    /// The personas' bearer tokens (`auth = {...}`).
    pub auth: Arc<auth::Credentials>,
    /// `[load] iteration_rate` (`-q`): the schedule long-lived sessions share.
    pub pace: Option<Arc<long_lived::FleetPace>>,
    /// The numbered changes the run's listeners have seen (`subscriptions/listen`).
    pub changes: Arc<crate::session::ChangeLog>,
}

/// The real work of the fleet: MCP sessions as the plan describes them.
pub struct FleetWork {
    pub plan: Arc<Plan>,
    pub ctx: SessionContext,
}

impl Work for FleetWork {
    async fn session(
        &self,
        intended: Instant,
        rng: &mut SmallRng,
        memory: &mut ClientMemory,
        stop: &StopSignals,
    ) -> SessionOutcome {
        let plan = &self.plan;
        // Drawn by weight, or with set arrivals arrival k's own: the open loop numbers
        // each client's memory by its arrival.
        let persona = plan.session_persona(memory.client(), rng);
        let scenario_index = persona.scenarios[persona.scenario_weights.sample(rng)];
        let scenario = &plan.scenarios[scenario_index];
        // Each session gets its own generator, drawn from the client's, so answers and
        // arguments repeat with the seed whatever the scheduling.
        let session_rng = SmallRng::from_rng(rng);
        // Boxed: the session's state machine is large, and select! would move it by value
        // twice per session (callgrind: two memcpys of ~11k instructions each, 11% of the
        // generator's user-space instructions in handshake churn); boxing leaves one.
        let failed = AtomicBool::new(false);
        let number = self.ctx.recorder.next_session();
        let mut session = Box::pin(run_session(
            &self.ctx,
            number,
            persona,
            scenario,
            session_rng,
            memory,
            intended,
            stop,
            Some(&failed),
        ));
        tokio::select! {
            o = &mut session => o,
            () = stop.abort.cancelled() => {
                // Dropping the session drops its timer, which records a failure the
                // session had already had as its outcome (the first failure decides).
                drop(session);
                if failed.load(Ordering::Relaxed) {
                    return SessionOutcome::Failed;
                }
                self.ctx.recorder.send(Event::SessionEnded {
                    session: number,
                    persona: persona.id,
                    outcome: SessionOutcome::Interrupted,
                });
                SessionOutcome::Interrupted
            }
        }
    }

    fn started_late(&self, intended: Instant, actual: Instant) {
        // Fleet-level: no persona is chosen yet.
        let span = Span {
            intended,
            started: intended,
            finished: actual,
        };
        let lag = Sample::new(Phase::Lag, Origin::FLEET, None, span, Outcome::Ok);
        self.ctx.recorder.sample(lag);
    }

    fn dropped(&self) {
        self.ctx.recorder.count(Counter::Dropped);
    }
}

/// Run one whole session, number `number` of the run ([`Recorder::next_session`]), and
/// report how it ended (samples are recorded as it goes). `intended` is when the
/// schedule wanted it to start: the `connect` and `session` response times are measured
/// from there.
#[allow(
    clippy::too_many_arguments,
    reason = "what a session runs with, each from a different owner; bundling them would only move the list"
)]
pub async fn run_session(
    ctx: &SessionContext,
    number: u64,
    persona: &Persona,
    scenario: &Scenario,
    mut rng: SmallRng,
    memory: &mut ClientMemory,
    intended: Instant,
    stop: &StopSignals,
    failed_when_cut: Option<&AtomicBool>,
) -> SessionOutcome {
    // Drawn first, and only when asked for, so runs without `abandon` keep their seeds'
    // choices.
    let share = persona.habits.abandon;
    let abandons = share > 0.0 && rng.random::<f64>() < share;
    let fault = faults::draw(persona, &mut rng);
    let rec = &ctx.recorder;
    rec.send(Event::SessionStarted {
        persona: persona.id,
    });
    let mut timer = Timer::new(rec, number, persona, intended);
    if let Some(flag) = failed_when_cut {
        timer.on_drop_failed(flag);
    }

    let endpoint = &ctx.endpoints[usize::from(persona.id)];
    let client = memory.client();
    // The rarely-used or short-lived steps below are boxed: a future's size is that of
    // its largest state, and inline they would make every long-lived session hold
    // their bytes for its whole life (heaptrack: `results/BENCHMARKS.md`, issue 12).
    let bearer = match ctx.auth.ready(persona, client) {
        Some(bearer) => bearer,
        None => match Box::pin(ctx.auth.bearer(persona, client, endpoint, &mut timer)).await {
            Ok(bearer) => bearer,
            // Metadata or a token endpoint that answered wrong reached a server: a failed
            // session (the server's or the persona's configuration), never an outage.
            Err(
                crate::metrics::FailureKind::HttpStatus(_)
                | crate::metrics::FailureKind::ProtocolViolation,
            ) => return timer.end(),
            Err(_) => return unreachable(timer, persona),
        },
    };
    timer.intend(intended);
    let t = Instant::now();
    let connected = Box::pin(endpoint.connect_as(bearer.clone()))
        .await
        .map_err(Failure::from);
    let transport = match timer.finish(Phase::Connect, None, t, connected, || None) {
        Ok(transport) => transport,
        Err(kind) => {
            if kind == crate::metrics::FailureKind::HttpStatus(401) {
                Box::pin(
                    ctx.auth
                        .unauthorized(persona, endpoint, bearer.as_ref(), &mut timer),
                )
                .await;
            }
            // A refused WebSocket upgrade or SSE GET (401, 403, 404 …) reached the
            // server: a failed session, not an unreachable one.
            if matches!(kind, crate::metrics::FailureKind::HttpStatus(_)) {
                return timer.end();
            }
            return unreachable(timer, persona);
        }
    };
    let mut session = Session::new(transport, ctx.timeout, persona, rec.clone(), rng);
    session.set_number(number);
    session.set_tracker(ctx.conformance.clone());
    if let Some(t) = &ctx.transcript {
        session.observe(t.clone());
    }

    let mut env = env::Env {
        data: &ctx.calls,
        memory,
        vars: steps::variables(scenario),
    };
    let mut stormed = false;
    let reconnect = faults::Reconnect {
        endpoint,
        bearer: bearer.clone(),
    };
    let started = Box::pin(faults::start(
        fault,
        ctx,
        &reconnect,
        &mut session,
        &mut timer,
        persona,
    ))
    .await;
    if started == Err(crate::metrics::FailureKind::HttpStatus(401)) {
        Box::pin(
            ctx.auth
                .unauthorized(persona, endpoint, bearer.as_ref(), &mut timer),
        )
        .await;
    }
    if started == Ok(true) {
        timer.set_era(session.era(), session.version());
        session.judge_extensions();
        if persona.listen.is_some() {
            Box::pin(session.start_listening(ctx.changes.clone())).await;
        }
        match persona.shape {
            Shape::Churn => {
                let done = Box::pin(steps::run(&mut session, &mut timer, scenario, &mut env)).await;
                if done.is_ok() {
                    Box::pin(probe_undeclared(ctx, persona, &mut session)).await;
                }
            }
            Shape::LongLived { pace } => {
                // Before the scenario: a long-lived session ends only when the run drains.
                Box::pin(probe_undeclared(ctx, persona, &mut session)).await;
                let (live, mut storm) = stop.storm.established();
                let habits = &persona.habits;
                let pace = match (pace, ctx.pace.as_deref()) {
                    (Some(rate), _) => long_lived::Pace::Own(rate),
                    (None, Some(fleet)) => long_lived::Pace::Fleet(fleet),
                    (None, None) => long_lived::Pace::Free,
                };
                let lived = long_lived::run(
                    &mut session,
                    &mut timer,
                    scenario,
                    &mut env,
                    pace,
                    habits,
                    stop,
                );
                tokio::select! {
                    () = lived => {}
                    Ok(()) = storm.changed() => stormed = true,
                }
                drop(live);
                if !stormed && stop.drain.is_cancelled() && !stop.close_spread.is_zero() {
                    // Drained: close at our own moment of the spread (see `close_spread`).
                    let at = stop.close_spread.mul_f64(session.rng().random::<f64>());
                    tokio::select! {
                        () = tokio::time::sleep(at) => {}
                        () = stop.abort.cancelled() => {}
                    }
                }
            }
        }
    }
    timer.set_era(session.era(), session.version());
    if stormed || abandons {
        // No goodbye and no `close` sample: the connection just goes away.
        rec.count(if stormed {
            Counter::StormDropped
        } else {
            Counter::Abandoned
        });
        session.abandon();
    } else {
        let t = Instant::now();
        let closed = Box::pin(session.close()).await;
        let _ = timer.finish(Phase::Close, None, t, closed, || None);
    }
    timer.end()
}

/// End a session that could not connect (or spawn): its `connect` failure is counted
/// and kept as an example like any failure, but it has no `session` sample, because the
/// session never reached the server.
fn unreachable(mut timer: Timer<'_>, persona: &Persona) -> SessionOutcome {
    // An `auto` session holds its samples until the era is known, and this one never
    // will be: release the connect sample under the era `Timer::end` would use.
    let offered = VersionId::of(persona.protocol_version.as_str());
    timer.set_era(Era::Legacy, offered);
    timer.ended();
    timer.recorder().send(Event::SessionEnded {
        session: timer.session(),
        persona: persona.id,
        outcome: SessionOutcome::Unreachable,
    });
    SessionOutcome::Unreachable
}

/// The probe of undeclared capabilities: every session with `--probe-undeclared`, else
/// once per run and target (the first session that gets here), so a default run notices
/// a forgotten `"tools": {}` for the price of three requests.
async fn probe_undeclared(ctx: &SessionContext, persona: &Persona, session: &mut Session<'_>) {
    if ctx.conformance.probe_undeclared {
        steps::probe_undeclared(session, steps::Probe::EverySession).await;
    } else if ctx.conformance.first_probe(&persona.route) {
        steps::probe_undeclared(session, steps::Probe::OncePerTarget).await;
    }
}

/// `auto`'s legacy fallback after a probe that went unanswered on stdio gets a fresh
/// server process: the old one, reading the probe late, would lock itself to the modern
/// era and refuse the `initialize` behind it. Only a failure is a sample (`connect`): the
/// session's connect sample is its first spawn's.
async fn fresh_for_fallback(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    reconnect: &faults::Reconnect<'_>,
) -> Result<(), crate::metrics::FailureKind> {
    if !session.needs_fresh_transport() {
        return Ok(());
    }
    let t = Instant::now();
    match Box::pin(reconnect.connect()).await {
        Ok(transport) => {
            session.replace_transport(transport);
            Ok(())
        }
        Err(e) => Err(timer.failed(Phase::Connect, None, (t, Instant::now()), e.into(), None)),
    }
}

/// The era's handshake: legacy `initialize`; modern `server/discover` (falling back to
/// `initialize` when only legacy versions are shared); auto probes first, and takes a
/// -32022 to its fallback `initialize` for what it is: a connection that speaks only the
/// modern era (a modern-only server, or one of both eras that read the probe after all
/// and locked itself to it), so it probes once more instead of failing.
async fn handshake(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    persona: &Persona,
    reconnect: &faults::Reconnect<'_>,
) -> Result<(), crate::metrics::FailureKind> {
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
            timer.set_era(session.era(), session.version());
            let verdict = timer.finish(phase, None, t, r, || session.diagnostics())?;
            timer.recorder().count(match verdict {
                Era::Modern => Counter::EraModern,
                Era::Legacy => Counter::EraLegacy,
            });
            verdict == Era::Legacy
        }
    };
    if !legacy {
        return Ok(());
    }
    fresh_for_fallback(session, timer, reconnect).await?;
    timer.set_era(Era::Legacy, session.version());
    let t = Instant::now();
    let r = match session.initialize().await {
        Err(f)
            if persona.era == EraMode::Auto
                && f.kind
                    == crate::metrics::FailureKind::RpcError(
                        crate::protocol::jsonrpc::codes::UNSUPPORTED_PROTOCOL_VERSION,
                    ) =>
        {
            // Timed as the probe it turns out to be, from the refused initialize.
            if let Ok(Era::Modern) = Box::pin(session.discover(true)).await {
                timer.set_era(session.era(), session.version());
                timer.finish(Phase::Probe, None, t, Ok(()), || None)?;
                timer.recorder().count(Counter::EraModern);
                return Ok(());
            }
            Err(f)
        }
        r => r,
    };
    timer.finish(Phase::Initialize, None, t, r, || session.diagnostics())?;
    let t = Instant::now();
    let r = session.initialized().await;
    timer.finish(Phase::Initialized, None, t, r, || session.diagnostics())?;
    if persona.get_stream && persona.route.transport == TransportKind::StreamableHttp {
        session.open_get_stream().await;
    }
    Ok(())
}
