//! The fleet: turns the plan's load model into virtual clients, decides when to stop
//! (session budget, deadline plus grace, Ctrl-C), and keeps the live counters the
//! progress line reads. Every load model feeds this one loop.

pub mod live;
pub mod progress;

pub use progress::LiveCounters;

use crate::client::{run_session, SessionContext};
use crate::metrics::{Event, SessionOutcome};
use crate::plan::{LoadModel, Plan};
use crate::session::ResponseCache;
use rand::distr::Distribution;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// How the run is asked to stop.
#[derive(Debug, Clone, Default)]
pub struct StopSignals {
    /// Start no new sessions.
    pub drain: CancellationToken,
    /// Abandon sessions in flight (they are counted as interrupted).
    pub abort: CancellationToken,
}

impl StopSignals {
    /// Ctrl-C: stop now, keep what was measured.
    pub fn interrupt(&self) {
        self.drain.cancel();
        self.abort.cancel();
    }
}

/// Sessions left to start when the plan has a session budget.
struct Budget(Option<AtomicU64>);

impl Budget {
    fn claim(&self) -> bool {
        match &self.0 {
            None => true,
            Some(left) => left
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok(),
        }
    }
}

/// A seed for client `index` derived from the run seed (splitmix64), so each client's
/// choices are reproducible and independent of the others.
pub fn client_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Run the plan's load until it is done or stopped.
pub async fn run(plan: Arc<Plan>, ctx: SessionContext, live: Arc<LiveCounters>, stop: StopSignals) {
    let LoadModel::Closed { clients } = plan.load.model;
    let budget = Arc::new(Budget(plan.load.sessions.map(AtomicU64::new)));

    // Deadline: stop starting sessions, then give running ones `grace` to finish.
    let timer = plan.load.duration.map(|d| {
        let stop = stop.clone();
        let grace = plan.load.grace;
        tokio::spawn(async move {
            tokio::time::sleep(d).await;
            stop.drain.cancel();
            tokio::time::sleep(grace).await;
            stop.abort.cancel();
        })
    });

    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..u64::from(clients) {
        let client = VirtualClient {
            plan: plan.clone(),
            ctx: ctx.clone(),
            live: live.clone(),
            budget: budget.clone(),
            stop: stop.clone(),
            rng: SmallRng::seed_from_u64(client_seed(plan.seed, index)),
            cache: ResponseCache::default(),
        };
        tasks.spawn(client.run());
    }
    drop(ctx);
    while tasks.join_next().await.is_some() {}
    if let Some(t) = timer {
        t.abort();
    }
}

struct VirtualClient {
    plan: Arc<Plan>,
    ctx: SessionContext,
    live: Arc<LiveCounters>,
    budget: Arc<Budget>,
    stop: StopSignals,
    rng: SmallRng,
    /// Modern-era response cache, kept across this client's sessions.
    cache: ResponseCache,
}

impl VirtualClient {
    async fn run(mut self) {
        let think = self.plan.load.think;
        loop {
            if self.stop.drain.is_cancelled() || !self.budget.claim() {
                return;
            }
            let plan = &self.plan;
            let persona = &plan.personas[plan.persona_weights.sample(&mut self.rng)];
            let scenario_index = persona.scenarios[persona.scenario_weights.sample(&mut self.rng)];
            let scenario = &plan.scenarios[scenario_index];
            self.live.in_flight.fetch_add(1, Ordering::Relaxed);
            // Each session gets its own generator, drawn from the client's, so answers
            // and arguments repeat with the seed whatever the scheduling.
            let session_rng = SmallRng::from_rng(&mut self.rng);
            let outcome = tokio::select! {
                o = run_session(&self.ctx, persona, scenario, session_rng, &mut self.cache) => o,
                () = self.stop.abort.cancelled() => {
                    self.ctx.recorder.send(Event::SessionEnded {
                        persona: persona.id,
                        outcome: SessionOutcome::Interrupted,
                    });
                    SessionOutcome::Interrupted
                }
            };
            self.live.in_flight.fetch_sub(1, Ordering::Relaxed);
            self.live.record(outcome);
            if outcome == SessionOutcome::Interrupted {
                return;
            }
            if !think.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(think) => {}
                    () = self.stop.drain.cancelled() => return,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_hands_out_exactly_n() {
        let b = Budget(Some(AtomicU64::new(3)));
        assert_eq!((0..5).filter(|_| b.claim()).count(), 3);
        let unlimited = Budget(None);
        assert!((0..100).all(|_| unlimited.claim()));
    }

    #[test]
    fn client_seeds_differ_and_repeat() {
        assert_eq!(client_seed(1, 0), client_seed(1, 0));
        assert_ne!(client_seed(1, 0), client_seed(1, 1));
        assert_ne!(client_seed(1, 0), client_seed(2, 0));
    }
}
