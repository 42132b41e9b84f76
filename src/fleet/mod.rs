//! The fleet: turns the plan's load model into sessions over time, and decides when to
//! stop (session budget, deadline plus grace, Ctrl-C). A closed model keeps a number of
//! virtual clients busy (constant or ramping in stages); an open model starts sessions
//! at their intended times whatever the server's speed, and counts the arrivals it
//! could not start as `dropped`. Both hand each session to the same [`Work`], so think
//! time, session shapes and stopping are knobs of one loop, and tests can replace the
//! work with a fake under a paused clock. A session that cannot reach the target is
//! counted as `unreachable`; a closed-model client then backs off before its next one
//! (an open model's arrivals are never retried), and the run can give up on a target
//! that stays down (`--abort-on-unreachable`).

pub mod progress;
pub mod schedule;
pub mod traffic;

pub use progress::LiveCounters;

use crate::client::ClientMemory;
use crate::client::{StopSignals, Work};
use crate::plan::Curve;
use crate::plan::{Backoff, Load, LoadModel, Think};
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

/// Run `load` until it is done or stopped.
pub async fn run<W: Work>(
    load: &Load,
    seed: u64,
    work: Arc<W>,
    live: Arc<LiveCounters>,
    stop: StopSignals,
) -> FleetEnd {
    let budget = Arc::new(Budget(load.sessions.map(AtomicU64::new)));
    // Deadline: stop starting sessions, then give running ones `grace` to finish.
    let timer = load.duration.map(|d| {
        let stop = stop.clone();
        let grace = load.grace;
        tokio::spawn(async move {
            tokio::time::sleep(d).await;
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
    };
    match &load.model {
        LoadModel::Closed { clients } => closed(clients, &shared).await,
        LoadModel::Open {
            rate,
            max_in_flight,
        } => open(rate, *max_in_flight, &shared).await,
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
        }
    }
}

/// How often a ramping closed model re-reads its curve.
const RAMP_TICK: Duration = Duration::from_millis(100);

/// Closed model: keep `clients.at(t)` virtual clients running; a client retired by a
/// ramp-down finishes its current session first.
async fn closed<W: Work>(clients: &Curve, s: &Shared<W>) {
    let start = Instant::now();
    let mut tasks = JoinSet::new();
    let mut active: Vec<CancellationToken> = Vec::new();
    let mut next_index = 0u64;
    loop {
        let want = clients.clients_at(start.elapsed()) as usize;
        while active.len() < want && !s.budget.exhausted() {
            let retire = CancellationToken::new();
            active.push(retire.clone());
            tasks.spawn(client_loop(s.clone(), retire, next_index));
            next_index += 1;
        }
        while active.len() > want {
            if let Some(retire) = active.pop() {
                retire.cancel();
            }
        }
        let ramping = !clients.stages.is_empty();
        tokio::select! {
            () = s.stop.drain.cancelled() => break,
            () = tokio::time::sleep(RAMP_TICK), if ramping => {}
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

/// Virtual client `index`: sessions back to back, with think time between them, and a
/// growing wait after sessions that could not reach the target.
async fn client_loop<W: Work>(s: Shared<W>, retire: CancellationToken, index: u64) {
    let Shared {
        work,
        live,
        budget,
        stop,
        think,
        reconnect,
        seed,
    } = s;
    let mut rng = SmallRng::seed_from_u64(client_seed(seed, index));
    // The backoff's jitter has a generator of its own, so a client's choices (persona,
    // scenario, arguments, think time) do not depend on how often the target was down.
    let mut jitter = SmallRng::seed_from_u64(client_seed(!seed, index));
    let mut unreachable_in_a_row = 0u32;
    let mut memory = ClientMemory::new(index);
    loop {
        if stop.drain.is_cancelled() || retire.is_cancelled() || !budget.claim() {
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

/// Open model: start session k at its intended time; never wait for the server. An
/// arrival that cannot reach the target is counted as unreachable, never retried: the
/// schedule, not the failures, decides how many connections are tried.
async fn open<W: Work>(rate: &Curve, max_in_flight: u32, s: &Shared<W>) {
    let start = Instant::now();
    let mut tasks = JoinSet::new();
    for (k, offset) in rate.arrivals().enumerate() {
        let intended = start + offset;
        tokio::select! {
            () = tokio::time::sleep_until(intended) => {}
            () = s.stop.drain.cancelled() => break,
        }
        if s.stop.drain.is_cancelled() || !s.budget.claim() {
            break;
        }
        s.work.started_late(intended, Instant::now());
        while tasks.try_join_next().is_some() {}
        if tasks.len() >= max_in_flight as usize {
            s.live.dropped.fetch_add(1, Ordering::Relaxed);
            s.work.dropped();
            continue;
        }
        let (work, live, stop) = (s.work.clone(), s.live.clone(), s.stop.clone());
        let mut rng = SmallRng::seed_from_u64(client_seed(s.seed, k as u64));
        tasks.spawn(async move {
            live.session_started();
            let mut memory = ClientMemory::new(k as u64);
            let outcome = work.session(intended, &mut rng, &mut memory, &stop).await;
            live.in_flight.fetch_sub(1, Ordering::Relaxed);
            live.session_ended(outcome);
        });
    }
    while tasks.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests;
