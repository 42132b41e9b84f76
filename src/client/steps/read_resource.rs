//! The `resources/read` step: a read of a URI (rendered), with its captures.

use super::{no_value, render, step_failed};
use crate::client::env::Env;
use crate::client::timer::Timer;
use crate::metrics::{FailureKind, Outcome, Phase};
use crate::plan::capture::Capture;
use crate::plan::template::Template;
use crate::plan::OnError;
use crate::protocol::methods;
use crate::session::Session;
use serde_json::{json, Value};
use tokio::time::Instant;

/// `resources/read` of a URI (rendered), with its captures.
pub(super) async fn read_resource(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    uri: &Template,
    capture: &[Capture],
    on_error: OnError,
) -> Result<(), FailureKind> {
    let phase = Phase::ResourcesRead;
    let uri = match render(session, env, uri) {
        Ok(Value::String(u)) => u,
        Ok(other) => other.to_string(),
        Err(why) => {
            env.vars.capture_failed(capture, "its URI had no value");
            return Err(no_value(timer, phase, None, why, on_error));
        }
    };
    let t = Instant::now();
    let result = session
        .request(methods::RESOURCES_READ, Some(json!({"uri": uri})))
        .await;
    match result {
        Ok(v) => {
            timer.sample(phase, None, t, Instant::now(), Outcome::Ok);
            env.vars.capture(capture, &v, session.rng());
            Ok(())
        }
        Err(f) => {
            env.vars.capture_failed(capture, &f.kind.name());
            let span = (t, Instant::now());
            Err(step_failed(session, timer, phase, None, span, f, on_error))
        }
    }
}
