//! The `[load]` section resolved: closed (virtual clients, constant or in stages) or open
//! (an arrival rate, constant or in stages), think time, when to stop. The schedule
//! maths itself lives in `fleet::schedule`.

use super::{parse_duration, PlanError};
use crate::fleet::schedule::{Curve, Stage};
use crate::profile::{LoadSection, StageSection};
use rand::Rng;
use std::net::IpAddr;
use std::time::Duration;

/// Default number of virtual clients of a closed model.
const DEFAULT_CLIENTS: u32 = 10;
const DEFAULT_GRACE: Duration = Duration::from_secs(5);
/// Sessions when neither a count nor a duration is given.
const DEFAULT_SESSIONS: u64 = 100;
/// Open model: sessions in flight when no cap is given.
const DEFAULT_MAX_IN_FLIGHT: u32 = 10_000;

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

fn err(origin: &str, key: &str, problem: impl Into<String>, fix: &str) -> PlanError {
    PlanError {
        origin: origin.to_string(),
        key: key.to_string(),
        problem: problem.into(),
        fix: fix.to_string(),
    }
}

/// `"500/s"`, `"30/m"`, `"0.5/s"` → sessions per second.
pub fn parse_rate(text: &str, key: &str, origin: &str) -> Result<f64, PlanError> {
    let bad = || {
        err(
            origin,
            key,
            format!("{text:?} is not a rate"),
            "write a number per unit, e.g. \"500/s\", \"30/m\" or \"2/h\"",
        )
    };
    let (n, unit) = text.trim().split_once('/').ok_or_else(bad)?;
    let n: f64 = n.trim().parse().map_err(|_| bad())?;
    let per = match unit.trim() {
        "s" | "sec" | "second" => 1.0,
        "m" | "min" | "minute" => 60.0,
        "h" | "hour" => 3600.0,
        _ => return Err(bad()),
    };
    if !n.is_finite() || n < 0.0 {
        return Err(bad());
    }
    Ok(n / per)
}

/// `--ramp 'CLIENTS:DURATION,...'` → closed-model stages.
pub fn parse_ramp(text: &str, origin: &str) -> Result<Vec<StageSection>, PlanError> {
    text.split(',')
        .map(|part| {
            let (n, d) = part.trim().split_once(':').ok_or_else(|| {
                err(
                    origin,
                    "--ramp",
                    format!("{part:?} is not CLIENTS:DURATION"),
                    "write it like '50:30s,50:1m,0:10s'",
                )
            })?;
            let clients = n.trim().parse().map_err(|_| {
                err(
                    origin,
                    "--ramp",
                    format!("{n:?} is not a number of clients"),
                    "write it like '50:30s,50:1m,0:10s'",
                )
            })?;
            Ok(StageSection {
                clients: Some(clients),
                rate: None,
                duration: d.trim().to_string(),
            })
        })
        .collect()
}

/// `127.0.0.1-127.0.0.8` or `127.0.0.1,127.0.0.2` → the addresses, as strings.
pub fn parse_source_list(text: &str, origin: &str) -> Result<Vec<String>, PlanError> {
    let bad = |what: &str| {
        err(
            origin,
            "--source-addresses",
            format!("{what:?} is not an address or a range"),
            "write '127.0.0.1-127.0.0.8' or '127.0.0.1,127.0.0.2'",
        )
    };
    if let Some((a, b)) = text.split_once('-') {
        let (a, b): (std::net::Ipv4Addr, std::net::Ipv4Addr) = (
            a.trim().parse().map_err(|_| bad(a))?,
            b.trim().parse().map_err(|_| bad(b))?,
        );
        let (lo, hi) = (u32::from(a), u32::from(b));
        if hi < lo || hi - lo > 255 {
            return Err(bad(text));
        }
        return Ok((lo..=hi)
            .map(|n| std::net::Ipv4Addr::from(n).to_string())
            .collect());
    }
    Ok(text.split(',').map(|s| s.trim().to_string()).collect())
}

/// Check the profile's source addresses.
pub fn resolve_sources(list: &[String], origin: &str) -> Result<Vec<IpAddr>, PlanError> {
    list.iter()
        .enumerate()
        .map(|(i, a)| {
            a.parse().map_err(|_| {
                err(
                    origin,
                    &format!("target.source_addresses[{i}]"),
                    format!("{a:?} is not an IP address"),
                    "use addresses like \"127.0.0.2\" (all of 127.0.0.0/8 is loopback)",
                )
            })
        })
        .collect()
}

fn parse_think(text: &str, origin: &str) -> Result<Think, PlanError> {
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
            return Err(err(
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

pub(super) fn resolve_load(l: &LoadSection, origin: &str) -> Result<Load, PlanError> {
    if l.sessions == Some(0) {
        return Err(err(
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
        return Err(err(
            origin,
            "load.duration",
            "is zero",
            "use e.g. duration = \"30s\"",
        ));
    }
    let staged_rates = l
        .stages
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s.rate.is_some()));
    let open = l.rate.is_some() || staged_rates;
    if open && l.clients.is_some() {
        return Err(err(
            origin,
            "load",
            "sets both `clients` (closed model) and a rate (open model)",
            "keep `clients` for N looping clients, or `rate` for sessions arriving at a rate",
        ));
    }
    let model = match &l.stages {
        Some(stages) => {
            let mut out = Vec::new();
            for (i, s) in stages.iter().enumerate() {
                let key = format!("load.stages[{i}]");
                let d = parse_duration(&s.duration, &format!("{key}.duration"), origin)?;
                let target = match (s.clients, &s.rate, open) {
                    (Some(c), None, false) => f64::from(c),
                    (None, Some(r), true) => parse_rate(r, &format!("{key}.rate"), origin)?,
                    _ => {
                        return Err(err(
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
                return Err(err(
                    origin,
                    "load.stages",
                    "is empty",
                    "list at least one stage, or use `clients` / `rate`",
                ));
            }
            let curve = Curve {
                start: 0.0,
                stages: out,
            };
            if open {
                LoadModel::Open {
                    rate: curve,
                    max_in_flight: l.max_in_flight.unwrap_or(DEFAULT_MAX_IN_FLIGHT),
                }
            } else {
                LoadModel::Closed { clients: curve }
            }
        }
        None if open => {
            let r = parse_rate(l.rate.as_deref().unwrap_or_default(), "load.rate", origin)?;
            if r <= 0.0 {
                return Err(err(origin, "load.rate", "is 0", "use a rate above 0"));
            }
            if duration.is_none() && l.sessions.is_none() {
                return Err(err(
                    origin,
                    "load.rate",
                    "an open model needs an end",
                    "add duration = \"30s\" (or --duration), or sessions = N",
                ));
            }
            LoadModel::Open {
                // With a duration the arrivals end with it (exactly rate × duration).
                rate: Curve::constant(r, duration),
                max_in_flight: l.max_in_flight.unwrap_or(DEFAULT_MAX_IN_FLIGHT),
            }
        }
        None => {
            let clients = l.clients.unwrap_or(DEFAULT_CLIENTS);
            if clients == 0 {
                return Err(err(
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
        return Err(err(
            origin,
            "load.max_in_flight",
            "is 0, so every arrival would be dropped",
            "use 1 or more",
        ));
    }
    if l.max_in_flight.is_some() && !open {
        return Err(err(
            origin,
            "load.max_in_flight",
            "only applies to an open model (a rate)",
            "remove it: a closed model's clients are its cap",
        ));
    }
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
        Some(t) => parse_think(t, origin)?,
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn load(text: &str) -> Result<Load, PlanError> {
        let p = crate::profile::Profile::parse(text, "p.toml").expect("parses");
        resolve_load(&p.load, "p.toml")
    }

    #[test]
    fn rates_and_ramps_parse() {
        assert_eq!(parse_rate("500/s", "k", "o").expect("rate"), 500.0);
        assert_eq!(parse_rate("30/m", "k", "o").expect("rate"), 0.5);
        assert!(parse_rate("fast", "k", "o").is_err());
        assert!(parse_rate("5/week", "k", "o").is_err());
        let r = parse_ramp("50:30s, 0:10s", "o").expect("ramp");
        assert_eq!((r[0].clients, r[1].duration.as_str()), (Some(50), "10s"));
        assert!(parse_ramp("50-30s", "o").is_err());
        assert_eq!(
            parse_source_list("127.0.0.1-127.0.0.3", "o").expect("range"),
            ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        );
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
