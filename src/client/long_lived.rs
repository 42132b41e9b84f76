//! A long-lived session's life between its handshake and the run's end: the scenario
//! repeated (paced like an open model inside the session, or back to back), an `idle`
//! pause between iterations, and — for legacy-era sessions — a keep-alive `ping` on a
//! fixed cadence while the session would otherwise be silent, as hosts send them. A
//! `lifetime` ends the session early, at an iteration boundary or during a wait, never
//! in the middle of a request.

use super::steps;
use super::timer::Timer;
use super::StopSignals;
use crate::metrics::{Event, Phase};
use crate::plan::{Habits, OnError, Scenario};
use crate::protocol::Era;
use crate::session::Session;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;
use tokio::time::Instant;

/// `[load] iteration_rate` (`-q`): one schedule of slots, `start + k / rate`, that every
/// long-lived session of the fleet takes its iterations from — k = 0, 1, 2 … in the order
/// sessions come free. `start` is the first claim (the first session's handshake done).
#[derive(Debug)]
pub struct FleetPace {
    rate: f64,
    start: OnceLock<Instant>,
    next: AtomicU64,
}

impl FleetPace {
    /// `rate` iterations a second (this process's share of the fleet's).
    pub fn new(rate: f64) -> FleetPace {
        FleetPace {
            rate,
            start: OnceLock::new(),
            next: AtomicU64::new(0),
        }
    }

    /// The next slot's due time. A due time already past means every session was busy
    /// then: the iteration is late by that much, and its time counts from the slot.
    pub fn claim(&self) -> Instant {
        let start = *self.start.get_or_init(Instant::now);
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        start + Duration::from_secs_f64(k as f64 / self.rate)
    }
}

/// How a long-lived session spaces its iterations.
#[derive(Debug, Clone, Copy)]
pub enum Pace<'a> {
    /// Back to back (after `idle`).
    Free,
    /// The persona's own `pace`: iteration i due at start + i / rate.
    Own(f64),
    /// The fleet's `iteration_rate`: the next free slot of the shared schedule.
    Fleet(&'a FleetPace),
}

/// The session's keep-alive cadence: slots at `start + k·period`.
#[derive(Debug, Clone, Copy)]
struct Pings {
    start: Instant,
    period: Duration,
}

impl Pings {
    /// The first slot strictly after `now`: slots missed while the session was busy are
    /// skipped, as a host's keep-alive timer does not catch up.
    fn next_after(&self, now: Instant) -> Instant {
        let since = now.saturating_duration_since(self.start);
        let done = since.as_nanos() / self.period.as_nanos().max(1);
        let k = u32::try_from(done + 1).unwrap_or(u32::MAX);
        self.start + self.period.saturating_mul(k)
    }
}

/// Why the session stopped waiting.
enum Stopped {
    Drained,
    /// A ping failed in a way that ends the session.
    Broken,
}

/// A long-lived session repeats its scenario until the run drains. With a pace, the
/// iterations are scheduled like an open model: iteration i is due at start + i/pace
/// (the persona's own pace) or at the next free slot of the fleet's schedule
/// (`iteration_rate`), and its first phase is measured from then, so a slow server shows
/// up as response time rather than as fewer operations. `idle` adds a pause after each
/// iteration (the next starts at the later of its due time and the pause's end; a
/// pause that ends past the due time is the client's own, measured from its end).
pub(super) async fn run(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    scenario: &Scenario,
    env: &mut super::env::Env<'_>,
    pace: Pace<'_>,
    habits: &Habits,
    stop: &StopSignals,
) {
    let start = Instant::now();
    let pings = match habits.ping_every {
        Some(_) if session.era() == Era::Modern => {
            // An `auto` session that found a modern server: 2026-07-28 has no ping.
            timer.recorder().send(Event::Skipped {
                persona: timer.persona(),
                phase: Phase::Ping,
            });
            None
        }
        Some(period) => Some(Pings { start, period }),
        None => None,
    };
    // Drawn only when set, so runs without lifetimes keep their seeded choices.
    let ends = habits.lifetime.map(|t| start + t.sample(session.rng()));
    let over = || ends.is_some_and(|e| Instant::now() >= e);
    let mut free_from = start;
    for i in 0u64.. {
        if stop.drain.is_cancelled() || over() {
            return;
        }
        let on_error = scenario.on_error;
        let due = match pace {
            Pace::Free => None,
            Pace::Own(rate) => Some(start + Duration::from_secs_f64(i as f64 / rate)),
            Pace::Fleet(fleet) => {
                // A slot is taken when the session is free for it, not during its pause.
                if free_from > Instant::now() {
                    let until = ends.map_or(free_from, |e| free_from.min(e));
                    if wait(session, timer, env, Some(until), pings, on_error, stop)
                        .await
                        .is_err()
                        || over()
                    {
                        return;
                    }
                }
                Some(fleet.claim())
            }
        };
        let wake = due.map_or(free_from, |d| d.max(free_from));
        // A session whose lifetime ends before its next iteration ends then, not after.
        let wake = ends.map_or(wake, |e| wake.min(e));
        if wait(session, timer, env, Some(wake), pings, on_error, stop)
            .await
            .is_err()
            || over()
        {
            return;
        }
        if let Some(due) = due {
            // Late because the server held the session (or, for the fleet's schedule,
            // every session) past the due time: measured from the due time, so no
            // coordinated omission; late because of the session's own pause: from the
            // pause's end (a fleet slot is only taken after the pause).
            let paused = matches!(pace, Pace::Own(_)) && habits.idle.is_some();
            timer.intend(if paused { wake } else { due });
        }
        // Boxed, as the other steps: the held session keeps only what waiting needs.
        if Box::pin(steps::run(session, timer, scenario, env))
            .await
            .is_err()
        {
            return;
        }
        if matches!(pace, Pace::Free) && scenario.steps.is_empty() {
            // Nothing to repeat: hold the session open (pinging) until the run drains or
            // its lifetime ends.
            let _ = wait(session, timer, env, ends, pings, scenario.on_error, stop).await;
            return;
        }
        let idle = habits.idle.map(|t| t.sample(session.rng()));
        free_from = Instant::now() + idle.unwrap_or_default();
    }
}

/// Wait until `until` (`None`: until the run drains), pinging on the cadence meanwhile;
/// a failed ping ends the session as the scenario's `on_error` says of any step. A
/// listening session reads the server meanwhile (its listen's changes, as they come)
/// and fetches a changed list again at once, as its `list_changed` says.
async fn wait(
    session: &mut Session<'_>,
    timer: &mut Timer<'_>,
    env: &mut super::env::Env<'_>,
    until: Option<Instant>,
    pings: Option<Pings>,
    on_error: OnError,
    stop: &StopSignals,
) -> Result<(), Stopped> {
    loop {
        let ping_at = pings
            .map(|p| p.next_after(Instant::now()))
            .filter(|at| until.is_none_or(|u| *at < u));
        if session.listening() {
            let target = ping_at.or(until);
            // No end in sight: read until the run drains (a year stands for "never").
            let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
            tokio::select! {
                () = session.listen_until(target.unwrap_or(far)) => {}
                () = stop.changes.wanted() => {
                    // A list-changed storm: make the changes still wanted.
                    while stop.changes.claim() {
                        Box::pin(session.trigger_change()).await;
                    }
                    continue;
                }
                () = stop.drain.cancelled() => return Err(Stopped::Drained),
            }
            if !session.pending_refetch.is_empty() {
                let r = Box::pin(steps::refetch_changed_lists(session, timer, env, on_error)).await;
                if let Err(kind) = r {
                    if super::timer::ends_session(kind, on_error) {
                        return Err(Stopped::Broken);
                    }
                }
                continue;
            }
            match target {
                Some(t) if Instant::now() >= t => {}
                // Back early (the connection went): wait the plain way.
                _ => continue,
            }
            if ping_at.is_none() {
                return Ok(());
            }
        } else {
            let Some(at) = ping_at else {
                return match until {
                    Some(u) => tokio::select! {
                        () = tokio::time::sleep_until(u) => Ok(()),
                        () = stop.drain.cancelled() => Err(Stopped::Drained),
                    },
                    None => {
                        stop.drain.cancelled().await;
                        Err(Stopped::Drained)
                    }
                };
            };
            tokio::select! {
                () = tokio::time::sleep_until(at) => {}
                () = stop.drain.cancelled() => return Err(Stopped::Drained),
            }
        }
        if let Err(kind) = Box::pin(steps::ping(session, timer, on_error)).await {
            if super::timer::ends_session(kind, on_error) {
                return Err(Stopped::Broken);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn pings_keep_a_fixed_cadence_and_skip_the_slots_missed_while_busy() {
        let start = Instant::now();
        let p = Pings {
            start,
            period: Duration::from_millis(200),
        };
        let ms = |n| start + Duration::from_millis(n);
        assert_eq!(p.next_after(start), ms(200));
        assert_eq!(p.next_after(ms(199)), ms(200));
        assert_eq!(p.next_after(ms(200)), ms(400), "strictly after");
        // Busy from 250 ms to 1 130 ms: the slots in between are not caught up.
        tokio::time::advance(Duration::from_millis(1130)).await;
        assert_eq!(p.next_after(Instant::now()), ms(1200));
    }
}
