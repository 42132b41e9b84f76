//! `--checkpoint` / `[load] checkpoint`: how often a run rewrites its results from the
//! figures so far, so a generator killed by SIGKILL, the OOM killer or a reboot leaves
//! results at most one checkpoint old. Resolved once here; `None` means only at the end.

use super::error::PlanError;
use super::load::Load;
use std::time::Duration;

/// The checkpoint period when the profile does not say.
pub const DEFAULT_CHECKPOINT: Duration = Duration::from_secs(60);
/// Runs at most this long get no checkpoint by default: the final results come soon.
const SHORT_RUN: Duration = Duration::from_secs(300);
/// The shortest period: each checkpoint renders the whole report.
const MIN_CHECKPOINT: Duration = Duration::from_millis(100);

/// `text` is the profile's value after the command line's override.
pub fn resolve(
    text: Option<&str>,
    load: &Load,
    origin: &str,
) -> Result<Option<Duration>, PlanError> {
    let Some(text) = text.map(str::trim) else {
        // A run without a duration ends with its session budget, which can take hours.
        let long = load.duration.is_none_or(|d| d > SHORT_RUN);
        return Ok(long.then_some(DEFAULT_CHECKPOINT));
    };
    if text == "off" {
        return Ok(None);
    }
    humantime::parse_duration(text)
        .ok()
        .filter(|d| *d >= MIN_CHECKPOINT)
        .map(Some)
        .ok_or_else(|| {
            PlanError::new(
                origin,
                "load.checkpoint",
                format!("{text:?} is not a duration of 100ms or more, nor \"off\""),
                "use e.g. checkpoint = \"1m\" (--checkpoint 1m), or \"off\"",
            )
        })
}

#[cfg(test)]
mod tests {
    use crate::plan::{Overrides, Plan};
    use std::time::Duration;

    fn plan(toml: &str, checkpoint: Option<&str>) -> Result<Plan, String> {
        let profile = crate::profile::Profile::parse(toml, "p.toml").map_err(|e| e.to_string())?;
        let overrides = Overrides {
            checkpoint: checkpoint.map(String::from),
            ..Overrides::default()
        };
        Plan::resolve(profile, &overrides, "p.toml").map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_to_a_minute_for_long_or_open_ended_runs_only() {
        let at = |toml: &str| plan(toml, None).expect("plan").checkpoint;
        assert_eq!(at("[load]\nduration = \"5m\"\n"), None);
        assert_eq!(
            at("[load]\nduration = \"6m\"\n"),
            Some(Duration::from_secs(60))
        );
        assert_eq!(at("[load]\nsessions = 10\n"), Some(Duration::from_secs(60)));
    }

    #[test]
    fn the_command_line_wins_and_off_turns_it_off() {
        let p = plan("[load]\nduration = \"10s\"\n", Some("1s")).expect("plan");
        assert_eq!(p.checkpoint, Some(Duration::from_secs(1)));
        assert_eq!(
            p.effective_profile.load.checkpoint.as_deref(),
            Some("1s"),
            "the written profile shows what ran"
        );
        let p = plan(
            "[load]\nduration = \"1h\"\ncheckpoint = \"5m\"\n",
            Some("off"),
        );
        assert_eq!(p.expect("plan").checkpoint, None);
    }

    #[test]
    fn a_bad_period_names_the_key_and_the_fix() {
        let e = plan("[load]\ncheckpoint = \"soon\"\n", None).expect_err("refused");
        assert!(e.contains("`load.checkpoint`") && e.contains("fix:"), "{e}");
        let e = plan("[load]\nduration = \"1h\"\n", Some("1ms")).expect_err("refused");
        assert!(e.contains("100ms"), "{e}");
    }
}
