//! The slowest traced requests of each phase (persona `trace = true`), with their W3C
//! trace and span ids: where to look in the server's own traces for the worst samples.

use super::Phase;
use std::collections::BTreeMap;

/// Requests kept per phase.
pub const SLOWEST_KEPT: usize = 5;

/// One traced request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slow {
    pub latency_us: u64,
    pub trace: u128,
    pub span: u64,
}

/// The slowest [`SLOWEST_KEPT`] traced requests of each phase, slowest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slowest(pub BTreeMap<Phase, Vec<Slow>>);

impl Slowest {
    pub fn keep(&mut self, phase: Phase, latency_us: u64, trace: u128, span: u64) {
        let kept = self.0.entry(phase).or_default();
        if kept.len() == SLOWEST_KEPT && kept.last().is_some_and(|s| s.latency_us >= latency_us) {
            return;
        }
        let at = kept.partition_point(|s| s.latency_us >= latency_us);
        kept.insert(
            at,
            Slow {
                latency_us,
                trace,
                span,
            },
        );
        kept.truncate(SLOWEST_KEPT);
    }

    /// Another part's (a shard's) slowest, added.
    pub fn add(&mut self, other: &Slowest) {
        for (phase, list) in &other.0 {
            for s in list {
                self.keep(*phase, s.latency_us, s.trace, s.span);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.values().all(Vec::is_empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowest_few_are_kept_slowest_first_and_parts_add_up() {
        let mut a = Slowest::default();
        for (i, us) in [5u64, 50, 1, 70, 20, 60, 3].into_iter().enumerate() {
            a.keep(Phase::ToolsCall, us, 1, i as u64 + 1);
        }
        let got: Vec<u64> = a.0[&Phase::ToolsCall]
            .iter()
            .map(|s| s.latency_us)
            .collect();
        assert_eq!(got, vec![70, 60, 50, 20, 5]);
        let mut b = Slowest::default();
        b.keep(Phase::ToolsCall, 65, 2, 9);
        b.keep(Phase::ToolsList, 4, 2, 10);
        a.add(&b);
        let got: Vec<u64> = a.0[&Phase::ToolsCall]
            .iter()
            .map(|s| s.latency_us)
            .collect();
        assert_eq!(got, vec![70, 65, 60, 50, 20]);
        assert_eq!(a.0[&Phase::ToolsList].len(), 1);
    }
}
