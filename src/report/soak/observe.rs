//! The soak thresholds evaluated: `slope(SERIES)`, `max(SERIES)`, `min(SERIES)` and
//! `drift(…)` read against `summary.resources` and `summary.soak`. No data is a failure
//! with the reason and how to get the data, as for every threshold.

use crate::metrics::SeriesUnit;
use crate::plan::threshold::{DriftFigure, Metric, Subject, Threshold, Unit};
use crate::summary::Summary;

/// The observed value of a soak threshold (or why there is none); `None` for the others.
pub fn observe(t: &Threshold, s: &Summary) -> Option<Result<f64, String>> {
    Some(match t.metric {
        Metric::Slope(unit) => slope(t, s, unit),
        Metric::SeriesMax(unit) => extreme(t, s, unit, f64::max),
        Metric::SeriesMin(unit) => extreme(t, s, unit, f64::min),
        Metric::Drift(figure) => drift(t, s, figure),
        _ => return None,
    })
}

fn series_name(t: &Threshold) -> Result<&str, String> {
    t.series.as_deref().ok_or_else(|| "names no series".into())
}

/// Where a missing series comes from.
fn missing(name: &str) -> String {
    let how = if name.starts_with("server.") {
        "watch the server with --server-pid PID"
    } else if name.starts_with("generator.") {
        "the generator's own series come with the watcher ([watch])"
    } else {
        "name the metric in the profile's [watch] scrape list"
    };
    format!("no {name} series: {how}")
}

/// Whether a value in `unit` can be compared with a series in `series`, and the factor
/// from the series' unit to the threshold's.
fn factor(series: SeriesUnit, unit: Unit) -> Option<f64> {
    match (series, unit) {
        (SeriesUnit::Bytes, Unit::Bytes | Unit::BytesPerS)
        | (SeriesUnit::Count, Unit::Count | Unit::PerS)
        | (SeriesUnit::Cores, Unit::Cores | Unit::CoresPerS) => Some(1.0),
        (SeriesUnit::Seconds, Unit::Us) => Some(1e6),
        _ => None,
    }
}

fn unit_mismatch(name: &str, series: SeriesUnit) -> String {
    let write = match series {
        SeriesUnit::Bytes => "a size: B, KiB, MiB, GiB (per s/min/h for a slope)",
        SeriesUnit::Count => "a plain number (per s/min/h for a slope)",
        SeriesUnit::Cores => "cores (per s/min/h for a slope)",
        SeriesUnit::Seconds => "a duration: us, ms, s, min, h",
    };
    format!("{name} is not in that unit: write the limit as {write}")
}

fn slope(t: &Threshold, s: &Summary, unit: Unit) -> Result<f64, String> {
    let name = series_name(t)?;
    let Some(series) = s.resources.iter().find(|x| x.name == name) else {
        return Err(missing(name));
    };
    let f = factor(series.unit, unit).ok_or_else(|| unit_mismatch(name, series.unit))?;
    s.soak
        .slopes
        .iter()
        .find(|x| x.series == name)
        .map(|x| x.per_s * f)
        .ok_or_else(|| {
            format!(
                "{name} has fewer than {} points in the steady part: run longer or shorten --interval",
                super::fit::MIN_POINTS
            )
        })
}

fn extreme(
    t: &Threshold,
    s: &Summary,
    unit: Unit,
    pick: fn(f64, f64) -> f64,
) -> Result<f64, String> {
    let name = series_name(t)?;
    let Some(series) = s.resources.iter().find(|x| x.name == name) else {
        return Err(missing(name));
    };
    let f = factor(series.unit, unit).ok_or_else(|| unit_mismatch(name, series.unit))?;
    series
        .points
        .iter()
        .map(|p| p[1])
        .filter(|v| v.is_finite())
        .reduce(pick)
        .map(|v| v * f)
        .ok_or_else(|| format!("{name} has no points"))
}

fn drift(t: &Threshold, s: &Summary, figure: DriftFigure) -> Result<f64, String> {
    let Subject::Phase(phase) = t.subject else {
        return Err("names no phase".into());
    };
    let Some(d) = s.soak.drift.iter().find(|d| d.phase == phase.name()) else {
        return Err(format!("no {} samples in the steady windows", phase.name()));
    };
    let (v, what) = match figure {
        DriftFigure::P50 => (d.p50_change, "successful samples"),
        DriftFigure::P99 => (d.p99_change, "successful samples"),
        DriftFigure::ErrorRate => (d.error_rate_change, "samples"),
    };
    v.ok_or_else(|| {
        format!(
            "a steady window of {} has no {what}: run longer or set a longer --drift-window",
            phase.name()
        )
    })
}

#[cfg(test)]
mod tests {
    use crate::metrics::{Series, SeriesUnit};
    use crate::plan::Threshold;
    use crate::report::soak::slopes;
    use crate::report::threshold::{evaluate, tests::summary};
    use crate::summary::soak::{Drift, DriftWindow};
    use crate::summary::Summary;
    use crate::summary::ThresholdResult;

    /// The fixture with a server leaking 1 MiB/min and 1 descriptor per 10 s over 100 s,
    /// and tools/call 30 % slower at the end.
    fn soaked() -> Summary {
        let mut s = summary();
        let mut rss = Series::new("server.rss", SeriesUnit::Bytes);
        let mut fds = Series::new("server.fds", SeriesUnit::Count);
        let mut lag = Series::new("generator.lag", SeriesUnit::Seconds);
        for i in 0..=100 {
            let t = f64::from(i);
            rss.push(t, 100.0 * 1048576.0 + t * 1048576.0 / 60.0);
            fds.push(t, 20.0 + (t / 10.0).floor());
            lag.push(t, 0.002);
        }
        s.soak.slopes = slopes(&[rss.clone(), fds.clone()], 10.0, 100.0);
        s.resources = vec![rss, fds, lag];
        let w = |p99| DriftWindow {
            from_s: 0.0,
            to_s: 10.0,
            count: 100,
            errors: 0,
            p50_us: Some(1_000),
            p99_us: Some(p99),
            error_rate: Some(0.0),
        };
        s.soak.drift = vec![Drift {
            phase: "tools/call".into(),
            first: w(10_000),
            last: w(13_000),
            p50_change: Some(0.0),
            p99_change: Some(0.3),
            error_rate_change: Some(0.0),
        }];
        s
    }

    fn check(s: &Summary, text: &str) -> ThresholdResult {
        evaluate(&Threshold::parse(text).expect(text), s)
    }

    #[test]
    fn soak_thresholds_read_slopes_series_and_drift() {
        let s = soaked();
        let r = check(&s, "slope(server.rss) < 5MiB/h");
        assert!(!r.passed, "60 MiB/h leaks: {r:?}");
        assert_eq!(r.observed_text, "+60.0 MiB/h");
        assert!(check(&s, "slope(server.rss) < 100MiB/h").passed);
        // One descriptor per 10 s.
        let r = check(&s, "slope(server.fds) < 1/min");
        assert!(!r.passed, "{r:?}");
        assert!(check(&s, "slope(server.fds) < 10/min").passed);
        let r = check(&s, "slope(server.fds) < 1/s");
        assert!(r.observed.is_some_and(|v| (v - 0.1).abs() < 0.01), "{r:?}");
        let r = check(&s, "max(server.rss) < 512MiB");
        assert!(r.passed && r.observed_text.contains("MiB"), "{r:?}");
        assert!(!check(&s, "max(server.rss) < 100MiB").passed);
        assert!(check(&s, "min(server.fds) >= 20").passed);
        assert!(check(&s, "max(generator.lag) < 10ms").passed);
        let r = check(&s, "drift(p99(tools/call)) < 20%");
        assert!(!r.passed);
        assert_eq!(r.observed_text, "+30.0%");
        assert!(check(&s, "drift(p50(tools/call)) < 10%").passed);
        assert!(check(&s, "drift(error_rate(tools/call)) < 1%").passed);
    }

    #[test]
    fn soak_thresholds_without_data_fail_and_say_how_to_get_it() {
        let s = soaked();
        let r = check(&s, "slope(server.threads) < 1/h");
        assert!(!r.passed && r.observed.is_none());
        assert_eq!(
            r.observed_text,
            "no server.threads series: watch the server with --server-pid PID"
        );
        let r = check(&s, "slope(generator.lag) < 1/h");
        assert!(
            !r.passed && r.observed_text.contains("not in that unit"),
            "{r:?}"
        );
        let r = check(&s, "max(server.rss) < 5");
        assert!(
            !r.passed && r.observed_text.contains("B, KiB, MiB"),
            "{r:?}"
        );
        let r = check(&s, "drift(p99(initialize)) < 20%");
        assert!(!r.passed && r.observed_text.contains("initialize"), "{r:?}");
        let mut few = soaked();
        few.soak.slopes.clear();
        let r = check(&few, "slope(server.rss) < 5MiB/h");
        assert!(
            !r.passed && r.observed_text.contains("fewer than 3 points"),
            "{r:?}"
        );
    }
}
