//! How many optional properties a call's generated arguments include. A call without
//! `arguments` takes `[arguments] optional` (default 0.5, as always); a call that gives
//! arguments fills only the required properties it lacks — a user who writes arguments
//! expects those sent, not optional extras a server may refuse — unless the step says
//! `optional = …` or the profile writes `[arguments] optional`.

use super::error::PlanError;
use super::scenario::{Call, Scenario, Step};
use super::template::Template;
use serde_json::Value;

/// A step's `optional = …` at `key`, checked: a share from 0 to 1.
pub(super) fn step_share(
    share: Option<f64>,
    key: &str,
    origin: &str,
) -> Result<Option<f64>, PlanError> {
    match share {
        Some(s) if !(0.0..=1.0).contains(&s) => Err(PlanError::new(
            origin,
            format!("{key}.optional"),
            format!("{s} is not a share from 0 to 1"),
            "use e.g. optional = 1 (every optional property), 0.5 or 0",
        )),
        _ => Ok(share),
    }
}

/// Settle the share of each call that gives arguments and no `optional` of its own:
/// the profile's `[arguments] optional` when written, else none. Calls without
/// arguments keep `None`: the policy's share, so their seeded choices do not change.
pub(super) fn settle(scenarios: &mut [Scenario], written: Option<f64>) {
    let calls = scenarios
        .iter_mut()
        .flat_map(|s| s.steps.iter_mut())
        .flat_map(|step| match step {
            Step::CallTool(c) => std::slice::from_mut(c),
            Step::Mix(m) => m.calls.as_mut_slice(),
            _ => &mut [],
        });
    for call in calls {
        if call.optional.is_none() && gives_arguments(call) {
            call.optional = Some(written.unwrap_or(0.0));
        }
    }
}

/// Whether the step names at least one argument.
fn gives_arguments(call: &Call) -> bool {
    match &call.arguments {
        Template::Fixed(Value::Object(o)) => !o.is_empty(),
        Template::Object(fields) => !fields.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Overrides, Plan};
    use super::*;
    use crate::profile::Profile;

    /// The share of each call of the plan of `text`, in order.
    fn shares(text: &str) -> Result<Vec<Option<f64>>, String> {
        let p = Plan::resolve(
            Profile::parse(text, "p.toml").expect("parses"),
            &Overrides::default(),
            "p.toml",
        )
        .map_err(|e| e.to_string())?;
        Ok(p.scenarios[0]
            .steps
            .iter()
            .flat_map(|s| match s {
                Step::CallTool(c) => vec![c.optional],
                Step::Mix(m) => m.calls.iter().map(|c| c.optional).collect(),
                _ => Vec::new(),
            })
            .collect())
    }

    const STEPS: &str = r#"
[[scenario]]
name = "s"
steps = [
  { op = "tools/call", tool = "a" },
  { op = "tools/call", tool = "a", arguments = {} },
  { op = "tools/call", tool = "a", arguments = { x = 1 } },
  { op = "tools/call", tool = "a", arguments = { x = 1 }, optional = 0.25 },
  { op = "mix", calls = [{ tool = "a", arguments = { x = "${v}" } }, { tool = "b", optional = 1, capture = { v = "/id" } }] },
]
"#;

    #[test]
    fn calls_that_give_arguments_generate_no_optional_properties_unless_asked() {
        // Without arguments (or with none in them): the profile's share, as before.
        let got = shares(STEPS).expect("plan");
        assert_eq!(
            got,
            [None, None, Some(0.0), Some(0.25), Some(0.0), Some(1.0)]
        );
        let written = shares(&format!("[arguments]\noptional = 0.5\n{STEPS}")).expect("plan");
        assert_eq!(
            written,
            [None, None, Some(0.5), Some(0.25), Some(0.5), Some(1.0)]
        );
    }

    #[test]
    fn a_steps_optional_is_a_share() {
        let bad = STEPS.replace("optional = 0.25", "optional = 2");
        let e = shares(&bad).expect_err("2 is no share");
        assert!(
            e.starts_with("p.toml: `scenario[0].steps[3].optional`: 2 is not a share from 0 to 1"),
            "{e}"
        );
        let bad = STEPS.replace("optional = 1,", "optional = -1,");
        let e = shares(&bad).expect_err("-1 is no share");
        assert!(
            e.contains("`scenario[0].steps[4].calls[1].optional`"),
            "{e}"
        );
    }
}
