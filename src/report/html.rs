//! `report.html`: one self-contained page (no CDN, no fetched script) a person can open
//! offline. Tables are rendered here; the charts are drawn on canvases by a small script
//! of ours (`report.js`, embedded) from a JSON blob in the page. Timelines are cut down
//! to at most [`MAX_POINTS`] points per series with min/max buckets, so hours of data
//! stay small and fast while peaks stay visible.

use super::summary::Summary;
use crate::metrics::{IntervalRow, Phase};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::collections::BTreeMap;

mod body;
mod soak;

use body::body;

pub const FILE_NAME: &str = "report.html";
const TEMPLATE: &str = include_str!("report.html");
const SCRIPT: &str = include_str!("report.js");

/// Most points one timeline series carries into the page.
pub const MAX_POINTS: usize = 1000;

/// Everything the page shows.
#[derive(Debug)]
pub struct ReportInput<'a> {
    pub summary: &'a Summary,
    /// Every interval row (any order).
    pub timeline: &'a [IntervalRow],
    /// The whole run's service-time histogram per phase, for the percentile plot.
    pub histograms: BTreeMap<String, Histogram<u64>>,
    /// The effective profile, shown with the parameters.
    pub profile_toml: Option<String>,
}

/// Escape text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

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

/// Min/max decimation of one series of (t, v): keep each bucket's lowest and highest
/// point, in time order, so spikes survive.
fn decimate(points: &[(f64, f64)], max_points: usize) -> (Vec<f64>, Vec<f64>) {
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

/// Average a per-interval count into a per-second rate over buckets.
fn rate_series(rows: &[(f64, f64, u64)], max_points: usize) -> (Vec<f64>, Vec<f64>) {
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

fn series(t: Vec<f64>, v: Vec<f64>) -> Value {
    json!({ "t": t, "v": v })
}

/// The chart data as JSON.
fn chart_data(input: &ReportInput<'_>) -> Value {
    let mut by_phase: BTreeMap<Phase, Vec<&IntervalRow>> = BTreeMap::new();
    for r in input.timeline {
        by_phase.entry(r.phase).or_default().push(r);
    }
    let mut latency = serde_json::Map::new();
    let mut throughput = serde_json::Map::new();
    let mut errors: BTreeMap<u64, (f64, f64, u64)> = BTreeMap::new();
    for (phase, mut rows) in by_phase {
        rows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        let ok: Vec<&&IntervalRow> = rows.iter().filter(|r| r.count > r.errors).collect();
        let mut lines = serde_json::Map::new();
        for (name, get) in [
            (
                "p50",
                (|r: &IntervalRow| r.p50_us) as fn(&IntervalRow) -> u64,
            ),
            ("p90", |r| r.p90_us),
            ("p99", |r| r.p99_us),
            ("max", |r| r.max_us),
        ] {
            let pts: Vec<(f64, f64)> = ok.iter().map(|r| (r.start_s, get(r) as f64)).collect();
            let (t, v) = decimate(&pts, MAX_POINTS);
            lines.insert(name.into(), series(t, v));
        }
        latency.insert(phase.name().into(), Value::Object(lines));
        let counts: Vec<(f64, f64, u64)> =
            rows.iter().map(|r| (r.start_s, r.len_s, r.count)).collect();
        let (t, v) = rate_series(&counts, MAX_POINTS);
        throughput.insert(phase.name().into(), series(t, v));
        if phase != Phase::Session {
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
    let (et, ev) = rate_series(&errs, MAX_POINTS);
    let dist: serde_json::Map<String, Value> = input
        .histograms
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(k, h)| (k.clone(), json!(distribution(h))))
        .collect();
    let mut data = json!({
        "order": Phase::ALL.iter().map(|p| p.name()).collect::<Vec<_>>(),
        "latency": latency,
        "throughput": throughput,
        "errors": series(et, ev),
        "distribution": dist,
    });
    if soak::shown(input.summary) {
        data["soak"] = soak::data(input.summary);
    }
    data
}

/// The page.
pub fn render(input: &ReportInput<'_>) -> String {
    let charts = chart_data(input);
    // `<` is escaped so no string in the data can close the script element.
    let data = charts.to_string().replace('<', "\\u003c");
    let s = input.summary;
    fill(
        TEMPLATE,
        &[
            ("{{TITLE}}", &esc(&format!("mcp-fleet · {}", s.run.name))),
            ("{{BODY}}", &body(s, input.profile_toml.as_deref(), &charts)),
            ("{{SCRIPT}}", SCRIPT),
            ("{{DATA}}", &data),
        ],
    )
}

/// Substitute each placeholder once, in one pass over the template, so text from the
/// run (a profile, an error message) that happens to contain a placeholder stays as is.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out =
        String::with_capacity(template.len() + values.iter().map(|v| v.1.len()).sum::<usize>());
    let mut rest = template;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        match values.iter().find(|(k, _)| rest[at..].starts_with(k)) {
            Some((k, v)) => {
                out.push_str(v);
                rest = &rest[at + k.len()..];
            }
            None => {
                out.push_str("{{");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
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
}
