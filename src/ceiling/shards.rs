//! A ceiling search over shards: `ceiling --shard I/N` on N machines, or `--processes N`
//! on one ([`super::local`]), climbs one ladder together and lets the merged steps
//! decide. Every shard writes into the same `--out` folder (a shared volume on
//! Kubernetes or Slurm, as the shards of `run` do); shard 0 leads the search and the
//! others follow its orders.
//!
//! The shards meet in rounds, through small files in `OUT/sync/`: a shard writes
//! `R.arrived-I` when it has done its part of round R (round 0: it is ready), and the
//! leader, once all N have arrived, writes `R.go`: the next part (the warm-up or the
//! measured run of a step, at one level, from a shared start [`LEAD`] ahead) or the end.
//! Each shard runs its part as `run --shard I/N --start-at T` into `PART/shard-I`; after
//! a measured part the leader merges the shards' folders into the step's folder
//! (`merge`), and the search reads the merged figures. A shard stopped by a signal
//! writes `left-I`; every wait is bounded, and a shard that does not arrive in time
//! stops the search (exit 2) with the steps so far written.

use super::step::StepRun;
use crate::cli::RunArgs;
use crate::shard::Shard;
use crate::stop::{SignalWatch, StopReason, StopSignal};
use crate::summary::soak::GeneratorLoad;
use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The folder of the shards' rounds, in the results folder.
pub const SYNC_DIR: &str = "sync";
/// From an order to the start of its part: time for every shard to see the order and
/// prepare its run (plan, targets, instruments), on a busy machine too (as
/// [`crate::processes::PREPARE`]).
pub const LEAD: Duration = Duration::from_secs(3);
/// How often a waiting shard looks for the file it waits for.
const POLL: Duration = Duration::from_millis(100);

/// What an order asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// A step's warm-up (its figures are left out).
    Warmup,
    /// A step's measured run.
    Measure,
    /// The search is over (`abort`: it failed).
    Stop,
}

/// The leader's order for one round (`R.go`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub part: Part,
    /// Sessions a second, or clients (`--ladder clients`).
    #[serde(default)]
    pub level: f64,
    /// The shared start, RFC 3339.
    #[serde(default)]
    pub start_at: String,
    #[serde(default)]
    pub length_ms: u64,
    /// The part's folder, relative to the results folder; shard I writes `DIR/shard-I`.
    #[serde(default)]
    pub dir: String,
    /// Why the search stopped early, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort: Option<String>,
}

/// A shard's report of its part (`R.arrived-I`, or `left-I`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    pub shard: u32,
    /// How its part ended ([`StopReason::name`]); `ready` for round 0.
    pub stopped_by: String,
    /// Its part could not be done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Arrival {
    fn of(shard: Shard, done: &anyhow::Result<crate::RunOutcome>) -> Arrival {
        match done {
            Ok(o) => Arrival {
                shard: shard.index,
                stopped_by: o.stopped_by.name().into(),
                error: None,
            },
            Err(e) => Arrival {
                shard: shard.index,
                stopped_by: "error".into(),
                error: Some(format!("{e:#}")),
            },
        }
    }

    fn stop_reason(&self) -> Option<StopReason> {
        StopReason::from_name(&self.stopped_by)
    }
}

/// One shard's end of the rounds.
pub struct Rounds {
    /// The shared results folder.
    pub dir: PathBuf,
    pub shard: Shard,
    round: u32,
}

impl Rounds {
    /// Join the rounds in `dir` as `shard`; refused when the folder holds the rounds of
    /// another search that got past its first round.
    pub fn open(dir: &Path, shard: Shard) -> anyhow::Result<Rounds> {
        let sync = dir.join(SYNC_DIR);
        std::fs::create_dir_all(&sync).with_context(|| format!("creating {}", sync.display()))?;
        if sync.join("0.go").exists() {
            bail!(
                "{} holds the rounds of another ceiling search (it got past its start)\nfix: give every sharded search a results folder of its own (--out)",
                dir.display()
            );
        }
        Ok(Rounds {
            dir: dir.to_path_buf(),
            shard,
            round: 0,
        })
    }

    fn path(&self, name: String) -> PathBuf {
        self.dir.join(SYNC_DIR).join(name)
    }

    /// Report this shard's part of the current round.
    pub fn arrive(&self, a: &Arrival) -> anyhow::Result<()> {
        write_json(
            &self.path(format!("{}.arrived-{}", self.round, self.shard.index)),
            a,
        )
    }

    /// Say that this shard leaves (a signal), so the leader need not wait for it.
    pub fn leave(&self, signal: StopSignal) {
        let a = Arrival {
            shard: self.shard.index,
            stopped_by: StopReason::Signal(signal).name().into(),
            error: None,
        };
        let _ = write_json(&self.path(format!("left-{}", self.shard.index)), &a);
    }

    /// The leader: every shard's arrival of the current round, within `within`; a shard
    /// that left counts as arrived, stopped by its signal.
    pub async fn gather(&self, within: Duration) -> anyhow::Result<Vec<Arrival>> {
        let deadline = Instant::now() + within;
        let n = self.shard.count;
        loop {
            let mut all = Vec::with_capacity(n as usize);
            let mut missing = Vec::new();
            for i in 0..n {
                let arrived = self.path(format!("{}.arrived-{i}", self.round));
                match read_json::<Arrival>(&arrived)
                    .or_else(|| read_json::<Arrival>(&self.path(format!("left-{i}"))))
                {
                    Some(a) => all.push(a),
                    None => missing.push(i),
                }
            }
            if missing.is_empty() {
                return Ok(all);
            }
            if Instant::now() >= deadline {
                let names: Vec<String> = missing.iter().map(|i| format!("{i}/{n}")).collect();
                bail!(
                    "shard {} of the ceiling search did not report within {:.0} s (round {})\nfix: read its log; every shard must run `ceiling --shard I/{n}` with the same options and --out {}",
                    names.join(", "),
                    within.as_secs_f64(),
                    self.round,
                    self.dir.display()
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The leader: give the order of the current round; the next round begins.
    pub fn order(&mut self, o: &Order) -> anyhow::Result<()> {
        write_json(&self.path(format!("{}.go", self.round)), o)?;
        self.round += 1;
        Ok(())
    }

    /// A follower: the leader's order of the current round, within `within`; `Err(signal)`
    /// when one came first.
    async fn wait_order(
        &mut self,
        within: Duration,
        signals: &SignalWatch,
    ) -> anyhow::Result<Result<Order, StopSignal>> {
        let deadline = Instant::now() + within;
        let path = self.path(format!("{}.go", self.round));
        loop {
            if let Some(o) = read_json::<Order>(&path) {
                self.round += 1;
                return Ok(Ok(o));
            }
            if let Some(s) = signals.received() {
                return Ok(Err(s));
            }
            if Instant::now() >= deadline {
                bail!(
                    "the leading shard (0/{}) gave no order within {:.0} s (round {})\nfix: read shard 0's log; the steps so far are in {}",
                    self.shard.count,
                    within.as_secs_f64(),
                    self.round,
                    self.dir.display()
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// Write `value` as JSON through a temporary file: a reader on another machine never
/// sees half of it.
fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    // Named after the file (which names its shard): two shards never share one.
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let text = serde_json::to_string(value)?;
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Option<T> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Run this shard's part of `order`: `run --shard I/N --start-at T` into `PART/shard-I`.
async fn run_part(
    runner: &StepRun<'_>,
    order: &Order,
    shard: Shard,
    dir: &Path,
) -> anyhow::Result<crate::RunOutcome> {
    let out = dir.join(&order.dir).join(format!("shard-{}", shard.index));
    let length = Duration::from_millis(order.length_ms);
    let args = RunArgs {
        shard: Some(shard.to_string()),
        start_at: Some(order.start_at.clone()),
        ..runner.args(out, order.level, length)
    };
    crate::run_slice(&args).await
}

/// How long after an order a shard's part may take to be reported: its lead, length
/// and grace, and `slack` (`--shard-wait`) for writing results on a slow shared volume.
fn part_wait(length: Duration, grace: Duration, slack: Duration) -> Duration {
    LEAD + length + grace + slack
}

/// The leader's side of a step.
pub struct Leader {
    pub rounds: Rounds,
    /// The plan's grace for running sessions after a part's deadline.
    pub grace: Duration,
    /// Whether the built-in server runs inside the generator (never, sharded).
    pub server_inside: bool,
    /// `--shard-wait`: how long the first round waits for every shard, and each later
    /// one beyond its part's length.
    pub wait: Duration,
}

impl Leader {
    /// Start the rounds: every shard (this one too) ready.
    pub async fn start(&mut self) -> anyhow::Result<()> {
        self.rounds.arrive(&Arrival {
            shard: 0,
            stopped_by: "ready".into(),
            error: None,
        })?;
        let all = self.rounds.gather(self.wait).await?;
        if let Some(a) = all.iter().find(|a| a.stopped_by != "ready") {
            bail!(
                "shard {}/{} left before the search began ({})",
                a.shard,
                self.rounds.shard.count,
                a.stopped_by
            );
        }
        Ok(())
    }

    /// One part of a step on every shard: the order, this shard's own part, every
    /// shard's report. An error names the shard whose part could not be done.
    async fn part(
        &mut self,
        runner: &StepRun<'_>,
        part: Part,
        rel: &str,
        level: f64,
        length: Duration,
    ) -> anyhow::Result<(crate::RunOutcome, Vec<Arrival>)> {
        let start = SystemTime::now() + LEAD;
        let order = Order {
            part,
            level,
            start_at: humantime::format_rfc3339_micros(start).to_string(),
            length_ms: u64::try_from(length.as_millis()).unwrap_or(u64::MAX),
            dir: rel.to_string(),
            abort: None,
        };
        self.rounds.order(&order)?;
        let own = run_part(runner, &order, self.rounds.shard, &self.rounds.dir).await;
        self.rounds.arrive(&Arrival::of(self.rounds.shard, &own))?;
        let own = own?;
        let all = self
            .rounds
            .gather(part_wait(length, self.grace, self.wait))
            .await?;
        if let Some(a) = all.iter().find(|a| a.error.is_some()) {
            bail!(
                "shard {}/{} could not do its part of {rel}: {}",
                a.shard,
                self.rounds.shard.count,
                a.error.as_deref().unwrap_or_default()
            );
        }
        Ok((own, all))
    }

    /// Warm up and measure `level` on every shard into `rel` (under the results
    /// folder); the merged outcome, stopped as the most stopped shard was.
    pub async fn measure(
        &mut self,
        runner: &StepRun<'_>,
        rel: &str,
        level: f64,
    ) -> anyhow::Result<crate::RunOutcome> {
        let step_dir = self.rounds.dir.join(rel);
        if !runner.warmup.is_zero() {
            let warm = format!("{rel}/warmup");
            let (own, all) = self
                .part(runner, Part::Warmup, &warm, level, runner.warmup)
                .await?;
            let _ = std::fs::remove_dir_all(self.rounds.dir.join(&warm));
            if let Some(s) = signal_of(&all) {
                return Ok(crate::RunOutcome {
                    stopped_by: StopReason::Signal(s),
                    ..own
                });
            }
        }
        let (own, all) = self
            .part(runner, Part::Measure, rel, level, runner.step)
            .await?;
        let dirs: Vec<PathBuf> = (0..self.rounds.shard.count)
            .map(|i| step_dir.join(format!("shard-{i}")))
            .collect();
        let written = dirs
            .iter()
            .all(|d| d.join(crate::merge::STATE_FILE).is_file());
        if let (Some(s), false) = (signal_of(&all), written) {
            // A shard left on a signal before its part was written: the step decides
            // nothing (it is interrupted); shard 0's part is what stands for it.
            return Ok(crate::RunOutcome {
                stopped_by: StopReason::Signal(s),
                ..own
            });
        }
        let merged = crate::merge::merge_dirs(&dirs, &step_dir)
            .with_context(|| format!("merging the shards of {rel}"))?;
        let stopped_by = match signal_of(&all) {
            Some(s) => StopReason::Signal(s),
            None if all
                .iter()
                .any(|a| a.stop_reason() == Some(StopReason::Unreachable)) =>
            {
                StopReason::Unreachable
            }
            None => own.stopped_by,
        };
        Ok(crate::RunOutcome {
            summary: merged.summary,
            results_dir: merged.dir,
            stopped_by,
            shard: Shard::ONE,
            start: own.start,
        })
    }

    /// End the rounds: every follower stops (`abort`: the search failed).
    pub fn stop(&mut self, abort: Option<String>) {
        let _ = self.rounds.order(&Order {
            part: Part::Stop,
            level: 0.0,
            start_at: String::new(),
            length_ms: 0,
            dir: String::new(),
            abort,
        });
    }
}

/// The first signal any shard stopped on.
fn signal_of(all: &[Arrival]) -> Option<StopSignal> {
    all.iter().find_map(|a| match a.stop_reason() {
        Some(StopReason::Signal(s)) => Some(s),
        _ => None,
    })
}

/// The generator's figures of a sharded step: the most loaded shard's (each generator
/// process limits its own share of the load), from each `shard-I/summary.json`.
pub fn worst_generator(step_dir: &Path, count: u32, server_inside: bool) -> Option<GeneratorLoad> {
    worst(
        (0..count)
            .filter_map(|i| crate::report::load_summary(&step_dir.join(format!("shard-{i}"))).ok())
            .map(|s| {
                crate::report::soak::generator(&s.resources, 0.0, f64::INFINITY, server_inside)
            }),
    )
}

/// A generator that limited the load first, then the busiest.
fn worst(all: impl Iterator<Item = GeneratorLoad>) -> Option<GeneratorLoad> {
    all.max_by(|a, b| {
        (a.bottleneck, a.cpu_share_max.unwrap_or(0.0))
            .partial_cmp(&(b.bottleneck, b.cpu_share_max.unwrap_or(0.0)))
            .unwrap_or(std::cmp::Ordering::Equal)
    })
}

/// A follower: do what the leader orders until it says stop; the signal that made this
/// shard leave, if one did.
pub async fn follow(
    mut rounds: Rounds,
    runner: &StepRun<'_>,
    grace: Duration,
    wait: Duration,
    quiet: bool,
) -> anyhow::Result<Option<StopSignal>> {
    let signals = SignalWatch::start(
        crate::client::StopSignals::default(),
        Duration::from_secs(3600),
        true,
    )
    .context("installing the signal handlers")?;
    let shard = rounds.shard;
    rounds.arrive(&Arrival {
        shard: shard.index,
        stopped_by: "ready".into(),
        error: None,
    })?;
    // The leader waits as long for the others, then gives its first order.
    let mut within = wait * 2 + LEAD;
    loop {
        let order = match rounds.wait_order(within, &signals).await? {
            Ok(o) => o,
            Err(s) => {
                rounds.leave(s);
                return Ok(Some(s));
            }
        };
        if order.part == Part::Stop {
            if let Some(why) = order.abort {
                bail!("the leading shard stopped the search: {why}");
            }
            return Ok(None);
        }
        if !quiet {
            crate::console::errln(format_args!(
                "shard {shard}: {} at {} from {}",
                order.dir, order.level, order.start_at
            ));
        }
        let done = run_part(runner, &order, shard, &rounds.dir).await;
        rounds.arrive(&Arrival::of(shard, &done))?;
        let done = done?;
        if let StopReason::Signal(s) = done.stopped_by {
            rounds.leave(s);
            return Ok(Some(s));
        }
        // The leader finishes its own part, waits for ours and merges before it orders.
        within = part_wait(Duration::from_millis(order.length_ms), grace, wait) + wait;
    }
}

#[cfg(test)]
mod tests;
