//! The one histogram configuration (1 µs .. 1 h, 3 significant figures) and how a
//! duration goes into it: every figure of the run, whole or per interval, is recorded
//! here so that histograms can always be added together.

use hdrhistogram::Histogram;

/// Highest latency a histogram holds: one hour, in microseconds. Larger values are
/// clamped to it and counted in `clamped`, never dropped.
pub const LATENCY_BOUND_US: u64 = 3_600_000_000;

pub(super) fn new_histogram() -> Histogram<u64> {
    // 1 µs .. 1 h at 3 significant figures is a valid configuration by construction.
    Histogram::new_with_bounds(1, LATENCY_BOUND_US, 3).unwrap_or_else(|_| {
        Histogram::new(3).unwrap_or_else(|_| unreachable!("3 significant figures is valid"))
    })
}

pub(super) fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Record, clamping to the bound; true when clamped.
pub(super) fn clamped_record(h: &mut Histogram<u64>, value: u64) -> bool {
    let clamped = value > LATENCY_BOUND_US;
    let v = value.clamp(1, LATENCY_BOUND_US);
    // In range by construction.
    let _ = h.record(v);
    clamped
}
