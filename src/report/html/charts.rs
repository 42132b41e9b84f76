//! The chart data of `report.html` as JSON: per-phase latency lines and rates over time,
//! sessions per second, sessions in flight, errors, and the whole run's latency by
//! percentile and as a histogram. Series are cut down to at most [`MAX_POINTS`] points;
//! a last interval shorter than the others is flagged `partial` so the page draws it as
//! such instead of as a full one.

use super::ReportInput;
use crate::metrics::{IntervalRow, Phase};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Most points one timeline series carries into the page.
pub const MAX_POINTS: usize = 1000;

/// The series of the run's own sessions in flight (the most at once in each interval the
/// watcher samples).
pub const IN_FLIGHT: &str = "fleet.in_flight";

/// Histogram buckets per decade of latency.
const BUCKETS_PER_DECADE: f64 = 10.0;

/// Phases that are not requests: drawn on charts of their own, not among the rates.
const NOT_REQUESTS: [Phase; 2] = [Phase::Session, Phase::Lag];

/// Percentiles as HdrHistogram plots them: dense towards the tail, x = 1/(1-p).
fn distribution(h: &Histogram<u64>) -> Vec<[f64; 2]> {
    if h.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    // Eight steps per decade of "nines", up to 99.999%.
    for k in 0..=40 {
        let q = 1.0 - 10f64.powf(-f64::from(k) / 8.0);
        out.push([q * 100.0, h.value_at_quantile(q) as f64]);
    }
    out.push([100.0, h.max() as f64]);
    out
}

/// The whole run's samples in log-spaced buckets: `lo` and `hi` bounds (µs) and the
/// count of each, from the first non-empty bucket to the last (empty ones between kept,
/// so the bars keep their places on the axis).
pub(super) fn histogram(h: &Histogram<u64>) -> Value {
    // The nudge keeps powers of ten in their own bucket despite rounding in log10.
    let bucket = |v: u64| ((v.max(1) as f64).log10() * BUCKETS_PER_DECADE + 1e-9).floor() as i64;
    let mut counts: BTreeMap<i64, u64> = BTreeMap::new();
    for v in h.iter_recorded() {
        *counts.entry(bucket(v.value_iterated_to())).or_default() += v.count_at_value();
    }
    let (Some(&first), Some(&last)) = (counts.keys().next(), counts.keys().next_back()) else {
        return json!({ "lo": [], "hi": [], "n": [] });
    };
    let bound = |k: i64| (10f64.powf(k as f64 / BUCKETS_PER_DECADE) * 10.0).round() / 10.0;
    let ks: Vec<i64> = (first..=last).collect();
    json!({
        "lo": ks.iter().map(|&k| bound(k)).collect::<Vec<_>>(),
        "hi": ks.iter().map(|&k| bound(k + 1)).collect::<Vec<_>>(),
        "n": ks.iter().map(|k| counts.get(k).copied().unwrap_or(0)).collect::<Vec<_>>(),
    })
}

/// Min/max decimation of one series of (t, v): keep each bucket's lowest and highest
/// point, in time order, so spikes survive.
pub(crate) fn decimate(points: &[(f64, f64)], max_points: usize) -> (Vec<f64>, Vec<f64>) {
    if points.len() <= max_points || max_points < 4 {
        return points.iter().copied().unzip();
    }
    let buckets = max_points / 2;
    let per = points.len().div_ceil(buckets);
    let (mut t, mut v) = (
        Vec::with_capacity(max_points),
        Vec::with_capacity(max_points),
    );
    for chunk in points.chunks(per) {
        let lo = chunk.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = chunk.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let (a, b) = if lo.0 <= hi.0 { (lo, hi) } else { (hi, lo) };
            t.push(a.0);
            v.push(a.1);
            if a.0 != b.0 {
                t.push(b.0);
                v.push(b.1);
            }
        }
    }
    (t, v)
}

/// Average a per-interval count (start, real length, count) into a per-second rate
/// over buckets: each bucket's count over its real length, so a short last interval
/// gives its true rate, not a dip.
pub(super) fn rate_series(rows: &[(f64, f64, u64)], max_points: usize) -> (Vec<f64>, Vec<f64>) {
    let per = rows.len().div_ceil(max_points.max(1)).max(1);
    rows.chunks(per)
        .map(|c| {
            let len: f64 = c.iter().map(|r| r.1).sum();
            let n: u64 = c.iter().map(|r| r.2).sum();
            let rate = if len > 0.0 { n as f64 / len } else { 0.0 };
            (
                (c[0].0 * 1000.0).round() / 1000.0,
                (rate * 100.0).round() / 100.0,
            )
        })
        .unzip()
}

/// Whether the last of `rows` (start, length, …) is an interval shorter than `interval_s`
/// that the series shows on its own (not averaged into a bucket of several).
fn last_is_partial(rows: &[(f64, f64, u64)], interval_s: f64) -> bool {
    rows.len() <= MAX_POINTS
        && interval_s > 0.0
        && rows.last().is_some_and(|r| r.1 < interval_s * 0.99)
}

/// A rate series of per-interval counts, with its partial flag.
fn rates(rows: &[(f64, f64, u64)], interval_s: f64) -> Value {
    let (t, v) = rate_series(rows, MAX_POINTS);
    json!({ "t": t, "v": v, "partial": last_is_partial(rows, interval_s) })
}

fn series(t: Vec<f64>, v: Vec<f64>) -> Value {
    json!({ "t": t, "v": v })
}

/// How a latency line reads its value from an interval row.
type Percentile = fn(&IntervalRow) -> u64;

/// One phase's latency lines over time (successful samples only).
fn latency_lines(rows: &[&IntervalRow]) -> Value {
    let ok: Vec<&&IntervalRow> = rows.iter().filter(|r| r.count > r.errors).collect();
    let mut lines = serde_json::Map::new();
    let getters: [(&str, Percentile); 5] = [
        ("p50", |r| r.p50_us),
        ("p90", |r| r.p90_us),
        ("p95", |r| r.p95_us),
        ("p99", |r| r.p99_us),
        ("max", |r| r.max_us),
    ];
    for (name, get) in getters {
        let pts: Vec<(f64, f64)> = ok.iter().map(|r| (r.start_s, get(r) as f64)).collect();
        let (t, v) = decimate(&pts, MAX_POINTS);
        lines.insert(name.into(), series(t, v));
    }
    Value::Object(lines)
}

/// The chart data as JSON.
pub(super) fn chart_data(input: &ReportInput<'_>) -> Value {
    let interval_s = input.summary.run.interval_s;
    let mut by_phase: BTreeMap<Phase, Vec<&IntervalRow>> = BTreeMap::new();
    for r in input.timeline {
        by_phase.entry(r.phase).or_default().push(r);
    }
    let mut latency = serde_json::Map::new();
    let mut throughput = serde_json::Map::new();
    let mut sessions = json!({});
    let mut errors: BTreeMap<u64, (f64, f64, u64)> = BTreeMap::new();
    for (phase, mut rows) in by_phase {
        rows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        if rows.iter().any(|r| r.count > r.errors) {
            latency.insert(phase.name().into(), latency_lines(&rows));
        }
        let counts: Vec<(f64, f64, u64)> =
            rows.iter().map(|r| (r.start_s, r.len_s, r.count)).collect();
        if phase == Phase::Session {
            let failed: Vec<(f64, f64, u64)> = rows
                .iter()
                .map(|r| (r.start_s, r.len_s, r.errors))
                .collect();
            sessions = json!({
                "ended": rates(&counts, interval_s),
                "failed": rates(&failed, interval_s),
            });
        } else if !NOT_REQUESTS.contains(&phase) {
            throughput.insert(phase.name().into(), rates(&counts, interval_s));
            for r in rows {
                // Rows of one interval share its start; key on milliseconds.
                let e = errors
                    .entry((r.start_s * 1000.0).round() as u64)
                    .or_insert((r.start_s, r.len_s, 0));
                e.2 += r.errors;
            }
        }
    }
    let errs: Vec<(f64, f64, u64)> = errors.into_values().collect();
    let non_empty = || input.histograms.iter().filter(|(_, h)| !h.is_empty());
    let dist: serde_json::Map<String, Value> = non_empty()
        .map(|(k, h)| (k.clone(), json!(distribution(h))))
        .collect();
    let hist: serde_json::Map<String, Value> = non_empty()
        .map(|(k, h)| (k.clone(), histogram(h)))
        .collect();
    let load = &input.summary.run.load;
    let mut data = json!({
        "order": Phase::ALL.iter().map(|p| p.name()).collect::<Vec<_>>(),
        "interval_s": interval_s,
        "latency": latency,
        "throughput": throughput,
        "sessions": sessions,
        "errors": rates(&errs, interval_s),
        "in_flight": in_flight(input),
        "cap": load.max_in_flight.or(load.clients),
        "distribution": dist,
        "histogram": hist,
    });
    if super::soak::shown(input.summary) {
        data["soak"] = super::soak::data(input.summary);
    }
    data
}

/// The sessions in flight per sample (`fleet.in_flight`), null when the run has none
/// (results written before the series existed).
fn in_flight(input: &ReportInput<'_>) -> Value {
    input
        .summary
        .resources
        .iter()
        .find(|r| r.name == IN_FLIGHT)
        .map_or(Value::Null, |r| {
            let pts: Vec<(f64, f64)> = r.points.iter().map(|p| (p[0], p[1])).collect();
            let (t, v) = decimate(&pts, MAX_POINTS);
            series(t, v)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_spikes_and_bounds_points() {
        let pts: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (f64::from(i), if i == 54_321 { 9e6 } else { 100.0 }))
            .collect();
        let (t, v) = decimate(&pts, MAX_POINTS);
        assert!(t.len() <= MAX_POINTS, "{}", t.len());
        assert_eq!(t.len(), v.len());
        assert!(v.contains(&9e6), "the spike survives");
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "time order");
        let few = [(0.0, 1.0), (1.0, 2.0)];
        assert_eq!(decimate(&few, MAX_POINTS).1, vec![1.0, 2.0]);
    }

    #[test]
    fn rates_average_counts_over_buckets() {
        let rows: Vec<(f64, f64, u64)> = (0..4000).map(|i| (f64::from(i), 1.0, 10)).collect();
        let (t, v) = rate_series(&rows, MAX_POINTS);
        assert!(t.len() <= MAX_POINTS);
        assert!(v.iter().all(|&r| (r - 10.0).abs() < 1e-9));
    }

    #[test]
    fn a_short_last_interval_is_partial_at_its_true_rate() {
        let rows = [(0.0, 1.0, 100), (1.0, 1.0, 100), (2.0, 0.25, 25)];
        let r = rates(&rows, 1.0);
        assert_eq!(r["partial"], true);
        assert_eq!(r["v"][2], 100.0, "25 in a quarter second: no dip");
        assert_eq!(rates(&rows[..2], 1.0)["partial"], false);
    }

    #[test]
    fn the_histogram_counts_every_sample_in_log_buckets() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
        for v in [100, 105, 110, 1_000, 1_050, 50_000] {
            h.record(v).expect("record");
        }
        let b = histogram(&h);
        let n: Vec<u64> = serde_json::from_value(b["n"].clone()).expect("counts");
        assert_eq!(n.iter().sum::<u64>(), 6);
        assert_eq!(n.len(), 27, "100µs to 50ms at 10 a decade: {b}");
        assert_eq!(b["lo"][0], 100.0);
        assert_eq!(n[0], 3);
        let empty = Histogram::<u64>::new(3).expect("histogram");
        assert_eq!(histogram(&empty)["n"], json!([]));
    }
}
