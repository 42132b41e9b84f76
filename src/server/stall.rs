//! The stall fault: from `at` after the server starts, every message it handles waits
//! until `at + for` — a server that freezes for a while, as a GC pause or a blocked
//! event loop would. Open-model runs must show the freeze in their response times.

use std::time::Duration;

use tokio::time::Instant;

/// When the server stalls, measured from its start.
#[derive(Debug, Clone, Copy)]
pub struct Stall {
    until: Instant,
    from: Instant,
}

impl Stall {
    /// A stall that begins `at` after now and lasts `length`.
    pub fn new(at: Duration, length: Duration) -> Stall {
        let from = Instant::now() + at;
        Stall {
            from,
            until: from + length,
        }
    }

    /// Wait out the stall if it is under way.
    pub async fn wait(&self) {
        let now = Instant::now();
        if now >= self.from && now < self.until {
            tokio::time::sleep_until(self.until).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waits_only_inside_the_window() {
        let t0 = Instant::now();
        let stall = Stall::new(Duration::from_secs(5), Duration::from_secs(1));
        stall.wait().await;
        assert_eq!(t0.elapsed(), Duration::ZERO, "before the stall: no wait");
        tokio::time::advance(Duration::from_millis(5_250)).await;
        stall.wait().await;
        assert_eq!(t0.elapsed(), Duration::from_secs(6), "inside: until A + B");
        stall.wait().await;
        assert_eq!(t0.elapsed(), Duration::from_secs(6), "after: no wait");
    }
}
