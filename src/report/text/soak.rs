//! The terminal summary's "soak" block: the server's leak slopes with their confidence
//! intervals, the phases whose p99 moved more than 10 % between the first and last
//! steady windows (with enough samples behind both), the outages and storms the run
//! lived through, and the warning when the generator was the bottleneck. A run that
//! watched no server and lived through nothing has no block: every run has drift
//! figures and generator slopes in `summary.json`, and a short run's are noise.

use super::format_us;
use crate::report::soak::fit::interval_text;
use crate::report::soak::shape::per_event_text;
use crate::summary::soak::{Slope, Soak, Trend};
use std::fmt::Write;

/// A p99 change above this is worth a line.
const NOTABLE_DRIFT: f64 = 0.1;
/// Fewer samples than this in either window and a p99 is too thin to compare.
const DRIFT_SAMPLES: u64 = 100;

/// Series whose slope is a leak verdict worth a line: the server's memory, descriptors
/// and threads, the scraped series the profile named, and the generator's RSS (the check
/// that the generator did not leak either). The per-process spread, CPU, the scraped
/// copies of the process figures and `scrape.failures` stay in `summary.json`.
fn worth_a_line(series: &str) -> bool {
    match series {
        "server.rss" | "server.fds" | "server.threads" | "generator.rss" => true,
        "scrape.failures" => false,
        s => s.starts_with("scrape.") && !s.starts_with("scrape.process_"),
    }
}

/// The block for `soak`; `watched`: the run watched the server (so a run too short for
/// verdicts says so).
pub fn render(out: &mut String, soak: &Soak, watched: bool) {
    let drifts: Vec<_> = soak
        .drift
        .iter()
        .filter(|d| d.first.count >= DRIFT_SAMPLES && d.last.count >= DRIFT_SAMPLES)
        .filter(|d| d.p99_change.is_some_and(|c| c.abs() > NOTABLE_DRIFT))
        .collect();
    let lived_through = !soak.outages.is_empty() || !soak.storms.is_empty();
    let judged = watched && soak.too_short.is_none();
    if !judged && !lived_through {
        // Slopes and drift of a run that watched nothing are the generator's own, and
        // over a short run they are noise: only what the run says about the generator
        // and the machine stays.
        if let (true, Some(why)) = (watched, &soak.too_short) {
            let _ = writeln!(out, "\nsoak: no verdicts: {why}");
        }
        generator_notes(out, soak, "\n");
        return;
    }
    let _ = writeln!(
        out,
        "\nsoak (steady {:.0}s–{:.0}s):",
        soak.steady_from_s, soak.steady_to_s
    );
    // A flat count (threads that never changed) says nothing.
    let moved = |s: &&Slope| s.per_s != 0.0 || s.series != "server.threads";
    for s in soak
        .slopes
        .iter()
        .filter(|s| judged && worth_a_line(&s.series))
        .filter(moved)
    {
        slope_lines(out, s);
    }
    for d in drifts {
        let (Some(a), Some(b), Some(c)) = (d.first.p99_us, d.last.p99_us, d.p99_change) else {
            continue;
        };
        let _ = writeln!(
            out,
            "  drift {}: p99 {} → {} ({:+.1}%, {} and {} samples)",
            d.phase,
            format_us(a as f64),
            format_us(b as f64),
            c * 100.0,
            d.first.count,
            d.last.count
        );
    }
    for o in &soak.outages {
        let back = match (o.to_s, o.recovery_s) {
            (None, _) => "still down at the end".to_string(),
            (Some(_), Some(r)) => format!("sessions back {r:.1} s later"),
            (Some(_), None) => format!("the {} sessions never all came back", o.sessions_before),
        };
        let _ = writeln!(
            out,
            "  outage at {:.1}s: down {:.1} s, {back}",
            o.from_s, o.downtime_s
        );
    }
    for t in &soak.storms {
        let back = t.recovery_s.map_or("not all back".to_string(), |r| {
            format!("back after {r:.1} s")
        });
        let _ = writeln!(
            out,
            "  {} storm at {:.1}s: {} dropped, {} reconnected, {back}",
            t.kind, t.at_s, t.dropped, t.recovered
        );
    }
    generator_notes(out, soak, "");
}

/// One series: its trend and per-session figure first (what a leak is judged on), then
/// the per-hour slope, then the test that decided.
fn slope_lines(out: &mut String, s: &Slope) {
    let per_hour = format!(
        "{}, 95% CI {}",
        s.text,
        interval_text(s.ci95_per_s[0], s.ci95_per_s[1], s.unit)
    );
    let Some(trend) = s.trend else {
        let _ = writeln!(out, "  {per_hour}");
        return;
    };
    let what = match (trend, s.limit, s.at_limit_from_s, s.levels_off_at_s) {
        (Trend::AtLimit, Some(l), Some(at), _) => format!("at its limit ({l:.0}) from {at:.1}s"),
        (Trend::WarmUp, _, _, Some(at)) => format!("warm-up, flat from {at:.1}s"),
        (t, ..) => t.words().to_string(),
    };
    // Per session and per abandoned session read best on one line; `per call` and the
    // intervals are in `summary.json` and on the next line.
    let per: Vec<String> = s
        .per
        .iter()
        .filter(|p| p.per != "call")
        .map(|p| {
            let what = if p.per == "session" {
                "session"
            } else {
                "abandoned session"
            };
            format!("{} per {what}", per_event_text(p.value, s.unit))
        })
        .collect();
    let label = crate::report::soak::fit::label(&s.series);
    let hour = format!(
        "{} (R² {:.2})",
        crate::report::soak::fit::rate_text(s.per_s, s.unit),
        s.r2
    );
    match s.per.iter().find(|p| p.per == "session") {
        Some(p) => {
            let _ = writeln!(
                out,
                "  {label}: {what} — {} ({} sessions); {hour}",
                per.join(", "),
                p.events
            );
        }
        None => {
            let _ = writeln!(out, "  {label}: {what} — {per_hour}");
        }
    }
    let _ = writeln!(out, "    {}", s.decided_by);
}

/// The generator's saturation, or a machine busy with other work.
fn generator_notes(out: &mut String, soak: &Soak, lead: &str) {
    let g = &soak.generator;
    if g.bottleneck {
        let _ = writeln!(out, "{lead}  WARNING: the generator limited the figures");
        for r in &g.reasons {
            let _ = writeln!(out, "    {r}");
        }
    }
    if g.machine_busy {
        let lead = if g.bottleneck { "" } else { lead };
        let _ = writeln!(out, "{lead}  NOTE: the machine was busy with other work");
        for r in &g.busy_reasons {
            let _ = writeln!(out, "    {r}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Series, SeriesUnit};
    use crate::summary::soak::{Drift, DriftWindow};

    fn window(p99: u64) -> DriftWindow {
        DriftWindow {
            from_s: 0.0,
            to_s: 1.0,
            count: 200,
            errors: 0,
            p50_us: Some(p99 / 2),
            p99_us: Some(p99),
            error_rate: Some(0.0),
        }
    }

    #[test]
    fn the_block_shows_slopes_notable_drift_and_the_warning() {
        let mut out = String::new();
        render(&mut out, &Soak::default(), false);
        assert!(out.is_empty(), "nothing to say: {out:?}");
        let mut rss = Series::new("server.rss", SeriesUnit::Bytes);
        for i in 0..10 {
            rss.push(f64::from(i), 1e6 + 1024.0 * f64::from(i));
        }
        let drift = |phase: &str, a, b| Drift {
            phase: phase.into(),
            first: window(a),
            last: window(b),
            p50_change: None,
            p99_change: Some(b as f64 / a as f64 - 1.0),
            error_rate_change: Some(0.0),
        };
        let soak = Soak {
            steady_from_s: 1.0,
            steady_to_s: 9.0,
            slopes: crate::report::soak::slopes(&[rss], 0.0, 10.0),
            drift: vec![
                drift("tools/call", 1_000, 1_500),
                drift("ping", 1_000, 1_050),
            ],
            ..Soak::default()
        };
        let mut soak = soak;
        soak.generator.bottleneck = true;
        soak.generator.reasons = vec!["busy".into()];
        // Nothing watched: the generator's own slopes and drift over a short run are
        // noise; only the warning is shown.
        let unwatched = Soak {
            slopes: Vec::new(),
            ..soak.clone()
        };
        render(&mut out, &unwatched, false);
        assert!(!out.contains("soak ("), "{out}");
        assert!(!out.contains("drift"), "{out}");
        assert!(
            out.contains("WARNING: the generator") && out.contains("busy"),
            "{out}"
        );
        out.clear();
        render(&mut out, &soak, true);
        assert!(out.contains("soak (steady 1s–9s):"), "{out}");
        assert!(out.contains("RSS +3.52 MiB/h (R² 1.00), 95% CI"), "{out}");
        assert!(out.contains("RSS: leak — "), "{out}");
        assert!(out.contains("grows to the end"), "{out}");
        assert!(
            out.contains("drift tools/call: p99 1.00ms → 1.50ms (+50.0%, 200 and 200 samples)"),
            "{out}"
        );
        assert!(!out.contains("ping"), "a 5% drift is not shown: {out}");
        assert!(
            out.contains("WARNING: the generator") && out.contains("busy"),
            "{out}"
        );
        // Too short: no block, and, when the server was watched, why.
        let short = Soak {
            too_short: Some("the steady part was 9.0s".into()),
            slopes: Vec::new(),
            drift: Vec::new(),
            generator: Default::default(),
            ..soak.clone()
        };
        out.clear();
        render(&mut out, &short, true);
        assert_eq!(out, "\nsoak: no verdicts: the steady part was 9.0s\n");
        out.clear();
        render(&mut out, &short, false);
        assert!(out.is_empty(), "{out}");
        // A busy machine is a note, not the generator's fault.
        let mut busy = short.clone();
        busy.generator.machine_busy = true;
        busy.generator.busy_reasons = vec!["other work".into()];
        out.clear();
        render(&mut out, &busy, false);
        assert!(
            out.contains("NOTE: the machine was busy") && !out.contains("WARNING"),
            "{out}"
        );
    }
}
