//! `[soak]` and `--warmup` / `--drift-window` → [`SoakPlan`]: which part of a run the
//! soak verdicts read. The warm-up (a share of the run or a duration) is left out of the
//! leak slopes and drift; the drift window is the length of the first and last steady
//! windows compared.

use super::error::PlanError;
use crate::profile::SoakSection;
use std::time::Duration;

/// A length written as a share (`"10%"`) or a duration (`"2m"`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Span {
    /// 0 ≤ share < 1.
    Share(f64),
    Fixed(Duration),
}

/// The resolved `[soak]` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SoakPlan {
    /// A share of the run, or a duration from its start. Default 10 %.
    pub warmup: Span,
    /// A share of the steady part, or a duration; `None`: 10 % of the run.
    pub window: Option<Span>,
    /// The interval length: no window is shorter.
    pub interval: Duration,
    /// The built-in server runs inside the generator (an HTTP persona against the
    /// default target): its CPU and memory are the generator's, so a busy process does
    /// not mean a starved generator.
    pub server_inside: bool,
}

impl Default for SoakPlan {
    fn default() -> SoakPlan {
        SoakPlan {
            warmup: Span::Share(0.1),
            window: None,
            interval: crate::metrics::DEFAULT_INTERVAL,
            server_inside: false,
        }
    }
}

impl SoakPlan {
    /// Read `[soak]`; `duration` is the run's when the profile fixes one, so a window
    /// that cannot fit is an error before the run rather than an empty verdict after.
    pub fn from_section(
        s: &SoakSection,
        duration: Option<Duration>,
        interval: Duration,
        origin: &str,
    ) -> Result<SoakPlan, PlanError> {
        let warmup = match &s.warmup {
            Some(t) => span(t, "soak.warmup", origin)?,
            None => Span::Share(0.1),
        };
        let window = s
            .window
            .as_deref()
            .map(|t| span(t, "soak.window", origin))
            .transpose()?;
        let plan = SoakPlan {
            warmup,
            window,
            interval,
            server_inside: false,
        };
        if let Some(d) = duration {
            let run_s = d.as_secs_f64();
            let (from, to) = plan.steady(run_s);
            if let Span::Fixed(w) = warmup {
                if w.as_secs_f64() >= run_s {
                    return Err(PlanError::new(
                        origin,
                        "soak.warmup",
                        format!(
                            "a warm-up of {} leaves nothing of a {} run",
                            show(w),
                            show(d)
                        ),
                        "make the warm-up shorter than load.duration, e.g. warmup = \"10%\"",
                    ));
                }
            }
            if let Some(Span::Fixed(w)) = window {
                if w.as_secs_f64() > to - from {
                    return Err(PlanError::new(
                        origin,
                        "soak.window",
                        format!(
                            "a drift window of {} is longer than the steady part ({:.0}s after the warm-up)",
                            show(w),
                            to - from
                        ),
                        "shorten it, or write a share of the steady part, e.g. window = \"10%\"",
                    ));
                }
            }
        }
        Ok(plan)
    }

    /// The steady part of a run of `run_s` seconds: `(from, to)`, seconds from the start.
    pub fn steady(&self, run_s: f64) -> (f64, f64) {
        let run_s = run_s.max(0.0);
        let warm = match self.warmup {
            Span::Share(f) => f * run_s,
            Span::Fixed(d) => d.as_secs_f64(),
        };
        (warm.min(run_s), run_s)
    }

    /// The drift window's length for a run of `run_s` seconds: at least one interval,
    /// at most the steady part.
    pub fn window_s(&self, run_s: f64) -> f64 {
        let (from, to) = self.steady(run_s);
        let w = match self.window {
            None => 0.1 * run_s,
            Some(Span::Share(f)) => f * (to - from),
            Some(Span::Fixed(d)) => d.as_secs_f64(),
        };
        w.max(self.interval.as_secs_f64()).min(to - from)
    }
}

fn show(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// `"10%"` → a share, `"2m"` → a duration.
pub(super) fn span(text: &str, key: &str, origin: &str) -> Result<Span, PlanError> {
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        return match p.trim().parse::<f64>() {
            Ok(p) if (0.0..100.0).contains(&p) => Ok(Span::Share(p / 100.0)),
            _ => Err(PlanError::new(
                origin,
                key,
                format!("{text:?} is not a share below 100%"),
                "write a percentage from 0% to 99%, e.g. \"10%\", or a duration such as \"2m\"",
            )),
        };
    }
    humantime::parse_duration(t).map(Span::Fixed).map_err(|e| {
        PlanError::new(
            origin,
            key,
            format!("{text:?} is neither a share nor a duration ({e})"),
            "write a percentage such as \"10%\" or a duration such as \"2m\"",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(
        warmup: Option<&str>,
        window: Option<&str>,
        secs: Option<u64>,
    ) -> Result<SoakPlan, PlanError> {
        let s = SoakSection {
            warmup: warmup.map(String::from),
            window: window.map(String::from),
        };
        SoakPlan::from_section(
            &s,
            secs.map(Duration::from_secs),
            Duration::from_secs(1),
            "p.toml",
        )
    }

    #[test]
    fn shares_and_durations() {
        let p = plan(None, None, None).expect("defaults");
        assert_eq!(p.steady(100.0), (10.0, 100.0));
        assert_eq!(p.window_s(100.0), 10.0);
        // An early stop: the steady part follows the real duration.
        assert_eq!(p.steady(50.0), (5.0, 50.0));
        let p = plan(Some("2m"), Some("50%"), Some(600)).expect("resolves");
        assert_eq!(p.steady(600.0), (120.0, 600.0));
        assert_eq!(p.window_s(600.0), 240.0);
        // Never shorter than an interval.
        assert_eq!(
            plan(None, Some("1%"), None).expect("ok").window_s(10.0),
            1.0
        );
    }

    #[test]
    fn impossible_settings_are_plan_errors_with_a_fix() {
        for (warmup, window, problem) in [
            (Some("100%"), None, "not a share below 100%"),
            (Some("lots"), None, "neither a share nor a duration"),
            (Some("10m"), None, "leaves nothing"),
            (None, Some("20m"), "longer than the steady part"),
        ] {
            let e = plan(warmup, window, Some(300)).expect_err(problem);
            assert!(e.to_string().contains(problem), "{e}");
            assert!(e.to_string().contains("soak."), "{e}");
        }
    }
}
