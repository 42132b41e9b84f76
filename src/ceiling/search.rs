//! Which rate to measure next: a geometric ladder from `from` (× `factor` a rung, up to
//! `to`) until a step fails, then a bisection between the highest passing rate below the
//! lowest failing one and that failing rate, at their geometric middle (rates are
//! judged by ratios), until they are within `resolution` of each other. Pure, so the
//! search is tested without a server.

/// How the search climbs and when it stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ladder {
    /// Sessions a second of the first rung.
    pub from: f64,
    /// The highest rung.
    pub to: f64,
    /// Each rung is this many times the one below (> 1).
    pub factor: f64,
    /// Bisection stops when failing / passing ≤ 1 + this.
    pub resolution: f64,
    /// Levels are whole numbers (clients), not rates to three figures.
    pub whole: bool,
    /// A failing rate is measured again up to this many times; it fails only when every
    /// try failed (a transient stall — a collection, a neighbour's burst — does not end
    /// the climb or set the ceiling).
    pub retries: u32,
}

/// Why a ladder cannot be climbed.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum LadderError {
    #[error("--from {0} is not a positive rate")]
    From(f64),
    #[error("--to {to} is below --from {from}")]
    To { from: f64, to: f64 },
    #[error("--factor {0} must be above 1, e.g. 2")]
    Factor(f64),
    #[error("--resolution {0} must be between 0.1% and 100%, e.g. 5%")]
    Resolution(f64),
}

impl Ladder {
    /// A ladder, checked.
    pub fn new(from: f64, to: f64, factor: f64, resolution: f64) -> Result<Ladder, LadderError> {
        if !(from.is_finite() && from > 0.0) {
            return Err(LadderError::From(from));
        }
        if !(to.is_finite() && to >= from) {
            return Err(LadderError::To { from, to });
        }
        if !(factor.is_finite() && factor > 1.0) {
            return Err(LadderError::Factor(factor));
        }
        if !(0.001..=1.0).contains(&resolution) {
            return Err(LadderError::Resolution(resolution));
        }
        Ok(Ladder {
            from,
            to,
            factor,
            resolution,
            whole: false,
            retries: 0,
        })
    }

    /// A level as the ladder writes it.
    fn level(&self, x: f64) -> f64 {
        if self.whole {
            x.round().max(1.0)
        } else {
            round(x)
        }
    }

    /// The rate to measure after `steps` (each `(rate, passed)`, in the order measured),
    /// or `None` when the search is over.
    pub fn next(&self, steps: &[(f64, bool)]) -> Option<f64> {
        let Some(&(last, last_ok)) = steps.last() else {
            return Some(self.level(self.from));
        };
        if !last_ok {
            let tries = steps.iter().filter(|&&(r, _)| r == last).count();
            let passed_once = steps.iter().any(|&(r, ok)| r == last && ok);
            if !passed_once && tries <= self.retries as usize {
                return Some(last);
            }
        }
        match bracket(steps) {
            // Climbing: every step so far passed.
            Bracket::AllPassed => {
                if last >= self.to * (1.0 - 1e-9) {
                    return None;
                }
                Some(self.level((last * self.factor).min(self.to)))
            }
            Bracket::NonePassed => None,
            Bracket::Between { passed, failed } => {
                if failed / passed <= 1.0 + self.resolution {
                    return None;
                }
                let mid = self.level((passed * failed).sqrt());
                // Rounding can land on a rate already measured: then it is as close as
                // the rates can be written.
                (mid > passed && mid < failed).then_some(mid)
            }
        }
    }
}

/// Where the steps so far put the ceiling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bracket {
    AllPassed,
    /// The lowest step failed (nothing below it was measured).
    NonePassed,
    /// The highest passing rate below the lowest failing one, and that failing rate.
    Between {
        passed: f64,
        failed: f64,
    },
}

/// The bracket of `steps`. A rate measured more than once (a retried failure) passed
/// when any of its tries passed.
pub fn bracket(steps: &[(f64, bool)]) -> Bracket {
    let passed_at = |rate: f64| steps.iter().any(|&(r, ok)| r == rate && ok);
    let failed = steps
        .iter()
        .filter(|&&(r, ok)| !ok && !passed_at(r))
        .map(|&(r, _)| r)
        .reduce(f64::min);
    let Some(failed) = failed else {
        return Bracket::AllPassed;
    };
    match steps
        .iter()
        .filter(|&&(r, ok)| ok && r < failed)
        .map(|&(r, _)| r)
        .reduce(f64::max)
    {
        Some(passed) => Bracket::Between { passed, failed },
        None => Bracket::NonePassed,
    }
}

/// Rates to three significant figures: step names and tables stay readable, and the
/// rounding (≤ 0.5 %) is well inside any resolution.
pub fn round(rate: f64) -> f64 {
    if rate <= 0.0 || !rate.is_finite() {
        return rate;
    }
    let digits = rate.log10().floor() as i32;
    let scale = 10f64.powi(2 - digits);
    (rate * scale).round() / scale
}

/// `--from 10/s`, `--to 5000/s`: a rate as `run --rate` takes it (a bare number is per
/// second).
pub fn parse_rate(text: &str, flag: &str) -> anyhow::Result<f64> {
    let text = text.trim();
    if let Ok(n) = text.parse::<f64>() {
        return Ok(n);
    }
    crate::plan::quantity::parse_rate(text, flag, "command line").map_err(Into::into)
}

/// `--resolution 5%` (or 0.05) → 0.05.
pub fn parse_share(text: &str) -> anyhow::Result<f64> {
    let t = text.trim();
    let v = match t.strip_suffix('%') {
        Some(n) => n.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    v.map_err(|_| anyhow::anyhow!("--resolution {t:?} is not a share: write e.g. 5%"))
}
