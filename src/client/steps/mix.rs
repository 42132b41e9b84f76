//! The `mix` step: `count` weighted `tools/call`s, `parallel` at a time, each answer
//! recorded by the same tail as a single call's.

use super::call_tool::{call_as_task, called, list_tools_for, prepare};
use crate::client::env::Env;
use crate::client::tasks;
use crate::client::timer::{ends_session, Timer};
use crate::metrics::{Event, FailureKind};
use crate::plan::{Call, Mix, OnError};
use crate::protocol::methods;
use crate::session::Session;
use rand::distr::weighted::WeightedIndex;
use rand::distr::Distribution;
use serde_json::json;
use tokio::time::Instant;

/// `count` weighted calls, `parallel` at a time. Tools listed first when a call
/// generates its arguments; tools left out (destructive, with generated arguments)
/// leave the draw, and the mix is skipped when none is left.
pub(super) async fn run_mix(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    mix: &Mix,
    env: &mut Env<'_>,
    on_error: OnError,
) -> Result<(), FailureKind> {
    list_tools_for(session, timer, env, mix.calls.iter(), on_error).await?;
    let allow = env.data.policy.allow_destructive;
    let mut weights = mix.weights.clone();
    for (c, w) in mix.calls.iter().zip(weights.iter_mut()) {
        if *w > 0 && c.generate && !allow && session.tool_is_destructive(&c.name) {
            *w = 0;
            timer.recorder().send(Event::LeftOut {
                tool: c.tool,
                reason: crate::metrics::LeftOut::Destructive,
            });
        }
    }
    let Ok(choose) = WeightedIndex::new(&weights) else {
        return Ok(()); // every tool left out (the plan rejects all-zero weights)
    };
    let mut left = mix.count;
    let mut worst: Result<(), FailureKind> = Ok(());
    while left > 0 {
        let n = left.min(mix.parallel);
        left -= n;
        let mut batch = Vec::new();
        let mut drawn: Vec<(&Call, bool)> = Vec::new();
        for _ in 0..n {
            let call = &mix.calls[choose.sample(session.rng())];
            match prepare(session, timer, env, call, on_error) {
                Ok(Some((arguments, generated))) if tasks::as_task(session, &call.name) => {
                    // Task calls run one at a time, each followed to its end.
                    let params = json!({"name": call.name, "arguments": arguments});
                    let r = call_as_task(session, timer, env, (call, generated), params, on_error);
                    tally(r.await, on_error, &mut worst)?;
                }
                Ok(Some((arguments, generated))) => {
                    batch.push((
                        methods::TOOLS_CALL,
                        json!({"name": call.name, "arguments": arguments}),
                    ));
                    drawn.push((call, generated));
                }
                Ok(None) => {}
                // A `no_value` failure: it never ends the session by itself.
                Err(kind) => tally(Err(kind), on_error, &mut worst)?,
            }
        }
        if batch.is_empty() {
            continue;
        }
        let refused = drawn
            .iter()
            .any(|(c, _)| tasks::refusal_expected(session, &c.name));
        session.expect_refusal(refused);
        let t = Instant::now();
        let results = if batch.len() == 1 {
            // One at a time: the full request path (re-initialization, MRTR rounds).
            let (m, p) = batch.remove(0);
            let r = session.request(m, Some(p)).await;
            vec![(Instant::now(), r)]
        } else {
            session.request_many(batch).await
        };
        session.expect_refusal(false);
        for ((call, generated), (finished, result)) in drawn.into_iter().zip(results) {
            let r = called(
                session,
                timer,
                env,
                (call, generated),
                (t, finished),
                result,
                on_error,
            );
            tally(r, on_error, &mut worst)?;
        }
    }
    worst
}

/// One call of the mix done: a failure that ends the session, or any failure under
/// `on_error = "end-session"`, ends the mix (`Err`); any other is kept in `worst`, the
/// mix's result once every call has run.
fn tally(
    result: Result<(), FailureKind>,
    on_error: OnError,
    worst: &mut Result<(), FailureKind>,
) -> Result<(), FailureKind> {
    if let Err(kind) = result {
        if ends_session(kind, on_error) {
            return Err(kind);
        }
        *worst = Err(kind);
    }
    Ok(())
}
