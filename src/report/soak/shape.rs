//! What a resource series' shape says: a leak (it grows to the end), a warm-up (it grew,
//! then levelled off), a series sitting at the server's own limit, or no trend beyond
//! the noise. Judged from the whole run, not after a fixed warm-up alone, so growth that
//! stopped at a limit early in the run is still seen; and against the sessions that ended
//! rather than time where the run had enough of them, so the figure does not scale with
//! the load ("+72 KiB per session", not "+16 GiB/h at this rate").
//!
//! The test, in order:
//! 1. the series reached 95 % of a known limit (the server's open-file limit) and was
//!    still within 10 % of it at the end: **at its limit**;
//! 2. two lines, split where their residuals are smallest, against one line: when the
//!    split halves the residual, the part after the split is the late part, else the
//!    steady part after the configured warm-up is;
//! 3. the late part grows (its 95 % interval above zero, its slope at least the floor):
//!    **leak**; else the early part grew that way: **warm-up**; else **no trend**.

use super::fit::{self, Line};
use crate::metrics::{Series, SeriesUnit};
use crate::summary::soak::{PerCount, Slope, Trend};

/// The run's cumulative counts, sampled with the resources: the x of per-event slopes.
pub const SESSIONS: &str = "fleet.sessions";
pub const ABANDONED: &str = "fleet.abandoned";
pub const CALLS: &str = "fleet.calls";
/// The server's open-file limit (its soft `RLIMIT_NOFILE`), sampled beside `server.fds`.
pub const FDS_LIMIT: &str = "server.fds.limit";

/// Fewer events than this over a span give no per-event slope, and a judgement in time.
pub const MIN_EVENTS: f64 = 30.0;
/// Growth smaller than this per session is noise, not a leak: an allocator's slack is a
/// few bytes per session; the smallest real leaks measured keep tens of KiB.
pub const FLOOR_BYTES_PER_SESSION: f64 = 1024.0;
/// One descriptor or thread per 100 sessions.
pub const FLOOR_COUNT_PER_SESSION: f64 = 0.01;
/// Without churn, growth is judged in time: 1 MiB/h, 1 descriptor per hour.
pub const FLOOR_BYTES_PER_S: f64 = 1024.0 * 1024.0 / 3600.0;
pub const FLOOR_COUNT_PER_S: f64 = 1.0 / 3600.0;

/// Whether a series is a level that can leak (memory, descriptors, threads, a gauge of
/// live sessions) rather than a rate (CPU), a share or a running total.
pub fn judged(s: &Series) -> bool {
    matches!(s.unit, SeriesUnit::Bytes | SeriesUnit::Count)
        && !s.name.starts_with("fleet.")
        && !s.name.starts_with("machine.")
        && !s.name.ends_with(".limit")
        && !matches!(s.name.as_str(), "generator.cpu_share" | "scrape.failures")
}

/// The x a judgement was made against.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Domain {
    Sessions,
    Time,
}

/// A series' slope over its decisive span, with its trend, the test that decided it
/// and the per-event figures: `None` when there are too few points.
pub fn judge(
    series: &Series,
    all: &[Series],
    run_from_s: f64,
    steady_from_s: f64,
    to_s: f64,
) -> Option<Slope> {
    let find = |name: &str| all.iter().find(|s| s.name == name);
    let pts = fit::points(series, run_from_s, to_s);
    let sessions = find(SESSIONS);
    let domain = match sessions {
        Some(x) if increase(x, run_from_s, to_s) >= MIN_EVENTS => Domain::Sessions,
        _ => Domain::Time,
    };
    let (times, xy) = match domain {
        Domain::Time => (pts.iter().map(|p| p[0]).collect(), pts.clone()),
        Domain::Sessions => paired(&pts, sessions?),
    };
    let whole = fit::line(&xy)?;
    let floor = floor(series.unit, domain);
    let per = match domain {
        Domain::Sessions => "per session",
        Domain::Time => "per second",
    };
    let shown = |v: f64| show(v, series.unit, domain);
    let limit = if series.name == "server.fds" {
        find(FDS_LIMIT).and_then(|l| l.points.last()).map(|p| p[1])
    } else {
        None
    };

    // 1. At its limit.
    if let Some(limit) = limit.filter(|l| *l > 0.0) {
        let reached = pts.iter().find(|p| p[1] >= 0.95 * limit).map(|p| p[0]);
        let still = pts.last().is_some_and(|p| p[1] >= 0.9 * limit);
        if let (Some(at), true) = (reached, still) {
            let mut s = figures(series, all, run_from_s, at)
                .or_else(|| figures(series, all, steady_from_s, to_s))?;
            s.trend = Some(Trend::AtLimit);
            s.limit = Some(limit);
            s.at_limit_from_s = Some(at);
            s.decided_by = format!(
                "reached 95 % of the server's limit ({limit:.0}) at {at:.1}s and stayed there: the growth was capped, not reclaimed"
            );
            return Some(s);
        }
    }

    // 2. One line or two.
    let split = best_split(&xy).filter(|(_, a, b)| a.sse + b.sse < 0.5 * whole.sse);
    let (late_from, early) = match split {
        Some((k, a, _)) => (times[k], Some(a)),
        None => (steady_from_s, None),
    };
    let mut s = figures(series, all, late_from, to_s)?;
    let late = match domain {
        Domain::Time => fit::line(&fit::points(series, late_from, to_s)),
        Domain::Sessions => fit::line(&paired(&fit::points(series, late_from, to_s), sessions?).1),
    }
    .unwrap_or(whole);
    s.limit = limit;
    s.levels_off_at_s = split.map(|(k, _, _)| times[k]);
    let grows = |l: &Line| l.ci95[0] > 0.0 && l.slope >= floor;
    let interval = |l: &Line| format!("95% CI {} … {}", shown(l.ci95[0]), shown(l.ci95[1]));
    // 3. Leak, warm-up or no trend.
    if grows(&late) {
        s.trend = Some(Trend::Leak);
        s.levels_off_at_s = None;
        s.decided_by = format!(
            "grows to the end: {} {per} ({}) from {late_from:.1}s, above the floor of {}",
            shown(late.slope),
            interval(&late),
            shown(floor)
        );
    } else if let (Some(a), Some((early_rate, late_rate))) = (
        early.filter(grows),
        rates(sessions, run_from_s, late_from, to_s).filter(|(e, l)| *l < 0.25 * e),
    ) {
        // Flat, but because the sessions nearly stopped coming (the server stopped
        // taking them): the plateau says nothing of reclaiming; the growth while they
        // came is the evidence.
        let mut before = figures(series, all, run_from_s, late_from).unwrap_or(s);
        before.trend = Some(Trend::Leak);
        before.limit = limit;
        before.levels_off_at_s = Some(late_from);
        before.decided_by = format!(
            "grew {} {per} while sessions came; from {late_from:.1}s they nearly stopped ({early_rate:.1}/s → {late_rate:.1}/s), so its plateau says nothing of reclaiming",
            shown(a.slope)
        );
        return Some(before);
    } else if let Some(a) = early.filter(grows) {
        s.trend = Some(Trend::WarmUp);
        s.decided_by = format!(
            "grew {} {per} until {late_from:.1}s, then {} ({}): levels off",
            shown(a.slope),
            shown(late.slope),
            interval(&late)
        );
    } else {
        s.trend = Some(Trend::NoTrend);
        s.levels_off_at_s = None;
        s.decided_by = format!(
            "no growth beyond the noise: {} {per} ({}, R² {:.2}), floor {}",
            shown(late.slope),
            interval(&late),
            late.r2,
            shown(floor)
        );
        // Could a longer run tell it from the floor? The interval narrows with the span
        // to the power 3/2 at a fixed sampling interval.
        let gap = (floor - late.slope).abs();
        if late.ci95[1] >= floor && gap > 0.0 {
            let span = to_s - late_from;
            s.needs_s = Some((span * (late.half() / gap).powf(2.0 / 3.0)).min(span * 100.0));
        }
    }
    Some(s)
}

/// A series that levelled off (a warm-up, or a leak whose sessions stopped) when another
/// of the same server reached its limit was capped by that limit: memory stops growing when the server can no
/// longer take sessions because its descriptors ran out. Such slopes become "at its
/// limit", with the figures of the growth before it. `slopes` are one run's.
pub fn capped_by_limits(slopes: &mut [Slope], all: &[Series], run_from_s: f64, to_s: f64) {
    let limits: Vec<(String, f64)> = slopes
        .iter()
        .filter(|s| s.trend == Some(Trend::AtLimit))
        .filter_map(|s| Some((s.series.clone(), s.at_limit_from_s?)))
        .collect();
    // Within a tenth of the run (at least 10 s) of the limit counts as the same moment.
    let near = ((to_s - run_from_s) / 10.0).max(10.0);
    let flat = |s: &&mut Slope| matches!(s.trend, Some(Trend::WarmUp | Trend::Leak));
    for s in slopes.iter_mut().filter(flat) {
        let Some(at) = s.levels_off_at_s else {
            continue;
        };
        let Some((name, limit_at)) = limits.iter().find(|(_, t)| (t - at).abs() <= near) else {
            continue;
        };
        let Some(series) = all.iter().find(|x| x.name == s.series) else {
            continue;
        };
        let Some(mut before) = figures(series, all, run_from_s, at) else {
            continue;
        };
        before.trend = Some(Trend::AtLimit);
        before.at_limit_from_s = Some(at);
        before.decided_by = format!(
            "levelled off at {at:.1}s, when {} reached the server's limit at {limit_at:.1}s: capped by it, not reclaimed ({} before)",
            fit::label(name),
            before
                .per
                .iter()
                .find(|p| p.per == "session")
                .map_or_else(
                    || fit::rate_text(before.per_s, before.unit),
                    |p| format!("{} per session", per_event_text(p.value, before.unit))
                )
        );
        *s = before;
    }
}

/// The time slope and per-event slopes of `series` over `[from_s, to_s]`.
fn figures(series: &Series, all: &[Series], from_s: f64, to_s: f64) -> Option<Slope> {
    let mut s = fit::slope(series, from_s, to_s)?;
    let pts = fit::points(series, from_s, to_s);
    for (name, per) in [
        (SESSIONS, "session"),
        (ABANDONED, "abandoned"),
        (CALLS, "call"),
    ] {
        let Some(x) = all.iter().find(|s| s.name == name) else {
            continue;
        };
        let events = increase(x, from_s, to_s);
        if events < MIN_EVENTS {
            continue;
        }
        if let Some(l) = fit::line(&paired(&pts, x).1) {
            s.per.push(PerCount {
                per: per.to_string(),
                value: l.slope,
                ci95: l.ci95,
                r2: l.r2,
                events: events as u64,
            });
        }
    }
    Some(s)
}

/// Sessions per second before and after `split_s`, in the session domain only.
fn rates(sessions: Option<&Series>, from_s: f64, split_s: f64, to_s: f64) -> Option<(f64, f64)> {
    let x = sessions?;
    let per_s = |a: f64, b: f64| (b > a).then(|| increase(x, a, b) / (b - a));
    Some((per_s(from_s, split_s)?, per_s(split_s, to_s)?))
}

/// How much a cumulative series rose over `[from_s, to_s]`.
fn increase(x: &Series, from_s: f64, to_s: f64) -> f64 {
    let pts = fit::points(x, from_s, to_s);
    match (pts.first(), pts.last()) {
        (Some(a), Some(b)) => b[1] - a[1],
        _ => 0.0,
    }
}

/// `[x(t), v]` for each `[t, v]` of `pts` that `x` was sampled at (the same tick), and
/// those times.
fn paired(pts: &[[f64; 2]], x: &Series) -> (Vec<f64>, Vec<[f64; 2]>) {
    let (mut times, mut out) = (Vec::with_capacity(pts.len()), Vec::with_capacity(pts.len()));
    let mut xs = x.points.iter().peekable();
    for [t, v] in pts {
        while xs.next_if(|p| p[0] < *t - 1e-6).is_some() {}
        if let Some(p) = xs.peek().filter(|p| (p[0] - t).abs() <= 1e-6) {
            times.push(*t);
            out.push([p[1], *v]);
        }
    }
    (times, out)
}

/// The split into two lines with the smallest total residual, each side at least a
/// tenth of the points (and five): `(index of the late part's first point, early, late)`.
fn best_split(xy: &[[f64; 2]]) -> Option<(usize, Line, Line)> {
    let n = xy.len();
    let side = (n / 10).max(5);
    if n < 2 * side {
        return None;
    }
    // At most ~200 candidates: an hour at 1 s stays cheap.
    let stride = ((n - 2 * side) / 200).max(1);
    (side..=n - side)
        .step_by(stride)
        .filter_map(|k| Some((k, fit::line(&xy[..k])?, fit::line(&xy[k..])?)))
        .min_by(|a, b| (a.1.sse + a.2.sse).total_cmp(&(b.1.sse + b.2.sse)))
}

fn floor(unit: SeriesUnit, domain: Domain) -> f64 {
    match (unit, domain) {
        (SeriesUnit::Bytes, Domain::Sessions) => FLOOR_BYTES_PER_SESSION,
        (SeriesUnit::Bytes, Domain::Time) => FLOOR_BYTES_PER_S,
        (_, Domain::Sessions) => FLOOR_COUNT_PER_SESSION,
        (_, Domain::Time) => FLOOR_COUNT_PER_S,
    }
}

/// A value per session, or per second shown per hour.
fn show(v: f64, unit: SeriesUnit, domain: Domain) -> String {
    match domain {
        Domain::Time => fit::rate_text(v, unit),
        Domain::Sessions => per_event_text(v, unit),
    }
}

/// A change per event for people: `+72.0 KiB`, `+0.98`.
pub fn per_event_text(v: f64, unit: SeriesUnit) -> String {
    match unit {
        SeriesUnit::Bytes => fit::bytes_text(v, true),
        _ => format!("{v:+.3}"),
    }
}

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;
