//! The figures of one phase (or one tool) in `summary.json`: how many samples, how
//! fast (latency percentiles), how they failed, and whether the server accepted a tool's
//! calls apart from how fast it answered them.

use crate::metrics::FailureKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Latency {
    pub mean_us: f64,
    pub min_us: u64,
    pub p50_us: u64,
    pub p90_us: u64,
    /// Absent (0) in results written before schema 8.
    #[serde(default)]
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    /// 95 % confidence bounds of the percentiles (schema 13), for telling two runs apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<QuantileBounds>,
}

/// 95 % confidence bounds `[low, high]` (µs) of each percentile, from the order
/// statistics of the samples (the ranks `n·q ± 1.96·√(n·q·(1−q))`): `None` for a
/// percentile with too few samples on either side to bound (a p99 of 300 samples).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuantileBounds {
    /// The samples behind them.
    pub samples: u64,
    pub p50: Option<[u64; 2]>,
    pub p90: Option<[u64; 2]>,
    pub p95: Option<[u64; 2]>,
    pub p99: Option<[u64; 2]>,
    pub p999: Option<[u64; 2]>,
}

impl QuantileBounds {
    /// The bounds of the percentile `q` (0.5, 0.9, 0.95, 0.99, 0.999).
    pub fn at(&self, q: f64) -> Option<[u64; 2]> {
        match q {
            x if x >= 0.999 => self.p999,
            x if x >= 0.99 => self.p99,
            x if x >= 0.95 => self.p95,
            x if x >= 0.9 => self.p90,
            _ => self.p50,
        }
    }
}

impl Latency {
    /// The percentile nearest at or below `q` that the summary keeps (p50, p90, p95,
    /// p99, p99.9, max at 1.0).
    pub fn at(&self, q: f64) -> u64 {
        match q {
            x if x >= 1.0 => self.max_us,
            x if x >= 0.999 => self.p999_us,
            x if x >= 0.99 => self.p99_us,
            x if x >= 0.95 => self.p95_us,
            x if x >= 0.9 => self.p90_us,
            _ => self.p50_us,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseSummary {
    /// Samples that ran (successful + failed).
    pub count: u64,
    pub errors: u64,
    /// Successful `tools/call` results with `isError: true`.
    pub tool_errors: u64,
    /// Steps not run because the server did not declare the capability.
    pub skipped: u64,
    pub rate_per_s: f64,
    /// Service time (finished − started) of successful samples, flattened for scripts;
    /// `None` (no latency fields) when no sample succeeded: there is no latency to show.
    #[serde(flatten)]
    pub service: Option<Latency>,
    /// Response time (finished − intended start); equals service time in a closed model.
    /// `None` when no sample succeeded.
    pub response: Option<Latency>,
    /// Latencies above the histogram bound, clamped to it.
    pub clamped: u64,
    pub failures: BTreeMap<String, u64>,
}

/// Whether a tool's calls were valid, apart from how fast they were: the same calls as
/// `tools[TOOL]`, split by how the server took them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolAcceptance {
    /// Calls made (= `tools[TOOL].count`).
    pub calls: u64,
    /// Successful results without `isError`.
    pub accepted: u64,
    /// Results with `isError: true`.
    pub tool_errors: u64,
    /// JSON-RPC error -32602 (invalid params).
    pub invalid_params: u64,
    /// Every other failure (other RPC errors, timeouts, closed transports, `no_value`).
    pub other_errors: u64,
    /// Calls whose arguments were (partly) generated from the `inputSchema`, and how
    /// many of those were accepted.
    pub generated: u64,
    pub generated_accepted: u64,
    /// Why calls of the tool were left out, and how many times (`destructive`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub left_out: BTreeMap<String, u64>,
}

impl ToolAcceptance {
    /// The same from a tool's summary (`tools[TOOL]`), for summaries written before
    /// schema 9: -32602 apart from other failures, nothing generated.
    pub fn from_summary(p: &PhaseSummary) -> ToolAcceptance {
        let invalid_params = p
            .failures
            .get(&FailureKind::RpcError(INVALID_PARAMS).name())
            .copied()
            .unwrap_or(0);
        ToolAcceptance {
            calls: p.count,
            accepted: p.count.saturating_sub(p.errors + p.tool_errors),
            tool_errors: p.tool_errors,
            invalid_params,
            other_errors: p.errors.saturating_sub(invalid_params),
            ..ToolAcceptance::default()
        }
    }

    /// Accepted / calls, `None` without calls.
    pub fn accepted_share(&self) -> Option<f64> {
        (self.calls > 0).then(|| self.accepted as f64 / self.calls as f64)
    }

    /// Generated accepted / generated, `None` without generated calls.
    pub fn generated_share(&self) -> Option<f64> {
        (self.generated > 0).then(|| self.generated_accepted as f64 / self.generated as f64)
    }

    /// Calls left out, whatever the reason.
    pub fn left_out_total(&self) -> u64 {
        self.left_out.values().sum()
    }
}

/// JSON-RPC "Invalid params": what a server answers to arguments its schema refuses.
pub const INVALID_PARAMS: i64 = -32602;
