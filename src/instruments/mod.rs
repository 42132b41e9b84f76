//! What watches a run while the fleet works: the collector (histograms, interval files),
//! the live view ([`live`]), the Prometheus endpoint ([`prometheus`]) and the stop
//! signals. `lib::run` starts them before the fleet and stops them after it; stopping
//! hands back everything measured.

pub mod live;
pub mod prometheus;
pub mod push;
mod requests;

use crate::client::StopSignals;
use crate::metrics::{self, Recorder, Stats};
use crate::metrics::{LiveCounters, RunningTotals};
use crate::plan::Plan;
use crate::report;
use crate::shard::{Shard, Start, StartAt, StartError};
use crate::stop::{SignalWatch, StopSignal};
use crate::transport::stdio::ChildRegistry;
use crate::watch::Watcher;
use anyhow::Context;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The most sessions in flight at once in each sampling interval, as the series
/// `fleet.in_flight` (closed model: the clients inside a session, not thinking; open
/// model: against the in-flight cap), so the report can draw them over time and `report
/// DIR` can redraw them. The peak, not a point sample: sessions shorter than the interval
/// would be missed by a sample taken between them.
fn in_flight_gauge(live: &Arc<LiveCounters>) -> crate::watch::Gauge {
    let live = live.clone();
    crate::watch::Gauge {
        name: "fleet.in_flight",
        unit: crate::metrics::SeriesUnit::Count,
        read: Arc::new(move || live.take_peak() as f64),
    }
}

/// The collector's running totals as cumulative series (`fleet.sessions`,
/// `fleet.abandoned`, `fleet.calls`): what the soak's per-session slopes are set against.
fn total_gauges(totals: &Arc<RunningTotals>) -> Vec<crate::watch::Gauge> {
    type Pick = fn(&RunningTotals) -> &std::sync::atomic::AtomicU64;
    let picks: [(&'static str, Pick); 3] = [
        (report::soak::shape::SESSIONS, |t| &t.sessions),
        (report::soak::shape::ABANDONED, |t| &t.abandoned),
        (report::soak::shape::CALLS, |t| &t.calls),
    ];
    picks
        .into_iter()
        .map(|(name, pick)| {
            let totals = totals.clone();
            crate::watch::Gauge {
                name,
                unit: crate::metrics::SeriesUnit::Count,
                read: Arc::new(move || {
                    pick(&totals).load(std::sync::atomic::Ordering::Relaxed) as f64
                }),
            }
        })
        .collect()
}

/// The labels of every pushed series: the run (`[outputs] run_label`, or the profile's
/// name and the start, the same for shards that share `--start-at`), the shard, and
/// each persona's name and transport.
fn push_labels(plan: &Plan, shard: Shard, started_at: SystemTime) -> push::series::Labels {
    let run = plan.outputs.run_label.clone().unwrap_or_else(|| {
        let at = humantime::format_rfc3339_seconds(started_at).to_string();
        let compact: String = at.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        format!("{}-{compact}", plan.name)
    });
    push::series::Labels {
        run,
        shard: shard.to_string(),
        personas: plan.persona_routes(),
    }
}

/// The run's start on both clocks: `at` (or now) on the wall clock, and the same moment
/// on the monotonic clock that durations are measured on.
pub fn anchor(at: Option<SystemTime>) -> (SystemTime, tokio::time::Instant) {
    let (wall, mono) = (SystemTime::now(), tokio::time::Instant::now());
    let Some(at) = at else {
        return (wall, mono);
    };
    let mono_at = match at.duration_since(wall) {
        Ok(ahead) => mono.checked_add(ahead),
        Err(behind) => mono.checked_sub(behind.duration()),
    };
    (at, mono_at.unwrap_or(mono))
}

/// What the command line asks of the instruments, read once by `lib` from the flags.
#[derive(Debug, Default)]
pub struct Options {
    /// `--quiet`: no live view, no notes on stderr.
    pub quiet: bool,
    /// `--metrics-listen`, already bound ([`prometheus::bind`]): serve the live figures
    /// for Prometheus there.
    pub metrics: Option<tokio::net::TcpListener>,
    /// Which shard this run is (the `shard` label of pushed series).
    pub shard: Shard,
}

/// The running instruments of one run.
pub struct Instruments {
    pub recorder: Recorder,
    pub live: Arc<LiveCounters>,
    pub stop: StopSignals,
    /// Asks the collector for the figures so far (checkpoints).
    pub snapshots: metrics::Snapshots,
    signals: SignalWatch,
    collecting: JoinHandle<Stats>,
    views_done: CancellationToken,
    live_view: Option<JoinHandle<()>>,
    started_at: SystemTime,
    started: tokio::time::Instant,
    /// The resource sampler (server and generator), one point per interval.
    watcher: Watcher,
    /// `--quiet`: no notes on stderr.
    quiet: bool,
    /// `--push` outputs, when any.
    pushers: Option<push::Pushers>,
}

/// What the instruments measured, once stopped.
pub struct Measured {
    pub stats: Stats,
    pub started_at: SystemTime,
    pub finished_at: SystemTime,
    pub elapsed: Duration,
    /// The first stop signal received, if any.
    pub signal: Option<StopSignal>,
    /// What the watcher sampled (`summary.json` `resources`).
    pub resources: Vec<crate::metrics::resources::Series>,
    /// How each push output fared.
    pub outputs: Vec<crate::summary::PushSummary>,
}

impl Instruments {
    /// Start the collector (writing interval files into `dir` every plan interval), the
    /// signal handlers, the resource watcher (the plan's sources and the stdio
    /// `children`), and the live views the options ask for. `start_at` (`--start-at`)
    /// anchors the run's start, its intervals and the hlog's base time on that moment,
    /// perhaps ahead of now; without it, the run starts now.
    pub async fn start(
        plan: &Plan,
        options: Options,
        dir: &Path,
        children: &ChildRegistry,
        start_at: Option<SystemTime>,
    ) -> anyhow::Result<Instruments> {
        let (started_at, started) = anchor(start_at);
        let live = Arc::new(LiveCounters::default());
        let totals = Arc::new(RunningTotals::default());
        let mut gauges = vec![in_flight_gauge(&live)];
        gauges.extend(total_gauges(&totals));
        let watcher = Watcher::start_with(plan, children.clone(), started, dir, gauges)?;
        let resources = watcher.latest();
        let sinks: Vec<Box<dyn metrics::IntervalSink>> = vec![
            Box::new(report::hlog::HlogSink::new(dir, started_at)),
            Box::new(
                report::csv::CsvSink::create(dir)
                    .with_context(|| format!("writing to {}", dir.display()))?,
            ),
        ];
        let (collector, recorder) = metrics::Collector::new(
            plan.personas.iter().map(|p| p.route.transport).collect(),
            plan.tools.len(),
        );
        let mut collector = collector
            .with_intervals_at(plan.interval, sinks, started)
            .with_totals(totals);
        if !plan.outputs.push.is_empty() {
            collector = collector.with_push();
        }
        if let Some(path) = &plan.outputs.requests {
            let sink = requests::sink(plan, path, options.shard, (started_at, started))?;
            collector = collector.with_requests(sink);
        }
        let figures = collector.live();
        let snapshots = collector.snapshots();
        let collecting = tokio::spawn(collector.run());
        let pushers = (!plan.outputs.push.is_empty()).then(|| {
            push::Pushers::start(
                &plan.outputs.push,
                plan.outputs.every,
                push_labels(plan, options.shard, started_at),
                push::Sources {
                    snapshots: snapshots.clone(),
                    live: live.clone(),
                    resources: resources.clone(),
                    started,
                    started_at,
                },
            )
        });
        let stop = StopSignals {
            close_spread: plan.load.grace / 2,
            ..StopSignals::default()
        };
        let signals = SignalWatch::start(stop.clone(), plan.load.grace, options.quiet)
            .context("installing the signal handlers")?;
        let views_done = CancellationToken::new();
        if let Some(listener) = options.metrics {
            let bound = prometheus::serve(
                listener,
                figures.clone(),
                live.clone(),
                resources.clone(),
                views_done.clone(),
            )
            .await?;
            if !options.quiet {
                crate::console::errln(format_args!("live metrics: http://{bound}/metrics"));
            }
        }
        let live_view = (!options.quiet).then(|| {
            let mode = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                live::Mode::Terminal
            } else {
                live::Mode::Lines {
                    every: Duration::from_secs(5),
                }
            };
            tokio::spawn(live::show(
                mode,
                live::Goal::of(plan),
                live.clone(),
                figures,
                resources,
                views_done.clone(),
            ))
        });
        Ok(Instruments {
            recorder,
            live,
            stop,
            snapshots,
            signals,
            collecting,
            views_done,
            live_view,
            started_at,
            started,
            watcher,
            quiet: options.quiet,
            pushers,
        })
    }

    /// When the run started (wall clock, and the clock its elapsed time is measured on).
    pub fn started(&self) -> (SystemTime, tokio::time::Instant) {
        (self.started_at, self.started)
    }

    /// Wait for `start_at` (`--start-at`), which the run's start is anchored on, or fail
    /// if it is already too late for it (the caller then stops everything). Ctrl-C during
    /// the wait ends it; the fleet then sees the drain and starts no session. Without
    /// `start_at`, no wait. Hands back when the schedule began and how late after its
    /// start (noted on stderr after a wait, unless `--quiet`).
    pub async fn wait_for_start(
        &self,
        start_at: Option<&StartAt>,
        shard: Shard,
    ) -> Result<Start, StartError> {
        if let Some(at) = start_at {
            at.ready(shard, SystemTime::now())?;
            let drain = self.stop.drain.clone();
            tokio::select! {
                () = tokio::time::sleep_until(self.started) => {}
                () = drain.cancelled() => {}
            }
        }
        let start = Start {
            at: self.started_at,
            late: SystemTime::now()
                .duration_since(self.started_at)
                .unwrap_or_default(),
        };
        if start_at.is_some() && !self.quiet {
            crate::console::errln(format_args!(
                "  started {:.3} ms after --start-at",
                start.late.as_secs_f64() * 1e3
            ));
        }
        Ok(start)
    }

    /// Stop the views and the collector; the recorder's last clones must be gone (the
    /// fleet's work dropped) for the collector to finish.
    pub async fn stop(self) -> anyhow::Result<Measured> {
        let elapsed = self.started.elapsed();
        let finished_at = SystemTime::now();
        self.views_done.cancel();
        if let Some(view) = self.live_view {
            let _ = view.await;
        }
        let resources = self.watcher.stop().await;
        drop(self.recorder);
        let mut stats = self.collecting.await.context("the collector stopped")?;
        let outputs = match self.pushers {
            Some(p) => p.finish(stats.pushed.take()).await,
            None => Vec::new(),
        };
        Ok(Measured {
            stats,
            started_at: self.started_at,
            finished_at,
            elapsed,
            signal: self.signals.received(),
            resources,
            outputs,
        })
    }
}
