//! Drift: each phase's first steady window against its last. Service-time percentiles
//! come from the exact interval histograms of the phase's `.hlog` file, summed over the
//! window (percentiles are never averaged); counts and errors from the interval rows.

use crate::metrics::{IntervalRow, Phase, LATENCY_BOUND_US};
use crate::report::hlog::{self, LoggedInterval};
use crate::summary::soak::{Drift, DriftWindow};
use hdrhistogram::Histogram;
use std::path::Path;

/// `[from_s, to_s)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub from_s: f64,
    pub to_s: f64,
}

impl Window {
    /// An interval belongs to the window its middle falls in, so each interval counts
    /// once even when windows and intervals do not line up.
    fn holds(&self, start_s: f64, len_s: f64) -> bool {
        let mid = start_s + len_s / 2.0;
        mid >= self.from_s && mid < self.to_s
    }
}

/// One drift per phase (not `lag`, which is the fleet's own) that has samples in either
/// window, reading the `.hlog` files in `dir`. A log that cannot be read gives that
/// phase no percentiles.
pub fn drift(dir: &Path, timeline: &[IntervalRow], first: Window, last: Window) -> Vec<Drift> {
    Phase::ALL
        .into_iter()
        .filter(|p| *p != Phase::Lag)
        .filter_map(|phase| {
            let path = dir.join(hlog::file_name(phase));
            let logged = if path.is_file() {
                hlog::read_log(&path).unwrap_or_default()
            } else {
                Vec::new()
            };
            let rows: Vec<&IntervalRow> = timeline.iter().filter(|r| r.phase == phase).collect();
            let a = window(&logged, &rows, first);
            let b = window(&logged, &rows, last);
            (a.count > 0 || b.count > 0).then(|| Drift {
                phase: phase.name().to_string(),
                p50_change: change(a.p50_us, b.p50_us),
                p99_change: change(a.p99_us, b.p99_us),
                error_rate_change: a.error_rate.zip(b.error_rate).map(|(x, y)| y - x),
                first: a,
                last: b,
            })
        })
        .collect()
}

/// `last / first − 1`.
fn change(first: Option<u64>, last: Option<u64>) -> Option<f64> {
    let (f, l) = (first? as f64, last? as f64);
    (f > 0.0).then(|| l / f - 1.0)
}

fn window(logged: &[LoggedInterval], rows: &[&IntervalRow], w: Window) -> DriftWindow {
    let mut sum = Histogram::<u64>::new_with_bounds(1, LATENCY_BOUND_US, 3).ok();
    for i in logged {
        if w.holds(i.start.as_secs_f64(), i.length.as_secs_f64()) {
            if let Some(total) = sum.as_mut() {
                // A histogram beyond the bounds cannot be added: leave the window out
                // rather than give figures that lie.
                if total.add(&i.histogram).is_err() {
                    sum = None;
                }
            }
        }
    }
    let sum = sum.filter(|h| !h.is_empty());
    let (mut count, mut errors) = (0, 0);
    for r in rows.iter().filter(|r| w.holds(r.start_s, r.len_s)) {
        count += r.count;
        errors += r.errors;
    }
    if rows.is_empty() {
        // No interval rows (an old folder): the successful samples are all we know.
        count = sum.as_ref().map_or(0, |h| h.len());
    }
    DriftWindow {
        from_s: w.from_s,
        to_s: w.to_s,
        count,
        errors,
        p50_us: sum.as_ref().map(|h| h.value_at_quantile(0.5)),
        p99_us: sum.as_ref().map(|h| h.value_at_quantile(0.99)),
        error_rate: (count > 0).then(|| errors as f64 / count as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::IntervalSink;
    use crate::report::hlog::HlogSink;
    use std::time::SystemTime;

    fn row(start_s: f64, phase: Phase, count: u64, errors: u64) -> IntervalRow {
        IntervalRow {
            start_s,
            len_s: 1.0,
            phase,
            count,
            errors,
            p50_us: 0,
            p90_us: 0,
            p95_us: 0,
            p99_us: 0,
            max_us: 0,
        }
    }

    /// Ten 1-second intervals of tools/call: 1 ms early, 2 ms from t = 5 s, one error
    /// per interval in the last three.
    fn write_run(dir: &Path) -> Vec<IntervalRow> {
        let mut sink = HlogSink::new(dir, SystemTime::now());
        let mut rows = Vec::new();
        for i in 0..10 {
            let mut h = Histogram::<u64>::new_with_bounds(1, LATENCY_BOUND_US, 3).expect("h");
            let us = if i < 5 { 1_000 } else { 2_000 };
            for k in 0..100 {
                h.record(us + k).expect("record");
            }
            let r = row(i as f64, Phase::ToolsCall, 100, u64::from(i >= 7));
            sink.interval(&r, &h).expect("written");
            rows.push(r);
        }
        sink.finish().expect("finished");
        rows
    }

    #[test]
    fn drift_compares_summed_histograms_of_the_windows() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = write_run(dir.path());
        let d = drift(
            dir.path(),
            &rows,
            Window {
                from_s: 1.0,
                to_s: 3.0,
            },
            Window {
                from_s: 8.0,
                to_s: 10.0,
            },
        );
        assert_eq!(d.len(), 1, "{d:?}");
        let d = &d[0];
        assert_eq!(d.phase, "tools/call");
        assert_eq!((d.first.count, d.first.errors), (200, 0));
        assert_eq!((d.last.count, d.last.errors), (200, 2));
        let (p50a, p50b) = (d.first.p50_us.expect("p50"), d.last.p50_us.expect("p50"));
        assert!((1_040..=1_060).contains(&p50a) && (2_040..=2_060).contains(&p50b));
        let change = d.p50_change.expect("a change");
        assert!((change - 1.0).abs() < 0.05, "{change}");
        assert_eq!(d.error_rate_change, Some(0.01));
    }

    #[test]
    fn an_empty_window_has_no_figures_and_a_cut_log_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = write_run(dir.path());
        let path = dir.path().join("tools_call.hlog");
        let mut bytes = std::fs::read(&path).expect("log");
        bytes.truncate(bytes.len() - 20);
        std::fs::write(&path, &bytes).expect("cut");
        let d = drift(
            dir.path(),
            &rows[..9],
            Window {
                from_s: 0.0,
                to_s: 2.0,
            },
            Window {
                from_s: 20.0,
                to_s: 30.0,
            },
        );
        assert_eq!(d[0].last.count, 0);
        assert_eq!((d[0].last.p99_us, d[0].p99_change), (None, None));
        assert!(d[0].first.p99_us.is_some());
        assert_eq!(hlog::read_log(&path).expect("read").len(), 9);
    }
}
