//! The seam between the fleet's scheduler and the sessions it starts: the [`Work`] it
//! runs (MCP sessions here, a fake in the scheduler's tests) and the [`StopSignals`] that
//! end it. They live with the work, so the fleet depends on the client and not back.

use super::memory::ClientMemory;
use crate::metrics::SessionOutcome;
use rand::rngs::SmallRng;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the run is asked to stop.
#[derive(Debug, Clone, Default)]
pub struct StopSignals {
    /// Start no new sessions (long-lived sessions wind down).
    pub drain: CancellationToken,
    /// Abandon sessions in flight (they are counted as interrupted).
    pub abort: CancellationToken,
    /// Reconnect storms, and the long-lived sessions they would drop.
    pub storm: StormSignal,
    /// List-changed storms: changes the fleet asks the server for, made by listening
    /// sessions (`[load] events`, `storm = "list-changed"`).
    pub changes: ChangeRequests,
    /// When the run drains, long-lived sessions close at a time drawn uniformly from
    /// this window (half the grace period) rather than all at one instant: a held fleet
    /// of 100k sessions would otherwise end in a close storm of the generator's own
    /// making. Zero: at once.
    pub close_spread: std::time::Duration,
}

/// The long-lived sessions of a run as a storm sees them: how many are live (past their
/// handshake), and a generation counter they watch — a storm bumps it and every live
/// one drops its connection at once (a `watch`, so nothing polls).
#[derive(Debug, Clone, Default)]
pub struct StormSignal {
    generation: Arc<watch::Sender<u64>>,
    live: Arc<AtomicU64>,
    /// Sessions established since the latest storm (recovery is counted on these, so a
    /// session that has not noticed the storm yet does not pass for one that is back).
    fresh: Arc<AtomicU64>,
    /// Every long-lived session ever established: when it grows, the target was reached
    /// (a long-lived session only ends, and says so, when the run does).
    established: Arc<AtomicU64>,
}

impl StormSignal {
    /// Drop every live long-lived session; how many were live.
    pub fn fire(&self) -> u64 {
        let live = self.live();
        self.fresh.store(0, Ordering::Relaxed);
        self.generation.send_modify(|g| *g += 1);
        live
    }

    /// Storms so far.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Long-lived sessions live now.
    pub fn live(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }

    /// Long-lived sessions established since the latest storm.
    pub fn fresh(&self) -> u64 {
        self.fresh.load(Ordering::Relaxed)
    }

    /// Long-lived sessions established since the run began.
    pub fn established_total(&self) -> u64 {
        self.established.load(Ordering::Relaxed)
    }

    /// A long-lived session is established: it counts as live until the guard drops, and
    /// the receiver tells it of the next storm.
    pub fn established(&self) -> (LiveSession, watch::Receiver<u64>) {
        let rx = self.generation.subscribe();
        let generation = *rx.borrow();
        self.live.fetch_add(1, Ordering::Relaxed);
        self.fresh.fetch_add(1, Ordering::Relaxed);
        self.established.fetch_add(1, Ordering::Relaxed);
        let guard = LiveSession {
            signal: self.clone(),
            generation,
        };
        (guard, rx)
    }
}

/// One live long-lived session (see [`StormSignal::established`]).
#[derive(Debug)]
pub struct LiveSession {
    signal: StormSignal,
    generation: u64,
}

impl Drop for LiveSession {
    fn drop(&mut self) {
        self.signal.live.fetch_sub(1, Ordering::Relaxed);
        if self.signal.generation() == self.generation {
            // Saturating: `fire` may have reset it between our add and this.
            let _ = self
                .signal
                .fresh
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
    }
}

/// Changes asked of the server and not yet made: a listening session claims them one by
/// one and makes each with the server's `notify_list_changed` tool.
#[derive(Debug, Clone, Default)]
pub struct ChangeRequests {
    pending: Arc<AtomicU64>,
    asked: Arc<tokio::sync::Notify>,
}

impl ChangeRequests {
    /// Ask for `n` more changes.
    pub fn request(&self, n: u64) {
        self.pending.fetch_add(n, Ordering::Relaxed);
        self.asked.notify_waiters();
    }

    /// Take one change to make; `false` when none is left.
    pub fn claim(&self) -> bool {
        self.pending
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Resolves when changes are asked for (at once when some are waiting).
    pub async fn wanted(&self) {
        let asked = self.asked.notified();
        if self.pending.load(Ordering::Relaxed) > 0 {
            return;
        }
        asked.await;
    }
}

impl StopSignals {
    /// Ctrl-C: stop now, keep what was measured.
    pub fn interrupt(&self) {
        self.drain.cancel();
        self.abort.cancel();
    }
}

/// What the scheduler runs: one session meant to start at `intended`. The real work
/// (in `client`) picks a persona and runs an MCP session; tests use a fake.
pub trait Work: Send + Sync + 'static {
    fn session(
        &self,
        intended: Instant,
        rng: &mut SmallRng,
        memory: &mut ClientMemory,
        stop: &StopSignals,
    ) -> impl Future<Output = SessionOutcome> + Send;

    /// An open-model session started `actual − intended` late (scheduler lag).
    fn started_late(&self, intended: Instant, actual: Instant);

    /// An open-model arrival that could not start (the in-flight cap was reached).
    fn dropped(&self);
}
