//! Interval figures: latency over time. The collector keeps one histogram per phase for
//! the current interval (one second by default) and rotates them on a tick; each finished
//! interval goes to the sinks (the `.hlog` and CSV writers), becomes a small row kept in
//! memory for the HTML report, and is published as [`LiveFigures`] for the live view and
//! the Prometheus endpoint.
//!
//! Boundaries are nominal: interval k is [kΔ, (k+1)Δ) from the run's start (the shared
//! `--start-at` of a sharded run), whenever the collector gets to rotate, so interval k
//! of every shard covers the same span and a merge adds them; the last one ends with
//! the run, and a collector that stalled past boundaries writes one row that covers
//! them all, starting on a boundary.

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

impl IntervalRow {
    /// The row of `phase` over [start_s, start_s + len_s): its successful samples' `h`
    /// and its `errors` (the collector's rows and the merge's, made one way).
    pub fn of(start_s: f64, len_s: f64, phase: Phase, h: &Histogram<u64>, errors: u64) -> Self {
        let q = |q: f64| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q)
            }
        };
        IntervalRow {
            start_s,
            len_s,
            phase,
            count: h.len() + errors,
            errors,
            p50_us: q(0.5),
            p90_us: q(0.9),
            p95_us: q(0.95),
            p99_us: q(0.99),
            max_us: h.max(),
        }
    }
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
        Intervals::starting_at(every, sinks, Instant::now())
    }

    /// Intervals from `start` (may be ahead: a `--start-at` the run waits for).
    pub fn starting_at(
        every: Duration,
        sinks: Vec<Box<dyn IntervalSink>>,
        start: Instant,
    ) -> Intervals {
        let now = start;
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

    /// The last interval boundary (kΔ from the start) at or before `now`, but past the
    /// current interval's start.
    fn boundary(&self, now: Instant) -> Instant {
        let every = self.every.as_nanos();
        let k = now.duration_since(self.run_start).as_nanos() / every;
        let at =
            self.run_start + Duration::from_nanos(u64::try_from(k * every).unwrap_or(u64::MAX));
        if at > self.current_start {
            at
        } else {
            // Early (a tick a hair before its time): the current interval's own end.
            self.current_start + self.every
        }
    }

    /// Close the current interval on the boundary due at `now` (a tick): write it, keep
    /// its rows, start the next. `live` fills in the cumulative part of the published
    /// figures.
    pub fn rotate(&mut self, now: Instant, live: LiveFigures) {
        let end = self.boundary(now);
        self.close(end, live);
    }

    /// Close the last interval at `now`, the end of the run: it is as long as it lasted.
    pub fn rotate_last(&mut self, now: Instant, live: LiveFigures) {
        let end = now.max(self.current_start);
        // A boundary passed since the last tick closes its interval first.
        let due = self.boundary(end);
        if due < end {
            self.close(due, live.clone());
        }
        self.close(end, live);
    }

    fn close(&mut self, now: Instant, live: LiveFigures) {
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
            let row = IntervalRow::of(start_s, len_s, phase, h, self.errors[i]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Era, VersionId};

    fn sample(at: Instant) -> Sample {
        Sample {
            phase: Phase::Initialize,
            session: 1,
            persona: 0,
            era: Era::Legacy,
            version: VersionId::of("2025-03-26"),
            tool: None,
            intended: at,
            started: at,
            finished: at + Duration::from_millis(2),
            outcome: Outcome::Ok,
        }
    }

    fn spans(iv: &Intervals) -> Vec<(f64, f64)> {
        iv.rows.iter().map(|r| (r.start_s, r.len_s)).collect()
    }

    #[test]
    fn rows_start_on_nominal_boundaries_whenever_the_tick_runs() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut iv = Intervals::starting_at(Duration::from_secs(1), Vec::new(), t0);
        iv.add(&sample(ms(100)));
        // The tick for 1 s runs 30 ms late: the row is still [0, 1).
        iv.rotate(ms(1_030), LiveFigures::default());
        iv.add(&sample(ms(1_500)));
        // A collector stalled past two boundaries (Skip): one row over [1, 3).
        iv.rotate(ms(3_200), LiveFigures::default());
        iv.add(&sample(ms(3_300)));
        // A tick a hair early still ends its own interval.
        iv.rotate(ms(3_999), LiveFigures::default());
        iv.add(&sample(ms(4_100)));
        // The run ends 4.25 s in: the last row is as long as it lasted.
        iv.rotate_last(ms(4_250), LiveFigures::default());
        assert_eq!(
            spans(&iv),
            [(0.0, 1.0), (1.0, 2.0), (3.0, 1.0), (4.0, 0.25)]
        );
    }

    #[test]
    fn the_last_rotation_closes_a_boundary_it_passed() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut iv = Intervals::starting_at(Duration::from_secs(1), Vec::new(), t0);
        iv.add(&sample(ms(500)));
        iv.add(&sample(ms(900)));
        // The end came before the 1 s tick was served.
        iv.rotate_last(ms(1_020), LiveFigures::default());
        let rows = spans(&iv);
        assert_eq!(rows.len(), 1, "the samples were all in [0, 1)");
        assert_eq!(rows[0], (0.0, 1.0));
        assert!(iv.rows[0].count == 2);
    }

    #[test]
    fn intervals_can_start_ahead_of_now() {
        // `--start-at`: the collector runs before the anchor; a run stopped during the
        // wait ends with no rows and no negative length.
        let ahead = Instant::now() + Duration::from_secs(5);
        let mut iv = Intervals::starting_at(Duration::from_secs(1), Vec::new(), ahead);
        assert_eq!(iv.first_tick(), ahead + Duration::from_secs(1));
        iv.rotate_last(Instant::now(), LiveFigures::default());
        assert!(iv.rows.is_empty());
    }
}
