//! The pauses a closed-model client takes between its sessions: the think time (`[load]
//! think`, a user's pause) and the reconnect backoff (`[load] reconnect_backoff`, after a
//! session that could not reach the target: exponential from the first delay, capped,
//! jittered so that clients that failed together do not come back together). The fleet
//! takes the longer of the two, and starts the backoff over after a session that reached
//! the server.

use super::error::PlanError;
use super::quantity::parse_duration;
use rand::Rng;
use std::time::Duration;

/// Pause between sessions of one closed-model client.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Think {
    Fixed(Duration),
    /// Uniform in [low, high].
    Uniform(Duration, Duration),
    /// Exponentially distributed with this mean (a Poisson-like user).
    Exponential(Duration),
}

impl Think {
    pub fn sample(&self, rng: &mut impl Rng) -> Duration {
        match *self {
            Think::Fixed(d) => d,
            Think::Uniform(lo, hi) => {
                if hi <= lo {
                    lo
                } else {
                    rng.random_range(lo..=hi)
                }
            }
            Think::Exponential(mean) => {
                // Inverse transform: -mean · ln(U), U in (0, 1].
                let u: f64 = 1.0 - rng.random::<f64>();
                mean.mul_f64(-u.ln())
            }
        }
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Think::Fixed(d) if d.is_zero())
    }

    pub fn describe(&self) -> String {
        let f = |d: Duration| humantime::format_duration(d).to_string();
        match *self {
            Think::Fixed(d) => f(d),
            Think::Uniform(a, b) => format!("{}..{}", f(a), f(b)),
            Think::Exponential(m) => format!("exp(mean {})", f(m)),
        }
    }
}

impl Think {
    /// `"100ms"`, a uniform range `"100ms..1s"`, or an exponential mean `"exp:200ms"`.
    pub(super) fn parse(text: &str, origin: &str) -> Result<Think, PlanError> {
        Think::parse_key(text, "load.think", origin)
    }

    /// [`Think::parse`] for another key (a persona's `idle`).
    pub(super) fn parse_key(text: &str, key: &str, origin: &str) -> Result<Think, PlanError> {
        if let Some(mean) = text.strip_prefix("exp:") {
            return Ok(Think::Exponential(parse_duration(mean, key, origin)?));
        }
        if let Some((a, b)) = text.split_once("..") {
            let (lo, hi) = (
                parse_duration(a, key, origin)?,
                parse_duration(b, key, origin)?,
            );
            if hi < lo {
                return Err(PlanError::new(
                    origin,
                    key,
                    format!("{text:?} ends before it starts"),
                    "write the smaller duration first, e.g. \"100ms..1s\"",
                ));
            }
            return Ok(Think::Uniform(lo, hi));
        }
        Ok(Think::Fixed(parse_duration(text, key, origin)?))
    }
}

/// The default: a dead target costs each client a few attempts per second at first,
/// then one every few seconds.
pub const DEFAULT_BACKOFF: Backoff = Backoff {
    first: Duration::from_millis(100),
    cap: Duration::from_secs(5),
};

const KEY: &str = "load.reconnect_backoff";

/// The delay before reconnecting grows `first`, 2·`first`, 4·`first` … up to `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub first: Duration,
    pub cap: Duration,
}

impl Backoff {
    /// The pause after the `failures`-th unreachable session in a row (1 for the first):
    /// the exponential step, capped, then drawn uniformly from its upper half ("equal
    /// jitter"), so it spreads clients out yet never falls below half the step.
    pub fn delay(&self, failures: u32, rng: &mut impl Rng) -> Duration {
        let doublings = failures.saturating_sub(1).min(31);
        let step = self
            .first
            .checked_mul(1 << doublings)
            .map_or(self.cap, |d| d.min(self.cap));
        let half = step / 2;
        half + rng.random_range(Duration::ZERO..=step - half)
    }

    /// `"100ms..5s"` (first delay .. cap), one duration for a fixed delay, or `"off"`
    /// (`None`: reconnect at once, as the think time allows).
    pub fn parse(text: &str, origin: &str) -> Result<Option<Backoff>, PlanError> {
        if text.trim() == "off" {
            return Ok(None);
        }
        let (first, cap) = match text.split_once("..") {
            Some((a, b)) => (
                parse_duration(a, KEY, origin)?,
                parse_duration(b, KEY, origin)?,
            ),
            None => {
                let d = parse_duration(text, KEY, origin)?;
                (d, d)
            }
        };
        if first.is_zero() {
            return Err(PlanError::new(
                origin,
                KEY,
                format!("{text:?} starts at zero, so it would never wait"),
                "start above zero, e.g. \"100ms..5s\", or write \"off\" to reconnect at once",
            ));
        }
        if cap < first {
            return Err(PlanError::new(
                origin,
                KEY,
                format!("{text:?} ends before it starts"),
                "write the first delay, then the cap, e.g. \"100ms..5s\"",
            ));
        }
        Ok(Some(Backoff { first, cap }))
    }

    pub fn describe(&self) -> String {
        let f = |d: Duration| humantime::format_duration(d).to_string();
        format!("{}..{}", f(self.first), f(self.cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    #[test]
    fn think_times_follow_their_distribution() {
        let mut rng = SmallRng::seed_from_u64(3);
        let u = Think::Uniform(Duration::from_millis(100), Duration::from_millis(200));
        for _ in 0..100 {
            let d = u.sample(&mut rng);
            assert!(d >= Duration::from_millis(100) && d <= Duration::from_millis(200));
        }
        let e = Think::Exponential(Duration::from_millis(100));
        let n = 20_000;
        let mean: f64 = (0..n)
            .map(|_| e.sample(&mut rng).as_secs_f64())
            .sum::<f64>()
            / f64::from(n);
        assert!((mean - 0.1).abs() < 0.005, "mean {mean}");
        assert_eq!(
            Think::parse("exp:50ms", "p.toml").expect("think"),
            Think::Exponential(Duration::from_millis(50))
        );
    }

    #[test]
    fn delays_double_from_the_first_up_to_the_cap_with_jitter_in_the_upper_half() {
        let b = Backoff {
            first: Duration::from_millis(100),
            cap: Duration::from_secs(1),
        };
        let mut rng = SmallRng::seed_from_u64(1);
        for (failures, step_ms) in [
            (1, 100),
            (2, 200),
            (3, 400),
            (4, 800),
            (5, 1000),
            (60, 1000),
        ] {
            let step = Duration::from_millis(step_ms);
            for _ in 0..50 {
                let d = b.delay(failures, &mut rng);
                assert!(d >= step / 2 && d <= step, "{failures}: {d:?}");
            }
        }
        let spread: std::collections::BTreeSet<Duration> =
            (0..20).map(|_| b.delay(3, &mut rng)).collect();
        assert!(spread.len() > 10, "jittered: {spread:?}");
    }

    #[test]
    fn the_setting_parses_and_is_checked() {
        let p = |t| Backoff::parse(t, "p.toml");
        assert_eq!(
            p("100ms..5s").expect("range"),
            Some(Backoff {
                first: Duration::from_millis(100),
                cap: Duration::from_secs(5)
            })
        );
        assert_eq!(p("off").expect("off"), None);
        assert_eq!(
            p("2s").expect("fixed").map(|b| (b.first, b.cap)),
            Some((Duration::from_secs(2), Duration::from_secs(2)))
        );
        for (bad, want) in [
            ("0s..5s", "starts at zero"),
            ("5s..1s", "ends before it starts"),
            ("soon", "load.reconnect_backoff"),
        ] {
            let e = p(bad).expect_err(bad).to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
