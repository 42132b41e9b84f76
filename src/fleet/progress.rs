//! Live counters shared by the virtual clients, and the progress line that reads them
//! (on a terminal only; silent with `--quiet` or when stderr is not a TTY).

use crate::metrics::SessionOutcome;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

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
    pub fn record(&self, outcome: SessionOutcome) {
        let c = match outcome {
            SessionOutcome::Completed => &self.completed,
            SessionOutcome::Failed => &self.failed,
            SessionOutcome::Interrupted => &self.interrupted,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    fn line(&self, elapsed: Duration, rate: f64) -> String {
        format!(
            "  {:>7.1}s  sessions {:>8} ok {:>6} failed  {:>9.1}/s  in flight {:>5}{}",
            elapsed.as_secs_f64(),
            self.completed.load(Ordering::Relaxed),
            self.failed.load(Ordering::Relaxed),
            rate,
            self.in_flight.load(Ordering::Relaxed),
            match self.dropped.load(Ordering::Relaxed) {
                0 => String::new(),
                n => format!("  DROPPED {n}"),
            }
        )
    }
}

/// Redraw the progress line every `every` until `done`; then clear it.
pub async fn show(live: std::sync::Arc<LiveCounters>, every: Duration, done: CancellationToken) {
    let start = Instant::now();
    let mut last = (start, 0u64);
    let mut tick = tokio::time::interval(every);
    tick.tick().await;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = done.cancelled() => break,
        }
        let now = Instant::now();
        let ended = live.completed.load(Ordering::Relaxed) + live.failed.load(Ordering::Relaxed);
        let dt = now.duration_since(last.0).as_secs_f64().max(1e-9);
        let rate = (ended - last.1) as f64 / dt;
        last = (now, ended);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{}", live.line(now.duration_since(start), rate));
        let _ = err.flush();
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r{:80}\r", "");
    let _ = err.flush();
}
