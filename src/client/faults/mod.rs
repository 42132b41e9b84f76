//! Buggy clients: a session of a persona with `faults = [...]` draws the one fault it
//! commits, commits it at its point (instead of `initialize`, around
//! `notifications/initialized`, or once the session is established), judges how the
//! server took it ([`classify`]) and reports the verdict: an `Event::ClientFault`, the
//! `client_faults` counter, and a `robustness.*` finding for anything but `handled`.
//! A server that crashed or hung fails the session; a handled fault does not.

mod after;
mod classify;
mod message;
mod wire;

pub use classify::{classify, Health, Seen};

use super::timer::Timer;
use super::SessionContext;
use crate::conformance::Check;
use crate::metrics::{ClientFault, Counter, Event, FailureKind, FaultEra, Phase, Verdict};
use crate::plan::{EraMode, Persona};
use crate::protocol::Era;
use crate::session::{Failure, Session};
use crate::transport::Endpoint;
use rand::rngs::SmallRng;
use rand::Rng;
use tokio::time::Instant;

/// How a fault's health check opens another connection to the same server: the
/// session's endpoint with the session's own bearer token.
pub(super) struct Reconnect<'a> {
    pub endpoint: &'a Endpoint,
    pub bearer: Option<http::HeaderValue>,
}

impl Reconnect<'_> {
    pub async fn connect(
        &self,
    ) -> Result<crate::transport::Transport, crate::transport::TransportError> {
        self.endpoint.connect_as(self.bearer.clone()).await
    }
}

/// The fault this session commits, if any. Drawn only when the persona has faults, so
/// every other seed keeps its choices.
pub fn draw(persona: &Persona, rng: &mut SmallRng) -> Option<ClientFault> {
    if persona.faults.is_empty() {
        return None;
    }
    persona.faults.pick(rng.random::<f64>())
}

/// The session's start: the handshake, with `fault` committed where it belongs. Returns
/// whether the scenario goes on, or how the regular handshake failed (a 401 starts the
/// authorization discovery).
pub(super) async fn start(
    fault: Option<ClientFault>,
    ctx: &SessionContext,
    endpoint: &Reconnect<'_>,
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    persona: &Persona,
) -> Result<bool, FailureKind> {
    let Some(fault) = fault else {
        return super::handshake(session, timer, persona, endpoint)
            .await
            .map(|()| true);
    };
    // The faults' own steps are boxed: their states are large (a second connection,
    // extra exchanges), and inline every session's start would carry and move them,
    // faulty or not (results/BENCHMARKS.md, issue 15: future sizes).
    if message::initialize(fault, 0, &persona.initialize_params).is_some() {
        return Ok(Box::pin(handshake_fault(fault, session, timer, persona, endpoint)).await);
    }
    if matches!(
        fault,
        ClientFault::BeforeInitialized | ClientFault::NeverInitialized
    ) {
        return Ok(Box::pin(lifecycle_fault(fault, session, timer, persona, endpoint)).await);
    }
    super::handshake(session, timer, persona, endpoint).await?;
    if fault.era() == FaultEra::Modern && session.era() != Era::Modern {
        return Ok(true); // an `auto` session that ended up legacy: not committed
    }
    let Some(c) = Box::pin(after::commit(
        fault,
        session,
        endpoint,
        persona,
        &ctx.recorder,
    ))
    .await
    else {
        return Ok(true);
    };
    let verdict = report(fault, session, timer, &c.seen, &c.health);
    Ok(c.usable && !matches!(verdict, Verdict::Crashed | Verdict::Hung))
}

/// The probe of an `auto` persona, then the legacy era set; `Err(go_on)` when the session
/// is no legacy one: modern (the fault is not committed, the scenario goes on) or failed.
async fn legacy(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    persona: &Persona,
    endpoint: &Reconnect<'_>,
) -> Result<(), bool> {
    match probe(session, timer, persona).await {
        Probed::Legacy => {
            super::fresh_for_fallback(session, timer, endpoint)
                .await
                .map_err(|_| false)?;
            timer.set_era(Era::Legacy, session.version());
            Ok(())
        }
        Probed::Modern => Err(true),
        Probed::Failed => Err(false),
    }
}

/// A faulty `initialize`; then a correct one (or, if the server went along, a `ping`)
/// tells whether the server still serves. The session ends after it.
async fn handshake_fault(
    fault: ClientFault,
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    persona: &Persona,
    endpoint: &Reconnect<'_>,
) -> bool {
    if let Err(go_on) = legacy(session, timer, persona, endpoint).await {
        return go_on;
    }
    let id = session.fresh_id();
    let Some(bytes) = message::initialize(fault, id, &persona.initialize_params) else {
        return false;
    };
    let wait = session.timeout();
    let seen = wire::exchange(session, id, bytes, &[], wait).await;
    let health = match &seen {
        Seen::Closed(_) | Seen::Silence => Health::Serves,
        Seen::Result(_) => wire::ping(session).await,
        _ => {
            session.transport_mut().reset_session();
            match wire::handshake(session, Era::Legacy).await {
                Ok(()) => Health::Serves,
                Err(why) => Health::Fails(why),
            }
        }
    };
    report(fault, session, timer, &seen, &health);
    false
}

/// `initialize` (timed as usual), then a request before `notifications/initialized`
/// (which is then sent), or instead of it (never sent).
async fn lifecycle_fault(
    fault: ClientFault,
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    persona: &Persona,
    endpoint: &Reconnect<'_>,
) -> bool {
    if let Err(go_on) = legacy(session, timer, persona, endpoint).await {
        return go_on;
    }
    let t = Instant::now();
    let r = session.initialize().await;
    if timer
        .finish(Phase::Initialize, None, t, r, || session.diagnostics())
        .is_err()
    {
        return false;
    }
    let id = session.fresh_id();
    let bytes = message::request(
        id,
        crate::protocol::methods::TOOLS_LIST,
        &serde_json::json!({}),
    );
    let wait = session.timeout();
    let seen = wire::exchange(session, id, bytes, &[], wait).await;
    let mut health = Health::Serves;
    if !matches!(seen, Seen::Closed(_) | Seen::Silence) {
        if fault == ClientFault::BeforeInitialized {
            let t = Instant::now();
            let r = session.initialized().await;
            let _ = timer.finish(Phase::Initialized, None, t, r, || session.diagnostics());
        }
        health = wire::ping(session).await;
    }
    let verdict = report(fault, session, timer, &seen, &health);
    verdict == Verdict::Handled || verdict == Verdict::Accepted || verdict == Verdict::WrongError
}

/// What an `auto` persona's probe decided (a legacy persona needs none).
enum Probed {
    Legacy,
    /// A modern session: a legacy fault is not committed, and the scenario goes on.
    Modern,
    Failed,
}

/// `auto`: probe with `server/discover` (timed as `probe`, as in any session) before a
/// fault of the legacy handshake.
async fn probe(session: &mut Session<'_>, timer: &mut Timer<'_>, persona: &Persona) -> Probed {
    if persona.era != EraMode::Auto {
        return Probed::Legacy;
    }
    let t = Instant::now();
    let probed = session.discover(true).await;
    timer.set_era(session.era(), session.version());
    match timer.finish(Phase::Probe, None, t, probed, || session.diagnostics()) {
        Ok(Era::Legacy) => Probed::Legacy,
        Ok(Era::Modern) => Probed::Modern,
        Err(_) => Probed::Failed,
    }
}

/// Judge and report one committed fault; a crash or a hang fails the session.
fn report(
    fault: ClientFault,
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    seen: &Seen,
    health: &Health,
) -> Verdict {
    let (verdict, detail) = classify(fault, seen, health);
    if let Some(t) = session.transcript() {
        t.note(format!(
            "client fault {}: {} ({detail})",
            fault.name(),
            verdict.name()
        ));
    }
    let persona = session.persona().id;
    let rec = timer.recorder();
    rec.count(Counter::ClientFaults);
    rec.send(Event::ClientFault {
        persona,
        fault,
        verdict,
        detail: Some(detail.clone()),
    });
    let check = match verdict {
        Verdict::Handled => None,
        Verdict::WrongError => Some(Check::RobustnessWrongError),
        Verdict::Crashed => Some(Check::RobustnessCrashed),
        Verdict::Hung => Some(Check::RobustnessHung),
        Verdict::Accepted => Some(Check::RobustnessAccepted),
    };
    if let Some(check) = check {
        session.finding(check, || {
            format!(
                "client fault {} ({}): {detail}; expected {}",
                fault.name(),
                fault.describe(),
                fault.expected()
            )
        });
    }
    let kind = match verdict {
        Verdict::Crashed => FailureKind::TransportClosed,
        Verdict::Hung => FailureKind::Timeout,
        _ => return verdict,
    };
    let now = Instant::now();
    let f = Failure::new(kind, format!("client fault {}: {detail}", fault.name()));
    timer.failed(phase_of(fault), None, (now, now), f, None);
    verdict
}

/// The phase a crash or a hang is counted in: that of the faulty request.
fn phase_of(fault: ClientFault) -> Phase {
    match fault.era() {
        FaultEra::Legacy => Phase::Initialize,
        _ => match fault {
            ClientFault::InvalidArguments
            | ClientFault::UnknownTool
            | ClientFault::IgnoreServerRequests => Phase::ToolsCall,
            ClientFault::NoMeta | ClientFault::HeaderMismatch | ClientFault::DuplicateId => {
                Phase::ToolsList
            }
            _ => Phase::Ping,
        },
    }
}
