//! A scenario's steps inside a session: lists followed to their last page (or served
//! from the persona's cache), tool calls, weighted mixes (several in flight at once
//! when asked), reads, prompts, pings and pauses; and lists the server announced as
//! changed, fetched again. A call's arguments are the profile's pins with `${…}`
//! rendered and the rest generated from the tool's `inputSchema` ([`Env::arguments`]);
//! what a call captures from its result feeds later steps.
//!
//! One file per step kind (`list`, `call_tool`, `mix`, `read_resource`, `get_prompt`);
//! this one runs the scenario and holds the tail every step shares: how a failed step
//! is counted and whether it ends the session (one rule for every step,
//! [`super::timer::ends_session`]).

mod call_tool;
mod checks;
mod get_prompt;
mod list;
mod mix;
mod probe;
mod read_resource;
mod request;

pub use probe::{probe_undeclared, Probe};

use super::env::{Env, Vars};
use super::timer::{ends_session, Timer};
use crate::metrics::{Counter, Event, FailureKind, Outcome, Phase, ToolId};
use crate::plan::template::Template;
use crate::plan::{OnError, Scenario, Step};
use crate::protocol::{methods, Era};
use crate::session::{Failure, Session};
use serde_json::Value;
use tokio::time::Instant;

/// The variables a scenario's steps use, for [`Vars::for_steps`].
pub fn variables(scenario: &Scenario) -> Vars {
    let templates = scenario.steps.iter().flat_map(templates);
    Vars::for_steps(templates.flat_map(|t| t.vars()))
}

/// The templates of a step.
fn templates(step: &Step) -> Vec<&Template> {
    match step {
        Step::CallTool(c) => vec![&c.arguments],
        Step::Mix(m) => m.calls.iter().map(|c| &c.arguments).collect(),
        Step::ReadResource { uri, .. } => vec![uri],
        Step::GetPrompt { name, arguments } => vec![name, arguments],
        Step::Request(r) => r.params.iter().collect(),
        Step::List { .. } | Step::Ping | Step::Pause(_) => Vec::new(),
    }
}

/// Run the scenario's steps once; `Err` when a failure ended the session.
pub async fn run(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    scenario: &Scenario,
    env: &mut Env<'_>,
) -> Result<(), FailureKind> {
    let on_error = scenario.on_error;
    for step in &scenario.steps {
        // `ping` does not exist in the 2026-07-28 era: skipped like an undeclared
        // capability, not sent to fail.
        let exists = !(matches!(step, Step::Ping) && session.era() == Era::Modern);
        let declared = step
            .required_capability()
            .is_none_or(|cap| session.server.as_ref().is_some_and(|s| s.declares(cap)));
        if !exists || !declared {
            if let Some(phase) = step.phase() {
                timer.recorder().send(Event::Skipped {
                    persona: timer.persona(),
                    phase,
                });
            }
            continue;
        }
        for t in templates(step) {
            list_what_variables_need(session, timer, env, t, on_error).await?;
        }
        let result = match step {
            Step::Pause(d) => {
                let until = Instant::now() + d.sample(session.rng());
                pause_reading(session, timer, env, until, on_error).await
            }
            Step::List { phase, method } => {
                list::list_all(session, timer, (*phase, method), env, on_error).await
            }
            Step::CallTool(c) => call_tool::call_tool(session, timer, env, c, on_error).await,
            Step::Mix(mix) => mix::run_mix(session, timer, mix, env, on_error).await,
            Step::ReadResource { uri, capture } => {
                read_resource::read_resource(session, timer, env, uri, capture, on_error).await
            }
            Step::GetPrompt { name, arguments } => {
                get_prompt::get_prompt(session, timer, env, name, arguments, on_error).await
            }
            Step::Ping => ping(session, timer, on_error).await,
            Step::Request(r) => request::request(session, timer, env, r, on_error).await,
        };
        if let Err(kind) = result {
            if ends_session(kind, on_error) {
                return Err(kind);
            }
        }
        refetch_changed_lists(session, timer, env, on_error).await?;
    }
    Ok(())
}

/// `${resource.uri}` and `${prompt.name}` need the session's listing: made once, timed
/// as its list phase, before the first step that needs it.
async fn list_what_variables_need(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    template: &Template,
    on_error: OnError,
) -> Result<(), FailureKind> {
    if template.is_fixed() {
        return Ok(());
    }
    for var in template.vars() {
        let Some(method) = env.vars.needs_listing(var) else {
            continue;
        };
        env.vars.listing_tried(method);
        let cap = methods::required_server_capability(method);
        let declared = cap.is_none_or(|c| session.server.as_ref().is_some_and(|s| s.declares(c)));
        if !declared {
            continue; // the variable has no value; the call says so
        }
        let phase = Phase::from_name(method).unwrap_or(Phase::ResourcesList);
        match list::list_all(session, timer, (phase, method), env, on_error).await {
            Err(kind) if ends_session(kind, on_error) => return Err(kind),
            _ => {}
        }
    }
    Ok(())
}

/// Lists the server announced as changed, fetched again (personas that honour it).
/// A pause: a listening session reads the server meanwhile (its listen's
/// acknowledgement and changes, a changed list fetched again), as between a long-lived
/// session's iterations; else it only waits.
async fn pause_reading(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    until: Instant,
    on_error: OnError,
) -> Result<(), FailureKind> {
    while session.listening() && Instant::now() < until {
        session.listen_until(until).await;
        if session.pending_refetch.is_empty() {
            break; // the time is up, or the listen is gone: wait the plain way
        }
        refetch_changed_lists(session, timer, env, on_error).await?;
    }
    tokio::time::sleep_until(until).await;
    Ok(())
}

pub(super) async fn refetch_changed_lists(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    on_error: OnError,
) -> Result<(), FailureKind> {
    while let Some(method) = session.pending_refetch.pop() {
        env.cache().invalidate(method);
        let phase = Phase::from_name(method).unwrap_or(Phase::ToolsList);
        timer.recorder().count(Counter::ListRefetch);
        match list::list_all(session, timer, (phase, method), env, on_error).await {
            Err(kind) if ends_session(kind, on_error) => return Err(kind),
            _ => {}
        }
    }
    Ok(())
}

/// A call step's failure (`tools/call`, a mix call, `resources/read`, `prompts/get`)
/// over `span`: counted with the session's diagnostics, and failing the session only as
/// [`Timer::step_failed`] says.
fn step_failed(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    phase: Phase,
    tool: Option<ToolId>,
    span: (Instant, Instant),
    f: Failure,
    on_error: OnError,
) -> FailureKind {
    let diagnostics = session.diagnostics();
    timer.step_failed(phase, tool, span, f, diagnostics, on_error)
}

/// A call not sent because a `${…}` had no value: a `no_value` failure of its phase.
fn no_value(
    timer: &mut Timer<'_>,
    phase: Phase,
    tool: Option<ToolId>,
    why: String,
    on_error: OnError,
) -> FailureKind {
    let now = Instant::now();
    let f = Failure::new(FailureKind::NoValue, why);
    timer.step_failed(phase, tool, (now, now), f, None, on_error)
}

/// A template rendered with the session's generator.
fn render(session: &mut Session<'_>, env: &mut Env<'_>, t: &Template) -> Result<Value, String> {
    env.render(t, session.rng())
}

/// A `ping` (a step, or a long-lived session's keep-alive), timed as the `ping` phase;
/// its failure follows the scenario's `on_error` like any step's.
pub async fn ping(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    on_error: OnError,
) -> Result<(), FailureKind> {
    let t = Instant::now();
    match session.request(methods::PING, None).await {
        Ok(_) => {
            timer.sample(Phase::Ping, None, t, Instant::now(), Outcome::Ok);
            Ok(())
        }
        Err(f) => {
            let span = (t, Instant::now());
            Err(step_failed(
                session,
                timer,
                Phase::Ping,
                None,
                span,
                f,
                on_error,
            ))
        }
    }
}
