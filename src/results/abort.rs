//! Stop early when a threshold is already lost (k6's `abortOnFail`): while the fleet
//! works, the thresholds marked `abort_on_fail` (or all, `--abort-on-fail`) are judged
//! on the figures so far, each once its delay has passed. The first one lost stops the
//! run as a signal would (no new sessions; running ones get the grace period), says
//! which and when on stderr and in the summary (`run.stopped_because`), and the run
//! exits 1 whatever the whole run's figures say at the end.

use super::{Moment, Run};
use crate::client::StopSignals;
use crate::instruments::Instruments;
use crate::metrics::Snapshots;
use crate::plan::Threshold;
use crate::report::assemble::{self, PlanBasis, RunFacts};
use crate::summary::ThresholdResult;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The shortest time between two judgements: building a summary is not free.
const LEAST_EVERY: Duration = Duration::from_millis(250);

/// The task that judges the live figures; nothing runs when no threshold asks for it.
#[derive(Debug)]
pub struct AbortWatch {
    done: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl AbortWatch {
    pub fn start(run: Arc<Run>, instruments: &Instruments, quiet: bool) -> AbortWatch {
        let done = CancellationToken::new();
        let judged: Vec<Threshold> = run
            .plan
            .thresholds
            .iter()
            .filter(|t| t.abort_after.is_some())
            .cloned()
            .collect();
        let task = (!judged.is_empty()).then(|| {
            let watch = Watch {
                snapshots: instruments.snapshots.clone(),
                started: instruments.started().1,
                stop: instruments.stop.clone(),
                quiet,
            };
            tokio::spawn(watch.run(run, judged, done.clone()))
        });
        AbortWatch { done, task }
    }

    /// Stop judging (the fleet has ended).
    pub async fn stop(self) {
        self.done.cancel();
        if let Some(task) = self.task {
            let _ = task.await;
        }
    }
}

struct Watch {
    snapshots: Snapshots,
    started: tokio::time::Instant,
    stop: StopSignals,
    quiet: bool,
}

impl Watch {
    async fn run(self, run: Arc<Run>, judged: Vec<Threshold>, done: CancellationToken) {
        let every = run.plan.interval.max(LEAST_EVERY);
        let mut tick = tokio::time::interval_at(self.started + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let basis = PlanBasis::of(&run.plan);
        loop {
            tokio::select! {
                _ = done.cancelled() => return,
                _ = tick.tick() => {}
            }
            let elapsed = self.started.elapsed();
            let due: Vec<Threshold> = judged
                .iter()
                .filter(|t| t.abort_after.is_some_and(|d| elapsed >= d))
                .cloned()
                .collect();
            if due.is_empty() {
                continue;
            }
            let Some(stats) = self.snapshots.take().await else {
                return;
            };
            let facts = live_facts(&run, elapsed);
            let summary = assemble::summary_from(&basis, &due, &stats, &facts);
            if let Some(lost) = summary.thresholds.iter().find(|r| lost(r)) {
                let why = format!(
                    "threshold `{}` lost at {} s (observed {})",
                    lost.expression,
                    elapsed.as_secs(),
                    lost.observed_text
                );
                self.stop_for(&run, why);
                return;
            }
        }
    }

    fn stop_for(&self, run: &Run, why: String) {
        let grace = run.plan.load.grace;
        if !self.quiet {
            crate::console::errln(format_args!(
                "\nstopped: {why}; no new sessions, running ones get {} to finish",
                humantime::format_duration(grace)
            ));
        }
        let _ = run.stopped_because.set(why);
        let stop = self.stop.clone();
        stop.drain.cancel();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            stop.abort.cancel();
        });
    }
}

/// Lost on what was measured: a threshold with nothing to measure yet (no samples, no
/// check run) is not lost, it is early.
fn lost(r: &ThresholdResult) -> bool {
    !r.passed && r.observed.is_some()
}

/// The facts a live judgement needs: the figures' time span (rates divide by it). The
/// soak verdicts and resource series are the whole run's, never judged live.
fn live_facts(run: &Run, elapsed: Duration) -> RunFacts {
    let moment = Moment::checkpoint(elapsed);
    RunFacts {
        started_at: run.started_at,
        finished_at: moment.at,
        duration: elapsed,
        target: run.target.clone(),
        transport: run.transport.clone(),
        stopped_by: moment.stopped_by,
        stopped_because: None,
        resources: Vec::new(),
        soak: Default::default(),
        checkpoint_at: Some(moment.at),
        shard: None,
        shards: None,
        outputs: Vec::new(),
    }
}
