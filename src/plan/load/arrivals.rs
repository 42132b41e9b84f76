//! `[load] arrivals`: sessions at set times, each of a named persona (what `replay`
//! writes from recorded traffic) — parsed, checked against the other load keys and the
//! personas, and sorted by time.

use super::Arrival;
use crate::metrics::PersonaId;
use crate::plan::error::PlanError;
use crate::plan::quantity::parse_duration;
use crate::profile::{ArrivalSection, LoadSection};
use std::time::Duration;

/// The shortest run a list of arrivals makes when none is given: a list whose last
/// arrival is at 0 s still has a deadline after its start (then the grace).
const MIN_LENGTH: Duration = Duration::from_millis(1);

/// Arrivals are a load model of their own: refuse the keys of the others, and the
/// fleet-wide pace of long-lived sessions, with why.
pub(super) fn alone(l: &LoadSection, origin: &str) -> Result<(), PlanError> {
    let other = if l.clients.is_some() {
        Some((
            "clients",
            "runs N clients back to back, while arrivals start each session at its own time",
        ))
    } else if l.rate.is_some() {
        Some((
            "rate",
            "makes sessions arrive at a rate, while arrivals list every session's start",
        ))
    } else if l.stages.is_some() {
        Some((
            "stages",
            "ramp clients or a rate, while arrivals list every session's start",
        ))
    } else if l.iteration_rate.is_some() {
        Some((
            "iteration_rate",
            "paces every long-lived session from one fleet-wide schedule, while arrivals \
             replay each session on its own (give a long-lived persona its own `pace`)",
        ))
    } else {
        None
    };
    match other {
        Some((key, why)) => Err(PlanError::new(
            origin,
            "load.arrivals",
            format!("is set together with `{key}`, which {why}"),
            format!(
                "keep `arrivals` and remove `{key}`, or remove `arrivals` for the other load model"
            ),
        )),
        None => Ok(()),
    }
}

/// Each `{ at, persona }`: `at` a duration from the start of the run, `persona` the
/// name of one of `personas` (plan order); at least one; sorted by time, arrivals at the
/// same time kept in their order.
pub(super) fn resolve(
    sections: &[ArrivalSection],
    personas: &[&str],
    origin: &str,
) -> Result<Vec<Arrival>, PlanError> {
    if sections.is_empty() {
        return Err(PlanError::new(
            origin,
            "load.arrivals",
            "is empty, so no session would start",
            "list sessions like { at = \"0s\", persona = \"NAME\" }, or remove arrivals",
        ));
    }
    let mut out = Vec::with_capacity(sections.len());
    for (i, a) in sections.iter().enumerate() {
        let key = format!("load.arrivals[{i}]");
        let at = parse_duration(&a.at, &format!("{key}.at"), origin)?;
        let persona = personas
            .iter()
            .position(|name| *name == a.persona)
            .and_then(|i| PersonaId::try_from(i).ok())
            .ok_or_else(|| {
                PlanError::new(
                    origin,
                    format!("{key}.persona"),
                    format!("names no persona: {:?}", a.persona),
                    format!(
                        "use one of the profile's persona names ({}), or add a [[persona]] with name = {:?}",
                        personas.join(", "),
                        a.persona
                    ),
                )
            })?;
        out.push(Arrival { at, persona });
    }
    // Stable: a recording's sessions that began at the same time keep their order.
    out.sort_by_key(|a| a.at);
    Ok(out)
}

/// How long a run of these (sorted) arrivals lasts without a duration: until the last
/// one ([`MIN_LENGTH`] at least).
pub(super) fn length(arrivals: &[Arrival]) -> Duration {
    arrivals
        .last()
        .map_or(Duration::ZERO, |a| a.at)
        .max(MIN_LENGTH)
}

/// A duration that ends before the first arrival would start no session.
pub(super) fn starts_before(
    arrivals: &[Arrival],
    end: Option<Duration>,
    origin: &str,
) -> Result<(), PlanError> {
    match (arrivals.first(), end) {
        (Some(first), Some(end)) if first.at > end => Err(PlanError::new(
            origin,
            "load.duration",
            format!(
                "ends before the first arrival (at {}), so no session would start",
                humantime::format_duration(first.at)
            ),
            "give a longer duration, or leave it out: arrivals end with their last one",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
