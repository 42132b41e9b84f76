//! The list steps (`tools/list`, `resources/list`, …): a paginated list followed to
//! its last page or served from a caching persona's cache, each page checked for the
//! shape clients rely on, with the pagination and tool listing findings a full listing
//! shows.

use crate::client::env::Env;
use crate::client::timer::Timer;
use crate::conformance::{list_result, Check, ToolListing};
use crate::metrics::{Counter, FailureKind, Outcome, Phase};
use crate::plan::OnError;
use crate::protocol::{methods, Era};
use crate::session::{Failure, Session};
use serde_json::{json, Value};
use tokio::time::Instant;

/// Most pages a list may take before we call it a loop.
const MAX_PAGES: usize = 10_000;

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
/// (`protocol_violation`), so a list that never ends fails in its own phase. A failure
/// fails the session as any step's does (`on_error`, [`Timer::step_failed`]).
pub(super) async fn list_all(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    (phase, method): (Phase, &'static str),
    env: &mut Env<'_>,
    on_error: OnError,
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
                        // A page clients cannot use fails here, before anything is
                        // learnt or cached from it (tools are not called from `[1,2,3]`).
                        if let Some(problem) = list_result(method, &result) {
                            let detail = format!("{method}: {problem}");
                            session.finding(Check::ListInvalidResult, || detail.clone());
                            let f = Failure::new(FailureKind::InvalidResult, detail);
                            let span = (t, Instant::now());
                            return Err(timer.step_failed(phase, None, span, f, None, on_error));
                        }
                        if caching {
                            env.cache().put(method, cursor.as_deref(), &result);
                        }
                        (result, Some(t))
                    }
                    Err(f) => {
                        let span = (t, Instant::now());
                        let diagnostics = session.diagnostics();
                        return Err(timer.step_failed(phase, None, span, f, diagnostics, on_error));
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
            return Err(timer.step_failed(phase, None, span, f, None, on_error));
        }
        if started.is_some() {
            timer.sample(phase, None, span.0, span.1, Outcome::Ok);
        }
        match next {
            None => {
                if let Some(l) = listing {
                    check_tool_listing(session, &l);
                    env.vars.tools_listed(l.into_names());
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
