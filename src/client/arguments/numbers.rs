//! Integers and numbers inside a schema's range and on its `multipleOf` grid.

use rand::Rng;
use serde_json::{json, Value};

/// Width of a numeric range when the schema gives one bound or none.
const SPAN: f64 = 100.0;

/// A numeric range from `minimum`/`maximum` and their exclusive forms (a number since
/// draft 6, a boolean beside `minimum`/`maximum` in draft 4).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Range {
    pub lo: f64,
    pub lo_open: bool,
    pub hi: f64,
    pub hi_open: bool,
}

impl Range {
    pub fn of(schema: &Value) -> Range {
        let num = |k: &str| schema.get(k).and_then(Value::as_f64);
        let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
        let side = |inclusive: &str, exclusive: &str, tighter: fn(f64, f64) -> bool| {
            let (inc, exc) = (num(inclusive), num(exclusive));
            match (inc, exc) {
                (Some(i), Some(e)) if tighter(e, i) || e == i => Some((e, true)),
                (Some(i), _) => Some((i, flag(exclusive))),
                (None, Some(e)) => Some((e, true)),
                (None, None) => None,
            }
        };
        let lo = side("minimum", "exclusiveMinimum", |a, b| a > b);
        let hi = side("maximum", "exclusiveMaximum", |a, b| a < b);
        let ((lo, lo_open), (hi, hi_open)) = match (lo, hi) {
            (Some(l), Some(h)) => (l, h),
            (Some(l), None) => (l, (l.0 + SPAN, false)),
            (None, Some(h)) => ((h.0 - SPAN, false), h),
            (None, None) => ((0.0, false), (SPAN, false)),
        };
        Range {
            lo,
            lo_open,
            hi,
            hi_open,
        }
    }

    pub fn contains(&self, v: f64) -> bool {
        let above = if self.lo_open {
            v > self.lo
        } else {
            v >= self.lo
        };
        let below = if self.hi_open {
            v < self.hi
        } else {
            v <= self.hi
        };
        above && below
    }

    /// The multiples k·step inside the range, as the smallest and largest k.
    fn multiples(&self, step: f64) -> Option<(i64, i64)> {
        let mut first = (self.lo / step).ceil();
        let mut last = (self.hi / step).floor();
        if !self.contains(first * step) {
            first += 1.0;
        }
        if !self.contains(last * step) {
            last -= 1.0;
        }
        let clamp = |k: f64| k.clamp(-9.0e15, 9.0e15) as i64;
        (first <= last).then(|| (clamp(first), clamp(last)))
    }
}

pub(super) fn multiple_of(schema: &Value) -> Option<f64> {
    schema
        .get("multipleOf")
        .and_then(Value::as_f64)
        .filter(|m| *m > 0.0 && m.is_finite())
}

/// Whether `v` is a whole multiple of `step`, as validators compute it.
pub(super) fn is_multiple(v: f64, step: f64) -> bool {
    if v.fract() == 0.0 && step.fract() == 0.0 {
        return v % step == 0.0;
    }
    let q = v / step;
    (q - q.round()).abs() < 1e-9
}

pub(super) fn integer(schema: &Value, rng: &mut impl Rng) -> Value {
    let range = Range::of(schema);
    // An integer multiple of a fractional step (0.5 → 1, 0.25 → 1, 1.5 → 3).
    let step = match multiple_of(schema) {
        Some(m) => (1..=1000)
            .map(|n| m * f64::from(n))
            .find(|s| s.fract() == 0.0)
            .unwrap_or(1.0),
        None => 1.0,
    };
    match range.multiples(step) {
        Some((first, last)) => json!((rng.random_range(first..=last) as f64 * step) as i64),
        // No integer fits: the schema cannot be satisfied; send its lower bound.
        None => json!(range.lo.ceil() as i64),
    }
}

pub(super) fn number(schema: &Value, rng: &mut impl Rng) -> Value {
    let range = Range::of(schema);
    let Some(step) = multiple_of(schema) else {
        let v = if range.hi > range.lo && (range.hi - range.lo).is_finite() {
            rng.random_range(range.lo..=range.hi)
        } else if range.lo.is_finite() {
            range.lo
        } else {
            0.0
        };
        let v = if range.contains(v) {
            v
        } else {
            (range.lo + range.hi) / 2.0
        };
        return json!(v);
    };
    let Some((first, last)) = range.multiples(step) else {
        return json!(range.lo);
    };
    // k·step in binary floating point is rarely an exact multiple of step (0.1·3 is
    // 0.30000000000000004): round to step's decimals and keep a value whose quotient by
    // step is whole, as validators compute it.
    let decimals = step.to_string().split_once('.').map_or(0, |(_, d)| d.len());
    let tidy = |k: i64| -> f64 {
        let raw = k as f64 * step;
        format!("{raw:.decimals$}").parse().unwrap_or(raw)
    };
    let whole = |v: f64| (v / step) % 1.0 < f64::EPSILON;
    for _ in 0..16 {
        let v = tidy(rng.random_range(first..=last));
        if whole(v) && range.contains(v) {
            return json!(v);
        }
    }
    // Multiples of step that are whole numbers divide exactly; so does 0.
    (first..=last)
        .take(10_000)
        .map(tidy)
        .find(|v| whole(*v) && range.contains(*v))
        .map_or(json!(tidy(first)), |v| json!(v))
}
