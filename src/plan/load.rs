//! The `[load]` section resolved: closed (virtual clients, constant or in stages), open
//! (an arrival rate, constant or in stages) or set arrivals (sessions at listed times,
//! each of a named persona), the pauses between a client's sessions, when to stop (and
//! when to give up on a target that stays unreachable). The curves are plan data; the
//! schedule maths over them lives in `fleet::schedule`.

use super::error::PlanError;
use super::pause::{Backoff, Think, DEFAULT_BACKOFF};
use super::quantity::{parse_duration, parse_rate};
use crate::metrics::PersonaId;
use crate::profile::{LoadSection, StageSection};
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

    /// The highest value the curve takes from the start up to `end` (`None`: ever). The
    /// curve is linear between stage ends, so its peak is at one of them or at `end`.
    pub fn peak_before(&self, end: Option<Duration>) -> f64 {
        let end = end.unwrap_or(Duration::MAX);
        let mut peak = self.start;
        let (mut from, mut begin) = (self.start, Duration::ZERO);
        for s in &self.stages {
            if begin >= end {
                break;
            }
            let stage_end = begin.saturating_add(s.duration);
            let reached = if stage_end <= end {
                s.target
            } else {
                let frac = (end - begin).as_secs_f64() / s.duration.as_secs_f64();
                from + (s.target - from) * frac
            };
            peak = peak.max(reached);
            (from, begin) = (s.target, stage_end);
        }
        peak
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

/// One session of `[load] arrivals`: when it starts (from the start of the run) and
/// which persona it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub at: Duration,
    /// An index into [`super::Plan::personas`].
    pub persona: PersonaId,
}

/// Closed, open, or set arrivals.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadModel {
    /// Virtual clients (the curve: how many at each moment), each running sessions back
    /// to back.
    Closed { clients: Curve },
    /// Sessions arrive at a rate (the curve: sessions per second), whatever the server's
    /// speed; arrivals beyond `max_in_flight` are dropped and counted.
    Open { rate: Curve, max_in_flight: u32 },
    /// Sessions at set times, each of its own persona (`[load] arrivals`, what `replay`
    /// writes), in time order: started as an open model's arrivals are (arrival k is the
    /// k-th of the list), whatever the server's speed; beyond `max_in_flight` dropped.
    Arrivals {
        arrivals: Vec<Arrival>,
        max_in_flight: u32,
    },
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
    /// A closed-model client's wait after a session that could not reach the target
    /// (`None`: no wait beyond the think time).
    pub reconnect: Option<Backoff>,
    /// Stop the run when the target has been unreachable this long.
    pub abort_on_unreachable: Option<Duration>,
    /// Storms at set times, in time order.
    pub events: Vec<LoadEvent>,
    /// Long-lived sessions' scenario iterations a second across the fleet (`-q`).
    pub iteration_rate: Option<f64>,
}

/// `[load] events`: something done to the whole fleet at a set time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadEvent {
    /// From the start of the run.
    pub at: Duration,
    pub storm: Storm,
}

/// What a storm does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storm {
    /// Every long-lived session drops its connection at once (no goodbye) and its client
    /// reconnects with the reconnect backoff.
    Reconnect,
    /// The server is asked for `count` list changes at once (its `notify_list_changed`
    /// tool, called by listening sessions), fanned out to every `subscriptions/listen`.
    ListChanged { count: u32 },
}

impl Storm {
    pub fn name(self) -> &'static str {
        match self {
            Storm::Reconnect => "reconnect",
            Storm::ListChanged { .. } => "list-changed",
        }
    }
}

impl Load {
    /// Virtual clients at the start (closed) — for reports.
    pub fn clients(&self) -> u32 {
        match &self.model {
            LoadModel::Closed { clients } => clients
                .stages
                .iter()
                .map(|s| s.target)
                .fold(clients.start, f64::max)
                .round() as u32,
            LoadModel::Open { max_in_flight, .. } | LoadModel::Arrivals { max_in_flight, .. } => {
                *max_in_flight
            }
        }
    }
}

impl Load {
    /// `[load]`: the model, when to stop, the think time and the grace period.
    /// `personas` are the persona names in plan order (what `arrivals` name).
    pub fn from_section(
        l: &LoadSection,
        personas: &[&str],
        origin: &str,
    ) -> Result<Load, PlanError> {
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
        let model = LoadModel::from_section(l, duration, personas, origin)?;
        let duration = match &model {
            // Staged runs end with their stages unless a shorter duration is given.
            LoadModel::Closed { clients: c } | LoadModel::Open { rate: c, .. } => {
                match (duration, c.length()) {
                    (Some(d), Some(s)) => Some(d.min(s)),
                    (d, s) => d.or(s),
                }
            }
            // Set arrivals end with their last one (its session then gets the grace),
            // unless a duration is given: a shorter one leaves the later arrivals out, a
            // longer one keeps long-lived sessions open until it.
            LoadModel::Arrivals { arrivals, .. } => duration.or(Some(arrivals::length(arrivals))),
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
        let reconnect = match l.reconnect_backoff.as_deref() {
            Some(text) => Backoff::parse(text, origin)?,
            None => Some(DEFAULT_BACKOFF),
        };
        let abort_on_unreachable = l
            .abort_on_unreachable
            .as_deref()
            .map(|d| parse_duration(d, "load.abort_on_unreachable", origin))
            .transpose()?;
        if abort_on_unreachable.is_some_and(|d| d.is_zero()) {
            return Err(PlanError::new(
                origin,
                "load.abort_on_unreachable",
                "is zero, so the first failed connection would stop the run",
                "give the target time to come back, e.g. \"30s\", or leave it out",
            ));
        }
        starts_a_session(&model, duration, origin)?;
        let iteration_rate = l
            .iteration_rate
            .as_deref()
            .map(|r| parse_rate(r, "load.iteration_rate", origin))
            .transpose()?;
        if iteration_rate.is_some_and(|r| r <= 0.0) {
            return Err(PlanError::new(
                origin,
                "load.iteration_rate",
                "is zero, so no long-lived session would ever run its scenario",
                "use e.g. iteration_rate = \"200/s\", or leave it out for back to back",
            ));
        }
        let events = events::events(l.events.as_deref().unwrap_or_default(), duration, origin)?;
        Ok(Load {
            model,
            sessions,
            duration,
            think,
            grace,
            reconnect,
            abort_on_unreachable,
            events,
            iteration_rate,
        })
    }
}

/// A plan whose load never rises above zero before the run ends would start no session
/// and report an empty run as a success: refuse it, as `clients = 0` is refused.
fn starts_a_session(
    model: &LoadModel,
    end: Option<Duration>,
    origin: &str,
) -> Result<(), PlanError> {
    match model {
        // The fleet runs `round(clients)` virtual clients: half a client is one.
        LoadModel::Closed { clients } if clients.peak_before(end) < 0.5 => Err(PlanError::new(
            origin,
            "load.stages",
            "never reaches one client before the run ends, so nothing would run",
            "give a stage clients = 1 or more (on the command line: --ramp '10:30s,0:5s')",
        )),
        LoadModel::Open { rate, .. } if rate.peak_before(end) <= 0.0 => Err(PlanError::new(
            origin,
            "load.stages",
            "the rate stays 0 until the run ends, so no session would arrive",
            "give a stage a rate above 0, e.g. { rate = \"10/s\", duration = \"30s\" }",
        )),
        LoadModel::Arrivals { arrivals, .. } => arrivals::starts_before(arrivals, end, origin),
        _ => Ok(()),
    }
}

impl LoadModel {
    /// Closed, open or set arrivals from which keys are set; `duration` ends a constant
    /// open model; `personas` are the names arrivals may use.
    fn from_section(
        l: &LoadSection,
        duration: Option<Duration>,
        personas: &[&str],
        origin: &str,
    ) -> Result<LoadModel, PlanError> {
        if let Some(list) = &l.arrivals {
            arrivals::alone(l, origin)?;
            return Ok(LoadModel::Arrivals {
                arrivals: arrivals::resolve(list, personas, origin)?,
                max_in_flight: max_in_flight(l, origin)?,
            });
        }
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
        let model = match &l.stages {
            Some(stages) => {
                let curve = staged_curve(stages, open, origin)?;
                if open {
                    LoadModel::Open {
                        rate: curve,
                        max_in_flight: max_in_flight(l, origin)?,
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
                    max_in_flight: max_in_flight(l, origin)?,
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
        if l.max_in_flight.is_some() && !open {
            return Err(PlanError::new(
                origin,
                "load.max_in_flight",
                "only applies to an open model (a rate, or set arrivals)",
                "remove it: a closed model's clients are its cap",
            ));
        }
        Ok(model)
    }
}

/// `max_in_flight` of a model that starts sessions on a schedule (open, set arrivals):
/// 1 or more, default [`DEFAULT_MAX_IN_FLIGHT`].
fn max_in_flight(l: &LoadSection, origin: &str) -> Result<u32, PlanError> {
    match l.max_in_flight {
        Some(0) => Err(PlanError::new(
            origin,
            "load.max_in_flight",
            "is 0, so every arrival would be dropped",
            "use 1 or more",
        )),
        n => Ok(n.unwrap_or(DEFAULT_MAX_IN_FLIGHT)),
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

mod arrivals;
mod events;
#[cfg(test)]
mod tests;
