//! Live counters the fleet keeps as sessions start and end, and the traffic records it
//! follows: what the instruments show while a run goes (the live view, `/metrics`), the
//! fleet's own watch on an unreachable target and the soak verdicts read. Measurement
//! vocabulary, so that what reads them need not know the fleet.

use super::traffic::TrafficLog;
use super::SessionOutcome;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::watch;
use tokio::time::Instant;

/// Running totals the collector keeps as events arrive, sampled with the resources every
/// interval (`fleet.sessions`, `fleet.abandoned`, `fleet.calls`): the x of the soak's
/// per-session slopes, taken at the same tick as the memory they are set against.
#[derive(Debug, Default)]
pub struct RunningTotals {
    /// Sessions that reached the server and ended (completed or failed).
    pub sessions: AtomicU64,
    /// Sessions that vanished without a goodbye (persona `abandon`).
    pub abandoned: AtomicU64,
    /// `tools/call` samples.
    pub calls: AtomicU64,
}

impl RunningTotals {
    /// Count `event` if it is one of the totals'.
    pub fn note(&self, event: &super::Event) {
        use super::{Counter, Event, Phase};
        let add = |c: &AtomicU64, n: u64| {
            c.fetch_add(n, Ordering::Relaxed);
        };
        match event {
            Event::Sample(x) if x.phase == Phase::ToolsCall => add(&self.calls, 1),
            Event::SessionEnded {
                outcome: SessionOutcome::Completed | SessionOutcome::Failed,
                ..
            } => add(&self.sessions, 1),
            Event::Count {
                counter: Counter::Abandoned,
                n,
            } => add(&self.abandoned, *n),
            _ => {}
        }
    }
}

#[derive(Debug, Default)]
pub struct LiveCounters {
    pub in_flight: AtomicU64,
    /// The most sessions in flight at once since the last [`LiveCounters::take_peak`]:
    /// short sessions between samples would leave a point sample of `in_flight` at 0.
    peak_in_flight: AtomicU64,
    pub completed: AtomicU64,
    pub failed: AtomicU64,
    pub interrupted: AtomicU64,
    /// Sessions that never reached the server (the connect phase failed).
    pub unreachable: AtomicU64,
    /// Open model: arrivals that could not start (in-flight cap).
    pub dropped: AtomicU64,
    /// Since when the latest sessions have all failed to reach the server (`None` while
    /// they reach it).
    unreachable_since: watch::Sender<Option<Instant>>,
    /// Reconnect storms and outages so far, and how the long-lived sessions came back.
    traffic: Mutex<TrafficLog>,
    /// What is wrong with a push output right now, in words (`None` while they deliver).
    push_warning: Mutex<Option<String>>,
}

impl LiveCounters {
    /// A session starts: one more in flight (and the interval's peak follows).
    pub fn session_started(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak_in_flight.fetch_max(now, Ordering::Relaxed);
    }

    /// The most sessions in flight at once since the last call (at least those in flight
    /// now); starts the next span from the sessions in flight now.
    pub fn take_peak(&self) -> u64 {
        let now = self.in_flight.load(Ordering::Relaxed);
        self.peak_in_flight.swap(now, Ordering::Relaxed).max(now)
    }

    /// Count a session that ended, by how, and follow whether the target is reachable:
    /// a session that reached the server ends an unreachable spell, one that did not
    /// starts one (if none is going on). An interrupted session says nothing either way.
    pub fn session_ended(&self, outcome: SessionOutcome) {
        let c = match outcome {
            SessionOutcome::Completed => &self.completed,
            SessionOutcome::Failed => &self.failed,
            SessionOutcome::Interrupted => &self.interrupted,
            SessionOutcome::Unreachable => &self.unreachable,
        };
        c.fetch_add(1, Ordering::Relaxed);
        match outcome {
            SessionOutcome::Completed | SessionOutcome::Failed => {
                self.unreachable_since
                    .send_if_modified(|s| s.take().is_some());
            }
            SessionOutcome::Unreachable => {
                self.unreachable_since.send_if_modified(|s| {
                    let starts = s.is_none();
                    s.get_or_insert_with(Instant::now);
                    starts
                });
            }
            SessionOutcome::Interrupted => {}
        }
    }

    /// A session reached the server without ending (a long-lived one got through its
    /// handshake): the unreachable spell, if any, is over.
    pub fn reached(&self) {
        self.unreachable_since
            .send_if_modified(|s| s.take().is_some());
    }

    /// When the current unreachable spell began, if one is going on.
    pub fn unreachable_since(&self) -> Option<Instant> {
        *self.unreachable_since.borrow()
    }

    /// The storms and outages so far.
    pub fn traffic(&self) -> TrafficLog {
        self.traffic_mut().clone()
    }

    /// The records, for the fleet's follower to update.
    pub fn traffic_mut(&self) -> MutexGuard<'_, TrafficLog> {
        // Poisoned only if the follower panicked mid-update; the log is still readable.
        self.traffic.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Say what is wrong with a push output (`None`: it delivers again).
    pub fn set_push_warning(&self, warning: Option<String>) {
        *self.push_warning.lock().unwrap_or_else(|e| e.into_inner()) = warning;
    }

    /// What is wrong with a push output right now, if anything.
    pub fn push_warning(&self) -> Option<String> {
        self.push_warning
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Follow the spells as they start and end.
    pub fn watch_unreachable(&self) -> watch::Receiver<Option<Instant>> {
        self.unreachable_since.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_unreachable_spell_starts_with_the_first_failed_connect_and_ends_on_reaching() {
        let live = LiveCounters::default();
        live.session_ended(SessionOutcome::Completed);
        assert_eq!(live.unreachable_since(), None);
        let t0 = Instant::now();
        live.session_ended(SessionOutcome::Unreachable);
        tokio::time::advance(std::time::Duration::from_secs(1)).await;
        live.session_ended(SessionOutcome::Unreachable);
        live.session_ended(SessionOutcome::Interrupted);
        assert_eq!(
            live.unreachable_since(),
            Some(t0),
            "the spell's first failure"
        );
        live.session_ended(SessionOutcome::Failed);
        assert_eq!(
            live.unreachable_since(),
            None,
            "a failed session reached it"
        );
        assert_eq!(live.unreachable.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn the_peak_in_flight_keeps_sessions_that_ended_between_samples() {
        let live = LiveCounters::default();
        live.session_started();
        live.session_started();
        live.in_flight.fetch_sub(2, Ordering::Relaxed);
        assert_eq!(live.take_peak(), 2, "two were in flight at once");
        assert_eq!(live.take_peak(), 0, "nothing since");
        live.session_started();
        assert_eq!(live.take_peak(), 1);
        assert_eq!(live.take_peak(), 1, "still in flight");
    }
}
