//! The generator watching itself: its memory and CPU from `/proc/self`, its CPU share of
//! the cores it may use, and the scheduler lag — how late a short periodic sleep on the
//! runtime wakes. A busy runtime wakes it late; that lateness is in every latency the
//! fleet measured, so a high share or a growing lag means the figures describe
//! mcp-fleet, not the server.

/// The generator's CPU share under which late wake-ups are not its own doing, and the
/// machine's CPU pressure (share of time a runnable task waited for a CPU) above which
/// other work is the cause.
pub const LOW_SHARE: f64 = 0.5;
pub const BUSY_PRESSURE: f64 = 0.1;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How often the lag probe sleeps: short, so it sees the runtime's queue at every moment.
const PROBE_EVERY: Duration = Duration::from_millis(10);

/// The probe's worst lateness since the watcher last took it, in microseconds.
#[derive(Debug, Clone, Default)]
pub struct LagProbe(Arc<AtomicU64>);

impl LagProbe {
    /// Run the probe on the runtime until `done`.
    pub fn start(done: CancellationToken) -> LagProbe {
        let probe = LagProbe::default();
        let max = probe.0.clone();
        tokio::spawn(async move {
            loop {
                let asked = Instant::now() + PROBE_EVERY;
                tokio::select! {
                    () = tokio::time::sleep_until(asked) => {}
                    () = done.cancelled() => break,
                }
                let late = Instant::now().saturating_duration_since(asked);
                max.fetch_max(
                    u64::try_from(late.as_micros()).unwrap_or(u64::MAX),
                    Ordering::Relaxed,
                );
            }
        });
        probe
    }

    /// The worst lateness since the previous call, in seconds; starts a new interval.
    pub fn take(&self) -> f64 {
        self.0.swap(0, Ordering::Relaxed) as f64 / 1e6
    }
}

/// The cores this process may run on (affinity and cgroup quota, as the standard
/// library counts them).
pub fn usable_cores() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_blocked_runtime_shows_as_lag() {
        let done = CancellationToken::new();
        let probe = LagProbe::start(done.clone());
        tokio::time::sleep(Duration::from_millis(30)).await;
        let _ = probe.take();
        // Block this (current-thread) runtime: the probe cannot wake on time.
        std::thread::sleep(Duration::from_millis(60));
        tokio::time::sleep(Duration::from_millis(20)).await;
        let lag = probe.take();
        assert!(lag >= 0.02, "lag {lag}");
        done.cancel();
        assert!(usable_cores() >= 1.0);
    }
}
