//! The `request` step: any JSON-RPC method with its params rendered, timed as the
//! step's own phase (a `request` sample whose id is the phase name's). A JSON-RPC error
//! answer is a failure of that phase, which the scenario's `on_error` treats like any
//! step's.

use super::{no_value, render, step_failed};
use crate::client::env::Env;
use crate::client::timer::Timer;
use crate::metrics::{FailureKind, Outcome, Phase};
use crate::plan::{OnError, Request};
use crate::session::Session;
use tokio::time::Instant;

pub(super) async fn request(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    r: &Request,
    on_error: OnError,
) -> Result<(), FailureKind> {
    let id = Some(r.id);
    let params = match r.params.as_ref().map(|p| render(session, env, p)) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(why)) => return Err(no_value(timer, Phase::Request, id, why, on_error)),
    };
    let t = Instant::now();
    let result = session.request(&r.method, params).await;
    match super::checks::judge(timer, &r.checks, result, None) {
        Ok(_) => {
            timer.sample(Phase::Request, id, t, Instant::now(), Outcome::Ok);
            Ok(())
        }
        Err(mut f) => {
            // The example names the step, not only the shared `request` phase.
            f.detail = format!("{} ({}): {}", r.phase, r.method, f.detail);
            let span = (t, Instant::now());
            Err(step_failed(
                session,
                timer,
                Phase::Request,
                id,
                span,
                f,
                on_error,
            ))
        }
    }
}
