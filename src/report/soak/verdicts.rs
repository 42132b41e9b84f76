//! The soak verdicts of one run in one call, for `run` (before the summary is built) and
//! `report DIR` (rebuilding from a results folder): the steady part after the warm-up,
//! leak slopes, drift, and the generator's load. Outages and storms are the traffic's.

use super::drift::{self, Window};
use super::fit;
use crate::metrics::{IntervalRow, Series};
use crate::plan::SoakPlan;
use crate::summary::soak::{GeneratorLoad, Soak};
use std::path::Path;

/// CPU share at or above this in an interval counts as a saturated interval.
pub const SATURATED_SHARE: f64 = 0.9;
/// More than this share of saturated steady intervals makes the generator the bottleneck.
pub const SATURATED_INTERVALS: f64 = 0.1;
/// A scheduler lag p99 above this (ms) makes the generator the bottleneck.
pub const LAG_P99_MS: f64 = 10.0;

/// Everything but outages and storms, over a run that lasted `run_s` seconds (the real
/// duration: a run stopped early has a shorter steady part).
pub fn verdicts(
    plan: &SoakPlan,
    dir: &Path,
    timeline: &[IntervalRow],
    resources: &[Series],
    run_s: f64,
) -> Soak {
    // To the millisecond, as `summary.json` keeps the duration: `report DIR` then finds
    // the same windows as the run did.
    let run_s = (run_s * 1000.0).round() / 1000.0;
    let (from, to) = plan.steady(run_s);
    let w = plan.window_s(run_s);
    let first = Window {
        from_s: from,
        to_s: (from + w).min(to),
    };
    let last = Window {
        from_s: (to - w).max(from),
        to_s: to,
    };
    let has_samples = timeline.iter().any(|r| r.count > 0) || dir.is_dir();
    Soak {
        steady_from_s: from,
        steady_to_s: to,
        slopes: fit::slopes(resources, from, to),
        drift: if has_samples && to > from {
            drift::drift(dir, timeline, first, last)
        } else {
            Vec::new()
        },
        outages: Vec::new(),
        storms: Vec::new(),
        generator: generator(resources, from, to, plan.server_inside),
    }
}

/// The generator's load over the steady part, and whether it limited the figures: CPU
/// share ≥ 0.9 in more than 10 % of the steady intervals, or a scheduler lag p99 above
/// 10 ms.
pub fn generator(
    resources: &[Series],
    from_s: f64,
    to_s: f64,
    server_inside: bool,
) -> GeneratorLoad {
    let steady = |name: &str| -> Vec<f64> {
        resources
            .iter()
            .find(|s| s.name == name)
            .map(|s| {
                s.points
                    .iter()
                    .filter(|[t, v]| *t >= from_s && *t <= to_s && v.is_finite())
                    .map(|p| p[1])
                    .collect()
            })
            .unwrap_or_default()
    };
    let share = steady("generator.cpu_share");
    let mut lag = steady("generator.lag");
    lag.sort_by(f64::total_cmp);
    let cpu_share_max = share.iter().copied().reduce(f64::max);
    let lag_p99_ms = (!lag.is_empty()).then(|| {
        // Nearest rank.
        let rank = ((0.99 * lag.len() as f64).ceil() as usize).clamp(1, lag.len());
        lag[rank - 1] * 1000.0
    });
    let rss_per_s = resources
        .iter()
        .find(|s| s.name == "generator.rss")
        .and_then(|s| fit::slope(s, from_s, to_s))
        .map(|s| s.per_s);
    let mut reasons = Vec::new();
    let saturated = share.iter().filter(|v| **v >= SATURATED_SHARE).count();
    if !server_inside
        && !share.is_empty()
        && saturated as f64 > SATURATED_INTERVALS * share.len() as f64
    {
        reasons.push(format!(
            "the generator used ≥ 90 % of its CPU in {saturated} of {} steady intervals: run fewer clients per generator or give it more cores",
            share.len()
        ));
    }
    if let Some(p99) = lag_p99_ms.filter(|ms| *ms > LAG_P99_MS) {
        reasons.push(format!(
            "the generator's scheduler lag p99 was {p99:.1} ms (> 10 ms): its timings include its own delay"
        ));
    }
    GeneratorLoad {
        cpu_share_max,
        lag_p99_ms,
        rss_per_s,
        bottleneck: !reasons.is_empty(),
        server_inside,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::SeriesUnit;

    fn series(name: &str, unit: SeriesUnit, f: impl Fn(f64) -> f64) -> Series {
        let mut s = Series::new(name, unit);
        for i in 0..100 {
            s.push(i as f64, f(i as f64));
        }
        s
    }

    #[test]
    fn a_busy_generator_is_the_bottleneck_and_says_why() {
        let busy = [
            series("generator.cpu_share", SeriesUnit::Count, |t| {
                if t as u64 % 5 == 0 {
                    0.95
                } else {
                    0.5
                }
            }),
            series("generator.lag", SeriesUnit::Seconds, |_| 0.001),
            series("generator.rss", SeriesUnit::Bytes, |t| 1e8 + t),
        ];
        let g = generator(&busy, 10.0, 100.0, false);
        assert!(g.bottleneck, "{g:?}");
        assert_eq!(g.reasons.len(), 1);
        assert_eq!(g.cpu_share_max, Some(0.95));
        assert!((g.lag_p99_ms.expect("lag") - 1.0).abs() < 1e-9);
        assert!((g.rss_per_s.expect("slope") - 1.0).abs() < 1e-9);
        let laggy = [series("generator.lag", SeriesUnit::Seconds, |_| 0.05)];
        let g = generator(&laggy, 10.0, 100.0, false);
        assert!(g.bottleneck && g.reasons[0].contains("lag"), "{g:?}");
        assert_eq!(generator(&[], 0.0, 1.0, false), GeneratorLoad::default());
    }

    #[test]
    fn verdicts_use_the_steady_part_of_the_real_duration() {
        let rss = [series("server.rss", SeriesUnit::Bytes, |t| {
            // A warm-up jump, then a steady 1 KiB/s.
            if t < 10.0 {
                1e6 * t
            } else {
                1e8 + 1024.0 * t
            }
        })];
        let dir = tempfile::tempdir().expect("tempdir");
        let soak = verdicts(&SoakPlan::default(), dir.path(), &[], &rss, 100.0);
        assert_eq!((soak.steady_from_s, soak.steady_to_s), (10.0, 100.0));
        assert_eq!(soak.slopes.len(), 1);
        assert!((soak.slopes[0].per_s - 1024.0).abs() < 1e-6);
        assert!(soak.drift.is_empty());
    }
}
