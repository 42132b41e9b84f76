//! `mcp-fleet replay`: a trace as a profile that replays it session by session. Each
//! recorded session is a persona and a scenario of its own, arriving (`[load] arrivals`)
//! when it opened, relative to the first; `speed`, `rate` and `times` reshape that
//! schedule, one knob each, through one function ([`schedule`]).

use super::derive::DerivedSession;
use super::names::{ms, round_ms, Unique, MIN_PAUSE_US};
use super::DeriveError;
use crate::profile::{ArrivalSection, Profile, ScenarioSection, Step};
use crate::trace::Trace;

/// How a replay is shaped.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// 2.0 = twice as fast: arrival times and pauses divided by 2.
    pub speed: f64,
    /// Sessions a second instead of the recorded times: arrival k at k / rate, cycling
    /// through the recorded sessions in order; `sessions` of them, else one pass.
    pub rate: Option<f64>,
    /// N× the recorded arrival rate: N copies of the recorded schedule, copy i shifted
    /// by i × (its length / N) (by i ms when all arrived at once).
    pub times: Option<u32>,
    /// At most this many sessions.
    pub sessions: Option<u64>,
    /// How the profile names the trace it replays (its path, as given).
    pub source: String,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            speed: 1.0,
            rate: None,
            times: None,
            sessions: None,
            source: "trace".into(),
        }
    }
}

impl ReplayOptions {
    fn check(&self) -> Result<(), DeriveError> {
        let bad = |option, value: String, problem, fix| {
            Err(DeriveError::BadOption {
                option,
                value,
                problem,
                fix,
            })
        };
        if !(self.speed.is_finite() && self.speed > 0.0) {
            return bad(
                "--speed",
                self.speed.to_string(),
                "is not a positive factor",
                "use e.g. --speed 2 (twice as fast) or --speed 0.5",
            );
        }
        if let Some(r) = self.rate.filter(|r| !(r.is_finite() && *r > 0.0)) {
            return bad(
                "--rate",
                r.to_string(),
                "is not a positive rate",
                "use e.g. --rate 10 (sessions a second)",
            );
        }
        if self.times == Some(0) {
            return bad(
                "--times",
                "0".into(),
                "would replay nothing",
                "use 1 or more",
            );
        }
        if self.sessions == Some(0) {
            return bad(
                "--sessions",
                "0".into(),
                "would replay nothing",
                "use 1 or more, or leave it out for one pass",
            );
        }
        if let (Some(_), Some(t)) = (self.rate, self.times) {
            return bad(
                "--times",
                t.to_string(),
                "and --rate both set the arrival schedule",
                "keep one: --rate for a steady rate, --times for copies of the recorded schedule",
            );
        }
        Ok(())
    }
}

/// The arrivals of a replay: (µs from the start, index into `opened`) in time order.
/// `opened`: when each session opened (µs), in order.
pub fn schedule(opened: &[u64], opts: &ReplayOptions) -> Vec<(f64, usize)> {
    let Some(&first) = opened.iter().min() else {
        return Vec::new();
    };
    let limit = opts
        .sessions
        .map_or(usize::MAX, |s| usize::try_from(s).unwrap_or(usize::MAX));
    if let Some(rate) = opts.rate {
        let count = opts.sessions.unwrap_or(opened.len() as u64);
        return (0..count)
            .map(|k| (k as f64 * 1e6 / rate, (k % opened.len() as u64) as usize))
            .collect();
    }
    let recorded: Vec<f64> = opened
        .iter()
        .map(|t| t.saturating_sub(first) as f64 / opts.speed)
        .collect();
    let copies = opts.times.unwrap_or(1);
    let span = recorded.iter().copied().fold(0.0, f64::max);
    let shift = if span > 0.0 {
        span / f64::from(copies)
    } else {
        1000.0
    };
    let mut out: Vec<(f64, usize)> = (0..copies)
        .flat_map(|i| {
            let offset = f64::from(i) * shift;
            recorded
                .iter()
                .enumerate()
                .map(move |(k, t)| (t + offset, k))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.truncate(limit);
    out
}

/// `steps` with the recorded waits between them as pauses, divided by `speed`; waits
/// under a millisecond are left out.
pub(super) fn paced(steps: &[Step], gaps: &[Option<u64>], speed: f64) -> Vec<Step> {
    let pause = |gap: Option<u64>| {
        let scaled = gap? as f64 / speed;
        (scaled >= MIN_PAUSE_US as f64).then(|| Step::Pause {
            duration: ms(round_ms(scaled)),
        })
    };
    let mut out = Vec::with_capacity(steps.len() * 2 + 1);
    for (i, step) in steps.iter().enumerate() {
        out.extend(pause(gaps.get(i).copied().flatten()));
        out.push(step.clone());
    }
    out.extend(pause(gaps.get(steps.len()).copied().flatten()));
    out
}

/// The profile that replays `trace` session by session, and notes for a person.
pub fn replay_profile(
    trace: &Trace,
    opts: &ReplayOptions,
) -> Result<(Profile, Vec<String>), DeriveError> {
    opts.check()?;
    let (derived, mut notes) = super::derive_all(trace);
    if derived.is_empty() {
        return Err(DeriveError::NothingToReplay {
            trace: opts.source.clone(),
            sessions: trace.sessions.len(),
        });
    }
    let mut unique = Unique::default();
    let mut profile = Profile {
        name: Some(format!("replay-{}", super::stem(&opts.source))),
        description: Some(description(trace, &derived, opts)),
        ..Profile::default()
    };
    let mut names = Vec::with_capacity(derived.len());
    for d in &derived {
        let name = unique.take(&format!("s{}-{}", d.id, d.label));
        notes.extend(d.notes.iter().map(|n| format!("{name}: {n}")));
        profile.personas.push(crate::profile::PersonaSection {
            name: name.clone(),
            scenarios: Some(vec![name.clone()]),
            ..d.persona.clone()
        });
        profile.scenarios.push(ScenarioSection {
            name: name.clone(),
            weight: None,
            steps: paced(&d.steps, &d.gaps, opts.speed),
            on_error: Some("continue".into()),
        });
        names.push(name);
    }
    let opened: Vec<u64> = derived.iter().map(|d: &DerivedSession| d.opened).collect();
    let arrivals = schedule(&opened, opts)
        .into_iter()
        .map(|(at, k)| ArrivalSection {
            at: ms(round_ms(at)),
            persona: names[k].clone(),
        })
        .collect();
    profile.load.arrivals = Some(arrivals);
    Ok((profile, notes))
}

fn description(trace: &Trace, derived: &[DerivedSession], opts: &ReplayOptions) -> String {
    let mut shape = Vec::new();
    if opts.speed != 1.0 {
        shape.push(format!("{}× as fast", opts.speed));
    }
    if let Some(r) = opts.rate {
        shape.push(format!("arriving at {r}/s"));
    }
    if let Some(t) = opts.times {
        shape.push(format!("{t}× the recorded arrival rate"));
    }
    if let Some(s) = opts.sessions {
        shape.push(format!("at most {s} sessions"));
    }
    let shape = if shape.is_empty() {
        "each arriving when it did".to_string()
    } else {
        shape.join(", ")
    };
    format!(
        "A replay of {}: {} recorded session(s) of {} ({}), {shape}.",
        opts.source,
        derived.len(),
        trace.header.upstream,
        trace.header.started,
    )
}
