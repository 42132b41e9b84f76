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
