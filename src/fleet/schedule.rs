//! The schedule maths of the load models, pure and exact so tests can check them without
//! a clock: how many virtual clients a closed model wants at time t (k6's ramping-vus:
//! linear between stage targets), and when the k-th session of an open model is due
//! (k6's ramping-arrival-rate: the arrival count is the integral of a piecewise-linear
//! rate, so arrival k is the root of that integral = k).

use crate::plan::Curve;
use std::time::Duration;

impl Curve {
    /// The value at `t` (after the last stage: its target).
    pub fn at(&self, t: Duration) -> f64 {
        let mut from = self.start;
        let mut begin = Duration::ZERO;
        for s in &self.stages {
            let end = begin + s.duration;
            if t < end {
                let frac = (t - begin).as_secs_f64() / s.duration.as_secs_f64();
                return from + (s.target - from) * frac;
            }
            from = s.target;
            begin = end;
        }
        from
    }

    /// Virtual clients wanted at `t` (rounded to the nearest whole client).
    pub fn clients_at(&self, t: Duration) -> u32 {
        let v = self.at(t).round();
        if v <= 0.0 {
            0
        } else if v >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            v as u32
        }
    }

    /// Arrival times of an open model whose rate (per second) is this curve.
    pub fn arrivals(&self) -> Arrivals<'_> {
        Arrivals {
            curve: self,
            next: 0,
            stage: 0,
            stage_begin: 0.0,
            count_at_stage_begin: 0.0,
            rate_at_stage_begin: self.start,
        }
    }
}

/// Iterator over the intended start times (offsets from the run's start) of an open
/// model's sessions. O(1) per arrival; ends after the last stage (never, for a constant
/// rate without stages).
#[derive(Debug, Clone)]
pub struct Arrivals<'c> {
    curve: &'c Curve,
    next: u64,
    stage: usize,
    stage_begin: f64,
    count_at_stage_begin: f64,
    rate_at_stage_begin: f64,
}

impl Iterator for Arrivals<'_> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        // Arrival k happens when the cumulative count N(t) reaches k (so the first is at
        // t = 0 whenever the rate there is positive).
        let k = self.next as f64;
        loop {
            let Some(stage) = self.curve.stages.get(self.stage) else {
                if !self.curve.stages.is_empty() {
                    return None;
                }
                // Constant rate, no stages: k / r.
                let r = self.curve.start;
                if r <= 0.0 {
                    return None;
                }
                self.next += 1;
                return Some(Duration::from_secs_f64(k / r));
            };
            let d = stage.duration.as_secs_f64();
            let (r0, r1) = (self.rate_at_stage_begin, stage.target);
            let in_stage = (r0 + r1) / 2.0 * d; // arrivals this stage holds
            let need = k - self.count_at_stage_begin;
            if need < in_stage {
                let slope = (r1 - r0) / d;
                // Solve slope/2·t² + r0·t − need = 0 for the smallest t ≥ 0.
                let t = if slope.abs() < 1e-12 {
                    if r0 <= 0.0 {
                        0.0
                    } else {
                        need / r0
                    }
                } else {
                    let disc = (r0 * r0 + 2.0 * slope * need).max(0.0);
                    (disc.sqrt() - r0) / slope
                };
                self.next += 1;
                return Some(Duration::from_secs_f64(self.stage_begin + t.clamp(0.0, d)));
            }
            self.count_at_stage_begin += in_stage;
            self.stage_begin += d;
            self.rate_at_stage_begin = r1;
            self.stage += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Stage;

    fn s(target: f64, secs: u64) -> Stage {
        Stage {
            target,
            duration: Duration::from_secs(secs),
        }
    }

    fn close(a: Duration, b_secs: f64) -> bool {
        (a.as_secs_f64() - b_secs).abs() < 1e-9
    }

    #[test]
    fn closed_ramp_up_hold_and_down() {
        let c = Curve {
            start: 0.0,
            stages: vec![s(10.0, 10), s(10.0, 20), s(0.0, 5)],
        };
        assert_eq!(c.length(), Some(Duration::from_secs(35)));
        assert_eq!(c.clients_at(Duration::ZERO), 0);
        assert_eq!(c.clients_at(Duration::from_secs(5)), 5);
        assert_eq!(c.clients_at(Duration::from_millis(9_960)), 10);
        assert_eq!(c.clients_at(Duration::from_secs(15)), 10);
        assert_eq!(c.clients_at(Duration::from_secs(30)), 10);
        assert_eq!(c.clients_at(Duration::from_millis(32_500)), 5);
        assert_eq!(c.clients_at(Duration::from_secs(40)), 0);
        assert_eq!(
            Curve::constant(7.0, None).clients_at(Duration::from_secs(99)),
            7
        );
    }

    #[test]
    fn constant_rate_arrivals_are_evenly_spaced() {
        let c = Curve::constant(4.0, Some(Duration::from_secs(2)));
        let times: Vec<Duration> = c.arrivals().collect();
        assert_eq!(times.len(), 8, "4/s for 2 s");
        for (k, t) in times.iter().enumerate() {
            assert!(close(*t, k as f64 * 0.25), "{k}: {t:?}");
        }
        // No stages: an endless constant rate.
        let endless = Curve::constant(1000.0, None);
        let t: Vec<Duration> = endless.arrivals().take(3).collect();
        assert!(close(t[2], 0.002));
    }

    #[test]
    fn ramping_rate_arrivals_follow_the_integral() {
        // 0 → 10/s over 10 s: N(t) = t²/2, so arrival k is at sqrt(2k); 50 in total.
        let c = Curve {
            start: 0.0,
            stages: vec![s(10.0, 10)],
        };
        let times: Vec<Duration> = c.arrivals().collect();
        assert_eq!(times.len(), 50);
        for (k, t) in times.iter().enumerate() {
            assert!(close(*t, (2.0 * k as f64).sqrt()), "{k}: {t:?}");
        }
        // Then hold 10/s for 2 s: 20 more, every 100 ms from t = 10.
        let c = Curve {
            start: 0.0,
            stages: vec![s(10.0, 10), s(10.0, 2)],
        };
        let times: Vec<Duration> = c.arrivals().collect();
        assert_eq!(times.len(), 70);
        assert!(close(times[50], 10.0));
        assert!(close(times[69], 11.9));
    }

    #[test]
    fn ramp_down_and_zero_rate_stages() {
        // 10/s → 0 over 2 s holds 10 arrivals; a zero-rate stage holds none.
        let c = Curve {
            start: 10.0,
            stages: vec![s(0.0, 2), s(0.0, 5), s(5.0, 2)],
        };
        let times: Vec<Duration> = c.arrivals().collect();
        assert_eq!(times.len(), 10 + 5, "{times:?}");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "monotonic");
        assert!(times[9] < Duration::from_secs(2));
        assert!(
            times[10] >= Duration::from_secs(7),
            "nothing during the pause"
        );
    }
}
