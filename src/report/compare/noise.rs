//! Whether a change between two runs is beyond what their samples can tell apart: a
//! percentile by the runs' 95 % order-statistic bounds (`summary.json` `ci95`), an error
//! rate by a two-proportion z-test. Too few samples to bound a percentile is "not enough
//! data", never a regression.

use super::{format_us, Measure};
use crate::plan::threshold::Op;
use crate::summary::PhaseSummary;

/// The verdict on one change that passed a rule's limit.
#[derive(Debug, Clone, PartialEq)]
pub enum Apart {
    /// Beyond the noise: a regression, with the evidence.
    Yes(String),
    /// Within the noise or on too few samples: not a regression, and why.
    No(String),
    /// The summaries carry no bounds (written before schema 13), or the measure has no
    /// test: the limit alone decides, as it did.
    Unknown,
}

/// Decide the change of `m` from `b` to `n` in the direction `op` looks for.
pub fn tell_apart(m: Measure, op: Op, b: &PhaseSummary, n: &PhaseSummary) -> Apart {
    let up = matches!(op, Op::Gt | Op::Ge);
    if let Some(q) = m.quantile() {
        return percentile(q, up, b, n);
    }
    if m == Measure::ErrorRate {
        return error_rate(up, b, n);
    }
    Apart::Unknown
}

fn percentile(q: f64, up: bool, b: &PhaseSummary, n: &PhaseSummary) -> Apart {
    let bounds = |p: &PhaseSummary| p.service.as_ref().and_then(|l| l.ci95.clone());
    let (Some(bb), Some(nb)) = (bounds(b), bounds(n)) else {
        return Apart::Unknown;
    };
    let name = percentile_name(q);
    let (Some(bi), Some(ni)) = (bb.at(q), nb.at(q)) else {
        return Apart::No(format!(
            "not enough data: {} and {} samples cannot bound a {name} (it needs about {} per run)",
            bb.samples,
            nb.samples,
            needed(q)
        ));
    };
    let apart = if up { ni[0] > bi[1] } else { ni[1] < bi[0] };
    let range = |i: [u64; 2]| format!("{} … {}", format_us(i[0] as f64), format_us(i[1] as f64));
    let evidence = format!(
        "95% intervals {} ({} samples) and {} ({} samples)",
        range(bi),
        bb.samples,
        range(ni),
        nb.samples
    );
    if apart {
        Apart::Yes(format!("{evidence} do not overlap"))
    } else {
        Apart::No(format!("within the noise: the {evidence} overlap"))
    }
}

/// The fewest samples whose `q` quantile has both 95 % bounds inside the samples.
pub fn needed(q: f64) -> u64 {
    let mut n: f64 = 10.0;
    while n < 1e9 {
        let spread = 1.96 * (n * q * (1.0 - q)).sqrt();
        if (n * q - spread).floor() >= 1.0 && (n * q + spread).ceil() + 1.0 <= n {
            return n as u64;
        }
        n = (n * 1.05).ceil();
    }
    n as u64
}

fn percentile_name(q: f64) -> String {
    match q {
        x if x >= 0.999 => "p99.9".into(),
        x => format!("p{:.0}", x * 100.0),
    }
}

/// Two error rates told apart by a two-proportion z-test at 95 % (one-sided in the
/// rule's direction).
fn error_rate(up: bool, b: &PhaseSummary, n: &PhaseSummary) -> Apart {
    let (n1, n2) = (b.count as f64, n.count as f64);
    if n1 == 0.0 || n2 == 0.0 {
        return Apart::Unknown;
    }
    let (p1, p2) = (b.errors as f64 / n1, n.errors as f64 / n2);
    let pooled = (b.errors + n.errors) as f64 / (n1 + n2);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
    let z = if se > 0.0 { (p2 - p1) / se } else { 0.0 };
    let z = if up { z } else { -z };
    let evidence = format!(
        "{} of {} and {} of {} samples failed (z = {z:.2})",
        b.errors, b.count, n.errors, n.count
    );
    if z > 1.645 {
        Apart::Yes(evidence)
    } else {
        Apart::No(format!("within the noise: {evidence}, under 1.64"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::assemble::latency;
    use crate::summary::PhaseSummary;

    /// A phase of `n` samples spread evenly over `from..from + n` µs (plus `tail` at
    /// 50 ms).
    fn phase(n: u64, from: u64, tail: u64) -> PhaseSummary {
        let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("h");
        for i in 0..n {
            h.record(from + i).expect("record");
        }
        for _ in 0..tail {
            h.record(50_000).expect("record");
        }
        let mut p = crate::report::threshold::tests::summary()
            .phases
            .remove("initialize")
            .expect("a phase");
        p.count = n + tail;
        p.errors = 0;
        p.service = latency(&h);
        p
    }

    #[test]
    fn a_p99_of_300_samples_is_not_enough_data() {
        let (b, n) = (phase(300, 1_000, 0), phase(300, 1_100, 0));
        let Apart::No(why) = tell_apart(Measure::P99, Op::Gt, &b, &n) else {
            panic!("called");
        };
        assert!(
            why.starts_with("not enough data: 300 and 300 samples"),
            "{why}"
        );
        assert!(
            needed(0.99) > 300 && needed(0.99) < 1_000,
            "{}",
            needed(0.99)
        );
        // The median of the same samples is bounded, and a 10 % shift of it is real.
        assert!(matches!(
            tell_apart(Measure::P50, Op::Gt, &b, &n),
            Apart::Yes(_)
        ));
    }

    #[test]
    fn overlapping_intervals_are_noise_and_a_real_tail_is_not() {
        // 5,000 samples each, the same spread: a p99 a few µs apart is noise.
        let (b, same) = (phase(5_000, 1_000, 0), phase(5_000, 1_010, 0));
        let verdict = tell_apart(Measure::P99, Op::Gt, &b, &same);
        assert!(
            matches!(verdict, Apart::No(ref w) if w.contains("overlap")),
            "{verdict:?}"
        );
        // A stall put 3 % of the samples at 50 ms: the new p99 is far outside.
        let stalled = phase(5_000, 1_000, 150);
        let verdict = tell_apart(Measure::P99, Op::Gt, &b, &stalled);
        assert!(
            matches!(verdict, Apart::Yes(ref w) if w.contains("do not overlap")),
            "{verdict:?}"
        );
        // Summaries without bounds (before schema 13): the limit alone decides.
        let mut old = b.clone();
        old.service.as_mut().expect("latency").ci95 = None;
        assert_eq!(
            tell_apart(Measure::P99, Op::Gt, &old, &stalled),
            Apart::Unknown
        );
    }

    #[test]
    fn error_rates_need_a_real_difference() {
        let mut b = phase(1_000, 1_000, 0);
        let mut n = b.clone();
        (b.errors, n.errors) = (2, 4);
        assert!(matches!(
            tell_apart(Measure::ErrorRate, Op::Gt, &b, &n),
            Apart::No(_)
        ));
        n.errors = 40;
        assert!(matches!(
            tell_apart(Measure::ErrorRate, Op::Gt, &b, &n),
            Apart::Yes(_)
        ));
    }
}
