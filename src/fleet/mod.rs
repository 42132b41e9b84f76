//! The fleet: turns the plan's load model into sessions over time, and decides when to
//! stop (session budget, deadline plus grace, Ctrl-C). A closed model keeps a number of
//! virtual clients busy (constant or ramping in stages); an open model starts sessions
//! at their intended times whatever the server's speed, and counts the arrivals it
//! could not start as `dropped` — the times from a rate curve or from the plan's list
//! of set arrivals, through one loop ([`open`]). All hand each session to the same
//! [`Work`], so think time, session shapes and stopping are knobs of one loop, and
//! tests can replace the work with a fake under a paused clock. A session that cannot
//! reach the target is counted as `unreachable`; a closed-model client then backs off
//! before its next one (an open model's arrivals are never retried), and the run can
//! give up on a target that stays down (`--abort-on-unreachable`).
//!
//! Under a shard (`run --shard I/N`) the fleet runs its part of the same schedule:
//! open-model (or set) arrival k only when k mod N = I, at its own intended time and
//! with its own seed; closed-model client slot j on shard j mod N, the curve read on
//! ticks of the shared start so every shard sees the same counts at the same times.
//! Everything is anchored on `start` (the run's `--start-at`), so the N shards together
//! make exactly the sessions and the choices of one process.

mod open;
pub mod schedule;
pub mod traffic;

use crate::client::ClientMemory;
use crate::client::{StopSignals, Work};
use crate::metrics::LiveCounters;
use crate::plan::Curve;
use crate::plan::{Backoff, Load, LoadModel, Think};
use crate::shard::Shard;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use crate::metrics::SessionOutcome;

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

    fn exhausted(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|left| left.load(Ordering::Acquire) == 0)
    }
}

/// A seed for client (or arrival) `index` derived from the run seed (splitmix64), so
/// each one's choices are reproducible and independent of the others and of timing.
pub fn client_seed(seed: u64, index: u64) -> u64 {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of closed-model client slot `index` the `generation`-th time a ramp fills
/// it (0: the first client there, seeded as [`client_seed`]; a slot emptied by a
/// ramp-down and filled again gets a new client with new choices).
pub fn slot_seed(seed: u64, index: u64, generation: u64) -> u64 {
    let first = client_seed(seed, index);
    if generation == 0 {
        first
    } else {
        client_seed(first, generation)
    }
}

/// How the load ended by itself (a signal is the caller's to know).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetEnd {
    /// The session budget was used up.
    Budget,
    /// The deadline (or the schedule, which the plan bounds by the deadline) ran out.
    Deadline,
    /// The target stayed unreachable for `--abort-on-unreachable`.
    Unreachable,
}

/// This shard's part of a session budget of `sessions`. Open model and set arrivals:
/// the arrivals 0..S, so [`Shard::share`]. Closed model: session g = j + C·m is client
/// slot j's (C the most clients the curve asks for), so a shard gets the sessions of its
/// own slots (a shard without clients, none); the shares add up to S either way.
pub fn budget_share(model: &LoadModel, shard: Shard, sessions: u64) -> u64 {
    match model {
        LoadModel::Open { .. } | LoadModel::Arrivals { .. } => shard.share(sessions),
        LoadModel::Closed { clients } => {
            let peak = std::iter::once(clients.start)
                .chain(clients.stages.iter().map(|s| s.target))
                .map(|c| Curve::constant(c, None).clients_at(Duration::ZERO))
                .max()
                .map_or(0, u64::from);
            if peak == 0 {
                return shard.share(sessions);
            }
            let (rounds, rest) = (sessions / peak, sessions % peak);
            rounds * shard.share(peak) + shard.share(rest)
        }
    }
}

/// Which part of the schedule this process runs, and from when.
#[derive(Debug, Clone, Copy)]
pub struct Anchor {
    pub shard: Shard,
    /// The schedule's time zero (every shard's, with `--start-at`); the caller has
    /// waited for it, so it is now or just past.
    pub start: Instant,
}

impl Anchor {
    /// Shard `shard`'s part of the schedule from `start` (`--start-at`, waited for), or,
    /// without one, from now: when the fleet starts, as it always has.
    pub fn new(shard: Shard, start: Option<Instant>) -> Anchor {
        Anchor {
            shard,
            start: start.unwrap_or_else(Instant::now),
        }
    }

    /// The whole schedule, from now.
    pub fn now() -> Anchor {
        Anchor {
            shard: Shard::ONE,
            start: Instant::now(),
        }
    }
}

/// Run `load` (this shard's part of it, from `anchor.start`) until it is done or
/// stopped. A session budget is shared as the schedule is ([`budget_share`]).
pub async fn run<W: Work>(
    load: &Load,
    seed: u64,
    anchor: Anchor,
    work: Arc<W>,
    live: Arc<LiveCounters>,
    stop: StopSignals,
) -> FleetEnd {
    let Anchor { shard, start } = anchor;
    let budget = Arc::new(Budget(
        load.sessions
            .map(|s| AtomicU64::new(budget_share(&load.model, shard, s))),
    ));
    // Deadline: stop starting sessions, then give running ones `grace` to finish.
    let deadline_drained = Arc::new(AtomicBool::new(false));
    let timer = load.duration.map(|d| {
        let stop = stop.clone();
        let grace = load.grace;
        let by_deadline = deadline_drained.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(start + d).await;
            if !stop.drain.is_cancelled() {
                by_deadline.store(true, Ordering::Release);
            }
            stop.drain.cancel();
            tokio::time::sleep(grace).await;
            stop.abort.cancel();
        })
    });
    let gave_up = Arc::new(AtomicBool::new(false));
    let watch = load.abort_on_unreachable.map(|after| {
        tokio::spawn(give_up_when_unreachable(
            live.watch_unreachable(),
            after,
            stop.clone(),
            gave_up.clone(),
        ))
    });
    // Storms, and how long-lived sessions came through storms and outages.
    let traffic = tokio::spawn(traffic::follow(
        start,
        load.events.clone(),
        live.clone(),
        stop.clone(),
    ));
    let shared = Shared {
        work,
        live,
        budget: budget.clone(),
        stop,
        think: load.think,
        reconnect: load.reconnect,
        seed,
        shard,
        start,
        deadline_drained,
    };
    match &load.model {
        LoadModel::Closed { clients } => closed(clients, &shared).await,
        LoadModel::Open {
            rate,
            max_in_flight,
        } => open::open(rate.arrivals(), *max_in_flight, &shared).await,
        // The arrival's persona is the work's to take: arrival k is the list's k-th.
        LoadModel::Arrivals {
            arrivals,
            max_in_flight,
        } => open::open(arrivals.iter().map(|a| a.at), *max_in_flight, &shared).await,
    }
    for task in timer.into_iter().chain(watch).chain([traffic]) {
        task.abort();
    }
    if gave_up.load(Ordering::Acquire) {
        FleetEnd::Unreachable
    } else if budget.exhausted() {
        FleetEnd::Budget
    } else {
        FleetEnd::Deadline
    }
}

/// Stop the run once the target has been unreachable for `after` without a break.
async fn give_up_when_unreachable(
    mut since: tokio::sync::watch::Receiver<Option<Instant>>,
    after: Duration,
    stop: StopSignals,
    gave_up: Arc<AtomicBool>,
) {
    loop {
        let spell = *since.borrow_and_update();
        let changed = match spell {
            None => since.changed().await,
            Some(began) => tokio::select! {
                () = tokio::time::sleep_until(began + after) => {
                    gave_up.store(true, Ordering::Release);
                    // The target is gone: sessions still running have nothing to wait for.
                    stop.interrupt();
                    return;
                }
                changed = since.changed() => changed,
            },
        };
        if changed.is_err() {
            return;
        }
    }
}

/// What every client (or arrival) of one run shares.
struct Shared<W> {
    work: Arc<W>,
    live: Arc<LiveCounters>,
    budget: Arc<Budget>,
    stop: StopSignals,
    think: Think,
    reconnect: Option<Backoff>,
    seed: u64,
    shard: Shard,
    start: Instant,
    /// The drain came from the deadline (not Ctrl-C, a budget, giving up): the open
    /// model still starts the arrivals whose time came before it.
    deadline_drained: Arc<AtomicBool>,
}

impl<W> Clone for Shared<W> {
    fn clone(&self) -> Self {
        Shared {
            work: self.work.clone(),
            live: self.live.clone(),
            budget: self.budget.clone(),
            stop: self.stop.clone(),
            think: self.think,
            reconnect: self.reconnect,
            seed: self.seed,
            shard: self.shard,
            start: self.start,
            deadline_drained: self.deadline_drained.clone(),
        }
    }
}

/// How often a ramping closed model re-reads its curve.
const RAMP_TICK: Duration = Duration::from_millis(100);

/// Where the closed-model clients are read off the curve: `t` rounded down to a
/// [`RAMP_TICK`] from the start, so a wake-up between ticks (a client ending) sees what
/// the last tick saw, and every shard the same counts at the same times.
fn ramp_time(elapsed: Duration) -> Duration {
    let tick = RAMP_TICK.as_nanos();
    let ticks = elapsed.as_nanos() / tick;
    Duration::from_nanos(u64::try_from(ticks * tick).unwrap_or(u64::MAX))
}

/// Closed model: keep `clients.at(t)` virtual clients running; a client retired by a
/// ramp-down finishes its current session first. Clients sit in slots 0, 1, …: global
/// slot j is this shard's when j mod N = I, so a shard runs `share(clients_at(t))` of
/// them, and a ramp-down empties the highest slots first. A client takes its first
/// session from the budget as it is started, so a budget of at most the clients goes to
/// the first slots whatever the timing.
async fn closed<W: Work>(clients: &Curve, s: &Shared<W>) {
    let mut tasks = JoinSet::new();
    let mut active: Vec<CancellationToken> = Vec::new();
    // How many times each of our slots was filled.
    let mut generations: Vec<u64> = Vec::new();
    let ramping = !clients.stages.is_empty();
    let mut ticks = tokio::time::interval_at(s.start + RAMP_TICK, RAMP_TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        let t = ramp_time(s.start.elapsed());
        let want =
            usize::try_from(s.shard.share(u64::from(clients.clients_at(t)))).unwrap_or(usize::MAX);
        while active.len() < want && s.budget.claim() {
            let local = active.len();
            if generations.len() <= local {
                generations.push(0);
            } else {
                generations[local] += 1;
            }
            let slot = Slot {
                index: s.shard.global(local as u64),
                generation: generations[local],
            };
            let retire = CancellationToken::new();
            active.push(retire.clone());
            tasks.spawn(client_loop(s.clone(), retire, slot));
        }
        while active.len() > want {
            if let Some(retire) = active.pop() {
                retire.cancel();
            }
        }
        tokio::select! {
            () = s.stop.drain.cancelled() => break,
            _ = ticks.tick(), if ramping => {}
            done = tasks.join_next(), if !tasks.is_empty() => {
                if done.is_some() && tasks.is_empty() && (s.budget.exhausted() || !ramping) {
                    break;
                }
            }
            // A constant model with nothing left to run.
            () = std::future::ready(()), if tasks.is_empty() && !ramping => break,
        }
    }
    while tasks.join_next().await.is_some() {}
}

/// A closed-model client's place: its global slot index (its [`ClientMemory`] index:
/// where its sequential cursors start, which bearer token it uses) and how many clients
/// held the slot before it (for its seed, [`slot_seed`]).
#[derive(Debug, Clone, Copy)]
struct Slot {
    index: u64,
    generation: u64,
}

/// Virtual client `slot`: sessions back to back, with think time between them, and a
/// growing wait after sessions that could not reach the target. Its first session was
/// taken from the budget when it was started.
async fn client_loop<W: Work>(s: Shared<W>, retire: CancellationToken, slot: Slot) {
    let Shared {
        work,
        live,
        budget,
        stop,
        think,
        reconnect,
        seed,
        ..
    } = s;
    let Slot { index, generation } = slot;
    let mut rng = SmallRng::seed_from_u64(slot_seed(seed, index, generation));
    // The backoff's jitter has a generator of its own, so a client's choices (persona,
    // scenario, arguments, think time) do not depend on how often the target was down.
    let mut jitter = SmallRng::seed_from_u64(slot_seed(!seed, index, generation));
    let mut unreachable_in_a_row = 0u32;
    let mut memory = ClientMemory::new(index);
    let mut claimed = true;
    loop {
        let claimed = std::mem::take(&mut claimed) || budget.claim();
        if stop.drain.is_cancelled() || retire.is_cancelled() || !claimed {
            return;
        }
        live.session_started();
        let storms = stop.storm.generation();
        let outcome = work
            .session(Instant::now(), &mut rng, &mut memory, &stop)
            .await;
        // A session a storm dropped reconnects as a client does after a load balancer
        // restart: after the first step of the backoff (jittered, so not all at once).
        let stormed = stop.storm.generation() != storms && outcome == SessionOutcome::Completed;
        live.in_flight.fetch_sub(1, Ordering::Relaxed);
        live.session_ended(outcome);
        // No think time once the budget is spent: it would only delay the end.
        if outcome == SessionOutcome::Interrupted || budget.exhausted() {
            return;
        }
        let mut pause = think.sample(&mut rng);
        if outcome == SessionOutcome::Unreachable {
            unreachable_in_a_row = unreachable_in_a_row.saturating_add(1);
            if let Some(b) = reconnect {
                pause = pause.max(b.delay(unreachable_in_a_row, &mut jitter));
            }
        } else {
            unreachable_in_a_row = 0;
            if let (true, Some(b)) = (stormed, reconnect) {
                pause = pause.max(b.delay(1, &mut jitter));
            }
        }
        if !pause.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                () = stop.drain.cancelled() => return,
                () = retire.cancelled() => return,
            }
        }
    }
}

#[cfg(test)]
mod tests;
