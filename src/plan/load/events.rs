//! `[load] events`: storms at set times (or shares of the run), checked and sorted.

use super::{LoadEvent, Storm};
use crate::plan::error::PlanError;
use crate::profile::EventSection;
use std::time::Duration;

/// `events = [{ at = "10m", storm = "reconnect" }]`, or `at = "40%"` of the run (so a
/// `--duration` scales it): each within the run when its length is known (else it
/// could never happen), sorted by time.
pub(super) fn events(
    sections: &[EventSection],
    duration: Option<Duration>,
    origin: &str,
) -> Result<Vec<LoadEvent>, PlanError> {
    let mut out = Vec::new();
    for (i, e) in sections.iter().enumerate() {
        let key = format!("load.events[{i}]");
        let at = crate::plan::soak::span(&e.at, &format!("{key}.at"), origin)?;
        let storm = match (e.storm.as_str(), e.count) {
            ("reconnect", None) => Storm::Reconnect,
            ("list-changed", count) => match count.unwrap_or(1) {
                count @ 1..=10_000 => Storm::ListChanged { count },
                n => {
                    return Err(PlanError::new(
                        origin,
                        format!("{key}.count"),
                        format!("{n} changes"),
                        "ask for 1 to 10000 changes",
                    ))
                }
            },
            ("reconnect", Some(_)) => {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.count"),
                    "a reconnect storm drops every long-lived session: it has no count",
                    "remove count, or use storm = \"list-changed\"",
                ))
            }
            (other, _) => {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.storm"),
                    format!("{other:?} is not a storm"),
                    "use storm = \"reconnect\" or \"list-changed\"",
                ))
            }
        };
        let at = match (at, duration) {
            (crate::plan::soak::Span::Share(share), Some(d)) => d.mul_f64(share),
            (crate::plan::soak::Span::Fixed(at), Some(d)) if at >= d => {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.at"),
                    format!(
                        "{} is not before the end of the run ({})",
                        e.at,
                        humantime::format_duration(d)
                    ),
                    "write it as a share of the run, which scales with --duration (e.g. at = \"40%\"), move it inside the run, or make the run longer",
                ))
            }
            (crate::plan::soak::Span::Fixed(at), Some(_)) => at,
            (_, None) => {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.at"),
                    "the run has no known length, so the event may never happen",
                    "give the run a duration (duration = \"10m\" or --duration)",
                ))
            }
        };
        out.push(LoadEvent { at, storm });
    }
    out.sort_by_key(|e| e.at);
    Ok(out)
}
