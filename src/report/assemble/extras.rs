//! The optional parts of the summary: the slowest traced requests per phase, and what
//! servers made of the protocol extensions.

use crate::metrics::Stats;
use std::collections::BTreeMap;

/// [`Stats::slowest`] as the summary shows it.
pub(super) fn slowest_traces(stats: &Stats) -> BTreeMap<String, Vec<crate::summary::SlowTrace>> {
    stats
        .slowest
        .0
        .iter()
        .filter(|(_, l)| !l.is_empty())
        .map(|(phase, list)| {
            let list = list
                .iter()
                .map(|s| crate::summary::SlowTrace {
                    latency_us: s.latency_us,
                    trace_id: format!("{:032x}", s.trace),
                    span_id: format!("{:016x}", s.span),
                    traceparent: crate::session::traceparent(s.trace, s.span),
                })
                .collect();
            (phase.name().to_string(), list)
        })
        .collect()
}

/// [`Stats::extensions`] as the summary shows it: sessions per verdict, by id.
pub(super) fn extensions(stats: &Stats) -> BTreeMap<String, BTreeMap<String, u64>> {
    stats
        .extensions
        .0
        .iter()
        .map(|(id, counts)| {
            let by_verdict = crate::metrics::ExtensionVerdict::ALL
                .into_iter()
                .zip(counts)
                .map(|(v, n)| (v.name().to_string(), *n))
                .collect();
            (id.clone(), by_verdict)
        })
        .collect()
}
