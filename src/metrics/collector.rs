//! The collector owns every histogram. Sessions send small `Copy` events over an
//! unbounded channel (no lock on the hot path); the collector task folds them into
//! [`Stats`] and hands the result back when every sender is gone.

use super::event::{Event, SessionOutcome};
use super::interval::{IntervalSink, Intervals, LiveFigures};
use super::push::{self, CellFigures, PushFigures};
use super::recorder::{Ask, Recorder, Snapshots};
use super::stats::{PhaseTable, Stats};
use super::{FailureKind, Phase, Sample};
use crate::protocol::{Era, TransportKind, VersionId};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// How many example messages are kept per failure kind, and per tool for `isError`
/// results.
const EXAMPLES_PER_KIND: usize = 3;

/// How many distinct server→client method names are counted by name. The names come
/// from the server, so a server that puts a token or a counter in its method names
/// (`notifications/progress/17`, …) would otherwise grow the map by one entry per
/// message for the whole run; later names are counted together under [`OTHER_METHODS`].
pub const SERVER_METHODS_KEPT: usize = 64;

/// The key that counts server→client messages beyond [`SERVER_METHODS_KEPT`] names.
pub const OTHER_METHODS: &str = "(other methods)";

/// The receiving side.
pub struct Collector {
    rx: mpsc::UnboundedReceiver<Event>,
    /// Snapshot requests. The collector keeps a sender itself, so the channel never
    /// closes under it; the loop ends with the recorders alone.
    snapshot_rx: mpsc::UnboundedReceiver<Ask>,
    snapshot_tx: mpsc::UnboundedSender<Ask>,
    stats: Stats,
    /// Each persona's transport, for the by-transport breakdown.
    transports: Vec<TransportKind>,
    /// Session samples by persona, then by (era, version): the one slice a sample is
    /// recorded in. The overall, per-persona, per-era and per-version figures are sums
    /// of these cells, folded when figures are handed out ([`Cells::fold`]), so a
    /// sample costs two histogram records, not eight.
    cells: Cells,
    /// The current interval's histograms and the finished ones.
    intervals: Intervals,
    /// Kept for the resource sampler, when it asks ([`Collector::with_totals`]).
    totals: Option<Arc<super::RunningTotals>>,
    /// A push output follows the run: the final figures are kept for its last push
    /// ([`Stats::pushed`]).
    pushed: bool,
    /// `run --requests FILE`: every sample written as it is folded.
    requests: Option<super::requests::RequestsSink>,
}

impl Collector {
    /// `transports[i]` is persona i's transport.
    pub fn new(transports: Vec<TransportKind>, tools: usize) -> (Collector, Recorder) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (snapshot_tx, snapshot_rx) = mpsc::unbounded_channel();
        (
            Collector {
                rx,
                snapshot_rx,
                snapshot_tx,
                stats: Stats::new(transports.len(), tools),
                cells: Cells(transports.iter().map(|_| Vec::new()).collect()),
                transports,
                intervals: Intervals::new(super::DEFAULT_INTERVAL, Vec::new()),
                totals: None,
                pushed: false,
                requests: None,
            },
            Recorder::new(tx),
        )
    }

    /// Cut the run into intervals of `every` and write each finished one to `sinks`.
    pub fn with_intervals(mut self, every: Duration, sinks: Vec<Box<dyn IntervalSink>>) -> Self {
        self.intervals = Intervals::new(every, sinks);
        self
    }

    /// As [`Collector::with_intervals`], the intervals counted from `start` (the run's
    /// anchor, perhaps ahead: `--start-at`).
    pub fn with_intervals_at(
        mut self,
        every: Duration,
        sinks: Vec<Box<dyn IntervalSink>>,
        start: tokio::time::Instant,
    ) -> Self {
        self.intervals = Intervals::starting_at(every, sinks, start);
        self
    }

    /// Keep `totals` up to date as events arrive.
    pub fn with_totals(mut self, totals: Arc<super::RunningTotals>) -> Self {
        self.totals = Some(totals);
        self
    }

    /// Keep the run's final figures as a push output sends them ([`Stats::pushed`]).
    pub fn with_push(mut self) -> Self {
        self.pushed = true;
        self
    }

    /// Write every sample (and the end of every session without a `session` sample) to
    /// `sink` as it is folded; closed when the collector ends.
    pub fn with_requests(mut self, sink: super::requests::RequestsSink) -> Self {
        self.requests = Some(sink);
        self
    }

    /// The figures of the last finished interval, for the live view and `/metrics`.
    pub fn live(&self) -> watch::Receiver<Arc<LiveFigures>> {
        self.intervals.subscribe()
    }

    /// A handle that asks this collector for snapshots while it runs.
    pub fn snapshots(&self) -> Snapshots {
        Snapshots::new(self.snapshot_tx.clone())
    }

    /// Fold events until every recorder is dropped, rotating intervals on a tick.
    pub async fn run(mut self) -> Stats {
        let mut buf = Vec::with_capacity(256);
        let every = self.intervals.every();
        let mut tick = tokio::time::interval_at(self.intervals.first_tick(), every);
        // A stalled collector must not write a burst of empty intervals to catch up: it
        // writes one row over the boundaries it missed, and ticks on boundaries again.
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                n = self.rx.recv_many(&mut buf, 256) => {
                    if n == 0 {
                        break;
                    }
                    for event in buf.drain(..) {
                        self.apply(event);
                    }
                }
                _ = tick.tick() => self.rotate(false),
                Some(ask) = self.snapshot_rx.recv() => {
                    // The asker may have given up; nothing to do then.
                    match ask {
                        Ask::Stats(reply) => drop(reply.send(self.snapshot())),
                        Ask::Push(reply) => drop(reply.send(self.push_figures())),
                    }
                }
            }
        }
        // The last, partial interval.
        self.rotate(true);
        self.intervals.finish();
        self.stats.interval_s = every.as_secs_f64();
        self.stats.timeline = std::mem::take(&mut self.intervals.rows);
        self.stats.interval_error = self.intervals.sink_error.take().map(|e| e.to_string());
        if self.pushed {
            self.stats.pushed = Some(self.push_figures());
        }
        if let Some(sink) = self.requests.take() {
            self.stats.requests_error = sink.finish().err();
        }
        self.cells.fold(&mut self.stats);
        fold_transports(&mut self.stats, &self.transports);
        self.stats
    }

    /// Fold one event now, outside [`Collector::run`]: `report --from-requests` folds a
    /// run's records, read back, the way the run folded them.
    pub fn add(&mut self, event: Event) {
        self.apply(event);
    }

    /// The figures of the events [`Collector::add`] folded (no intervals).
    pub fn into_stats(mut self) -> Stats {
        self.cells.fold(&mut self.stats);
        fold_transports(&mut self.stats, &self.transports);
        self.stats
    }

    /// The figures so far as the end of the run would hand them back, the current
    /// (unfinished) interval left out. A clone: cheap at one per checkpoint.
    fn snapshot(&self) -> Stats {
        let mut stats = self.stats.clone();
        stats.interval_s = self.intervals.every().as_secs_f64();
        stats.timeline = self.intervals.rows.clone();
        stats.interval_error = self.intervals.sink_error.as_ref().map(|e| e.to_string());
        self.cells.fold(&mut stats);
        fold_transports(&mut stats, &self.transports);
        stats
    }

    /// The figures so far as a push output sends them (before the cells are folded).
    fn push_figures(&self) -> PushFigures {
        PushFigures::of(&self.stats, self.cells.figures())
    }

    fn rotate(&mut self, last: bool) {
        let s = &self.stats;
        let live = LiveFigures {
            totals: self.cells.totals(&s.phases),
            failures: self
                .cells
                .failures(&s.phases)
                .into_iter()
                .map(|(k, v)| (k.name(), v))
                .collect(),
            sessions_started: s.sessions.started,
            sessions_ended: s.sessions.ended(),
            sessions_unreachable: s.sessions.unreachable,
            ..LiveFigures::default()
        };
        let now = tokio::time::Instant::now();
        if last {
            self.intervals.rotate_last(now, live);
        } else {
            self.intervals.rotate(now, live);
        }
    }

    fn apply(&mut self, event: Event) {
        if let Some(t) = &self.totals {
            t.note(&event);
        }
        let s = &mut self.stats;
        match event {
            Event::Generated { tool, outcome } => {
                if let Some(t) = s.tool_counts.get_mut(usize::from(tool)) {
                    t.add_generated(outcome);
                }
            }
            Event::LeftOut { tool, reason } => {
                if let Some(t) = s.tool_counts.get_mut(usize::from(tool)) {
                    t.add_left_out(reason);
                }
            }
            Event::Sample(sample) => {
                if let Some(r) = &mut self.requests {
                    r.sample(&sample);
                }
                self.intervals.add(&sample);
                // A `request` sample's id names its step's phase, not a tool.
                match (sample.phase, sample.tool.map(usize::from)) {
                    (Phase::Request, Some(i)) => {
                        if s.requests.len() <= i {
                            s.requests.resize_with(i + 1, Default::default);
                        }
                        s.requests[i].add(&sample);
                    }
                    (_, Some(i)) => {
                        if let Some(tool) = s.tools.get_mut(i) {
                            tool.add(&sample);
                        }
                    }
                    (_, None) => {}
                }
                match self.cells.get_mut(&sample) {
                    Some(table) => table.get_mut(sample.phase).add(&sample),
                    // The fleet's own samples (scheduler lag) belong to no session:
                    // they have no persona, era or version, so only the overall
                    // figures show them.
                    None => s.phases.get_mut(sample.phase).add(&sample),
                }
            }
            Event::SessionStarted { persona } => {
                s.sessions.started += 1;
                if let Some((_, c)) = s.personas.get_mut(usize::from(persona)) {
                    c.started += 1;
                }
            }
            Event::SessionTraced { session, trace } => {
                if let Some(r) = &mut self.requests {
                    r.traced(session, trace);
                }
            }
            Event::SessionEnded {
                session,
                persona,
                outcome,
            } => {
                if let Some(r) = &mut self.requests {
                    r.ended(session, persona, outcome);
                }
                let bump = |c: &mut super::stats::SessionCounts| match outcome {
                    SessionOutcome::Completed => c.completed += 1,
                    SessionOutcome::Failed => c.failed += 1,
                    SessionOutcome::Interrupted => c.interrupted += 1,
                    SessionOutcome::Unreachable => c.unreachable += 1,
                };
                bump(&mut s.sessions);
                if let Some((_, c)) = s.personas.get_mut(usize::from(persona)) {
                    bump(c);
                }
            }
            Event::Skipped { persona, phase } => {
                s.phases.get_mut(phase).skipped += 1;
                if let Some((table, _)) = s.personas.get_mut(usize::from(persona)) {
                    table.get_mut(phase).skipped += 1;
                }
            }
            Event::Example { kind, text } => keep(s.examples.entry(kind).or_default(), text),
            Event::ToolError { tool, text } => {
                keep(s.tool_error_examples.entry(tool).or_default(), text);
            }
            Event::StepCheck { check, passed, why } => {
                let i = usize::from(check);
                if s.checks.len() <= i {
                    s.checks.resize_with(i + 1, Default::default);
                }
                s.checks[i].add(passed, why);
            }
            Event::ServerMessage { method } => count_method(&mut s.server_messages, method, 1),
            Event::Count { counter, n } => s.counters.add(counter, n),
            Event::Finding { check, example } => {
                let seen = s.findings.entry(check).or_default();
                seen.count += 1;
                if seen.example.is_none() {
                    seen.example = example;
                }
            }
            Event::ClientFault {
                persona,
                fault,
                verdict,
                detail,
            } => {
                let seen = s.client_faults.entry((persona, fault)).or_default();
                seen.add(verdict, detail);
            }
            Event::Traced {
                phase,
                latency_us,
                trace,
                span,
            } => s.slowest.keep(phase, latency_us, trace, span),
            Event::Extension { id, verdict } => s.extensions.add(&id, verdict, 1),
            Event::Malformed { persona: _, text } => {
                s.malformed += 1;
                let list = s
                    .examples
                    .entry(FailureKind::ProtocolViolation)
                    .or_default();
                keep(list, text);
            }
        }
    }
}

/// Session samples by persona (the index), then by the era and version they spoke.
struct Cells(Vec<Vec<(Era, VersionId, PhaseTable)>>);

impl Cells {
    /// The cell of a session's sample; `None` for a sample of no persona (the fleet's).
    fn get_mut(&mut self, sample: &Sample) -> Option<&mut PhaseTable> {
        let cells = self.0.get_mut(usize::from(sample.persona))?;
        let at = match cells
            .iter()
            .position(|(e, v, _)| *e == sample.era && *v == sample.version)
        {
            Some(i) => i,
            None => {
                cells.push((sample.era, sample.version, PhaseTable::default()));
                cells.len() - 1
            }
        };
        Some(&mut cells[at].2)
    }

    /// Each cell's phases, as pushed.
    fn figures(&self) -> Vec<CellFigures> {
        let mut out = Vec::new();
        for (persona, cells) in self.0.iter().enumerate() {
            for (era, version, table) in cells {
                out.push(CellFigures {
                    persona,
                    era: *era,
                    version: *version,
                    phases: push::phases_of(table),
                });
            }
        }
        out
    }

    /// Add the cells' samples to the overall, per-persona, per-era and per-version
    /// figures of `stats` (which hold no session sample of their own: skipped steps
    /// and the fleet's samples only).
    fn fold(&self, stats: &mut Stats) {
        for (persona, cells) in self.0.iter().enumerate() {
            for (era, version, table) in cells {
                stats.phases.merge_samples(table);
                if let Some((slice, _)) = stats.personas.get_mut(persona) {
                    slice.merge_samples(table);
                }
                stats.by_era.entry(*era).or_default().merge_samples(table);
                stats
                    .by_version
                    .entry(*version)
                    .or_default()
                    .merge_samples(table);
            }
        }
    }

    /// (samples, failed samples) per phase, the cells' and `overall`'s together: the
    /// live figures' totals, without folding histograms.
    fn totals(&self, overall: &PhaseTable) -> Vec<(u64, u64)> {
        let mut totals: Vec<(u64, u64)> =
            overall.0.iter().map(|p| (p.count(), p.errors())).collect();
        for (_, _, table) in self.0.iter().flatten() {
            for (total, p) in totals.iter_mut().zip(&table.0) {
                total.0 += p.count();
                total.1 += p.errors();
            }
        }
        totals
    }

    /// Failures by kind, as [`Stats::failures`] counts them, the cells' and `overall`'s
    /// together.
    fn failures(&self, overall: &PhaseTable) -> std::collections::BTreeMap<FailureKind, u64> {
        let mut out = std::collections::BTreeMap::new();
        overall.add_failures(&mut out);
        for (_, _, table) in self.0.iter().flatten() {
            table.add_failures(&mut out);
        }
        out
    }
}

/// The per-transport slices are sums of persona slices (a persona has one transport):
/// folded once at the end (or per snapshot) rather than recorded again per sample.
fn fold_transports(s: &mut Stats, transports: &[TransportKind]) {
    for (i, (table, _)) in s.personas.iter().enumerate() {
        let sampled = table.0.iter().any(|p| p.count() > 0);
        if let Some(&kind) = transports.get(i).filter(|_| sampled) {
            s.by_transport.entry(kind).or_default().merge_samples(table);
        }
    }
}

/// Count one server→client message under its method, or under [`OTHER_METHODS`] once
/// [`SERVER_METHODS_KEPT`] names are counted: the map stays bounded however many names
/// the server invents.
pub(super) fn count_method(
    counts: &mut std::collections::BTreeMap<String, u64>,
    method: String,
    n: u64,
) {
    if let Some(seen) = counts.get_mut(&method) {
        *seen += n;
    } else if counts.len() < SERVER_METHODS_KEPT {
        counts.insert(method, n);
    } else {
        *counts.entry(OTHER_METHODS.to_string()).or_insert(0) += n;
    }
}

/// Keep `text` as an example unless the list is full or has it already.
pub(super) fn keep(list: &mut Vec<String>, text: String) {
    if list.len() < EXAMPLES_PER_KIND && !list.contains(&text) {
        list.push(text);
    }
}

#[cfg(test)]
mod tests;
