//! A latency histogram as a Prometheus native histogram (OpenTelemetry calls the same
//! thing an exponential histogram): buckets whose bounds grow by a constant factor, so
//! histograms of different generators add up bucket by bucket and a percentile of the
//! sum is as precise as one of a part. Built from the run's HDR histograms when figures
//! are pushed; nothing on the hot path.

use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// The bucket schema: each power of two is cut into 2^SCHEMA buckets, so a bucket's
/// upper bound is 2^(1/32) ≈ 1.022 times its lower one and a percentile read from it is
/// within 2.2 % of the sample's value. Prometheus accepts schemas −4..8; 5 keeps a
/// spread of 1 ms .. 1 s in 320 buckets.
pub const SCHEMA: i32 = 5;

/// The factor between a bucket's bounds: 2^(2^−SCHEMA).
pub fn bucket_factor() -> f64 {
    2f64.powf(2f64.powi(-SCHEMA))
}

/// A native histogram of durations in seconds, cumulative since the run began.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NativeHistogram {
    /// Observations.
    pub count: u64,
    /// Their sum, seconds.
    pub sum: f64,
    /// Observations in each positive bucket, by index: bucket `i` holds values in
    /// (2^((i−1)/2^SCHEMA), 2^(i/2^SCHEMA)]. Empty buckets are absent.
    pub buckets: BTreeMap<i32, u64>,
}

/// The bucket of `seconds` (> 0) at [`SCHEMA`].
pub fn bucket_of(seconds: f64) -> i32 {
    let scaled = seconds.log2() * f64::from(1u32 << SCHEMA);
    // A value that is a bound to the last ulp belongs to the bucket it closes.
    let i = scaled.ceil();
    let i = if i - scaled > 1.0 - 1e-9 { i - 1.0 } else { i };
    // Durations of 1 µs .. 1 h map to about −640 .. 380: in range by construction.
    i.clamp(f64::from(i32::MIN / 2), f64::from(i32::MAX / 2)) as i32
}

impl NativeHistogram {
    /// The durations of an HDR histogram in microseconds: each recorded value (HDR's
    /// highest equivalent of its bucket, the value the run's percentiles report) goes
    /// into the native bucket that holds it, so the counts are exact and a percentile
    /// read from either lands in the same native bucket.
    pub fn from_micros(h: &Histogram<u64>) -> NativeHistogram {
        let mut out = NativeHistogram::default();
        for v in h.iter_recorded() {
            let n = v.count_at_value();
            let seconds = v.value_iterated_to() as f64 / 1e6;
            out.count += n;
            out.sum += seconds * n as f64;
            *out.buckets.entry(bucket_of(seconds)).or_insert(0) += n;
        }
        out
    }

    /// The buckets as Prometheus sends them: spans of consecutive indices (the first
    /// span's offset is its first index, each later one's the gap since the previous
    /// span) and each bucket's count as a delta from the previous bucket's.
    pub fn spans_and_deltas(&self) -> (Vec<(i32, u32)>, Vec<i64>) {
        let mut spans: Vec<(i32, u32)> = Vec::new();
        let mut deltas = Vec::with_capacity(self.buckets.len());
        let (mut last_index, mut last_count) = (None::<i32>, 0i64);
        for (&i, &n) in &self.buckets {
            match (last_index, spans.last_mut()) {
                (Some(prev), Some(span)) if i == prev + 1 => span.1 += 1,
                (Some(prev), _) => spans.push((i - prev - 1, 1)),
                (None, _) => spans.push((i, 1)),
            }
            let n = i64::try_from(n).unwrap_or(i64::MAX);
            deltas.push(n - last_count);
            (last_index, last_count) = (Some(i), n);
        }
        (spans, deltas)
    }

    /// The value at quantile `q` (0..1) as Prometheus estimates it: the upper bound of
    /// the bucket that holds the rank `q × count` (for tests and checks).
    pub fn upper_bound_at(&self, q: f64) -> Option<f64> {
        let rank = q * self.count as f64;
        let mut seen = 0u64;
        for (&i, &n) in &self.buckets {
            seen += n;
            if seen as f64 >= rank {
                return Some(2f64.powf(f64::from(i) / f64::from(1u32 << SCHEMA)));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(values: &[u64]) -> Histogram<u64> {
        let mut h = super::super::histogram::new_histogram();
        for &v in values {
            h.record(v).expect("in range");
        }
        h
    }

    #[test]
    fn a_bucket_holds_the_values_up_to_its_upper_bound() {
        assert_eq!(bucket_of(1.0), 0, "1 closes bucket 0");
        assert_eq!(bucket_of(2.0), 32, "2 closes bucket 32");
        assert_eq!(bucket_of(1.01), 1);
        assert_eq!(bucket_of(0.5), -32);
        assert_eq!(bucket_of(0.501), -31);
        let f = bucket_factor();
        assert!((f - 1.021_897).abs() < 1e-6, "{f}");
    }

    #[test]
    fn counts_are_exact_and_buckets_are_encoded_as_spans_and_deltas() {
        // 1 ms ×3, 1.01 ms, 10 ms, 1 s: three spans (1 ms and 1.01 ms share a bucket).
        let h = NativeHistogram::from_micros(&hdr(&[1000, 1000, 1000, 1010, 10_000, 1_000_000]));
        assert_eq!(h.count, 6);
        // The sum is of HDR's values: within its 3 significant figures.
        assert!((h.sum / 1.01401 - 1.0).abs() < 1e-3, "{}", h.sum);
        let (spans, deltas) = h.spans_and_deltas();
        let counts: u64 = h.buckets.values().sum();
        assert_eq!(counts, 6);
        assert_eq!(
            spans.iter().map(|s| s.1).sum::<u32>() as usize,
            deltas.len()
        );
        // Rebuild the buckets from the encoding.
        let (mut index, mut count, mut rebuilt) = (0i32, 0i64, BTreeMap::new());
        let mut d = deltas.iter();
        for (k, (offset, len)) in spans.iter().enumerate() {
            index += offset + if k == 0 { 0 } else { 1 };
            for j in 0..*len {
                if j > 0 {
                    index += 1;
                }
                count += d.next().expect("a delta per bucket");
                rebuilt.insert(index, count as u64);
            }
        }
        assert_eq!(rebuilt, h.buckets);
        assert_eq!(spans.len(), 3, "{spans:?}");
    }

    #[test]
    fn a_quantile_read_from_the_buckets_is_within_one_bucket_of_the_hdr_figure() {
        let values: Vec<u64> = (1..=5000).map(|i| 200 + i * i % 90_000).collect();
        let source = hdr(&values);
        let h = NativeHistogram::from_micros(&source);
        for q in [0.5, 0.9, 0.95, 0.99] {
            let hdr_s = source.value_at_quantile(q) as f64 / 1e6;
            let upper = h.upper_bound_at(q).expect("not empty");
            assert!(
                upper >= hdr_s && upper <= hdr_s * bucket_factor() * 1.000_001,
                "q{q}: hdr {hdr_s} native bucket ends at {upper}"
            );
        }
    }
}
