//! The soak thresholds evaluated: `slope(SERIES)`, `max(SERIES)`, `min(SERIES)` and
//! `drift(…)` read against `summary.resources` and `summary.soak`. No data is a failure
//! with the reason and how to get the data, as for every threshold.

use crate::metrics::SeriesUnit;
use crate::plan::threshold::{DriftFigure, Metric, Op, Per, Subject, Threshold, Unit};
use crate::summary::soak::{Slope, Trend};
use crate::summary::Summary;

/// The observed value of a soak threshold (or why there is none); `None` for the others.
pub fn observe(t: &Threshold, s: &Summary) -> Option<Result<f64, String>> {
    Some(match t.metric {
        Metric::Slope(unit) => slope(t, s, unit),
        Metric::SlopePer(unit, per) => slope_per(t, s, unit, per).map(|(v, _)| v),
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
    let (slope, f) = the_slope(t, s, unit)?;
    Ok(slope.per_s * f)
}

/// `slope(SERIES, per=…)`: the per-event figure and its interval, in the threshold's unit.
fn slope_per(t: &Threshold, s: &Summary, unit: Unit, per: Per) -> Result<(f64, [f64; 2]), String> {
    let (slope, f) = the_slope(t, s, unit)?;
    slope
        .per
        .iter()
        .find(|p| p.per == per.name())
        .map(|p| (p.value * f, [p.ci95[0] * f, p.ci95[1] * f]))
        .ok_or_else(|| {
            format!(
                "fewer than {:.0} {} over the span of {}: run longer or with more churn",
                super::shape::MIN_EVENTS,
                match per {
                    Per::Session => "sessions ended",
                    Per::Abandoned => "abandoned sessions",
                    Per::Call => "calls",
                },
                slope.series
            )
        })
}

/// The series' slope in the summary and the factor to the threshold's unit.
fn the_slope<'a>(t: &Threshold, s: &'a Summary, unit: Unit) -> Result<(&'a Slope, f64), String> {
    let name = series_name(t)?;
    let Some(series) = s.resources.iter().find(|x| x.name == name) else {
        return Err(missing(name));
    };
    let f = factor(series.unit, unit).ok_or_else(|| unit_mismatch(name, series.unit))?;
    let slope = s.soak.slopes.iter().find(|x| x.series == name).ok_or_else(|| {
        match &s.soak.too_short {
            Some(why) => why.clone(),
            None => format!(
                "{name} has fewer than {} points in the steady part: run longer or shorten --interval",
                super::fit::MIN_POINTS
            ),
        }
    })?;
    Ok((slope, f))
}

/// What a slope threshold is decided on besides its point: the 95 % interval (in the
/// threshold's unit), the series' trend, and how long a run would tell.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub ci95: [f64; 2],
    pub trend: Option<Trend>,
    /// The span the figures came from, seconds.
    pub span_s: f64,
}

/// The reading of a slope threshold; `None` for the other forms or without data.
pub fn reading(t: &Threshold, s: &Summary) -> Option<Reading> {
    let (ci95, slope) = match t.metric {
        Metric::Slope(unit) => {
            let (slope, f) = the_slope(t, s, unit).ok()?;
            ([slope.ci95_per_s[0] * f, slope.ci95_per_s[1] * f], slope)
        }
        Metric::SlopePer(unit, per) => {
            let (_, ci) = slope_per(t, s, unit, per).ok()?;
            (ci, the_slope(t, s, unit).ok()?.0)
        }
        _ => return None,
    };
    Some(Reading {
        ci95,
        trend: slope.trend,
        span_s: slope.to_s - slope.from_s,
    })
}

/// A slope threshold's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub passed: bool,
    /// The interval holds the limit: passed, because the run cannot tell.
    pub inconclusive: bool,
    pub text: String,
}

/// Decide `t` on its interval: it fails only when the whole 95 % interval is on the wrong
/// side of the limit, passes when the whole interval is on the right side, and is
/// inconclusive (passed, and said) in between. `show` writes a value for people.
pub fn decide(t: &Threshold, value: f64, r: &Reading, show: impl Fn(f64) -> String) -> Decision {
    let [lo, hi] = r.ci95;
    let interval = format!("95% CI {} … {}", show(lo), show(hi));
    let trend = r
        .trend
        .map(|t| format!("; the series: {}", t.words()))
        .unwrap_or_default();
    let (good, bad) = match t.op {
        Op::Lt => (hi < t.limit, lo >= t.limit),
        Op::Le => (hi <= t.limit, lo > t.limit),
        Op::Gt => (lo > t.limit, hi <= t.limit),
        Op::Ge => (lo >= t.limit, hi < t.limit),
    };
    if good {
        return Decision {
            passed: true,
            inconclusive: false,
            text: format!("the whole interval meets the limit ({interval}){trend}"),
        };
    }
    if bad {
        return Decision {
            passed: false,
            inconclusive: false,
            text: format!("the whole interval breaks the limit ({interval}){trend}"),
        };
    }
    // The interval narrows with the span to the power 3/2 at a fixed sampling interval:
    // the span at which it would no longer reach the limit.
    let (half, gap) = ((hi - lo) / 2.0, (value - t.limit).abs());
    let longer = if gap > 0.0 && r.span_s > 0.0 {
        let needs = (r.span_s * (half / gap).powf(2.0 / 3.0)).min(r.span_s * 100.0);
        format!(
            "; a steady part of about {} would tell",
            humantime::format_duration(std::time::Duration::from_secs(needs.ceil() as u64))
        )
    } else {
        String::new()
    };
    Decision {
        passed: true,
        inconclusive: true,
        text: format!("inconclusive: the interval holds the limit ({interval}){trend}{longer}"),
    }
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
