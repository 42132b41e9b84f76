//! `{ op = "request", method = …, params = …, phase = … }`: any JSON-RPC request as a
//! scenario step, timed as its own phase. The phase name is what a report row and a
//! threshold (`p99(NAME)`) use, so it must not be mistaken for a built-in phase or for
//! threshold syntax.

use super::error::PlanError;
use super::template::Template;
use crate::metrics::{Phase, ToolId};

use super::scenario::ToolTable;

/// A resolved `request` step.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: String,
    /// The params object (templated), or none sent.
    pub params: Option<Template>,
    /// The phase name, interned (`Plan::requests`).
    pub id: ToolId,
    pub phase: String,
    /// Conditions on each result, counted per check.
    pub checks: Vec<super::check::Check>,
}

impl Request {
    /// The step at `key`: `(method, params as written, phase)`, its params resolved.
    pub(super) fn from_raw(
        (method, raw_params, phase): (&str, &Option<serde_json::Value>, Option<&str>),
        params: Option<Template>,
        key: &str,
        origin: &str,
        tools: &mut ToolTable,
    ) -> Result<Request, PlanError> {
        if method.trim().is_empty() {
            return Err(PlanError::new(
                origin,
                format!("{key}.method"),
                "is empty",
                "name the JSON-RPC method, e.g. method = \"completion/complete\"",
            ));
        }
        if raw_params.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(PlanError::new(
                origin,
                format!("{key}.params"),
                "is not a table",
                "write params = { name = \"value\" } (MCP params are an object)",
            ));
        }
        let (name, at) = match phase {
            Some(p) => (p, format!("{key}.phase")),
            None => (method, format!("{key}.method")),
        };
        check_phase_name(name)
            .map_err(|(problem, fix)| PlanError::new(origin, at, problem, fix))?;
        Ok(Request {
            method: method.to_string(),
            params,
            id: tools.intern_request(name),
            phase: name.to_string(),
            checks: Vec::new(),
        })
    }
}

/// A request phase name: not a built-in phase (its figures would mix with the
/// built-in's), not `sessions`, and nothing a threshold reads as syntax.
pub fn check_phase_name(name: &str) -> Result<(), (String, String)> {
    if Phase::from_name(name).is_some() || name == "sessions" {
        return Err((
            format!("phase name `{name}` is a built-in phase"),
            format!(
                "use the step made for it, or give this one its own name: phase = \"my-{}\"",
                name.replace('/', "-")
            ),
        ));
    }
    let bad = |c: char| c.is_whitespace() || "(),=<>\"".contains(c);
    if name.is_empty() || name.chars().any(bad) {
        return Err((
            format!("phase name {name:?} is empty or holds a space or one of ( ) , = < > \""),
            "use letters, digits and - _ . / :, e.g. phase = \"complete\"".into(),
        ));
    }
    Ok(())
}
