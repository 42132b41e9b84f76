//! The seam between the fleet's scheduler and the sessions it starts: the [`Work`] it
//! runs (MCP sessions here, a fake in the scheduler's tests) and the [`StopSignals`] that
//! end it. They live with the work, so the fleet depends on the client and not back.

use crate::metrics::SessionOutcome;
use crate::session::ResponseCache;
use rand::rngs::SmallRng;
use std::future::Future;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the run is asked to stop.
#[derive(Debug, Clone, Default)]
pub struct StopSignals {
    /// Start no new sessions (long-lived sessions wind down).
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

/// What the scheduler runs: one session meant to start at `intended`. The real work
/// (in `client`) picks a persona and runs an MCP session; tests use a fake.
pub trait Work: Send + Sync + 'static {
    fn session(
        &self,
        intended: Instant,
        rng: &mut SmallRng,
        cache: &mut ResponseCache,
        stop: &StopSignals,
    ) -> impl Future<Output = SessionOutcome> + Send;

    /// An open-model session started `actual − intended` late (scheduler lag).
    fn started_late(&self, intended: Instant, actual: Instant);

    /// An open-model arrival that could not start (the in-flight cap was reached).
    fn dropped(&self);
}
