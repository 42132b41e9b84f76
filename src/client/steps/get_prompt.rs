//! The `prompts/get` step: one prompt, its name and arguments rendered.

use super::{no_value, render, step_failed};
use crate::client::env::Env;
use crate::client::timer::Timer;
use crate::metrics::{FailureKind, Outcome, Phase};
use crate::plan::template::Template;
use crate::plan::OnError;
use crate::protocol::methods;
use crate::session::Session;
use serde_json::json;
use tokio::time::Instant;

/// `prompts/get` of a prompt (name and arguments rendered).
pub(super) async fn get_prompt(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    name: &Template,
    arguments: &Template,
    on_error: OnError,
) -> Result<(), FailureKind> {
    let phase = Phase::PromptsGet;
    let rendered =
        render(session, env, name).and_then(|n| Ok((n, render(session, env, arguments)?)));
    let (name, arguments) = match rendered {
        Ok(r) => r,
        Err(why) => return Err(no_value(timer, phase, None, why, on_error)),
    };
    let params = json!({"name": name, "arguments": arguments});
    let t = Instant::now();
    let result = session.request(methods::PROMPTS_GET, Some(params)).await;
    match result {
        Ok(_) => {
            timer.sample(phase, None, t, Instant::now(), Outcome::Ok);
            Ok(())
        }
        Err(f) => {
            let span = (t, Instant::now());
            Err(step_failed(session, timer, phase, None, span, f, on_error))
        }
    }
}
