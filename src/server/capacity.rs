//! The capacity knob (`serve --workers N --service-time T`): every `initialize` and
//! `server/discover` holds one of N permits for T, waiting rather than burning CPU, so
//! the server handles at most N / T handshakes a second whatever the machine. A ceiling
//! search against it has a known answer, and a verdict of queueing (not CPU) to find.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// A bounded pool of workers, each taking `service` per handshake.
#[derive(Debug, Clone)]
pub struct Capacity {
    permits: Arc<Semaphore>,
    workers: u32,
    service: Duration,
}

impl Capacity {
    /// `workers` permits (at least one) of `service` each.
    pub fn new(workers: u32, service: Duration) -> Capacity {
        Capacity {
            permits: Arc::new(Semaphore::new(workers.max(1) as usize)),
            workers: workers.max(1),
            service,
        }
    }

    /// Handshakes a second this pool can serve: workers / service time.
    pub fn per_s(&self) -> f64 {
        f64::from(self.workers) / self.service.as_secs_f64().max(1e-9)
    }

    /// Wait for a worker, then hold it for the service time. Requests beyond the
    /// workers queue here (fairly, in arrival order), as they would behind a real pool.
    pub async fn serve(&self) {
        // The semaphore is never closed, so acquiring cannot fail.
        if let Ok(_permit) = self.permits.acquire().await {
            tokio::time::sleep(self.service).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::Instant;

    #[tokio::test(start_paused = true)]
    async fn n_workers_serve_n_at_a_time_and_queue_the_rest() {
        let c = Capacity::new(2, Duration::from_millis(20));
        assert!((c.per_s() - 100.0).abs() < 1e-9);
        let t0 = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..5 {
            let c = c.clone();
            set.spawn(async move {
                c.serve().await;
                Instant::now()
            });
        }
        let mut ends = Vec::new();
        while let Some(end) = set.join_next().await {
            ends.push(end.expect("task").duration_since(t0));
        }
        ends.sort();
        let ms: Vec<u128> = ends.iter().map(Duration::as_millis).collect();
        // Two at a time: 20, 20, 40, 40, 60.
        assert_eq!(ms, vec![20, 20, 40, 40, 60]);
    }
}
