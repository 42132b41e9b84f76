//! `run --histogram`: each phase's service times as a histogram in the terminal, as oha
//! prints one: eleven even buckets from the fastest to the slowest sample, each with
//! its count and a bar.

use super::format_us;
use crate::metrics::{Phase, Stats};
use crate::report::style::Style;
use std::fmt::Write;

/// The longest bar, in characters.
const BAR: u64 = 40;
const BUCKETS: u64 = 11;

/// A histogram per phase with successful samples (not `lag`, which is no latency of
/// the server's), in pipeline order.
pub fn render(stats: &Stats, st: Style) -> String {
    let mut out = String::new();
    for (phase, p) in stats.phases.active() {
        let h = &p.service;
        if phase == Phase::Lag || h.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{} {}",
            st.bold(&format!("latency histogram: {}", phase.name())),
            st.dim(&format!("(service time, {} samples)", h.len()))
        );
        let (low, high) = (h.min(), h.max());
        let step = ((high - low) / (BUCKETS - 1)).max(1);
        let counts: Vec<(u64, u64)> = (0..BUCKETS)
            .map(|i| {
                let top = if i == BUCKETS - 1 {
                    high
                } else {
                    low + i * step
                };
                let bottom = if i == 0 { 0 } else { low + (i - 1) * step + 1 };
                (top, h.count_between(bottom, top.max(bottom)))
            })
            .take_while(|(top, _)| *top <= high)
            .collect();
        let most = counts.iter().map(|(_, n)| *n).max().unwrap_or(1).max(1);
        for (top, n) in counts {
            // A bucket with samples shows at least one mark.
            let width = if n == 0 { 0 } else { (n * BAR / most).max(1) };
            let bar = "■".repeat(usize::try_from(width).unwrap_or(0));
            let _ = writeln!(out, "  {:>10} [{n:>8}] {bar}", format_us(top as f64));
        }
    }
    out
}
