//! The `tools/call` step: one call — tools listed first when the call needs their
//! schemas, arguments prepared (or the tool left out), sent directly or as a task, and
//! the answer recorded by [`called`], the tail a mix's calls share.

use super::{no_value, step_failed};
use crate::client::env::{Env, NotSent, ToolFacts};
use crate::client::tasks;
use crate::client::timer::{ends_session, Timer};
use crate::client::tool_result::{check_structured, record_call};
use crate::metrics::{Event, FailureKind, Outcome, Phase};
use crate::plan::{Call, OnError};
use crate::protocol::methods;
use crate::session::{Failure, Session};
use serde_json::{json, Value};
use tokio::time::Instant;

/// The tools/list a call with generated arguments needs, when the session has not
/// listed tools yet. A listing that failed without ending the session leaves the calls
/// to go out with what they have.
pub(super) async fn list_tools_for<'c>(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    mut calls: impl Iterator<Item = &'c Call>,
    on_error: OnError,
) -> Result<(), FailureKind> {
    // A server that runs tool tasks: a call needs the tools' `execution.taskSupport`.
    let unknown_support = session.server_runs_tool_tasks() && !session.tools_listed();
    // A tool the session's complete listing lacked is not listed for again on every call.
    let schema_needed = calls.any(|c| {
        let output_check = c.checks.iter().any(|k| {
            matches!(k.condition, crate::plan::check::Condition::OutputSchema)
                && !session.tools_listed()
        });
        output_check
            || c.generate && session.tool_schema(&c.name).is_none() && !env.vars.unlisted(&c.name)
    });
    if unknown_support || schema_needed {
        let tools = (Phase::ToolsList, methods::TOOLS_LIST);
        match super::list::list_all(session, timer, tools, env, on_error).await {
            Err(kind) if ends_session(kind, on_error) => return Err(kind),
            _ => {}
        }
    }
    Ok(())
}

/// A call's arguments, or why it is not sent: a left-out tool is reported as such, a
/// `${…}` without a value is the call's `no_value` failure.
pub(super) fn prepare(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    call: &Call,
    on_error: OnError,
) -> Result<Option<(Value, bool)>, FailureKind> {
    let (schema, destructive, rng) = session.tool_and_rng(&call.name);
    let facts = ToolFacts {
        schema,
        destructive,
    };
    match env.arguments(call, facts, rng) {
        Ok(a) => Ok(Some((a.value, a.generated))),
        Err(NotSent::LeftOut(reason)) => {
            timer.recorder().send(Event::LeftOut {
                tool: call.tool,
                reason,
            });
            Ok(None)
        }
        Err(NotSent::NoValue(why)) => Err(no_value(
            timer,
            Phase::ToolsCall,
            Some(call.tool),
            why,
            on_error,
        )),
    }
}

/// A `tools/call` answered: timed, checked, and its captures taken.
pub(super) fn called(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    (call, generated): (&Call, bool),
    span: (Instant, Instant),
    result: Result<Value, Failure>,
    on_error: OnError,
) -> Result<(), FailureKind> {
    let schema = session.output_schema(&call.name);
    let result = super::checks::judge(timer, &call.checks, result, schema);
    match result {
        Ok(v) => {
            let outcome = record_call(timer, call.tool, span, &v);
            if generated {
                timer.recorder().send(Event::Generated {
                    tool: call.tool,
                    outcome,
                });
            }
            check_structured(session, &call.name, &v);
            if !call.capture.is_empty() {
                if outcome == Outcome::Ok {
                    env.vars.capture(&call.capture, &v, session.rng());
                } else {
                    env.vars
                        .capture_failed(&call.capture, "the tool returned isError");
                }
            }
            Ok(())
        }
        Err(mut f) => {
            if let FailureKind::RpcError(code) = f.kind {
                timer.tool_error(call.tool, || {
                    crate::client::tool_result::rpc_error_text(code, &f.detail)
                });
                if env.vars.unlisted(&call.name) {
                    // The same text from every session and call: the run says it once.
                    let why = format!(
                        "tool {:?} is not in the server's tools/list and the call was \
                         refused ({code}); check the tool's name in the profile",
                        call.name
                    );
                    f = Failure::new(FailureKind::UnknownTool, why);
                }
            }
            env.vars.capture_failed(&call.capture, &f.kind.name());
            let tool = Some(call.tool);
            let kind = step_failed(session, timer, Phase::ToolsCall, tool, span, f, on_error);
            if generated {
                timer.recorder().send(Event::Generated {
                    tool: call.tool,
                    outcome: Outcome::Failed(kind),
                });
            }
            Err(kind)
        }
    }
}

pub(super) async fn call_tool(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    call: &Call,
    on_error: OnError,
) -> Result<(), FailureKind> {
    list_tools_for(session, timer, env, std::iter::once(call), on_error).await?;
    let Some((arguments, generated)) = prepare(session, timer, env, call, on_error)? else {
        return Ok(());
    };
    let params = json!({"name": call.name, "arguments": arguments});
    if tasks::as_task(session, &call.name) {
        return call_as_task(session, timer, env, (call, generated), params, on_error).await;
    }
    let refused = tasks::refusal_expected(session, &call.name);
    session.expect_refusal(refused);
    let t = Instant::now();
    let result = session.request(methods::TOOLS_CALL, Some(params)).await;
    session.expect_refusal(false);
    let span = (t, Instant::now());
    called(
        session,
        timer,
        env,
        (call, generated),
        span,
        result,
        on_error,
    )
}

/// A task-augmented `tools/call` (`client::tasks`): the create is the `tools/call`
/// sample, and the tool's result from `tasks/result` counts as a direct call's would.
pub(super) async fn call_as_task(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    (call, generated): (&Call, bool),
    params: Value,
    on_error: OnError,
) -> Result<(), FailureKind> {
    let (span, result) = tasks::call(session, timer, params, on_error).await;
    let result = match result {
        Ok(Some(v)) => Ok(v),
        Err(f) => Err(f),
        Ok(None) => {
            // Created, then cancelled or lost: the create succeeded, the task phase says the rest.
            timer.sample(
                Phase::ToolsCall,
                Some(call.tool),
                span.0,
                span.1,
                Outcome::Ok,
            );
            env.vars
                .capture_failed(&call.capture, "the task gave no result");
            return Ok(());
        }
    };
    called(
        session,
        timer,
        env,
        (call, generated),
        span,
        result,
        on_error,
    )
}
