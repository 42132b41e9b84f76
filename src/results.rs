//! The results of a run, assembled and written in one place: at the end of the run and
//! at every checkpoint (`--checkpoint`), so a generator killed by SIGKILL, the OOM killer
//! or a reboot leaves a results folder at most one checkpoint old. [`facts`] is where
//! everything the collector does not know joins the figures; both paths use it.

pub mod abort;
pub mod dashboard;
pub mod folder;

use crate::instruments::{Instruments, Measured};
use crate::metrics::LiveCounters;
use crate::metrics::{Series, Snapshots, Stats};
use crate::plan::Plan;
use crate::report;
use crate::report::assemble::RunFacts;
use crate::shard::{Shard, Start};
use crate::stop::StopReason;
use crate::summary::Summary;
use crate::targets::Targets;
use crate::watch;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// What a run knows besides its figures: its plan, where it writes, what it targets.
#[derive(Debug)]
pub struct Run {
    pub plan: Arc<Plan>,
    pub dir: PathBuf,
    pub target: String,
    pub transport: String,
    pub started_at: SystemTime,
    /// The fleet's live counters: the outages and storms it lived through.
    pub live: Arc<LiveCounters>,
    /// Which shard of the run this process is ([`crate::shard::Shard::ONE`] unsharded).
    pub shard: Shard,
    /// How late after its start (`--start-at`) the schedule really began, µs: this
    /// shard's part of the start skew (0 without `--start-at`).
    pub start_late_us: u64,
    /// Set when a live threshold was lost (`abort_on_fail`): what stopped the run.
    pub stopped_because: std::sync::OnceLock<String>,
}

impl Run {
    /// The run of `plan` into `dir` against `targets`, as its instruments follow it,
    /// begun at `start` (shard `shard`'s part of it).
    pub fn new(
        plan: &Arc<Plan>,
        dir: &Path,
        targets: &Targets,
        instruments: &Instruments,
        shard: Shard,
        start: &Start,
    ) -> Run {
        Run {
            plan: plan.clone(),
            dir: dir.to_path_buf(),
            target: targets.description.clone(),
            transport: targets.transports.clone(),
            started_at: start.at,
            live: instruments.live.clone(),
            shard,
            start_late_us: start.late_us(),
            stopped_because: std::sync::OnceLock::new(),
        }
    }
}

/// The moment the figures describe: the end of the run, or a checkpoint.
#[derive(Debug, Clone)]
pub struct Moment {
    pub at: SystemTime,
    /// Time since the start of the run.
    pub elapsed: Duration,
    /// `run.stopped_by`: why it ended, or `running`.
    pub stopped_by: String,
    /// A checkpoint: the run still goes on.
    pub checkpoint: bool,
}

impl Moment {
    /// The end of the run, as the instruments measured it.
    pub fn end(measured: &Measured, stopped_by: &StopReason) -> Moment {
        Moment {
            at: measured.finished_at,
            elapsed: measured.elapsed,
            stopped_by: stopped_by.name().to_string(),
            checkpoint: false,
        }
    }

    /// A checkpoint now, `elapsed` into the run.
    pub fn checkpoint(elapsed: Duration) -> Moment {
        Moment {
            at: SystemTime::now(),
            elapsed,
            stopped_by: "running".into(),
            checkpoint: true,
        }
    }
}

/// The run's facts at `moment`. The resource series and the soak verdicts join here, so
/// checkpoints carry them too.
pub fn facts(run: &Run, stats: &Stats, moment: &Moment, resources: Vec<Series>) -> RunFacts {
    let mut soak = report::soak::verdicts(
        &run.plan.soak,
        &run.dir,
        &stats.timeline,
        &resources,
        moment.elapsed.as_secs_f64(),
    );
    (soak.outages, soak.storms) =
        report::soak_traffic::outages_and_storms(&run.live.traffic(), moment.elapsed);
    RunFacts {
        started_at: run.started_at,
        finished_at: moment.at,
        duration: moment.elapsed,
        target: run.target.clone(),
        transport: run.transport.clone(),
        stopped_by: moment.stopped_by.clone(),
        stopped_because: run.stopped_because.get().cloned(),
        resources,
        soak,
        checkpoint_at: moment.checkpoint.then_some(moment.at),
        shard: run.shard.is_sharded().then(|| run.shard.to_string()),
        shards: None,
        outputs: Vec::new(),
    }
}

/// The facts of a run still going: the resource series so far are read back from
/// `resources.csv`, which the watcher writes every point to as it goes, rather than asked
/// of it.
fn facts_so_far(run: &Run, stats: &Stats, moment: &Moment) -> RunFacts {
    let resources = watch::read_csv(&run.dir.join(watch::CSV_FILE)).unwrap_or_default();
    facts(run, stats, moment, resources)
}

/// The results at the end of the run: its facts joined to what the instruments
/// measured, written ([`write`]).
pub fn write_end(
    run: &Run,
    measured: &Measured,
    stopped_by: &StopReason,
) -> anyhow::Result<Summary> {
    let moment = Moment::end(measured, stopped_by);
    let mut facts = facts(run, &measured.stats, &moment, measured.resources.clone());
    facts.outputs = measured.outputs.clone();
    write(run, &measured.stats, &facts)
}

/// Build the summary from `stats` and `facts` and write the results folder's summary
/// files (summary.json, summary.txt, profile.toml, report.html, thresholds.xml) and the
/// run's raw state (`state.json`, what `mcp-fleet merge` adds), each atomically; the
/// interval files are written while the run goes.
pub fn write(run: &Run, stats: &Stats, facts: &RunFacts) -> anyhow::Result<Summary> {
    let dir = &run.dir;
    let summary = report::assemble::summary(&run.plan, stats, facts);
    // The raw state first: a run killed between the two leaves a state at least as new
    // as its summary, never older.
    let shard = run.shard;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the results folder {}", dir.display()))?;
    let mut state = crate::merge::state::State::of(&run.plan, shard, stats, facts)?;
    state.run.start_late_us = run.start_late_us;
    state.write(dir)?;
    report::write_results(
        dir,
        &summary,
        &run.plan.profile_toml(),
        &stats.timeline,
        histograms(stats),
    )
    .with_context(|| format!("writing results to {}", dir.display()))?;
    if let Some(e) = &stats.requests_error {
        anyhow::bail!("{e}");
    }
    if let Some(e) = &stats.interval_error {
        anyhow::bail!(
            "writing the interval files (.hlog, intervals.csv) to {}: {e}",
            dir.display()
        );
    }
    Ok(summary)
}

/// The whole run's service-time histogram per phase, for the report's percentile plot.
fn histograms(stats: &Stats) -> std::collections::BTreeMap<String, hdrhistogram::Histogram<u64>> {
    stats
        .phases
        .active()
        .map(|(p, s)| (p.name().to_string(), s.service.clone()))
        .collect()
}

/// The task that writes a checkpoint every period while the fleet works.
#[derive(Debug)]
pub struct Checkpoints {
    done: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Checkpoints {
    /// Start writing checkpoints every `plan.checkpoint` (nothing when it is off), the
    /// first one period after the run's start, from the figures the instruments collect.
    pub fn start(run: Arc<Run>, instruments: &Instruments, quiet: bool) -> Checkpoints {
        let (snapshots, started) = (instruments.snapshots.clone(), instruments.started().1);
        let done = CancellationToken::new();
        let task = run.plan.checkpoint.map(|every| {
            tokio::spawn(write_every(
                run,
                every,
                snapshots,
                started,
                done.clone(),
                quiet,
            ))
        });
        Checkpoints { done, task }
    }

    /// Stop, after the checkpoint being written if any, so it cannot overwrite the
    /// final results.
    pub async fn stop(self) {
        self.done.cancel();
        if let Some(task) = self.task {
            let _ = task.await;
        }
    }
}

/// Work for a [`Worker`].
type Job = Box<dyn FnOnce() + Send>;

/// One thread of its own for the whole run, doing the jobs sent to it in turn: rendering
/// a report is CPU work, kept off the fleet's workers. (On tokio's blocking pool each
/// render could land on a new thread and a new malloc arena, and the generator's RSS grew
/// by ~20 MiB a checkpoint: +700 MiB over a 30-minute soak.)
pub(crate) struct Worker(std::sync::mpsc::Sender<Job>);

impl Worker {
    pub(crate) fn start(name: &str) -> std::io::Result<Worker> {
        let (worker, jobs) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                for job in jobs {
                    job();
                }
            })?;
        Ok(Worker(worker))
    }

    /// `f`'s result, computed on the thread; `None` if the thread is gone.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = reply.send(f());
        });
        self.0.send(job).ok()?;
        answer.await.ok()
    }
}

async fn write_every(
    run: Arc<Run>,
    every: Duration,
    snapshots: Snapshots,
    started: tokio::time::Instant,
    done: CancellationToken,
    quiet: bool,
) {
    let mut tick = tokio::time::interval_at(started + every, every);
    // A slow checkpoint (a huge report) must not be followed by a burst of them.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut warned = false;
    let worker = match Worker::start("mcp-fleet-checkpoint") {
        Ok(w) => w,
        Err(e) => {
            if !quiet {
                crate::console::errln(format_args!(
                    "warning: no checkpoints (cannot start their thread): {e}"
                ));
            }
            return;
        }
    };
    loop {
        tokio::select! {
            _ = done.cancelled() => break,
            _ = tick.tick() => {}
        }
        let Some(stats) = snapshots.take().await else {
            break;
        };
        let moment = Moment::checkpoint(started.elapsed());
        let run = run.clone();
        let written = worker
            .run(move || {
                let facts = facts_so_far(&run, &stats, &moment);
                write(&run, &stats, &facts).map(|_| ())
            })
            .await
            .unwrap_or_else(|| Err(anyhow::anyhow!("the checkpoint writer stopped")));
        if let Err(e) = written {
            if !quiet && !warned {
                crate::console::errln(format_args!(
                    "warning: a checkpoint could not be written (the run goes on): {}",
                    crate::console::error_text(&e)
                ));
            }
            warned = true;
        }
    }
}
