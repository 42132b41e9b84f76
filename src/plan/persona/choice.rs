//! Which persona a session is: drawn by weight per session, or — with `[load]
//! arrivals` — the arrival's own, never drawn. Decided here once for the plan; the
//! client asks [`Plan::session_persona`].

use super::Persona;
use crate::plan::error::PlanError;
use crate::plan::load::LoadModel;
use crate::plan::Plan;
use crate::profile::PersonaSection;
use rand::distr::weighted::WeightedIndex;
use rand::distr::Distribution;
use rand::Rng;

/// The persona names of the profile in plan order (what `[load] arrivals` name): the
/// default persona's when the profile has none.
pub fn names(sections: &[PersonaSection]) -> Vec<&str> {
    if sections.is_empty() {
        vec![DEFAULT_NAME]
    } else {
        sections.iter().map(|p| p.name.as_str()).collect()
    }
}

/// The name of the persona a profile without one plays ([`Persona::default_section`]).
pub(super) const DEFAULT_NAME: &str = "default";

/// The weights sessions draw their persona by; none when arrivals name each session's
/// persona (then weights do not matter, and may all be 0).
pub fn weights(
    personas: &[Persona],
    model: &LoadModel,
    origin: &str,
) -> Result<Option<WeightedIndex<u32>>, PlanError> {
    if matches!(model, LoadModel::Arrivals { .. }) {
        return Ok(None);
    }
    WeightedIndex::new(personas.iter().map(|p| p.weight))
        .map(Some)
        .map_err(|_| {
            PlanError::new(
                origin,
                "persona.weight",
                "every persona has weight 0",
                "give at least one persona a weight of 1 or more",
            )
        })
}

impl Plan {
    /// The persona of a session of virtual client (closed model) or arrival (open
    /// model, set arrivals) `client`: with `[load] arrivals`, arrival `client`'s own,
    /// taking nothing from `rng` (so its first draw goes to the scenario); else drawn by
    /// weight from `rng`.
    pub fn session_persona<R: Rng + ?Sized>(&self, client: u64, rng: &mut R) -> &Persona {
        let index = match (&self.load.model, &self.persona_weights) {
            (LoadModel::Arrivals { arrivals, .. }, _) => usize::try_from(client)
                .ok()
                .and_then(|k| arrivals.get(k))
                .map_or(0, |a| usize::from(a.persona)),
            (_, Some(weights)) => weights.sample(rng),
            // Only arrivals go without weights (see [`weights`]).
            (_, None) => 0,
        };
        &self.personas[index.min(self.personas.len().saturating_sub(1))]
    }

    /// Each persona's share of the sessions, in plan order, from 0 to 1: its weight's
    /// share, or with `[load] arrivals` its share of the list.
    pub fn persona_shares(&self) -> Vec<f64> {
        let counts: Vec<u64> = match &self.load.model {
            LoadModel::Arrivals { arrivals, .. } => {
                let mut counts = vec![0u64; self.personas.len()];
                for a in arrivals {
                    if let Some(n) = counts.get_mut(usize::from(a.persona)) {
                        *n += 1;
                    }
                }
                counts
            }
            _ => self.personas.iter().map(|p| u64::from(p.weight)).collect(),
        };
        let total = counts.iter().sum::<u64>().max(1) as f64;
        counts.iter().map(|&n| n as f64 / total).collect()
    }
}
