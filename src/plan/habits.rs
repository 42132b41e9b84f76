//! A persona's habits over long sessions, the traffic soak tests are made of: the share
//! of sessions that vanish instead of closing (`abandon`), the keep-alive `ping` of a
//! long-lived legacy session (`ping_every`), the pause between its iterations
//! (`idle`), and how long one long-lived session lasts (`lifetime`). Checked here once,
//! against the persona's era and shape.

use super::error::PlanError;
use super::pause::Think;
use super::quantity::parse_duration;
use super::session_kind::{EraMode, Shape};
use crate::profile::PersonaSection;
use std::time::Duration;

/// What a persona does besides its scenario.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Habits {
    /// Share of sessions (0…1) dropped at the end without a goodbye.
    pub abandon: f64,
    /// Long-lived legacy sessions: a `ping` this often while otherwise idle.
    pub ping_every: Option<Duration>,
    /// Long-lived sessions: a pause between iterations.
    pub idle: Option<Think>,
    /// Long-lived sessions: how long one lasts before it closes (`None`: until the run
    /// drains). Bounded lifetimes keep a closed model's mix of long-lived and churn
    /// sessions steady: without them every client ends up in a session that never ends.
    pub lifetime: Option<Think>,
}

impl Habits {
    pub fn from_section(
        p: &PersonaSection,
        era: EraMode,
        shape: Shape,
        key: &str,
        origin: &str,
    ) -> Result<Habits, PlanError> {
        let err = |k: &str, problem: String, fix: &str| {
            PlanError::new(origin, format!("{key}.{k}"), problem, fix)
        };
        let abandon = p.abandon.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&abandon) {
            return Err(err(
                "abandon",
                format!("{abandon} is not a share"),
                "use a number from 0 (every session closes) to 1 (none does), e.g. 0.1",
            ));
        }
        let long_lived = matches!(shape, Shape::LongLived { .. });
        let ping_every = match p.ping_every.as_deref() {
            None => None,
            Some(text) => {
                let k = format!("{key}.ping_every");
                let d = parse_duration(text, &k, origin)?;
                if !long_lived {
                    return Err(err(
                        "ping_every",
                        "only applies to shape = \"long-lived\"".into(),
                        "add shape = \"long-lived\", or remove ping_every",
                    ));
                }
                if era == EraMode::Modern {
                    return Err(err(
                        "ping_every",
                        "the modern era (2026-07-28) has no ping".into(),
                        "use era = \"legacy\" or \"auto\", or remove ping_every",
                    ));
                }
                if d.is_zero() {
                    return Err(err(
                        "ping_every",
                        "is zero".into(),
                        "use a period such as \"30s\"",
                    ));
                }
                Some(d)
            }
        };
        let idle = match p.idle.as_deref() {
            None => None,
            Some(text) => {
                let think = Think::parse_key(text, &format!("{key}.idle"), origin)?;
                if matches!(think, Think::Exponential(_)) {
                    return Err(err(
                        "idle",
                        format!("{text:?}: idle takes a duration or a range"),
                        "write \"5s\" or \"1s..30s\"",
                    ));
                }
                if !long_lived {
                    return Err(err(
                        "idle",
                        "only applies to shape = \"long-lived\"".into(),
                        "add shape = \"long-lived\", or use [load] think between sessions",
                    ));
                }
                Some(think)
            }
        };
        let lifetime = match p.lifetime.as_deref() {
            None => None,
            Some(text) => {
                let think = Think::parse_key(text, &format!("{key}.lifetime"), origin)?;
                if matches!(think, Think::Exponential(_)) || think.is_zero() {
                    return Err(err(
                        "lifetime",
                        format!("{text:?}: lifetime takes a duration or a range above zero"),
                        "write \"10m\" or \"5m..20m\"",
                    ));
                }
                if !long_lived {
                    return Err(err(
                        "lifetime",
                        "only applies to shape = \"long-lived\" (a churn session ends after its scenario)".into(),
                        "add shape = \"long-lived\", or remove lifetime",
                    ));
                }
                Some(think)
            }
        };
        Ok(Habits {
            abandon,
            ping_every,
            idle,
            lifetime,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(shape: &str, era: &str) -> PersonaSection {
        PersonaSection {
            name: "p".into(),
            shape: Some(shape.into()),
            era: Some(era.into()),
            ..Default::default()
        }
    }

    const LONG: Shape = Shape::LongLived { pace: None };

    fn habits(p: &PersonaSection, era: EraMode, shape: Shape) -> Result<Habits, PlanError> {
        Habits::from_section(p, era, shape, "persona[0]", "test.toml")
    }

    #[test]
    fn ping_every_needs_a_long_lived_legacy_session() {
        let mut p = section("long-lived", "legacy");
        p.ping_every = Some("30s".into());
        let h = habits(&p, EraMode::Legacy, LONG).expect("legacy long-lived");
        assert_eq!(h.ping_every, Some(Duration::from_secs(30)));
        let churn = habits(&p, EraMode::Legacy, Shape::Churn).expect_err("churn");
        assert!(
            churn.to_string().contains("persona[0].ping_every"),
            "{churn}"
        );
        let modern = habits(&p, EraMode::Modern, LONG).expect_err("modern");
        assert!(modern.to_string().contains("no ping"), "{modern}");
        assert!(
            habits(&p, EraMode::Auto, LONG).is_ok(),
            "auto pings if legacy"
        );
    }

    #[test]
    fn abandon_is_a_share_and_idle_a_duration_or_range() {
        let mut p = section("long-lived", "legacy");
        p.abandon = Some(1.5);
        let e = habits(&p, EraMode::Legacy, LONG).expect_err("1.5");
        assert!(e.to_string().contains("persona[0].abandon"), "{e}");
        p.abandon = Some(0.25);
        p.idle = Some("1s..30s".into());
        let h = habits(&p, EraMode::Legacy, LONG).expect("ok");
        assert_eq!(h.abandon, 0.25);
        assert_eq!(
            h.idle,
            Some(Think::Uniform(
                Duration::from_secs(1),
                Duration::from_secs(30)
            ))
        );
        p.idle = Some("exp:1s".into());
        assert!(habits(&p, EraMode::Legacy, LONG).is_err());
        p.idle = Some("2s".into());
        let e = habits(&p, EraMode::Legacy, Shape::Churn).expect_err("churn idle");
        assert!(e.to_string().contains("persona[0].idle"), "{e}");
    }
}
