//! A step's checks on its result (`checks = [...]`): each one counted, passed or
//! failed with its reason; a failed `fail_session` check turns the answer into the
//! step's `check_failed` failure.

use crate::client::timer::Timer;
use crate::metrics::{Event, FailureKind};
use crate::plan::check::Check;
use crate::session::Failure;
use serde_json::Value;

/// `result` after `checks`: an answer the checks let through as it was, or the first
/// failed `fail_session` check's failure. `schema`: the tool's `outputSchema`.
pub(super) fn judge(
    timer: &Timer<'_>,
    checks: &[Check],
    result: Result<Value, Failure>,
    schema: Option<&Value>,
) -> Result<Value, Failure> {
    let Ok(v) = &result else {
        // No result to check: the step's failure says it.
        return result;
    };
    let mut fatal = None;
    for c in checks {
        let verdict = c.evaluate(v, || match schema {
            None => Err("the tool declares no outputSchema (or tools were not listed)".into()),
            Some(s) => crate::conformance::structured_content(s, v).map_or(Ok(()), Err),
        });
        let passed = verdict.is_ok();
        let why = verdict.err();
        if !passed && c.fail_session && fatal.is_none() {
            fatal.clone_from(&why);
        }
        timer.recorder().send(Event::StepCheck {
            check: c.id,
            passed,
            why,
        });
    }
    match fatal {
        Some(why) => Err(Failure::new(
            FailureKind::CheckFailed,
            format!("check {why}"),
        )),
        None => result,
    }
}
