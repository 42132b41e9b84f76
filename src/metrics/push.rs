//! What a push output sends each interval: the run's figures so far, cumulative, cut the
//! way the collector keeps them (persona × era × protocol version, then phase), each
//! phase's latency as a [`NativeHistogram`]. Counts are the collector's own, so the
//! pushed figures add up to `summary.json`'s exactly.

use super::native::NativeHistogram;
use super::stats::{PhaseStats, PhaseTable, SessionCounts, Stats};
use super::{CheckId, Counter, FailureKind, Phase};
use crate::protocol::{Era, VersionId};
use std::collections::BTreeMap;

/// One phase of one slice.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseFigures {
    pub phase: Phase,
    /// Samples that ran (successful and failed), as `summary.json` `count`.
    pub count: u64,
    /// Failed samples by kind.
    pub failures: BTreeMap<FailureKind, u64>,
    /// Service time of the successful samples (the run's percentiles' histogram).
    pub latency: NativeHistogram,
}

impl PhaseFigures {
    fn of(phase: Phase, p: &PhaseStats) -> PhaseFigures {
        PhaseFigures {
            phase,
            count: p.count(),
            failures: p.failures.clone(),
            latency: NativeHistogram::from_micros(&p.service),
        }
    }
}

/// The phases of one persona's sessions that spoke one era and version.
#[derive(Debug, Clone, PartialEq)]
pub struct CellFigures {
    /// The persona's index in the plan.
    pub persona: usize,
    pub era: Era,
    pub version: VersionId,
    pub phases: Vec<PhaseFigures>,
}

/// The run so far, as pushed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PushFigures {
    pub cells: Vec<CellFigures>,
    /// Samples of no session (the fleet's own: scheduler lag).
    pub fleet: Vec<PhaseFigures>,
    /// Sessions by persona index.
    pub personas: Vec<SessionCounts>,
    /// The counters that happened.
    pub counters: Vec<(Counter, u64)>,
    /// Findings by check.
    pub findings: Vec<(CheckId, u64)>,
}

/// The phases of `table` that ran.
pub(super) fn phases_of(table: &PhaseTable) -> Vec<PhaseFigures> {
    table
        .active()
        .filter(|(_, p)| p.count() > 0)
        .map(|(phase, p)| PhaseFigures::of(phase, p))
        .collect()
}

impl PushFigures {
    /// The figures of `stats` (the fleet's samples and the counts) around the session
    /// cells the collector keeps apart.
    pub(super) fn of(stats: &Stats, cells: Vec<CellFigures>) -> PushFigures {
        PushFigures {
            cells,
            fleet: phases_of(&stats.phases),
            personas: stats.personas.iter().map(|(_, c)| *c).collect(),
            counters: stats.counters.seen().collect(),
            findings: stats
                .findings
                .iter()
                .map(|(&check, seen)| (check, seen.count))
                .collect(),
        }
    }
}
