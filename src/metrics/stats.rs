//! Histograms and counters for one slice of the run (a phase overall, a phase for one
//! persona, a tool). Latency percentiles are over successful samples; failures are
//! counted by kind.

use super::collector::{count_method, keep};
use super::histogram::{clamped_record, micros, new_histogram};
use super::interval::IntervalRow;
use super::{
    CheckId, ClientFault, CounterTable, FailureKind, LeftOut, Outcome, PersonaId, Phase, Sample,
    ToolId, Verdict,
};
use crate::protocol::{Era, TransportKind, VersionId};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// Figures for one phase in one slice.
#[derive(Debug, Clone)]
pub struct PhaseStats {
    /// finished − started, µs.
    pub service: Histogram<u64>,
    /// finished − intended, µs (differs from service time only under an open model).
    pub response: Histogram<u64>,
    /// Successful samples (including tool errors).
    pub ok: u64,
    /// `tools/call` results with `isError: true` (successful RPCs).
    pub tool_errors: u64,
    pub failures: BTreeMap<FailureKind, u64>,
    /// Values above [`super::LATENCY_BOUND_US`] that were clamped.
    pub clamped: u64,
    /// Steps not run because the server did not declare the capability.
    pub skipped: u64,
}

impl Default for PhaseStats {
    fn default() -> Self {
        PhaseStats {
            service: new_histogram(),
            response: new_histogram(),
            ok: 0,
            tool_errors: 0,
            failures: BTreeMap::new(),
            clamped: 0,
            skipped: 0,
        }
    }
}

impl PhaseStats {
    pub fn errors(&self) -> u64 {
        self.failures.values().sum()
    }

    /// Samples that ran (successful or failed).
    pub fn count(&self) -> u64 {
        self.ok + self.errors()
    }

    /// Fold one sample into these figures.
    pub fn add(&mut self, sample: &Sample) {
        match sample.outcome {
            Outcome::Failed(kind) => *self.failures.entry(kind).or_insert(0) += 1,
            Outcome::Ok | Outcome::ToolError => {
                self.ok += 1;
                if sample.outcome == Outcome::ToolError {
                    self.tool_errors += 1;
                }
                let service = micros(sample.finished.duration_since(sample.started));
                let response = micros(sample.finished.duration_since(sample.intended));
                self.clamped += u64::from(clamped_record(&mut self.service, service));
                clamped_record(&mut self.response, response);
            }
        }
    }

    pub fn merge(&mut self, other: &PhaseStats) {
        // Both histograms share bounds, so adding cannot fail.
        let _ = self.service.add(&other.service);
        let _ = self.response.add(&other.response);
        self.ok += other.ok;
        self.tool_errors += other.tool_errors;
        self.clamped += other.clamped;
        self.skipped += other.skipped;
        for (k, v) in &other.failures {
            *self.failures.entry(*k).or_insert(0) += v;
        }
    }
}

/// Per-phase figures for one slice of the run.
#[derive(Debug, Clone)]
pub struct PhaseTable(pub Vec<PhaseStats>);

impl Default for PhaseTable {
    fn default() -> Self {
        PhaseTable((0..Phase::COUNT).map(|_| PhaseStats::default()).collect())
    }
}

impl PhaseTable {
    pub fn get(&self, phase: Phase) -> &PhaseStats {
        &self.0[phase.index()]
    }
    pub fn get_mut(&mut self, phase: Phase) -> &mut PhaseStats {
        &mut self.0[phase.index()]
    }
    /// Add `other`'s sample figures, phase by phase (not its skipped counts: the slices
    /// this feeds only count samples).
    pub fn merge_samples(&mut self, other: &PhaseTable) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            if theirs.count() > 0 {
                let skipped = mine.skipped;
                mine.merge(theirs);
                mine.skipped = skipped;
            }
        }
    }

    /// Add all of `other`'s figures (samples and skipped steps), phase by phase.
    pub fn merge(&mut self, other: &PhaseTable) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            mine.merge(theirs);
        }
    }

    /// Add this table's failures to `out` by kind, the `session` phase left out (a
    /// failed session is already counted under the phase that failed).
    pub fn add_failures(&self, out: &mut BTreeMap<FailureKind, u64>) {
        for (phase, s) in self.active() {
            if phase == Phase::Session {
                continue;
            }
            for (k, v) in &s.failures {
                *out.entry(*k).or_insert(0) += v;
            }
        }
    }

    /// Phases that have anything to report, in the canonical order.
    pub fn active(&self) -> impl Iterator<Item = (Phase, &PhaseStats)> {
        Phase::ALL
            .into_iter()
            .map(|p| (p, self.get(p)))
            .filter(|(_, s)| s.count() > 0 || s.skipped > 0)
    }
}

/// What one tool's samples do not tell: how many of its calls had generated arguments
/// and how many of those the server accepted, and the calls not made, by reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCounts {
    /// Calls whose arguments were (partly) generated from the `inputSchema`.
    pub generated: u64,
    /// Of those, the ones with a successful result without `isError`.
    pub generated_accepted: u64,
    /// Calls left out, by reason.
    pub left_out: BTreeMap<LeftOut, u64>,
}

impl ToolCounts {
    /// Fold one generated call that ended with `outcome`.
    pub fn add_generated(&mut self, outcome: Outcome) {
        self.generated += 1;
        if outcome == Outcome::Ok {
            self.generated_accepted += 1;
        }
    }

    /// Count one call left out for `reason`.
    pub fn add_left_out(&mut self, reason: LeftOut) {
        *self.left_out.entry(reason).or_insert(0) += 1;
    }

    pub fn merge(&mut self, other: &ToolCounts) {
        self.generated += other.generated;
        self.generated_accepted += other.generated_accepted;
        for (k, v) in &other.left_out {
            *self.left_out.entry(*k).or_insert(0) += v;
        }
    }

    /// Whether anything was counted.
    pub fn is_empty(&self) -> bool {
        self.generated == 0 && self.left_out.is_empty()
    }
}

/// Session counters for one slice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionCounts {
    pub started: u64,
    pub completed: u64,
    pub failed: u64,
    /// Stopped by the end of the run (deadline or Ctrl-C) before finishing.
    pub interrupted: u64,
    /// Never reached the server (the connect phase failed).
    pub unreachable: u64,
}

impl SessionCounts {
    /// Sessions that ended, however.
    pub fn ended(&self) -> u64 {
        self.completed + self.failed + self.interrupted + self.unreachable
    }

    /// Sessions that reached the server and ended there: what rates count.
    pub fn reached(&self) -> u64 {
        self.completed + self.failed
    }

    pub fn merge(&mut self, other: &SessionCounts) {
        self.started += other.started;
        self.completed += other.completed;
        self.failed += other.failed;
        self.interrupted += other.interrupted;
        self.unreachable += other.unreachable;
    }
}

/// Everything the collector knows at the end of a run.
#[derive(Debug, Clone)]
pub struct Stats {
    pub phases: PhaseTable,
    pub personas: Vec<(PhaseTable, SessionCounts)>,
    /// `tools/call` figures per interned tool.
    pub tools: Vec<PhaseStats>,
    /// Per interned tool (beside `tools`): generated calls and why calls were left out.
    pub tool_counts: Vec<ToolCounts>,
    /// Each `request` step's figures by its interned phase name (`Plan::requests`),
    /// grown as samples come (the collector does not need the plan's count).
    pub requests: Vec<PhaseStats>,
    /// Each step check's passes and fails by interned name (`Plan::checks`), grown
    /// as events come.
    pub checks: Vec<CheckCounts>,
    pub sessions: SessionCounts,
    /// First examples of each failure kind (bounded), for the report.
    pub examples: BTreeMap<FailureKind, Vec<String>>,
    /// First error texts per tool (`isError` text or RPC error), bounded: why a tool
    /// failed.
    pub tool_error_examples: BTreeMap<ToolId, Vec<String>>,
    /// Server→client requests answered, notifications received, by method.
    pub server_messages: BTreeMap<String, u64>,
    /// Messages from the server that were not valid JSON-RPC (each fails the request it
    /// answers, or every request waiting, as `protocol_violation`).
    pub malformed: u64,
    pub by_transport: BTreeMap<TransportKind, PhaseTable>,
    pub by_era: BTreeMap<Era, PhaseTable>,
    /// Phases by the protocol version sessions spoke (interned; unknown ones as other).
    pub by_version: BTreeMap<VersionId, PhaseTable>,
    /// Per-phase figures for every finished interval, in time order.
    pub timeline: Vec<IntervalRow>,
    /// The interval length of `timeline`, seconds.
    pub interval_s: f64,
    /// The first error writing interval files (hlog, CSV), if any.
    pub interval_error: Option<String>,
    /// What went wrong writing the requests file (`run --requests`), if anything did.
    pub requests_error: Option<String>,
    /// Events without latency (see [`super::Event::Count`]).
    pub counters: CounterTable,
    /// Conformance findings by check: how often, and the first example.
    pub findings: BTreeMap<CheckId, FindingCount>,
    /// Client-side faults committed, per persona and fault: verdict counts and examples.
    pub client_faults: BTreeMap<(PersonaId, ClientFault), FaultCounts>,
    /// The slowest traced requests per phase (personas with `trace = true`).
    pub slowest: super::Slowest,
    /// What servers made of the protocol extensions, per id.
    pub extensions: super::Extensions,
    /// The final figures as a push output sends them, kept when one follows the run.
    pub pushed: Option<super::push::PushFigures>,
}

/// One step check's verdicts: how often it held, how often not, and the first reason
/// it did not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckCounts {
    pub passes: u64,
    pub fails: u64,
    pub example: Option<String>,
}

impl CheckCounts {
    pub fn add(&mut self, passed: bool, why: Option<String>) {
        if passed {
            self.passes += 1;
        } else {
            self.fails += 1;
            if self.example.is_none() {
                self.example = why;
            }
        }
    }

    pub fn merge(&mut self, other: &CheckCounts) {
        self.passes += other.passes;
        self.fails += other.fails;
        if self.example.is_none() {
            self.example.clone_from(&other.example);
        }
    }
}

/// How a server took one persona's commits of one client fault.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Sessions by verdict, indexed by [`Verdict::index`].
    pub verdicts: [u64; Verdict::COUNT],
    /// What was seen, for the first few of each verdict: (verdict, text).
    pub examples: Vec<(Verdict, String)>,
}

impl FaultCounts {
    /// Examples kept per verdict.
    pub const EXAMPLES_PER_VERDICT: usize = 3;

    pub fn add(&mut self, verdict: Verdict, detail: Option<String>) {
        self.verdicts[verdict.index()] += 1;
        let kept = self.examples.iter().filter(|(v, _)| *v == verdict).count();
        if let Some(text) = detail {
            if kept < Self::EXAMPLES_PER_VERDICT {
                self.examples.push((verdict, text));
            }
        }
    }

    pub fn get(&self, verdict: Verdict) -> u64 {
        self.verdicts[verdict.index()]
    }

    pub fn total(&self) -> u64 {
        self.verdicts.iter().sum()
    }

    /// Add `other`'s verdicts; its examples join ours as far as each verdict's bound
    /// allows.
    pub fn merge(&mut self, other: &FaultCounts) {
        for (mine, theirs) in self.verdicts.iter_mut().zip(&other.verdicts) {
            *mine += theirs;
        }
        for (verdict, text) in &other.examples {
            let kept = self.examples.iter().filter(|(v, _)| v == verdict).count();
            if kept < Self::EXAMPLES_PER_VERDICT {
                self.examples.push((*verdict, text.clone()));
            }
        }
    }
}

/// How often a finding was seen, with the first example.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FindingCount {
    pub count: u64,
    pub example: Option<String>,
}

impl Stats {
    pub fn new(personas: usize, tools: usize) -> Self {
        Stats {
            phases: PhaseTable::default(),
            personas: (0..personas).map(|_| Default::default()).collect(),
            tools: (0..tools).map(|_| PhaseStats::default()).collect(),
            tool_counts: vec![ToolCounts::default(); tools],
            requests: Vec::new(),
            checks: Vec::new(),
            sessions: SessionCounts::default(),
            examples: BTreeMap::new(),
            tool_error_examples: BTreeMap::new(),
            server_messages: BTreeMap::new(),
            malformed: 0,
            by_transport: BTreeMap::new(),
            by_era: BTreeMap::new(),
            by_version: BTreeMap::new(),
            timeline: Vec::new(),
            interval_s: 0.0,
            interval_error: None,
            requests_error: None,
            counters: CounterTable::default(),
            findings: BTreeMap::new(),
            client_faults: BTreeMap::new(),
            slowest: super::Slowest::default(),
            extensions: super::Extensions::default(),
            pushed: None,
        }
    }

    /// Add another process's figures for the same plan (a shard of the same run): the
    /// histograms add exactly, counts add, and examples join ours as far as the
    /// collector's bounds allow (ours first: merging in shard order keeps the first
    /// shard's first). The timeline is not merged here (see `merge`'s intervals).
    pub fn merge(&mut self, other: &Stats) {
        self.phases.merge(&other.phases);
        merge_vec(&mut self.personas, &other.personas, |mine, theirs| {
            mine.0.merge(&theirs.0);
            mine.1.merge(&theirs.1);
        });
        merge_vec(&mut self.tools, &other.tools, PhaseStats::merge);
        merge_vec(&mut self.tool_counts, &other.tool_counts, ToolCounts::merge);
        merge_vec(&mut self.requests, &other.requests, PhaseStats::merge);
        merge_vec(&mut self.checks, &other.checks, CheckCounts::merge);
        self.sessions.merge(&other.sessions);
        for (kind, texts) in &other.examples {
            let list = self.examples.entry(*kind).or_default();
            texts.iter().for_each(|t| keep(list, t.clone()));
        }
        for (tool, texts) in &other.tool_error_examples {
            let list = self.tool_error_examples.entry(*tool).or_default();
            texts.iter().for_each(|t| keep(list, t.clone()));
        }
        for (method, n) in &other.server_messages {
            count_method(&mut self.server_messages, method.clone(), *n);
        }
        self.malformed += other.malformed;
        for (k, t) in &other.by_transport {
            self.by_transport.entry(*k).or_default().merge(t);
        }
        for (k, t) in &other.by_era {
            self.by_era.entry(*k).or_default().merge(t);
        }
        for (k, t) in &other.by_version {
            self.by_version.entry(*k).or_default().merge(t);
        }
        for (c, n) in other.counters.seen() {
            self.counters.add(c, n);
        }
        for (check, seen) in &other.findings {
            let mine = self.findings.entry(*check).or_default();
            mine.count += seen.count;
            if mine.example.is_none() {
                mine.example.clone_from(&seen.example);
            }
        }
        self.slowest.add(&other.slowest);
        self.extensions.merge(&other.extensions);
        for (key, counts) in &other.client_faults {
            self.client_faults.entry(*key).or_default().merge(counts);
        }
        if self.interval_error.is_none() {
            self.interval_error.clone_from(&other.interval_error);
        }
    }

    /// All failures by kind, over every phase except `session` (which repeats them).
    pub fn failures(&self) -> BTreeMap<FailureKind, u64> {
        let mut out = BTreeMap::new();
        self.phases.add_failures(&mut out);
        out
    }
}

/// Merge `theirs` into `mine` element by element; `mine` grows to `theirs`' length.
fn merge_vec<T: Default>(mine: &mut Vec<T>, theirs: &[T], merge: impl Fn(&mut T, &T)) {
    if mine.len() < theirs.len() {
        mine.resize_with(theirs.len(), T::default);
    }
    for (m, t) in mine.iter_mut().zip(theirs) {
        merge(m, t);
    }
}
