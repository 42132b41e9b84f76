//! A scenario's steps inside a session: lists followed to their last page (or served
//! from the persona's cache), tool calls, weighted mixes (arguments from the profile or
//! generated from the tool's `inputSchema`, several in flight at once when asked),
//! reads, prompts, pings and pauses; and lists the server announced as changed,
//! fetched again.

use super::arguments;
use super::timer::Timer;
use super::tool_result::{check_structured, record_call};
use crate::conformance::{Check, ToolListing};
use crate::metrics::{Counter, Event, FailureKind, Outcome, Phase, ToolId};
use crate::plan::{Mix, Scenario, Step};
use crate::protocol::jsonrpc::codes;
use crate::protocol::{methods, Era};
use crate::session::{Failure, ResponseCache, Session};
use rand::distr::weighted::WeightedIndex;
use rand::distr::Distribution;
use serde_json::{json, Value};
use tokio::time::Instant;

/// Most pages a list may take before we call it a loop.
const MAX_PAGES: usize = 10_000;

/// Run the scenario's steps once; `Err` when a failure ended the session.
pub async fn run(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    scenario: &Scenario,
    cache: &mut ResponseCache,
) -> Result<(), FailureKind> {
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
        let result = match step {
            Step::Pause(d) => {
                tokio::time::sleep(*d).await;
                Ok(())
            }
            Step::List { phase, method } => list_all(session, timer, *phase, method, cache).await,
            Step::CallTool(c) => {
                let arguments = fixed(&c.arguments);
                call_tool(session, timer, c.tool, &c.name, arguments).await
            }
            Step::Mix(mix) => run_mix(session, timer, mix, cache).await,
            Step::ReadResource { uri, .. } => {
                let params = json!({"uri": fixed(uri)});
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
                let params = json!({"name": fixed(name), "arguments": fixed(arguments)});
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
                return Err(kind);
            }
        }
        refetch_changed_lists(session, timer, cache).await?;
    }
    Ok(())
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
        timer.recorder().count(Counter::ListRefetch);
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
    arguments: Value,
) -> Result<(), FailureKind> {
    let params = json!({"name": name, "arguments": arguments});
    let t = Instant::now();
    match session.request(methods::TOOLS_CALL, Some(params)).await {
        Ok(result) => {
            record_call(timer, tool, (t, Instant::now()), &result);
            check_structured(session, name, &result);
            Ok(())
        }
        Err(f) => timer.finish::<()>(Phase::ToolsCall, Some(tool), t, Err(f), || {
            session.diagnostics()
        }),
    }
}

/// `count` weighted calls, `parallel` at a time; arguments generated from the tool's
/// `inputSchema` when the profile gives none (the tools are listed first if needed).
async fn run_mix(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    mix: &Mix,
    cache: &mut ResponseCache,
) -> Result<(), FailureKind> {
    let needs_schemas = mix
        .calls
        .iter()
        .any(|c| c.generate && session.tool_schema(&c.name).is_none());
    if needs_schemas {
        list_all(session, timer, Phase::ToolsList, methods::TOOLS_LIST, cache).await?;
    }
    let Ok(choose) = WeightedIndex::new(&mix.weights) else {
        return Ok(()); // the plan rejects all-zero weights
    };
    let mut left = mix.count;
    let mut worst: Result<(), FailureKind> = Ok(());
    while left > 0 {
        let n = left.min(mix.parallel);
        left -= n;
        let mut batch = Vec::new();
        let mut tools = Vec::new();
        let mut names = Vec::new();
        for _ in 0..n {
            let (tool, name, arguments) = draw(session, mix, &choose);
            batch.push((
                methods::TOOLS_CALL,
                json!({"name": name, "arguments": arguments}),
            ));
            tools.push(tool);
            names.push(name);
        }
        let t = Instant::now();
        let results = if batch.len() == 1 {
            // One at a time: the full request path (re-initialization, MRTR rounds).
            let (m, p) = batch.remove(0);
            let r = session.request(m, Some(p)).await;
            vec![(Instant::now(), r)]
        } else {
            session.request_many(batch).await
        };
        for ((tool, name), (finished, result)) in tools.into_iter().zip(names.iter()).zip(results) {
            match result {
                Ok(v) => {
                    record_call(timer, tool, (t, finished), &v);
                    check_structured(session, name, &v);
                }
                Err(f) => {
                    let kind = timer.failed(Phase::ToolsCall, Some(tool), (t, finished), f, None);
                    if kind.ends_session() {
                        return Err(kind);
                    }
                    worst = Err(kind);
                }
            }
        }
    }
    worst
}

/// One weighted draw from a mix: the tool, its name and its arguments (the profile's,
/// or generated from the tool's `inputSchema`).
fn draw<'m>(
    session: &mut Session<'_>,
    mix: &'m Mix,
    choose: &WeightedIndex<u32>,
) -> (ToolId, &'m str, Value) {
    let call = &mix.calls[choose.sample(session.rng())];
    let arguments = match call.generate {
        false => fixed(&call.arguments),
        true => {
            let schema = session.tool_schema(&call.name).cloned();
            match schema {
                Some(s) => arguments::generate(&s, session.rng()),
                None => json!({}), // the server does not list it: let it say so
            }
        }
    };
    (call.tool, call.name.as_str(), arguments)
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
    cache: &mut ResponseCache,
) -> Result<(), FailureKind> {
    let caching = session.era() == Era::Modern && session.persona().cache;
    let mut cursor: Option<String> = None;
    let mut seen: Vec<String> = Vec::new();
    let mut listing = (method == methods::TOOLS_LIST).then(ToolListing::default);
    for page in 1..=MAX_PAGES {
        let cached = caching
            .then(|| cache.get(method, cursor.as_deref()).cloned())
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
                            cache.put(method, cursor.as_deref(), &result);
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

/// CONTRACT (temporary): a template without variables, as it is.
fn fixed(t: &crate::plan::template::Template) -> Value {
    match t {
        crate::plan::template::Template::Fixed(v) => v.clone(),
        _ => Value::Null,
    }
}
