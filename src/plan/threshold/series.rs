//! The soak forms of the threshold grammar: `slope(server.rss) < 5MiB/h`,
//! `slope(server.fds) < 1/min`, `max(server.rss) < 512MiB`, `min(scrape.up) >= 1`,
//! `drift(p99(tools/call)) < 20%`, `drift(error_rate(tools/call)) < 1%`.
//!
//! Sizes: `B`, binary `KiB` `MiB` `GiB` (1024-based) and decimal `KB` `MB` `GB`
//! (1000-based, as disks and network cards count); times per `s`, `min` (or `m`), `h`.
//! A series is named by a dotted name (`server.rss`): that is how `max(server.rss)` (a
//! resource) differs from `max(tools/call)` (a latency).

use super::{
    latency_scale, split_call, split_number, split_op, DriftFigure, Metric, Per, Subject,
    Threshold, ThresholdError, Unit,
};
use crate::metrics::Phase;

/// The prefixes a series name may have.
pub const SERIES_PREFIXES: [&str; 4] = ["server.", "generator.", "scrape.", "machine."];

const SLOPE_FIX: &str =
    "write e.g. slope(server.rss) < 5MiB/h, slope(server.fds) < 1/min, slope(server.cpu) < 0.1cores/h or slope(server.rss, per=session) < 4KiB";
const PER_FIX: &str =
    "write e.g. slope(server.rss, per=session) < 4KiB, slope(server.fds, per=abandoned) < 0.5 or slope(server.rss, per=call) < 1KiB";
const SERIES_FIX: &str =
    "write e.g. max(server.rss) < 512MiB, max(server.fds) < 1000 or max(generator.lag) < 10ms";
const DRIFT_FIX: &str =
    "write e.g. drift(p99(tools/call)) < 20%, drift(p50(initialize)) < 10% or drift(error_rate(tools/call)) < 1%";

/// The soak form `text` is written in, or `None` when it is one of the others.
pub fn parse(text: &str) -> Option<Result<Threshold, ThresholdError>> {
    let (left, op, right) = split_op(text)?;
    let (name, args) = split_call(left)?;
    let is_series = !args.is_empty() && args[0].contains('.');
    let form = match name {
        "slope" | "min" => Form::Series,
        "max" if is_series => Form::Series,
        "drift" => Form::Drift,
        _ => return None,
    };
    let err = |problem: String, fix: &str| ThresholdError {
        text: text.to_string(),
        problem,
        fix: fix.to_string(),
    };
    Some(
        match form {
            Form::Series => series(name, &args, right).map_err(|(p, f)| err(p, f)),
            Form::Drift => drift(left, right).map_err(|(p, f)| err(p, f)),
        }
        .map(|(metric, subject, series, limit)| Threshold {
            text: text.trim().to_string(),
            metric,
            subject,
            persona: None,
            op,
            limit,
            series,
            tool: None,
            request: None,
            check: None,
            abort_after: None,
        }),
    )
}

enum Form {
    Series,
    Drift,
}

type Parsed = (Metric, Subject, Option<String>, f64);
type Problem = (String, &'static str);

fn series(name: &str, args: &[&str], right: &str) -> Result<Parsed, Problem> {
    let fix = if name == "slope" {
        SLOPE_FIX
    } else {
        SERIES_FIX
    };
    if let (true, [series, per]) = (name == "slope", args) {
        return slope_per(series, per, right);
    }
    let [series] = args else {
        return Err((format!("`{name}` takes one series"), fix));
    };
    check_series(series)?;
    let Some((value, unit)) = split_number(right) else {
        return Err((format!("`{right}` is not a number"), fix));
    };
    let metric = if name == "slope" {
        let Some((what, per)) = unit.split_once('/') else {
            return Err((
                format!("a slope needs a rate such as 5MiB/h, not `{right}`"),
                fix,
            ));
        };
        let per_s = match per.trim() {
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" | "hour" => 3600.0,
            other => return Err((format!("unknown time unit `{other}`"), fix)),
        };
        let (unit, scale) = quantity(what.trim()).ok_or((format!("unknown unit `{what}`"), fix))?;
        let unit = match unit {
            Unit::Bytes => Unit::BytesPerS,
            Unit::Cores => Unit::CoresPerS,
            Unit::Count => Unit::PerS,
            _ => return Err((format!("a slope of `{what}` is not supported"), fix)),
        };
        return Ok((
            Metric::Slope(unit),
            Subject::All,
            Some(series.to_string()),
            value * scale / per_s,
        ));
    } else {
        let (unit, scale) = quantity(unit).ok_or((format!("unknown unit `{unit}`"), fix))?;
        match name {
            "max" => (Metric::SeriesMax(unit), value * scale),
            _ => (Metric::SeriesMin(unit), value * scale),
        }
    };
    Ok((metric.0, Subject::All, Some(series.to_string()), metric.1))
}

/// `slope(SERIES, per=session|abandoned|call) OP VALUE`: a change per event, so a size,
/// a count or cores with no time unit.
fn slope_per(series: &str, per: &str, right: &str) -> Result<Parsed, Problem> {
    check_series(series)?;
    let per = match per.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
        Some(("per", "session")) => Per::Session,
        Some(("per", "abandoned")) => Per::Abandoned,
        Some(("per", "call")) => Per::Call,
        _ => {
            return Err((
                format!("`{per}` is not per=session, per=abandoned or per=call"),
                PER_FIX,
            ))
        }
    };
    let Some((value, unit)) = split_number(right) else {
        return Err((format!("`{right}` is not a number"), PER_FIX));
    };
    if unit.contains('/') {
        return Err((
            format!(
                "a slope per {} takes a value per {0}, not a rate: `{right}`",
                per.name()
            ),
            PER_FIX,
        ));
    }
    let (unit, scale) = quantity(unit).ok_or((format!("unknown unit `{unit}`"), PER_FIX))?;
    if !matches!(unit, Unit::Bytes | Unit::Count | Unit::Cores) {
        return Err((
            format!("a slope per {} of `{right}` is not supported", per.name()),
            PER_FIX,
        ));
    }
    Ok((
        Metric::SlopePer(unit, per),
        Subject::All,
        Some(series.to_string()),
        value * scale,
    ))
}

/// A unit of a series value and the factor to it: sizes to bytes, latencies to µs.
fn quantity(unit: &str) -> Option<(Unit, f64)> {
    Some(match unit {
        "" => (Unit::Count, 1.0),
        "B" => (Unit::Bytes, 1.0),
        "KiB" => (Unit::Bytes, 1024.0),
        "MiB" => (Unit::Bytes, 1024.0 * 1024.0),
        "GiB" => (Unit::Bytes, 1024.0 * 1024.0 * 1024.0),
        "KB" | "kB" => (Unit::Bytes, 1e3),
        "MB" => (Unit::Bytes, 1e6),
        "GB" => (Unit::Bytes, 1e9),
        "cores" | "core" => (Unit::Cores, 1.0),
        other => (Unit::Us, latency_scale(other)?),
    })
}

/// `server.rss`, `generator.lag`, `scrape.mcp_active_sessions`.
fn check_series(name: &str) -> Result<(), Problem> {
    let known = SERIES_PREFIXES
        .iter()
        .any(|p| name.strip_prefix(p).is_some_and(|rest| !rest.is_empty()));
    if known {
        Ok(())
    } else {
        Err((
            format!("unknown series `{name}`"),
            "name a series starting with server., generator. or scrape. (e.g. server.rss, server.fds, generator.rss, scrape.mcp_active_sessions)",
        ))
    }
}

fn drift(left: &str, right: &str) -> Result<Parsed, Problem> {
    let inner = left
        .trim()
        .strip_prefix("drift")
        .map(str::trim)
        .and_then(|t| t.strip_prefix('('))
        .and_then(|t| t.strip_suffix(')'))
        .ok_or(("`drift` needs a figure of a phase".to_string(), DRIFT_FIX))?;
    let (figure, args) =
        split_call(inner).ok_or((format!("`{inner}` has an unclosed parenthesis"), DRIFT_FIX))?;
    let figure = match figure {
        "p50" => DriftFigure::P50,
        "p99" => DriftFigure::P99,
        "error_rate" => DriftFigure::ErrorRate,
        other => return Err((format!("no drift of `{other}`"), DRIFT_FIX)),
    };
    let [phase] = args[..] else {
        return Err(("a drift names one phase".to_string(), DRIFT_FIX));
    };
    let Some(phase) = Phase::from_name(phase).filter(|p| *p != Phase::Lag) else {
        return Err((format!("unknown phase `{phase}`"), DRIFT_FIX));
    };
    let Some((value, unit)) = split_number(right) else {
        return Err((format!("`{right}` is not a number"), DRIFT_FIX));
    };
    let limit = match unit {
        "%" => value / 100.0,
        "" => value,
        _ => return Err((format!("a drift is a percentage, not `{unit}`"), DRIFT_FIX)),
    };
    Ok((Metric::Drift(figure), Subject::Phase(phase), None, limit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Threshold {
        Threshold::parse(text).expect(text)
    }

    #[test]
    fn soak_forms_parse_to_per_second_limits() {
        let t = ok("slope(server.rss) < 5MiB/h");
        assert_eq!(t.metric, Metric::Slope(Unit::BytesPerS));
        assert_eq!(t.series.as_deref(), Some("server.rss"));
        assert!((t.limit - 5.0 * 1024.0 * 1024.0 / 3600.0).abs() < 1e-9);
        let t = ok("slope(server.fds) < 1/min");
        assert_eq!((t.metric, t.limit), (Metric::Slope(Unit::PerS), 1.0 / 60.0));
        assert_eq!(ok("slope(generator.rss) < 10MB/h").limit, 1e7 / 3600.0);
        let t = ok("max(server.rss) < 512MiB");
        assert_eq!(
            (t.metric, t.limit),
            (Metric::SeriesMax(Unit::Bytes), 512.0 * 1048576.0)
        );
        assert_eq!(
            ok("max(generator.lag) < 10ms").metric,
            Metric::SeriesMax(Unit::Us)
        );
        assert_eq!(
            ok("min(scrape.up) >= 1").metric,
            Metric::SeriesMin(Unit::Count)
        );
        // A phase is still a latency.
        assert_eq!(ok("max(tools/call) < 1s").metric, Metric::Quantile(1.0));
        let t = ok("drift(p99(tools/call)) < 20%");
        assert_eq!(t.metric, Metric::Drift(DriftFigure::P99));
        assert_eq!(
            (t.subject, t.limit),
            (Subject::Phase(Phase::ToolsCall), 0.2)
        );
        assert_eq!(
            ok("drift(p50(initialize)) < 10%").metric,
            Metric::Drift(DriftFigure::P50)
        );
        assert_eq!(ok("drift(error_rate(tools/call)) < 1%").limit, 0.01);
    }

    #[test]
    fn bad_soak_forms_say_what_and_how() {
        for (text, problem) in [
            ("slope(rss) < 5MiB/h", "unknown series `rss`"),
            ("slope(client.rss) < 5MiB/h", "unknown series"),
            ("slope(server.rss) < 5MiB", "needs a rate"),
            ("slope(server.rss) < 5MiB/day", "unknown time unit `day`"),
            ("slope(server.rss) < 5parsecs/h", "unknown unit"),
            ("max(server.rss) < 5furlongs", "unknown unit"),
            ("drift(p90(tools/call)) < 5%", "no drift of `p90`"),
            ("drift(p99(tools/cal)) < 5%", "unknown phase"),
            ("drift(p99) < 5%", "one phase"),
            ("drift(p99(tools/call)) < 5ms", "a percentage"),
        ] {
            let e = Threshold::parse(text).expect_err(text);
            assert!(e.problem.contains(problem), "{text}: {}", e.problem);
            assert!(!e.fix.is_empty());
        }
        let e = Threshold::parse("max(rss.x) < 1").expect_err("prefix");
        assert!(
            e.fix.contains("server.") && e.fix.contains("generator.") && e.fix.contains("scrape.")
        );
    }
}
