//! `--push KIND=URL`: the run's figures pushed to a time-series database every
//! `--push-every`, so a soak or a short-lived shard is watched where dashboards already
//! look. One task per receiver; each push is the figures so far, cumulative, so a lost
//! push loses nothing but a point, and the final push (the run's last figures, equal to
//! `summary.json`) is sent when the run stops.
//!
//! A receiver never slows the run: the figures are taken from the collector like a
//! checkpoint (a message, no lock), encoding and sending happen on the push task, a
//! failed push waits in a bounded queue and is retried with backoff, and at the end the
//! final push has a few seconds, not more. What went wrong is counted in
//! `summary.json` `outputs` and said in the summary.

pub mod otlp;
pub mod post;
pub mod remote_write;
pub mod series;

use crate::metrics::push::PushFigures;
use crate::metrics::{LiveCounters, Snapshots};
use crate::plan::{PushKind, PushTarget};
use crate::summary::PushSummary;
use crate::watch::Latest;
use series::{Labels, Now, Series};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// Pushes kept while the receiver is down (a minute at the default 5 s); older ones are
/// dropped first, since each push holds every figure so far.
const QUEUE: usize = 12;
/// One push's time to answer.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The final push's time to land, retries included.
const FINAL_WINDOW: Duration = Duration::from_secs(5);
/// The longest wait between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Where the figures come from.
#[derive(Clone)]
pub struct Sources {
    pub snapshots: Snapshots,
    pub live: Arc<LiveCounters>,
    pub resources: watch::Receiver<Arc<Latest>>,
    /// The run's start (monotonic), for `mcp_fleet_elapsed_seconds`.
    pub started: tokio::time::Instant,
    /// The run's start (wall clock): where OTLP's cumulative points start.
    pub started_at: SystemTime,
}

/// A receiver's task, and how it is handed the final series.
type Running = (JoinHandle<PushSummary>, oneshot::Sender<Arc<Vec<Series>>>);

/// The running push outputs.
pub struct Pushers {
    tasks: Vec<Running>,
    labels: Labels,
    sources: Sources,
}

impl Pushers {
    /// Start one task per target, pushing every `every`.
    pub fn start(
        targets: &[PushTarget],
        every: Duration,
        labels: Labels,
        sources: Sources,
    ) -> Pushers {
        let tasks = targets
            .iter()
            .map(|t| {
                let (final_tx, final_rx) = oneshot::channel();
                let task = Task {
                    target: t.clone(),
                    every,
                    labels: labels.clone(),
                    sources: sources.clone(),
                    queue: VecDeque::new(),
                    summary: PushSummary {
                        kind: t.kind.name().to_string(),
                        target: crate::redact::url(t.url.as_str()),
                        ..PushSummary::default()
                    },
                    last_ms: 0,
                };
                (tokio::spawn(task.run(final_rx)), final_tx)
            })
            .collect();
        Pushers {
            tasks,
            labels,
            sources,
        }
    }

    /// Send `last` (the run's final figures) to every receiver and hand back how each
    /// fared. Bounded: the final push has [`FINAL_WINDOW`].
    pub async fn finish(self, last: Option<PushFigures>) -> Vec<PushSummary> {
        let now = Now {
            in_flight: self.sources.live.in_flight.load(Ordering::Relaxed),
            elapsed_s: self.sources.started.elapsed().as_secs_f64(),
        };
        let resources = self.sources.resources.borrow().clone();
        let last = last.unwrap_or_default();
        let (series, _) = series::build(&last, &self.labels, now, &resources, series::MAX_SERIES);
        let series = Arc::new(series);
        let mut out = Vec::new();
        for (task, final_tx) in self.tasks {
            let _ = final_tx.send(series.clone());
            if let Ok(summary) = task.await {
                out.push(summary);
            }
        }
        out
    }
}

/// One receiver's loop.
struct Task {
    target: PushTarget,
    every: Duration,
    labels: Labels,
    sources: Sources,
    /// Encoded pushes not delivered yet, oldest first.
    queue: VecDeque<Vec<u8>>,
    summary: PushSummary,
    /// The last timestamp sent: each push's is later (the receiver refuses a second
    /// value at the same instant).
    last_ms: i64,
}

impl Task {
    async fn run(mut self, mut last: oneshot::Receiver<Arc<Vec<Series>>>) -> PushSummary {
        let mut tick = tokio::time::interval(self.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let mut retry_at: Option<tokio::time::Instant> = None;
        let mut backoff = self.every;
        let final_series = loop {
            tokio::select! {
                series = &mut last => break series.ok(),
                _ = tick.tick() => {}
            }
            if let Some(f) = self.sources.snapshots.push_figures().await {
                let series = self.series(&f);
                self.enqueue(&series);
            }
            if retry_at.is_some_and(|at| tokio::time::Instant::now() < at) {
                continue;
            }
            // The end of the run does not wait for a slow receiver: a push in flight is
            // given up (it stays queued, the final push sends it first).
            let flushed = tokio::select! {
                ok = self.flush() => ok,
                series = &mut last => break series.ok(),
            };
            if flushed {
                retry_at = None;
                backoff = self.every;
            } else {
                backoff = (backoff * 2).min(MAX_BACKOFF);
                retry_at = Some(tokio::time::Instant::now() + backoff);
            }
        };
        if let Some(series) = final_series {
            self.finish(&series).await;
        }
        self.summary
    }

    fn series(&mut self, f: &PushFigures) -> Vec<Series> {
        let now = Now {
            in_flight: self.sources.live.in_flight.load(Ordering::Relaxed),
            elapsed_s: self.sources.started.elapsed().as_secs_f64(),
        };
        let resources = self.sources.resources.borrow().clone();
        let (series, left_out) =
            series::build(f, &self.labels, now, &resources, series::MAX_SERIES);
        self.summary.series_left_out = self.summary.series_left_out.max(left_out as u64);
        series
    }

    /// Encode a push and queue it, dropping the oldest when the queue is full.
    fn enqueue(&mut self, series: &[Series]) {
        let now_ms = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or_default();
        let ts = now_ms.max(self.last_ms + 1);
        self.last_ms = ts;
        self.summary.series = series.len() as u64;
        let body = match self.target.kind {
            PushKind::PrometheusRw => remote_write::body(&remote_write::request(series, ts)),
            PushKind::Otlp => {
                let nanos = |t: SystemTime| {
                    t.duration_since(SystemTime::UNIX_EPOCH)
                        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
                        .unwrap_or_default()
                };
                let at = u64::try_from(ts).unwrap_or_default() * 1_000_000;
                let start = nanos(self.sources.started_at);
                otlp::body(&otlp::request(series, &self.labels, start, at))
            }
        };
        if self.queue.len() == QUEUE {
            self.queue.pop_front();
            self.summary.dropped += 1;
        }
        self.queue.push_back(body);
    }

    /// Send the queued pushes in order; false when one failed and is worth a retry.
    async fn flush(&mut self) -> bool {
        while let Some(body) = self.queue.front().cloned() {
            let headers: &[(&str, &str)] = match self.target.kind {
                PushKind::PrometheusRw => &[
                    ("content-type", "application/x-protobuf"),
                    ("content-encoding", "snappy"),
                    ("x-prometheus-remote-write-version", "0.1.0"),
                    (
                        "user-agent",
                        concat!("mcp-fleet/", env!("CARGO_PKG_VERSION")),
                    ),
                ],
                PushKind::Otlp => &[
                    ("content-type", "application/x-protobuf"),
                    (
                        "user-agent",
                        concat!("mcp-fleet/", env!("CARGO_PKG_VERSION")),
                    ),
                ],
            };
            match post::post(&self.target.url, headers, body, TIMEOUT).await {
                Ok(()) => {
                    self.queue.pop_front();
                    self.summary.delivered += 1;
                    if self.summary.failed > 0 {
                        self.sources.live.set_push_warning(None);
                    }
                }
                Err(e) => {
                    self.summary.failed += 1;
                    self.summary.last_error = Some(e.to_string());
                    self.sources.live.set_push_warning(Some(format!(
                        "PUSH FAILING: {} {}: {e} ({} failed so far; the run goes on)",
                        self.summary.kind, self.summary.target, self.summary.failed
                    )));
                    if e.retry() {
                        return false;
                    }
                    // Refused for good (a 4xx): sending it again would be refused again.
                    self.queue.pop_front();
                    self.summary.dropped += 1;
                }
            }
        }
        true
    }

    /// The final push: queued after whatever waits, retried within [`FINAL_WINDOW`].
    async fn finish(&mut self, series: &[Series]) {
        self.enqueue(series);
        let deadline = tokio::time::Instant::now() + FINAL_WINDOW;
        let mut pause = Duration::from_millis(250);
        loop {
            let sent = tokio::time::timeout_at(deadline, self.flush()).await;
            match sent {
                Ok(true) => {
                    self.summary.final_delivered = true;
                    return;
                }
                Ok(false) if tokio::time::Instant::now() + pause < deadline => {
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                _ => {
                    self.summary.dropped += self.queue.len() as u64;
                    if self.summary.last_error.is_none() {
                        self.summary.last_error = Some("the final push timed out".into());
                    }
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
