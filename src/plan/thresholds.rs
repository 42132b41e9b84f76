//! Thresholds from the profile (`thresholds = [...]`) and the command line
//! (`--threshold`): parsed once here, so a bad expression, an unknown phase or an unknown
//! persona stops the run before it starts instead of passing silently afterwards.

use super::{Overrides, Persona, PlanError};
use crate::profile::Profile;
use crate::report::threshold::{Threshold, ThresholdError};

pub(super) fn resolve(
    profile: &Profile,
    overrides: &Overrides,
    personas: &[Persona],
    origin: &str,
) -> Result<Vec<Threshold>, PlanError> {
    let from_profile = profile
        .thresholds
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("thresholds[{i}]"), t.as_str(), origin));
    let from_cli = overrides
        .thresholds
        .iter()
        .map(|t| ("--threshold".to_string(), t.as_str(), "command line"));
    from_profile
        .chain(from_cli)
        .map(|(key, text, origin)| {
            let to_plan = |e: ThresholdError| PlanError {
                origin: origin.to_string(),
                key: key.clone(),
                problem: format!("`{}`: {}", e.text, e.problem),
                fix: e.fix,
            };
            let t = Threshold::parse(text).map_err(to_plan)?;
            if let Some(name) = &t.persona {
                if !personas.iter().any(|p| &p.name == name) {
                    let known: Vec<&str> = personas.iter().map(|p| p.name.as_str()).collect();
                    return Err(to_plan(ThresholdError {
                        text: text.to_string(),
                        problem: format!("unknown persona `{name}`"),
                        fix: format!("use one of the profile's personas: {}", known.join(", ")),
                    }));
                }
            }
            Ok(t)
        })
        .collect()
}
