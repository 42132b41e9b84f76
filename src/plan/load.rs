//! The `[load]` section resolved: closed (virtual clients, constant or in stages) or open
//! (an arrival rate, constant or in stages), think time, when to stop. The curves are
//! plan data; the schedule maths over them lives in `fleet::schedule`.

use super::quantity::{parse_duration, parse_rate};
use super::PlanError;
use crate::profile::{LoadSection, StageSection};
use rand::Rng;
use std::time::Duration;

/// Default number of virtual clients of a closed model.
const DEFAULT_CLIENTS: u32 = 10;
const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Sessions when neither a count nor a duration is given.
const DEFAULT_SESSIONS: u64 = 100;
/// Open model: sessions in flight when no cap is given.
const DEFAULT_MAX_IN_FLIGHT: u32 = 10_000;

/// One stage: move linearly from the previous target to `target` over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub target: f64,
    pub duration: Duration,
}

/// A piecewise-linear curve starting at `start`: clients (closed) or sessions per
/// second (open) over time.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub start: f64,
    pub stages: Vec<Stage>,
}

impl Curve {
    pub fn constant(value: f64, duration: Option<Duration>) -> Curve {
        Curve {
            start: value,
            stages: duration
                .map(|d| {
                    vec![Stage {
                        target: value,
                        duration: d,
                    }]
                })
                .unwrap_or_default(),
        }
    }

    /// Total length of the stages; `None` for a constant curve without stages (runs
    /// until the session budget or the deadline).
    pub fn length(&self) -> Option<Duration> {
        if self.stages.is_empty() {
            None
        } else {
            Some(self.stages.iter().map(|s| s.duration).sum())
        }
    }
}

/// Closed or open.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadModel {
    /// Virtual clients (the curve: how many at each moment), each running sessions back
    /// to back.
    Closed { clients: Curve },
    /// Sessions arrive at a rate (the curve: sessions per second), whatever the server's
    /// speed; arrivals beyond `max_in_flight` are dropped and counted.
    Open { rate: Curve, max_in_flight: u32 },
}

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

#[derive(Debug, Clone)]
pub struct Load {
    pub model: LoadModel,
    /// Stop after this many sessions in total.
    pub sessions: Option<u64>,
    /// Stop starting sessions after this long (the stages' length when staged).
    pub duration: Option<Duration>,
    pub think: Think,
    /// How long running sessions may take to finish after the deadline.
    pub grace: Duration,
}

impl Load {
    pub fn describe(&self) -> String {
        match &self.model {
            LoadModel::Closed { clients } if clients.stages.is_empty() => {
                format!("closed, {} clients", clients.start)
            }
            LoadModel::Closed { clients } => format!("closed, stages {}", stages(clients, "")),
            LoadModel::Open {
                rate,
                max_in_flight,
            } => {
                let shape = if rate.stages.iter().all(|s| s.target == rate.start) {
                    format!("{}/s", rate.start)
                } else {
                    format!("stages {}", stages(rate, "/s"))
                };
                format!("open, {shape}, at most {max_in_flight} in flight")
            }
        }
    }

    /// Virtual clients at the start (closed) — for reports.
    pub fn clients(&self) -> u32 {
        match &self.model {
            LoadModel::Closed { clients } => clients
                .stages
                .iter()
                .map(|s| s.target)
                .fold(clients.start, f64::max)
                .round() as u32,
            LoadModel::Open { max_in_flight, .. } => *max_in_flight,
        }
    }
}

fn stages(c: &Curve, unit: &str) -> String {
    c.stages
        .iter()
        .map(|s| {
            format!(
                "{}{unit}:{}",
                s.target,
                humantime::format_duration(s.duration)
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

impl Load {
    /// `[load]`: the model, when to stop, the think time and the grace period.
    pub fn from_section(l: &LoadSection, origin: &str) -> Result<Load, PlanError> {
        if l.sessions == Some(0) {
            return Err(PlanError::new(
                origin,
                "load.sessions",
                "is 0, so nothing would run",
                "set sessions = 1 or more, or leave it out and set a duration",
            ));
        }
        let duration = l
            .duration
            .as_deref()
            .map(|d| parse_duration(d, "load.duration", origin))
            .transpose()?;
        if duration.is_some_and(|d| d.is_zero()) {
            return Err(PlanError::new(
                origin,
                "load.duration",
                "is zero",
                "use e.g. duration = \"30s\"",
            ));
        }
        let model = LoadModel::from_section(l, duration, origin)?;
        let staged_length = match &model {
            LoadModel::Closed { clients: c } => c.length(),
            LoadModel::Open { rate: c, .. } => c.length(),
        };
        // Staged runs end with their stages unless a shorter duration is given.
        let duration = match (duration, staged_length) {
            (Some(d), Some(s)) => Some(d.min(s)),
            (d, s) => d.or(s),
        };
        let sessions = match (l.sessions, duration) {
            (None, None) => Some(DEFAULT_SESSIONS),
            (s, _) => s,
        };
        let think = match l.think.as_deref() {
            Some(t) => Think::parse(t, origin)?,
            None => Think::Fixed(Duration::ZERO),
        };
        let grace = l
            .grace
            .as_deref()
            .map(|d| parse_duration(d, "load.grace", origin))
            .transpose()?
            .unwrap_or(DEFAULT_GRACE);
        Ok(Load {
            model,
            sessions,
            duration,
            think,
            grace,
        })
    }
}

impl LoadModel {
    /// Closed or open from which keys are set; `duration` ends a constant open model.
    fn from_section(
        l: &LoadSection,
        duration: Option<Duration>,
        origin: &str,
    ) -> Result<LoadModel, PlanError> {
        let staged_rates = l
            .stages
            .as_ref()
            .is_some_and(|s| s.iter().any(|s| s.rate.is_some()));
        let open = l.rate.is_some() || staged_rates;
        if open && l.clients.is_some() {
            return Err(PlanError::new(
                origin,
                "load",
                "sets both `clients` (closed model) and a rate (open model)",
                "keep `clients` for N looping clients, or `rate` for sessions arriving at a rate",
            ));
        }
        let max_in_flight = l.max_in_flight.unwrap_or(DEFAULT_MAX_IN_FLIGHT);
        let model = match &l.stages {
            Some(stages) => {
                let curve = staged_curve(stages, open, origin)?;
                if open {
                    LoadModel::Open {
                        rate: curve,
                        max_in_flight,
                    }
                } else {
                    LoadModel::Closed { clients: curve }
                }
            }
            None if open => {
                let r = constant_rate(l, duration, origin)?;
                LoadModel::Open {
                    // With a duration the arrivals end with it (exactly rate × duration).
                    rate: Curve::constant(r, duration),
                    max_in_flight,
                }
            }
            None => {
                let clients = l.clients.unwrap_or(DEFAULT_CLIENTS);
                if clients == 0 {
                    return Err(PlanError::new(
                        origin,
                        "load.clients",
                        "is 0, so nothing would run",
                        "set clients = 1 or more",
                    ));
                }
                LoadModel::Closed {
                    clients: Curve::constant(f64::from(clients), None),
                }
            }
        };
        if l.max_in_flight == Some(0) {
            return Err(PlanError::new(
                origin,
                "load.max_in_flight",
                "is 0, so every arrival would be dropped",
                "use 1 or more",
            ));
        }
        if l.max_in_flight.is_some() && !open {
            return Err(PlanError::new(
                origin,
                "load.max_in_flight",
                "only applies to an open model (a rate)",
                "remove it: a closed model's clients are its cap",
            ));
        }
        Ok(model)
    }
}

/// `rate = "500/s"`: above 0, and ended by a duration or a session count.
fn constant_rate(
    l: &LoadSection,
    duration: Option<Duration>,
    origin: &str,
) -> Result<f64, PlanError> {
    let r = parse_rate(l.rate.as_deref().unwrap_or_default(), "load.rate", origin)?;
    if r <= 0.0 {
        return Err(PlanError::new(
            origin,
            "load.rate",
            "is 0",
            "use a rate above 0",
        ));
    }
    if duration.is_none() && l.sessions.is_none() {
        return Err(PlanError::new(
            origin,
            "load.rate",
            "an open model needs an end",
            "add duration = \"30s\" (or --duration), or sessions = N",
        ));
    }
    Ok(r)
}

/// `stages = [...]`: every stage clients (closed) or every stage a rate (open).
fn staged_curve(stages: &[StageSection], open: bool, origin: &str) -> Result<Curve, PlanError> {
    let mut out = Vec::new();
    for (i, s) in stages.iter().enumerate() {
        let key = format!("load.stages[{i}]");
        let d = parse_duration(&s.duration, &format!("{key}.duration"), origin)?;
        let target = match (s.clients, &s.rate, open) {
            (Some(c), None, false) => f64::from(c),
            (None, Some(r), true) => parse_rate(r, &format!("{key}.rate"), origin)?,
            _ => {
                return Err(PlanError::new(
                    origin,
                    &key,
                    "every stage needs `clients` (closed) or every stage `rate` (open)",
                    "write { clients = 50, duration = \"30s\" } or { rate = \"100/s\", duration = \"30s\" }",
                ))
            }
        };
        out.push(Stage {
            target,
            duration: d,
        });
    }
    if out.is_empty() {
        return Err(PlanError::new(
            origin,
            "load.stages",
            "is empty",
            "list at least one stage, or use `clients` / `rate`",
        ));
    }
    Ok(Curve {
        start: 0.0,
        stages: out,
    })
}

impl Think {
    /// `"100ms"`, a uniform range `"100ms..1s"`, or an exponential mean `"exp:200ms"`.
    fn parse(text: &str, origin: &str) -> Result<Think, PlanError> {
        let key = "load.think";
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn load(text: &str) -> Result<Load, PlanError> {
        let p = crate::profile::Profile::parse(text, "p.toml").expect("parses");
        Load::from_section(&p.load, "p.toml")
    }

    #[test]
    fn models_are_inferred_and_checked() {
        let l = load("[load]\nrate = \"200/s\"\nduration = \"10s\"\nmax_in_flight = 50\n")
            .expect("open");
        assert!(matches!(
            l.model,
            LoadModel::Open {
                max_in_flight: 50,
                ..
            }
        ));
        let l = load("[load]\nstages = [{ clients = 5, duration = \"2s\" }, { clients = 0, duration = \"1s\" }]\n")
            .expect("closed stages");
        assert_eq!(l.duration, Some(Duration::from_secs(3)));
        assert_eq!(l.sessions, None);
        let l =
            load("[load]\nstages = [{ rate = \"10/s\", duration = \"5s\" }]\nduration = \"2s\"\n")
                .expect("open stages");
        assert_eq!(
            l.duration,
            Some(Duration::from_secs(2)),
            "the shorter end wins"
        );
        for (text, want) in [
            ("[load]\nrate = \"5/s\"\n", "an open model needs an end"),
            (
                "[load]\nrate = \"5/s\"\nclients = 3\nduration = \"1s\"\n",
                "sets both",
            ),
            (
                "[load]\nclients = 3\nmax_in_flight = 5\n",
                "only applies to an open model",
            ),
            (
                "[load]\nstages = [{ clients = 1, rate = \"1/s\", duration = \"1s\" }]\n",
                "every stage needs",
            ),
            ("[load]\nstages = []\n", "is empty"),
            ("[load]\nthink = \"1s..100ms\"\n", "ends before it starts"),
        ] {
            let e = load(text).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

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
            load("[load]\nthink = \"exp:50ms\"\n").expect("think").think,
            Think::Exponential(Duration::from_millis(50))
        );
    }
}
