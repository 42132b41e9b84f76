//! A scenario's steps inside a session: lists followed to their last page (or served
//! from the persona's cache), tool calls, weighted mixes (several in flight at once
//! when asked), reads, prompts, pings and pauses; and lists the server announced as
//! changed, fetched again. A call's arguments are the profile's pins with `${…}`
//! rendered and the rest generated from the tool's `inputSchema` ([`Env::arguments`]);
//! what a call captures from its result feeds later steps.

use super::env::{Env, NotSent, ToolFacts, Vars};
use super::timer::Timer;
use super::tool_result::{check_structured, record_call};
use crate::conformance::{Check, ToolListing};
use crate::metrics::{Counter, Event, FailureKind, Outcome, Phase, ToolId};
use crate::plan::capture::Capture;
use crate::plan::template::Template;
use crate::plan::{Call, Mix, OnError, Scenario, Step};
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, Era};
use crate::session::{Failure, Session};
use rand::distr::weighted::WeightedIndex;
use rand::distr::Distribution;
use serde_json::{json, Value};
use tokio::time::Instant;

/// Most pages a list may take before we call it a loop.
const MAX_PAGES: usize = 10_000;

/// The variables a scenario's steps use, for [`Vars::for_steps`].
pub fn variables(scenario: &Scenario) -> Vars {
    let templates = scenario.steps.iter().flat_map(templates);
    Vars::for_steps(templates.flat_map(|t| t.vars()))
}

/// Steps whose JSON-RPC errors follow the scenario's `on_error`.
fn is_call(step: &Step) -> bool {
    matches!(
        step,
        Step::CallTool(_) | Step::Mix(_) | Step::ReadResource { .. } | Step::GetPrompt { .. }
    )
}

/// The templates of a step.
fn templates(step: &Step) -> Vec<&Template> {
    match step {
        Step::CallTool(c) => vec![&c.arguments],
        Step::Mix(m) => m.calls.iter().map(|c| &c.arguments).collect(),
        Step::ReadResource { uri, .. } => vec![uri],
        Step::GetPrompt { name, arguments } => vec![name, arguments],
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
            list_what_variables_need(session, timer, env, t).await?;
        }
        let result = match step {
            Step::Pause(d) => {
                tokio::time::sleep(*d).await;
                Ok(())
            }
            Step::List { phase, method } => list_all(session, timer, *phase, method, env).await,
            Step::CallTool(c) => call_tool(session, timer, env, c, on_error).await,
            Step::Mix(mix) => run_mix(session, timer, mix, env, on_error).await,
            Step::ReadResource { uri, capture } => {
                read_resource(session, timer, env, uri, capture, on_error).await
            }
            Step::GetPrompt { name, arguments } => {
                get_prompt(session, timer, env, name, arguments, on_error).await
            }
            Step::Ping => timed(session, timer, Phase::Ping, methods::PING, None).await,
        };
        if let Err(kind) = result {
            if kind.ends_session() || (is_call(step) && on_error == OnError::EndSession) {
                return Err(kind);
            }
        }
        refetch_changed_lists(session, timer, env).await?;
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
        if let Err(kind) = list_all(session, timer, phase, method, env).await {
            if kind.ends_session() {
                return Err(kind);
            }
        }
    }
    Ok(())
}

/// Lists the server announced as changed, fetched again (personas that honour it).
async fn refetch_changed_lists(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
) -> Result<(), FailureKind> {
    while let Some(method) = session.pending_refetch.pop() {
        env.cache().invalidate(method);
        let phase = Phase::from_name(method).unwrap_or(Phase::ToolsList);
        timer.recorder().count(Counter::ListRefetch);
        if let Err(kind) = list_all(session, timer, phase, method, env).await {
            if kind.ends_session() {
                return Err(kind);
            }
        }
    }
    Ok(())
}

/// The tools/list a call with generated arguments needs, when the session has not
/// listed tools yet.
async fn list_tools_for<'c>(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    mut calls: impl Iterator<Item = &'c Call>,
) -> Result<(), FailureKind> {
    // A server that runs tool tasks: a call needs the tools' `execution.taskSupport`.
    let unknown_support = session.server_runs_tool_tasks() && !session.tools_listed();
    if unknown_support || calls.any(|c| c.generate && session.tool_schema(&c.name).is_none()) {
        list_all(session, timer, Phase::ToolsList, methods::TOOLS_LIST, env).await?;
    }
    Ok(())
}

/// A call's arguments, or why it is not sent: a left-out tool is reported as such, a
/// `${…}` without a value is the call's `no_value` failure.
fn prepare(
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
        Err(NotSent::NoValue(why)) => Err(no_value(timer, Some(call.tool), why, on_error)),
    }
}

/// A call not sent because a `${…}` had no value: a `no_value` failure of its phase.
fn no_value(
    timer: &mut Timer<'_>,
    tool: Option<ToolId>,
    why: String,
    on_error: OnError,
) -> FailureKind {
    let now = Instant::now();
    let phase = if tool.is_some() {
        Phase::ToolsCall
    } else {
        Phase::ResourcesRead
    };
    let f = Failure::new(FailureKind::NoValue, why);
    timer.call_failed(phase, tool, (now, now), f, None, on_error)
}

/// A `tools/call` answered: timed, checked, and its captures taken.
fn called(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    (call, generated): (&Call, bool),
    span: (Instant, Instant),
    result: Result<Value, Failure>,
    on_error: OnError,
) -> Result<(), FailureKind> {
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
        Err(f) => {
            if let FailureKind::RpcError(code) = f.kind {
                timer.tool_error(call.tool, || {
                    super::tool_result::rpc_error_text(code, &f.detail)
                });
            }
            env.vars.capture_failed(&call.capture, &f.kind.name());
            let diagnostics = session.diagnostics();
            let kind = timer.call_failed(
                Phase::ToolsCall,
                Some(call.tool),
                span,
                f,
                diagnostics,
                on_error,
            );
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

async fn call_tool(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    call: &Call,
    on_error: OnError,
) -> Result<(), FailureKind> {
    list_tools_for(session, timer, env, std::iter::once(call)).await?;
    let Some((arguments, generated)) = prepare(session, timer, env, call, on_error)? else {
        return Ok(());
    };
    let params = json!({"name": call.name, "arguments": arguments});
    if super::tasks::as_task(session, &call.name) {
        return call_as_task(session, timer, env, (call, generated), params, on_error).await;
    }
    let refused = super::tasks::refusal_expected(session, &call.name);
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
async fn call_as_task(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    (call, generated): (&Call, bool),
    params: Value,
    on_error: OnError,
) -> Result<(), FailureKind> {
    let (span, result) = super::tasks::call(session, timer, params, on_error).await;
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

/// `resources/read` of a URI (rendered), with its captures.
async fn read_resource(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    uri: &Template,
    capture: &[Capture],
    on_error: OnError,
) -> Result<(), FailureKind> {
    let uri = match render(session, env, uri) {
        Ok(Value::String(u)) => u,
        Ok(other) => other.to_string(),
        Err(why) => {
            env.vars.capture_failed(capture, "its URI had no value");
            return Err(no_value(timer, None, why, on_error));
        }
    };
    let t = Instant::now();
    let result = session
        .request(methods::RESOURCES_READ, Some(json!({"uri": uri})))
        .await;
    match result {
        Ok(v) => {
            timer.sample(Phase::ResourcesRead, None, t, Instant::now(), Outcome::Ok);
            env.vars.capture(capture, &v, session.rng());
            Ok(())
        }
        Err(f) => {
            env.vars.capture_failed(capture, &f.kind.name());
            let diagnostics = session.diagnostics();
            let span = (t, Instant::now());
            Err(timer.call_failed(Phase::ResourcesRead, None, span, f, diagnostics, on_error))
        }
    }
}

/// `prompts/get` of a prompt (name and arguments rendered).
async fn get_prompt(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut Env<'_>,
    name: &Template,
    arguments: &Template,
    on_error: OnError,
) -> Result<(), FailureKind> {
    let rendered =
        render(session, env, name).and_then(|n| Ok((n, render(session, env, arguments)?)));
    let (name, arguments) = match rendered {
        Ok(r) => r,
        Err(why) => {
            let now = Instant::now();
            let f = Failure::new(FailureKind::NoValue, why);
            return Err(timer.call_failed(Phase::PromptsGet, None, (now, now), f, None, on_error));
        }
    };
    let params = json!({"name": name, "arguments": arguments});
    let t = Instant::now();
    let result = session.request(methods::PROMPTS_GET, Some(params)).await;
    match result {
        Ok(_) => {
            timer.sample(Phase::PromptsGet, None, t, Instant::now(), Outcome::Ok);
            Ok(())
        }
        Err(f) => {
            let diagnostics = session.diagnostics();
            let span = (t, Instant::now());
            Err(timer.call_failed(Phase::PromptsGet, None, span, f, diagnostics, on_error))
        }
    }
}

/// A template rendered with the session's generator.
fn render(session: &mut Session<'_>, env: &mut Env<'_>, t: &Template) -> Result<Value, String> {
    env.render(t, session.rng())
}

/// `count` weighted calls, `parallel` at a time. Tools listed first when a call
/// generates its arguments; tools left out (destructive, with generated arguments)
/// leave the draw, and the mix is skipped when none is left.
async fn run_mix(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    mix: &Mix,
    env: &mut Env<'_>,
    on_error: OnError,
) -> Result<(), FailureKind> {
    list_tools_for(session, timer, env, mix.calls.iter()).await?;
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
                Ok(Some((arguments, generated))) if super::tasks::as_task(session, &call.name) => {
                    // Task calls run one at a time, each followed to its end.
                    let params = json!({"name": call.name, "arguments": arguments});
                    let r = call_as_task(session, timer, env, (call, generated), params, on_error);
                    if let Err(kind) = r.await {
                        if kind.ends_session() || on_error == OnError::EndSession {
                            return Err(kind);
                        }
                        worst = Err(kind);
                    }
                }
                Ok(Some((arguments, generated))) => {
                    batch.push((
                        methods::TOOLS_CALL,
                        json!({"name": call.name, "arguments": arguments}),
                    ));
                    drawn.push((call, generated));
                }
                Ok(None) => {}
                Err(kind) => {
                    if on_error == OnError::EndSession {
                        return Err(kind);
                    }
                    worst = Err(kind);
                }
            }
        }
        if batch.is_empty() {
            continue;
        }
        let refused = drawn
            .iter()
            .any(|(c, _)| super::tasks::refusal_expected(session, &c.name));
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
            if let Err(kind) = r {
                if kind.ends_session() || on_error == OnError::EndSession {
                    return Err(kind);
                }
                worst = Err(kind);
            }
        }
    }
    worst
}

/// Findings of a complete tool listing: duplicate names, schemas that are not object
/// schemas, and a tool set that changed since the last listing without a notification.
fn check_tool_listing(session: &mut Session<'_>, listing: &ToolListing) {
    if let Some(name) = &listing.duplicate {
        session.finding(Check::ToolsDuplicateName, || {
            format!("tool {name:?} is listed twice")
        });
    }
    if let Some(bad) = &listing.bad_schema {
        session.finding(Check::ToolsInputSchemaNotObject, || bad.clone());
    }
    let persona = session.persona().id;
    let changed = session
        .tracker()
        .is_some_and(|t| t.tools_listed(persona, listing.fingerprint()));
    if changed {
        let declared = session.server.as_ref().is_some_and(|s| {
            s.capabilities
                .get("tools")
                .and_then(|t| t.get("listChanged"))
                .and_then(Value::as_bool)
                == Some(true)
        });
        let check = if declared {
            Check::CapabilityListChangedNotHonoured
        } else {
            Check::ToolsChangedSilently
        };
        session.finding(check, || {
            "tools/list differs from the previous listing; no notifications/tools/list_changed was seen"
                .to_string()
        });
    }
}

/// Who probes the list methods of the capabilities the server did not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// `--probe-undeclared`: every session, and an error other than -32601 is a finding.
    EverySession,
    /// A default run, once per run and target: only a list that works although its
    /// capability is undeclared (the common "tools registered, `tools: {}` forgotten").
    OncePerTarget,
}

/// Call the list method of each capability the server did not declare and expect
/// -32601. Not timed: it is a check, not load.
pub async fn probe_undeclared(session: &mut Session<'_>, probe: Probe) {
    let Some(caps) = session.server.as_ref().map(|s| s.capabilities.clone()) else {
        return;
    };
    if !caps.is_object() {
        return; // unknown capabilities (a modern server without discover): nothing to probe
    }
    for (cap, method) in [
        ("tools", methods::TOOLS_LIST),
        ("resources", methods::RESOURCES_LIST),
        ("prompts", methods::PROMPTS_LIST),
    ] {
        if caps.get(cap).is_some_and(Value::is_object) {
            continue;
        }
        match session.request(method, None).await {
            Ok(_) => session.finding(Check::CapabilityUndeclaredButWorks, || {
                format!(
                    "{method} works although the capabilities do not declare {cap:?}; \
                     clients will not call it: add \"{cap}\": {{}} to the capabilities"
                )
            }),
            Err(f) => match f.kind {
                FailureKind::RpcError(codes::METHOD_NOT_FOUND) => {}
                FailureKind::RpcError(_) | FailureKind::HttpStatus(_)
                    if probe == Probe::EverySession =>
                {
                    session.finding(Check::CapabilityUndeclaredWrongError, || {
                        format!("{method} ({cap:?} not declared): {}", f.detail)
                    })
                }
                FailureKind::RpcError(_) | FailureKind::HttpStatus(_) => {}
                // The connection is gone: nothing more to learn.
                _ => return,
            },
        }
    }
}

/// A keep-alive `ping`, timed as the `ping` phase.
pub async fn ping(session: &mut Session<'_>, timer: &mut Timer<'_>) -> Result<(), FailureKind> {
    timed(session, timer, Phase::Ping, methods::PING, None).await
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
    timer
        .finish(phase, None, t, r, || session.diagnostics())
        .map(drop)
}

/// The cursor of the next page (`None`: the last page), and what is wrong with it: a
/// cursor seen before (a loop), or one past [`MAX_PAGES`].
fn next_cursor(
    session: &mut Session<'_>,
    method: &str,
    result: &Value,
    seen: &[String],
    page: usize,
) -> (Option<String>, Option<String>) {
    let raw_next = result.get("nextCursor").and_then(Value::as_str);
    if raw_next == Some("") {
        session.finding(Check::PaginationEmptyCursor, || {
            format!("{method}: \"nextCursor\": \"\" (taken as the last page)")
        });
    }
    let next = raw_next.filter(|c| !c.is_empty());
    let problem = match next {
        Some(c) if seen.iter().any(|s| s == c) => {
            session.finding(Check::PaginationLoop, || {
                format!("{method}: cursor {c:?} came back a second time")
            });
            Some(format!(
                "{method}: the server returned cursor {c:?} twice (pagination loops)"
            ))
        }
        Some(_) if page == MAX_PAGES => Some(format!(
            "{method}: more than {MAX_PAGES} pages (pagination never ends)"
        )),
        _ => None,
    };
    (next.map(str::to_string), problem)
}

/// A paginated list, followed to the last page; each page is one sample of `phase`.
/// Modern personas that cache serve fresh pages from the cache instead. A page that
/// brings back a cursor already seen, or one past [`MAX_PAGES`], is that page's failure
/// (`protocol_violation`), so a list that never ends fails in its own phase.
async fn list_all(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    phase: Phase,
    method: &'static str,
    env: &mut Env<'_>,
) -> Result<(), FailureKind> {
    let caching = session.era() == Era::Modern && session.persona().cache;
    let mut cursor: Option<String> = None;
    let mut seen: Vec<String> = Vec::new();
    let mut listing = (method == methods::TOOLS_LIST).then(ToolListing::default);
    for page in 1..=MAX_PAGES {
        let cached = caching
            .then(|| env.cache().get(method, cursor.as_deref()).cloned())
            .flatten();
        // The page, and when its request started (`None`: served from the cache).
        let (result, started) = match cached {
            Some(hit) => {
                timer.recorder().count(Counter::CacheHit);
                (hit, None)
            }
            None => {
                let params = cursor.as_ref().map(|c| json!({"cursor": c}));
                let t = Instant::now();
                match session.request(method, params).await {
                    Ok(result) => {
                        if caching {
                            env.cache().put(method, cursor.as_deref(), &result);
                        }
                        (result, Some(t))
                    }
                    Err(f) => {
                        let diagnostics = session.diagnostics();
                        return Err(timer.failed(phase, None, (t, Instant::now()), f, diagnostics));
                    }
                }
            }
        };
        if let Some(l) = listing.as_mut() {
            session.learn_tools(&result);
            l.feed(&result);
        }
        env.vars.learn(method, &result);
        let (next, problem) = next_cursor(session, method, &result, &seen, page);
        let span = (started.unwrap_or_else(Instant::now), Instant::now());
        if let Some(detail) = problem {
            let f = Failure::new(FailureKind::ProtocolViolation, detail);
            return Err(timer.failed(phase, None, span, f, None));
        }
        if started.is_some() {
            timer.sample(phase, None, span.0, span.1, Outcome::Ok);
        }
        match next {
            None => {
                if let Some(l) = listing {
                    check_tool_listing(session, &l);
                }
                return Ok(());
            }
            Some(c) => {
                seen.push(c.clone());
                cursor = Some(c);
            }
        }
    }
    Ok(()) // unreachable: the last page either ends the list or fails it
}
