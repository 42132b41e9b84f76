//! The soak verdicts of one run in one call, for `run` (before the summary is built) and
//! `report DIR` (rebuilding from a results folder): the steady part after the warm-up,
//! leak slopes, drift, and the generator's load. Outages and storms are the traffic's.

use super::drift::{self, Window};
use super::fit;
use crate::metrics::{IntervalRow, Series};
use crate::plan::SoakPlan;
use crate::summary::soak::{GeneratorLoad, Soak};
use crate::watch::{BUSY_PRESSURE, LOW_SHARE};
use std::path::Path;

/// CPU share at or above this in an interval counts as a saturated interval.
pub const SATURATED_SHARE: f64 = 0.9;
/// More than this share of saturated steady intervals makes the generator the bottleneck.
pub const SATURATED_INTERVALS: f64 = 0.1;
/// A scheduler lag p99 above this (ms) makes the generator the bottleneck.
pub const LAG_P99_MS: f64 = 10.0;
/// Below this steady span (seconds) or number of intervals a run has no slopes and no
/// drift: a line through a few seconds of an allocator's or a collector's cycle says
/// nothing about hours.
pub const MIN_STEADY_S: f64 = 10.0;
pub const MIN_STEADY_INTERVALS: f64 = 20.0;

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
    let generator = generator(resources, from, to, plan.server_inside);
    if let Some(why) = too_short(plan, from, to, run_s) {
        return Soak {
            steady_from_s: from,
            steady_to_s: to,
            generator,
            too_short: Some(why),
            ..Soak::default()
        };
    }
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
        generator,
        too_short: None,
    }
}

/// Why a run's steady part `[from, to]` is too short for slopes and drift, with the run
/// length that would do; `None` when it is long enough.
fn too_short(plan: &SoakPlan, from: f64, to: f64, run_s: f64) -> Option<String> {
    let interval = plan.interval.as_secs_f64().max(1e-3);
    let span = to - from;
    let needed = MIN_STEADY_S.max(MIN_STEADY_INTERVALS * interval);
    if span >= needed - 1e-9 {
        return None;
    }
    let run = match plan.warmup {
        crate::plan::Span::Share(f) => needed / (1.0 - f),
        crate::plan::Span::Fixed(w) => needed + w.as_secs_f64(),
    };
    Some(format!(
        "the steady part was {span:.1}s ({:.0} intervals of {interval}s) after a {:.1}s warm-up; slopes and drift need at least {needed:.0}s and {MIN_STEADY_INTERVALS:.0} intervals: run {:.0}s or longer (the run took {run_s:.1}s)",
        span / interval,
        from,
        run.ceil()
    ))
}

/// The generator's load over the steady part, and whether it limited the figures: CPU
/// share ≥ 0.9 in more than 10 % of the steady intervals, or a scheduler lag p99 above
/// 10 ms that was its own doing. Late wake-ups while its share was low and the machine's
/// CPU pressure high were other work's doing: `machine_busy`, not a bottleneck.
pub fn generator(
    resources: &[Series],
    from_s: f64,
    to_s: f64,
    server_inside: bool,
) -> GeneratorLoad {
    let steady = |name: &str| -> Vec<[f64; 2]> {
        resources
            .iter()
            .find(|s| s.name == name)
            .map(|s| fit::points(s, from_s, to_s))
            .unwrap_or_default()
    };
    let values = |pts: &[[f64; 2]]| pts.iter().map(|p| p[1]).collect::<Vec<f64>>();
    let share_pts = steady("generator.cpu_share");
    let lag_pts = steady("generator.lag");
    let pressure_pts = steady("machine.cpu_pressure");
    let share = values(&share_pts);
    let cpu_share_max = share.iter().copied().reduce(f64::max);
    let lag_p99_ms = p99(values(&lag_pts)).map(|s| s * 1000.0);
    let cpu_pressure_p99 = p99(values(&pressure_pts));
    let rss_per_s = resources
        .iter()
        .find(|s| s.name == "generator.rss")
        .and_then(|s| fit::slope(s, from_s, to_s))
        .map(|s| s.per_s);
    let mut reasons = Vec::new();
    let mut busy_reasons = Vec::new();
    let saturated = share.iter().filter(|v| **v >= SATURATED_SHARE).count();
    if !server_inside
        && !share.is_empty()
        && saturated as f64 > SATURATED_INTERVALS * share.len() as f64
    {
        reasons.push(format!(
            "the generator was saturated: it used ≥ 90 % of its CPU in {saturated} of {} steady intervals, so its figures are a lower bound: run fewer clients per generator, --processes N or shards",
            share.len()
        ));
    }
    if let Some(p99) = lag_p99_ms.filter(|ms| *ms > LAG_P99_MS) {
        // The intervals that woke late: the generator's share and the machine's pressure
        // in each say whose doing it was.
        let at =
            |pts: &[[f64; 2]], t: f64| pts.iter().find(|p| (p[0] - t).abs() < 1e-6).map(|p| p[1]);
        let late: Vec<f64> = lag_pts
            .iter()
            .filter(|p| p[1] * 1000.0 > LAG_P99_MS)
            .map(|p| p[0])
            .collect();
        let others = late.iter().filter(|t| {
            let share = at(&share_pts, **t).unwrap_or(1.0);
            let pressure = at(&pressure_pts, **t).unwrap_or(0.0);
            share < LOW_SHARE && pressure >= BUSY_PRESSURE
        });
        let by_others = others.count();
        if !late.is_empty() && by_others * 2 > late.len() {
            busy_reasons.push(format!(
                "its scheduler lag p99 was {p99:.1} ms while the generator used at most {:.0} % of its CPU and a runnable task waited for a CPU {:.0} % of the time (p99, /proc/pressure/cpu) in {by_others} of the {} late intervals; the timings include that delay, the load was not limited by the generator",
                cpu_share_max.unwrap_or(0.0) * 100.0,
                cpu_pressure_p99.unwrap_or(0.0) * 100.0,
                late.len()
            ));
        } else {
            let why = match cpu_share_max {
                Some(share) if share >= LOW_SHARE => {
                    format!("while it used up to {:.0} % of its CPU", share * 100.0)
                }
                _ => "with no other work waiting for the CPU".to_string(),
            };
            reasons.push(format!(
                "the generator's scheduler lag p99 was {p99:.1} ms (> 10 ms) {why}: its timings include its own delay"
            ));
        }
    }
    GeneratorLoad {
        cpu_share_max,
        lag_p99_ms,
        rss_per_s,
        bottleneck: !reasons.is_empty(),
        server_inside,
        reasons,
        machine_busy: !busy_reasons.is_empty(),
        busy_reasons,
        cpu_pressure_p99,
    }
}

/// The nearest-rank p99 of `v`.
fn p99(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((0.99 * v.len() as f64).ceil() as usize).clamp(1, v.len());
    Some(v[rank - 1])
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
    fn late_wake_ups_under_other_work_are_a_busy_machine_not_a_bottleneck() {
        let run = |share: f64, lag: f64, pressure: f64| {
            generator(
                &[
                    series("generator.cpu_share", SeriesUnit::Count, |_| share),
                    series("generator.lag", SeriesUnit::Seconds, |_| lag),
                    series("machine.cpu_pressure", SeriesUnit::Count, |_| pressure),
                ],
                10.0,
                100.0,
                false,
            )
        };
        // Other work held the CPUs: a note, not the generator's fault.
        let g = run(0.05, 0.05, 0.6);
        assert!(g.machine_busy && !g.bottleneck, "{g:?}");
        assert!(
            g.busy_reasons[0].contains("the load was not limited by the generator"),
            "{g:?}"
        );
        assert_eq!(g.cpu_pressure_p99, Some(0.6));
        // Late with nothing else waiting: its own doing.
        let g = run(0.05, 0.05, 0.0);
        assert!(g.bottleneck && !g.machine_busy, "{g:?}");
        assert!(g.reasons[0].contains("no other work waiting"), "{g:?}");
        // Late while it used its CPU: its own doing too, whatever the pressure.
        let g = run(0.8, 0.05, 0.9);
        assert!(g.bottleneck && !g.machine_busy, "{g:?}");
        // On time: neither.
        let g = run(0.05, 0.001, 0.6);
        assert!(!g.bottleneck && !g.machine_busy, "{g:?}");
        // Saturated: a lower bound, and says so.
        let g = run(0.95, 0.001, 0.0);
        assert!(
            g.bottleneck && g.reasons[0].contains("lower bound"),
            "{g:?}"
        );
    }

    #[test]
    fn a_run_too_short_has_no_slopes_and_says_how_long_it_needs() {
        let rss = [series("server.rss", SeriesUnit::Bytes, |t| {
            1e6 + 1024.0 * t
        })];
        let dir = tempfile::tempdir().expect("tempdir");
        let soak = verdicts(&SoakPlan::default(), dir.path(), &[], &rss, 10.0);
        assert!(soak.slopes.is_empty() && soak.drift.is_empty());
        let why = soak.too_short.expect("too short");
        // 20 intervals of 1 s after a 10 % warm-up: 22.2 s, rounded up.
        assert!(why.contains("run 23s or longer"), "{why}");
        let soak = verdicts(&SoakPlan::default(), dir.path(), &[], &rss, 100.0);
        assert!(soak.too_short.is_none() && !soak.slopes.is_empty());
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
