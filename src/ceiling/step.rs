//! One step of a ceiling search: a `run` (through [`crate::run_slice`], the code path
//! and histograms of `mcp-fleet run`) at one open-model rate for `--step`, after a
//! warm-up run at the same rate whose figures are left out. Its results folder is kept
//! under `steps/NN-RATE/`; [`StepFigures`] is what the search and the verdicts read of it.

use crate::cli::RunArgs;
use crate::metrics::Phase;
use crate::stop::StopReason;
pub use crate::summary::ceiling::{PhaseFigures, ServerLoad, StepFigures};
use crate::summary::Summary;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A step fails when it completes fewer sessions a second (over its whole length, the
/// drain of the sessions in flight at its end included) than this share of the offered
/// rate.
pub const ACHIEVED_MIN: f64 = 0.95;

/// Phases that are not MCP requests.
const NOT_CALLS: [Phase; 8] = [
    Phase::Session,
    Phase::Connect,
    Phase::Lag,
    Phase::Token,
    Phase::Auth,
    Phase::Close,
    Phase::Initialized,
    Phase::Answer,
];

/// The figures of a step that offered `offered` sessions a second (or, `closed`, ran
/// that many clients) for `step`.
pub fn figures(
    summary: &Summary,
    offered: f64,
    step: Duration,
    stopped: StopReason,
    closed: bool,
) -> StepFigures {
    let s = &summary.sessions;
    let dropped = summary.counters.get("dropped").copied().unwrap_or(0);
    // Over the run's whole length, drain included: sessions a server queued past
    // the step's end count at the rate it really finished them.
    let secs = summary.run.duration_s.max(step.as_secs_f64()).max(1e-9);
    let achieved = s.completed as f64 / secs;
    let phases: BTreeMap<String, PhaseFigures> = summary
        .phases
        .iter()
        .map(|(name, p)| {
            let lat = p.service.as_ref();
            let fig = PhaseFigures {
                count: p.count,
                errors: p.errors,
                p50_us: lat.map(|l| l.p50_us),
                p95_us: lat.map(|l| l.p95_us),
                p99_us: lat.map(|l| l.p99_us),
            };
            (name.clone(), fig)
        })
        .collect();
    let calls: u64 = summary
        .phases
        .iter()
        .filter(|(name, _)| Phase::from_name(name).is_some_and(|p| !NOT_CALLS.contains(&p)))
        .map(|(_, p)| p.count)
        .sum();
    let reached = s.completed + s.failed;
    let interrupted = matches!(stopped, StopReason::Signal(_));
    let mut reasons: Vec<String> = summary
        .thresholds
        .iter()
        .filter(|t| !t.passed)
        .map(|t| format!("{}: {}", t.expression, t.observed_text))
        .collect();
    if dropped > 0 {
        let cap = summary.run.load.max_in_flight.unwrap_or_default();
        reasons.push(format!(
            "{dropped} arrivals dropped at the in-flight cap ({cap})"
        ));
    }
    // Clients take what the server gives: only arrivals can fall short.
    if !closed && achieved < ACHIEVED_MIN * offered {
        reasons.push(format!(
            "achieved {achieved:.1}/s of {offered}/s offered ({:+.1}%)",
            (achieved / offered - 1.0) * 100.0
        ));
    }
    let server_inside = summary.soak.generator.server_inside;
    StepFigures {
        offered_per_s: offered,
        achieved_per_s: (achieved * 10.0).round() / 10.0,
        passed: reasons.is_empty() && !interrupted,
        reasons,
        interrupted,
        slos: summary.thresholds.clone(),
        started: s.started,
        completed: s.completed,
        failed: s.failed,
        unreachable: s.unreachable,
        dropped,
        failures: summary.failures.clone(),
        failure_examples: summary
            .failure_examples
            .iter()
            .filter_map(|(k, v)| v.first().map(|e| (k.clone(), e.clone())))
            .collect(),
        phases,
        calls_per_session: if reached > 0 {
            calls as f64 / reached as f64
        } else {
            0.0
        },
        server: server_load(summary),
        generator: crate::report::soak::generator(
            &summary.resources,
            0.0,
            f64::INFINITY,
            server_inside,
        ),
        ..StepFigures::default()
    }
}

/// The server's series of the step, summed up.
fn server_load(summary: &Summary) -> ServerLoad {
    let values = |name: &str| -> Vec<f64> {
        summary
            .resources
            .iter()
            .find(|s| s.name == name)
            .map(|s| {
                s.points
                    .iter()
                    .map(|p| p[1])
                    .filter(|v| v.is_finite())
                    .collect()
            })
            .unwrap_or_default()
    };
    let max = |name: &str| values(name).into_iter().reduce(f64::max);
    let cpu = values("server.cpu");
    ServerLoad {
        cpu_cores: (!cpu.is_empty()).then(|| cpu.iter().sum::<f64>() / cpu.len() as f64),
        cpu_cores_max: cpu.into_iter().reduce(f64::max),
        threads_max: max("server.threads"),
        fds_max: max("server.fds"),
        rss_max_bytes: max("server.rss"),
    }
}

/// `steps/NN-RATE` (e.g. `steps/03-40`), the folder of step `index` at `rate`.
pub fn folder(index: u32, rate: f64) -> String {
    format!("steps/{index:02}-{}", rate_name(rate))
}

/// A rate as a folder name and a flag value: `40`, `12.5`.
pub fn rate_name(rate: f64) -> String {
    let text = format!("{rate:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What each step's `run` takes: the ceiling's own options with the step's rate and
/// length, quiet, into `dir`.
pub struct StepRun<'a> {
    pub base: &'a RunArgs,
    pub warmup: Duration,
    pub step: Duration,
    /// Levels are closed-model clients, not rates.
    pub clients: bool,
}

/// Set the load of a step: `level` sessions a second (open model), or `level` clients.
pub fn set_level(o: &mut crate::plan::Overrides, level: f64, clients: bool) {
    if clients {
        o.clients = Some(level.round().max(1.0) as u32);
        o.rate = None;
    } else {
        o.rate = Some(format!("{}/s", rate_name(level)));
        o.clients = None;
    }
}

/// A profile of set arrivals (`[load] arrivals`, what `replay` writes) is a schedule of
/// its own, with no rate to climb: the ladder's rates would replace it, and draw its
/// personas by weight instead of the list's mix. Refused before anything starts. The
/// steps' plans replace the load model, so the profile as written is resolved here (one
/// whose arrivals are wrong is refused too; any other error is the steps' to report).
pub fn refuse_arrivals(base: &RunArgs) -> anyhow::Result<()> {
    use crate::plan::{LoadModel, Plan, Source, SourceError};
    let source = Source::choose(base.profile.as_deref(), &base.overrides);
    let arrivals = match Plan::from_source(&source, &base.overrides) {
        Ok(plan) => matches!(plan.load.model, LoadModel::Arrivals { .. }),
        Err(SourceError::Plan(e)) => e.key.starts_with("load.arrivals"),
        Err(SourceError::Profile(_)) => false,
    };
    if arrivals {
        anyhow::bail!("ceiling climbs a session rate, and the profile's [load] arrivals set every session's start time and persona: there is no rate to climb\nfix: run the arrivals with `mcp-fleet run`; to search a ceiling with their personas, remove `arrivals` (the personas are then drawn by weight)");
    }
    Ok(())
}

impl StepRun<'_> {
    /// Warm up (into `dir/warmup`, removed after), then measure `rate` for the step's
    /// length into `dir`. A signal during the warm-up ends the step there, unmeasured.
    pub async fn measure(&self, dir: &Path, rate: f64) -> anyhow::Result<crate::RunOutcome> {
        if !self.warmup.is_zero() {
            let warm = dir.join("warmup");
            let outcome = crate::run_slice(&self.args(warm.clone(), rate, self.warmup)).await?;
            // Only the measured run is kept; the warm-up's figures are left out on purpose.
            let _ = std::fs::remove_dir_all(&warm);
            if matches!(outcome.stopped_by, StopReason::Signal(_)) {
                return Ok(outcome);
            }
        }
        crate::run_slice(&self.args(dir.to_path_buf(), rate, self.step)).await
    }

    /// The `run` of one part at `rate` for `length` into `out`, quiet.
    pub fn args(&self, out: PathBuf, rate: f64, length: Duration) -> RunArgs {
        let mut overrides = self.base.overrides.clone();
        set_level(&mut overrides, rate, self.clients);
        overrides.duration = Some(format!("{}ms", length.as_millis()));
        overrides.sessions = None;
        overrides.checkpoint = Some("off".into());
        // Ten intervals a step at least (100 ms to 1 s): enough samples of the server's
        // and the generator's CPU and lag within a short step.
        if overrides.interval.is_none() {
            let interval =
                (self.step / 10).clamp(Duration::from_millis(100), Duration::from_secs(1));
            overrides.interval = Some(format!("{}ms", interval.as_millis()));
        }
        RunArgs {
            profile: self.base.profile.clone(),
            overrides,
            out: Some(out),
            quiet: true,
            builtin_program: self.base.builtin_program.clone(),
            ..RunArgs::default()
        }
    }
}
