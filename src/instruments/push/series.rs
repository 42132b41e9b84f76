//! The pushed series, whatever the wire: names, labels and values built from the
//! collector's [`PushFigures`], the live counters and the watcher's latest values. One
//! vocabulary for every push kind, and the one place that bounds cardinality.
//!
//! Every series carries `run` and `shard`; a session series adds `persona`, `transport`,
//! `era` and `protocol_version`, then `phase` (and `kind` for failures). No label value
//! comes from the target's own words except the protocol version, which the collector
//! interns to the published ones (`other` for the rest): the label sets are bounded by
//! the profile, never by the server.

use crate::conformance::Check;
use crate::metrics::native::NativeHistogram;
use crate::metrics::push::{PhaseFigures, PushFigures};
use crate::protocol::TransportKind;
use crate::watch::Latest;

/// The most series one push sends. Past it, the rest are left out (the same ones every
/// push: the order is stable) and the summary says how many.
pub const MAX_SERIES: usize = 10_000;

/// A value as pushed.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Cumulative since the run began.
    Counter(f64),
    Gauge(f64),
    /// Cumulative since the run began, in seconds.
    Histogram(NativeHistogram),
}

/// One series at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: &'static str,
    /// Sorted by name when encoded.
    pub labels: Vec<(&'static str, String)>,
    pub value: Value,
}

/// What names the series of one run, and each persona.
#[derive(Debug, Clone)]
pub struct Labels {
    pub run: String,
    /// `I/N`; `1/1` for a run that is not sharded.
    pub shard: String,
    /// Each persona's name and transport, by index.
    pub personas: Vec<(String, TransportKind)>,
}

impl Labels {
    fn base(&self) -> Vec<(&'static str, String)> {
        vec![("run", self.run.clone()), ("shard", self.shard.clone())]
    }

    fn persona(&self, i: usize) -> Vec<(&'static str, String)> {
        let mut l = self.base();
        let (name, transport) = self
            .personas
            .get(i)
            .map(|(n, t)| (n.clone(), t.name()))
            .unwrap_or_else(|| (format!("persona-{i}"), "unknown"));
        l.push(("persona", name));
        l.push(("transport", transport.to_string()));
        l
    }
}

/// The metric names, with their help (the dashboard and docs/outputs.md use them).
pub const PHASE_DURATION: &str = "mcp_fleet_phase_duration_seconds";
pub const PHASE_SAMPLES: &str = "mcp_fleet_phase_samples_total";
pub const PHASE_FAILURES: &str = "mcp_fleet_phase_failures_total";
pub const SESSIONS_STARTED: &str = "mcp_fleet_sessions_started_total";
pub const SESSIONS_ENDED: &str = "mcp_fleet_sessions_ended_total";
pub const SESSIONS_IN_FLIGHT: &str = "mcp_fleet_sessions_in_flight";
pub const EVENTS: &str = "mcp_fleet_events_total";
pub const FINDINGS: &str = "mcp_fleet_findings_total";
pub const ELAPSED: &str = "mcp_fleet_elapsed_seconds";

/// Everything one push sends, capped at `max` series; and how many were left out.
pub fn build(
    f: &PushFigures,
    labels: &Labels,
    now: Now,
    resources: &Latest,
    max: usize,
) -> (Vec<Series>, usize) {
    let mut out = Vec::new();
    for cell in &f.cells {
        let mut l = labels.persona(cell.persona);
        l.push(("era", cell.era.name().to_string()));
        l.push(("protocol_version", cell.version.name().to_string()));
        phases(&mut out, &l, &cell.phases);
    }
    phases(&mut out, &labels.base(), &f.fleet);
    for (i, s) in f.personas.iter().enumerate() {
        let l = labels.persona(i);
        out.push(counter(SESSIONS_STARTED, l.clone(), s.started));
        for (outcome, n) in [
            ("completed", s.completed),
            ("failed", s.failed),
            ("interrupted", s.interrupted),
            ("unreachable", s.unreachable),
        ] {
            let mut l = l.clone();
            l.push(("outcome", outcome.to_string()));
            out.push(counter(SESSIONS_ENDED, l, n));
        }
    }
    for &(c, n) in &f.counters {
        let mut l = labels.base();
        l.push(("event", c.name().to_string()));
        out.push(counter(EVENTS, l, n));
    }
    for &(id, n) in &f.findings {
        let Some(check) = Check::from_id(id) else {
            continue;
        };
        let mut l = labels.base();
        l.push(("check", check.code().to_string()));
        l.push((
            "severity",
            format!("{:?}", check.info().severity).to_lowercase(),
        ));
        out.push(counter(FINDINGS, l, n));
    }
    out.push(Series {
        name: SESSIONS_IN_FLIGHT,
        labels: labels.base(),
        value: Value::Gauge(now.in_flight as f64),
    });
    out.push(Series {
        name: ELAPSED,
        labels: labels.base(),
        value: Value::Gauge(now.elapsed_s),
    });
    for &(series, name, _) in super::super::prometheus::RESOURCE_GAUGES {
        if let Some(v) = resources.get(series) {
            out.push(Series {
                name,
                labels: labels.base(),
                value: Value::Gauge(v),
            });
        }
    }
    let left_out = out.len().saturating_sub(max);
    out.truncate(max);
    (out, left_out)
}

/// What the fleet knows right now, beside the collector's figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Now {
    pub in_flight: u64,
    pub elapsed_s: f64,
}

fn counter(name: &'static str, labels: Vec<(&'static str, String)>, n: u64) -> Series {
    Series {
        name,
        labels,
        value: Value::Counter(n as f64),
    }
}

fn phases(out: &mut Vec<Series>, labels: &[(&'static str, String)], phases: &[PhaseFigures]) {
    for p in phases {
        let mut l = labels.to_vec();
        l.push(("phase", p.phase.name().to_string()));
        out.push(counter(PHASE_SAMPLES, l.clone(), p.count));
        if p.latency.count > 0 {
            out.push(Series {
                name: PHASE_DURATION,
                labels: l.clone(),
                value: Value::Histogram(p.latency.clone()),
            });
        }
        for (kind, &n) in &p.failures {
            let mut l = l.clone();
            l.push(("kind", kind.name()));
            out.push(counter(PHASE_FAILURES, l, n));
        }
    }
}
