//! Interval figures: latency over time. The collector keeps one histogram per phase for
//! the current interval (one second by default) and rotates them on a tick; each finished
//! interval goes to the sinks (the `.hlog` and CSV writers), becomes a small row kept in
//! memory for the HTML report, and is published as [`LiveFigures`] for the live view and
//! the Prometheus endpoint.

use super::histogram::{clamped_record, micros, new_histogram};
use super::{Outcome, Phase, Sample};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The default interval length.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// One phase's figures for one interval. Latencies are service times (µs) of successful
/// samples, like the summary's flattened figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntervalRow {
    /// Seconds from the start of the run to the start of the interval.
    pub start_s: f64,
    pub len_s: f64,
    pub phase: Phase,
    /// Samples that ended in the interval (successful + failed).
    pub count: u64,
    pub errors: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

/// Where finished intervals are written (the hlog and CSV files). A seam tests can fake.
pub trait IntervalSink: Send {
    /// One finished interval of one phase; `hist` holds its successful samples.
    fn interval(&mut self, row: &IntervalRow, hist: &Histogram<u64>) -> std::io::Result<()>;
    /// Every phase of one interval has been written: make it readable (flush), so a run
    /// killed hard leaves its files complete up to the last interval.
    fn end_of_interval(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    /// The run is over: flush.
    fn finish(&mut self) -> std::io::Result<()>;
}

/// What the live view and the metrics endpoint show; replaced after every interval.
#[derive(Debug, Clone, Default)]
pub struct LiveFigures {
    /// Time since the collector started.
    pub elapsed: Duration,
    /// The last finished interval, one row per phase that saw samples.
    pub last: Vec<IntervalRow>,
    /// Samples and errors since the start, per phase (indexed by [`Phase::index`]).
    pub totals: Vec<(u64, u64)>,
    /// Failures since the start by stable kind name.
    pub failures: BTreeMap<String, u64>,
    pub sessions_started: u64,
    pub sessions_ended: u64,
    /// Sessions that never reached the server (a subset of the ended ones).
    pub sessions_unreachable: u64,
}

/// The current interval and everything finished so far.
pub struct Intervals {
    every: Duration,
    run_start: Instant,
    current_start: Instant,
    hists: Vec<Histogram<u64>>,
    errors: Vec<u64>,
    /// Every finished interval, in time order (kept for the HTML report).
    pub rows: Vec<IntervalRow>,
    sinks: Vec<Box<dyn IntervalSink>>,
    /// The first error a sink reported; later intervals still go to the other sinks.
    pub sink_error: Option<std::io::Error>,
    live: watch::Sender<Arc<LiveFigures>>,
}

impl Intervals {
    pub fn new(every: Duration, sinks: Vec<Box<dyn IntervalSink>>) -> Intervals {
        let now = Instant::now();
        Intervals {
            every: every.max(Duration::from_millis(10)),
            run_start: now,
            current_start: now,
            hists: (0..Phase::COUNT).map(|_| new_histogram()).collect(),
            errors: vec![0; Phase::COUNT],
            rows: Vec::new(),
            sinks,
            sink_error: None,
            live: watch::Sender::new(Arc::default()),
        }
    }

    pub fn every(&self) -> Duration {
        self.every
    }

    /// When the first interval ends.
    pub fn first_tick(&self) -> Instant {
        self.run_start + self.every
    }

    pub fn subscribe(&self) -> watch::Receiver<Arc<LiveFigures>> {
        self.live.subscribe()
    }

    /// Fold one sample into the current interval.
    pub fn add(&mut self, sample: &Sample) {
        let i = sample.phase.index();
        match sample.outcome {
            Outcome::Failed(_) => self.errors[i] += 1,
            Outcome::Ok | Outcome::ToolError => {
                let us = micros(sample.finished.duration_since(sample.started));
                clamped_record(&mut self.hists[i], us);
            }
        }
    }

    /// Close the current interval at `now`: write it, keep its rows, start the next.
    /// `live` fills in the cumulative part of the published figures.
    pub fn rotate(&mut self, now: Instant, live: LiveFigures) {
        let start_s = self
            .current_start
            .duration_since(self.run_start)
            .as_secs_f64();
        let len_s = now.duration_since(self.current_start).as_secs_f64();
        let first = self.rows.len();
        for phase in Phase::ALL {
            let i = phase.index();
            let h = &self.hists[i];
            let count = h.len() + self.errors[i];
            if count == 0 {
                continue;
            }
            let q = |q: f64| {
                if h.is_empty() {
                    0
                } else {
                    h.value_at_quantile(q)
                }
            };
            let row = IntervalRow {
                start_s,
                len_s,
                phase,
                count,
                errors: self.errors[i],
                p50_us: q(0.5),
                p90_us: q(0.9),
                p95_us: q(0.95),
                p99_us: q(0.99),
                max_us: h.max(),
            };
            for sink in &mut self.sinks {
                if let Err(e) = sink.interval(&row, h) {
                    self.sink_error.get_or_insert(e);
                }
            }
            self.rows.push(row);
        }
        if self.rows.len() > first {
            for sink in &mut self.sinks {
                if let Err(e) = sink.end_of_interval() {
                    self.sink_error.get_or_insert(e);
                }
            }
        }
        for h in &mut self.hists {
            h.reset();
        }
        self.errors.iter_mut().for_each(|e| *e = 0);
        self.current_start = now;
        let figures = LiveFigures {
            elapsed: now.duration_since(self.run_start),
            last: self.rows[first..].to_vec(),
            ..live
        };
        self.live.send_replace(Arc::new(figures));
    }

    /// The run is over: flush every sink.
    pub fn finish(&mut self) {
        for sink in &mut self.sinks {
            if let Err(e) = sink.finish() {
                self.sink_error.get_or_insert(e);
            }
        }
    }
}

impl std::fmt::Debug for Intervals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intervals")
            .field("every", &self.every)
            .field("rows", &self.rows.len())
            .field("sinks", &self.sinks.len())
            .finish_non_exhaustive()
    }
}
