//! The share forms of the grammar: `accepted(TOOL)` / `accepted(tools/call)` (the
//! calls the server accepted) and `checks(NAME)` / `checks` (the step checks that held).

use super::{split_call, split_number, split_op, Metric, Subject, Threshold, ThresholdError};
use crate::metrics::Phase;

const ACCEPTED_FIX: &str =
    "write accepted(TOOL) > 95% for one tool, or accepted(tools/call) > 0.95 for every tool";

/// `accepted(TOOL) OP SHARE` or `accepted(tools/call) OP SHARE`; `None` for other forms.
pub(super) fn parse_accepted(text: &str) -> Option<Result<Threshold, ThresholdError>> {
    let (left, op, right) = split_op(text)?;
    let (name, args) = split_call(left)?;
    if name != "accepted" {
        return None;
    }
    let err = |problem: String, fix: &str| ThresholdError {
        text: text.to_string(),
        problem,
        fix: fix.to_string(),
    };
    let tool = match args.as_slice() {
        [one] if one.starts_with("persona=") => {
            return Some(Err(err(
                "accepted is counted per tool, not per persona".into(),
                ACCEPTED_FIX,
            )))
        }
        [one] if *one == Phase::ToolsCall.name() => None,
        [one] if !one.is_empty() => Some(one.to_string()),
        _ => {
            return Some(Err(err(
                "name one tool, or tools/call".into(),
                ACCEPTED_FIX,
            )))
        }
    };
    let Some((value, unit)) = split_number(right) else {
        return Some(Err(err(format!("`{right}` is not a number"), ACCEPTED_FIX)));
    };
    let limit = match unit {
        "%" => value / 100.0,
        "" => value,
        _ => {
            return Some(Err(err(
                format!("unknown unit `{unit}` for a share of calls"),
                ACCEPTED_FIX,
            )))
        }
    };
    Some(Ok(Threshold {
        text: text.trim().to_string(),
        metric: Metric::Accepted,
        subject: Subject::Phase(Phase::ToolsCall),
        persona: None,
        op,
        limit,
        series: None,
        tool,
        request: None,
        check: None,
        abort_after: None,
    }))
}

const CHECKS_FIX: &str = "write checks(NAME) > 99% for one step check, or checks > 0.99 for all";

/// `checks(NAME) OP SHARE` or `checks OP SHARE`; `None` for other forms.
pub(super) fn parse_checks(text: &str) -> Option<Result<Threshold, ThresholdError>> {
    let (left, op, right) = split_op(text)?;
    let (name, args) = split_call(left)?;
    if name != "checks" {
        return None;
    }
    let err = |problem: String| ThresholdError {
        text: text.to_string(),
        problem,
        fix: CHECKS_FIX.to_string(),
    };
    let check = match args.as_slice() {
        [] => None,
        [one] if !one.is_empty() && !one.contains('=') => Some(one.to_string()),
        _ => return Some(Err(err("name one step check, or none for all".into()))),
    };
    let Some((value, unit)) = split_number(right) else {
        return Some(Err(err(format!("`{right}` is not a number"))));
    };
    let limit = match unit {
        "%" => value / 100.0,
        "" => value,
        _ => {
            return Some(Err(err(format!(
                "unknown unit `{unit}` for a share of checks"
            ))))
        }
    };
    Some(Ok(Threshold {
        text: text.trim().to_string(),
        metric: Metric::Checks,
        subject: Subject::All,
        persona: None,
        op,
        limit,
        series: None,
        tool: None,
        request: None,
        check,
        abort_after: None,
    }))
}
