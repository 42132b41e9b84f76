//! The soak verdicts rebuilt from a results folder (`mcp-fleet report DIR`, also after a
//! killed run): the `[soak]` settings from the folder's `profile.toml`, the series from
//! `summary.json`, the drift from the `.hlog` files as far as they were written, and the
//! thresholds evaluated again on the result.

use super::verdicts;
use crate::metrics::IntervalRow;
use crate::plan::{SoakPlan, Threshold};
use crate::profile::Profile;
use crate::report::threshold::evaluate;
use crate::summary::Summary;
use std::path::Path;
use std::time::Duration;

/// Recompute `summary.soak` (keeping its outages and storms, which the run found) and the
/// thresholds; whether anything changed.
pub fn refresh(
    summary: &mut Summary,
    dir: &Path,
    timeline: &[IntervalRow],
    profile_toml: Option<&str>,
) -> bool {
    let interval = Duration::try_from_secs_f64(summary.run.interval_s)
        .unwrap_or(crate::metrics::DEFAULT_INTERVAL);
    // A folder without a profile, or with one this version cannot read, gets the
    // defaults: the verdicts are still worth having.
    let plan = profile_toml
        .and_then(|t| Profile::parse(t, "profile.toml").ok())
        .and_then(|p| SoakPlan::from_section(&p.soak, None, interval, "profile.toml").ok())
        .unwrap_or(SoakPlan {
            interval,
            ..SoakPlan::default()
        });
    // Where the server ran is a fact of the run, kept in its summary.
    let plan = SoakPlan {
        server_inside: summary.soak.generator.server_inside,
        ..plan
    };
    let mut soak = verdicts(
        &plan,
        dir,
        timeline,
        &summary.resources,
        summary.run.duration_s,
    );
    soak.outages = std::mem::take(&mut summary.soak.outages);
    soak.storms = std::mem::take(&mut summary.soak.storms);
    let before = (summary.soak.clone(), summary.thresholds.clone());
    summary.soak = soak;
    let results: Vec<_> = summary
        .thresholds
        .iter()
        .map(|r| match Threshold::parse(&r.expression) {
            Ok(t) => evaluate(&t, summary),
            Err(_) => r.clone(),
        })
        .collect();
    summary.thresholds = results;
    // `before` lost its outages and storms to `take`; compare like with like.
    let mut was = before.0;
    was.outages.clone_from(&summary.soak.outages);
    was.storms.clone_from(&summary.soak.storms);
    was != summary.soak || before.1 != summary.thresholds
}
