//! Live counters shared by the virtual clients; the live view (`live.rs`) and the
//! metrics endpoint read them.

use crate::metrics::SessionOutcome;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct LiveCounters {
    pub in_flight: AtomicU64,
    pub completed: AtomicU64,
    pub failed: AtomicU64,
    pub interrupted: AtomicU64,
    /// Open model: arrivals that could not start (in-flight cap).
    pub dropped: AtomicU64,
}

impl LiveCounters {
    /// Count a session that ended, by how.
    pub fn session_ended(&self, outcome: SessionOutcome) {
        let c = match outcome {
            SessionOutcome::Completed => &self.completed,
            SessionOutcome::Failed => &self.failed,
            SessionOutcome::Interrupted => &self.interrupted,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}
