//! Which thresholds stop the run early when the live figures lose them (k6's
//! `abortOnFail`): a profile table's `abort_on_fail = true, delay = "10s"`, or
//! `--abort-on-fail[=DELAY]` for every threshold. The soak forms are decided on the
//! whole run's series and windows, so they are never judged live.

use super::{Metric, Threshold};
use crate::plan::error::PlanError;
use crate::plan::quantity::parse_duration;
use crate::profile::ThresholdEntry;

/// Whether `t` can be judged on the figures so far.
fn live(t: &Threshold) -> bool {
    !matches!(
        t.metric,
        Metric::Slope(_)
            | Metric::SlopePer(..)
            | Metric::SeriesMax(_)
            | Metric::SeriesMin(_)
            | Metric::Drift(_)
    )
}

/// Set `abort_after` on `thresholds` (the profile's `entries` first, then the command
/// line's) from the entries' tables and `--abort-on-fail` (`cli`: its delay).
pub fn abort_after(
    thresholds: &mut [Threshold],
    entries: &[ThresholdEntry],
    cli: Option<&str>,
    origin: &str,
) -> Result<(), PlanError> {
    let cli = match cli {
        Some(d) => Some(parse_duration(d, "--abort-on-fail", "command line")?),
        None => None,
    };
    for (i, t) in thresholds.iter_mut().enumerate() {
        let key = format!("thresholds[{i}]");
        let from_profile = match entries.get(i) {
            Some(ThresholdEntry::Table(table)) if table.abort_on_fail == Some(true) => {
                let delay = table.delay.as_deref().unwrap_or("0s");
                Some(parse_duration(delay, &format!("{key}.delay"), origin)?)
            }
            Some(ThresholdEntry::Table(table)) if table.delay.is_some() => {
                return Err(PlanError::new(
                    origin,
                    format!("{key}.delay"),
                    "a delay without abort_on_fail = true does nothing",
                    "add abort_on_fail = true, or drop the delay",
                ))
            }
            _ => None,
        };
        if from_profile.is_some() && !live(t) {
            return Err(PlanError::new(
                origin,
                format!("{key}.abort_on_fail"),
                format!(
                    "`{}` is decided on the whole run, not on live figures",
                    t.text
                ),
                "drop abort_on_fail for the soak forms (slope, max, min, drift)",
            ));
        }
        t.abort_after = from_profile.or(cli.filter(|_| live(t)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::plan::{Overrides, Plan};
    use crate::profile::Profile;
    use std::time::Duration;

    fn resolve(profile: &str, cli: Option<&str>) -> Result<Plan, String> {
        let o = Overrides {
            abort_on_fail: cli.map(Into::into),
            thresholds: vec!["error_rate < 1%".into()],
            ..Default::default()
        };
        let p = Profile::parse(profile, "p").expect("parses");
        Plan::resolve(p, &o, "p").map_err(|e| e.to_string())
    }

    #[test]
    fn a_table_or_the_flag_marks_thresholds_for_live_judgement() {
        let text = r#"thresholds = [{ threshold = "p99(session) < 1s", abort_on_fail = true, delay = "10s" }, "rate(sessions) > 1", "slope(server.rss) < 1MB/min"]"#;
        let p = resolve(text, None).expect("resolves");
        let after: Vec<_> = p.thresholds.iter().map(|t| t.abort_after).collect();
        assert_eq!(after, [Some(Duration::from_secs(10)), None, None, None]);
        // The flag: every threshold but the soak form, the table's own delay kept.
        let p = resolve(text, Some("2s")).expect("resolves");
        let after: Vec<_> = p.thresholds.iter().map(|t| t.abort_after).collect();
        let two = Some(Duration::from_secs(2));
        assert_eq!(after, [Some(Duration::from_secs(10)), two, None, two]);
    }

    #[test]
    fn a_delay_alone_or_a_soak_form_is_refused() {
        let e = resolve(
            r#"thresholds = [{ threshold = "p99(session) < 1s", delay = "1s" }]"#,
            None,
        )
        .expect_err("delay alone");
        assert!(e.contains("thresholds[0].delay"), "{e}");
        let e = resolve(
            r#"thresholds = [{ threshold = "slope(server.rss) < 1MB/min", abort_on_fail = true }]"#,
            None,
        )
        .expect_err("soak");
        assert!(e.contains("decided on the whole run"), "{e}");
    }
}
