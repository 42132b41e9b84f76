//! `mcp-fleet compare BASE NEW`: two runs side by side, per phase, with deltas; and
//! `--fail-if 'p99 > +10%'` rules that turn a regression into exit code 1 in CI; warnings
//! when the runs differ, a tool's accepted share fell or the server got less robust.

use super::text::format_us;
use crate::metrics::Phase;
use crate::plan::threshold::{
    latency_scale, split_call, split_number, split_op, Op, ThresholdError,
};
use crate::summary::{PhaseSummary, Summary, ToolAcceptance};
use std::collections::BTreeMap;
use std::fmt::Write;

pub mod ceiling;
mod noise;
mod robustness;
pub use robustness::robustness_losses;

/// What a rule compares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    P50,
    P90,
    P95,
    P99,
    P999,
    Max,
    Mean,
    /// Samples per second.
    Rate,
    /// Failed / all samples.
    ErrorRate,
}

impl Measure {
    fn of(name: &str) -> Option<Measure> {
        Some(match name {
            "p50" => Measure::P50,
            "p90" => Measure::P90,
            "p95" => Measure::P95,
            "p99" => Measure::P99,
            "p999" | "p99.9" => Measure::P999,
            "max" => Measure::Max,
            "mean" => Measure::Mean,
            "rate" => Measure::Rate,
            "error_rate" => Measure::ErrorRate,
            _ => return None,
        })
    }

    /// The quantile a percentile measure reads.
    fn quantile(self) -> Option<f64> {
        Some(match self {
            Measure::P50 => 0.5,
            Measure::P90 => 0.9,
            Measure::P95 => 0.95,
            Measure::P99 => 0.99,
            Measure::P999 => 0.999,
            _ => return None,
        })
    }

    fn is_latency(self) -> bool {
        !matches!(self, Measure::Rate | Measure::ErrorRate)
    }

    /// The figure in a phase; `None` when it has no meaning (no successful samples).
    fn read(self, p: &PhaseSummary) -> Option<f64> {
        let l = p.service.as_ref();
        if self.is_latency() && l.is_none() {
            return None;
        }
        let l = l.cloned().unwrap_or_default();
        Some(match self {
            Measure::P50 => l.p50_us as f64,
            Measure::P90 => l.p90_us as f64,
            Measure::P95 => l.p95_us as f64,
            Measure::P99 => l.p99_us as f64,
            Measure::P999 => l.p999_us as f64,
            Measure::Max => l.max_us as f64,
            Measure::Mean => l.mean_us,
            Measure::Rate => p.rate_per_s,
            Measure::ErrorRate if p.count == 0 => return None,
            Measure::ErrorRate => p.errors as f64 / p.count as f64,
        })
    }
}

/// How much change a rule allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// A fraction of the base value (`+10%` → 0.10).
    Relative(f64),
    /// In the measure's unit (µs for latencies, a ratio for error rates, per second).
    Absolute(f64),
}

/// A `--fail-if` rule: `p99 > +10%`, `p99(initialize) > +5ms`, `rate < -20%`.
#[derive(Debug, Clone, PartialEq)]
pub struct FailIf {
    pub text: String,
    pub measure: Measure,
    /// `None`: every phase both runs have.
    pub phase: Option<Phase>,
    pub op: Op,
    pub change: Change,
}

const FAIL_IF_FORMS: &str =
    "write MEASURE[(PHASE)] OP CHANGE, e.g. 'p99 > +10%', 'p99(initialize) > +5ms', 'rate < -20%' (measures: p50 p90 p95 p99 p999 max mean rate error_rate)";

impl FailIf {
    pub fn parse(text: &str) -> Result<FailIf, ThresholdError> {
        let err = |problem: String| ThresholdError {
            text: text.to_string(),
            problem,
            fix: FAIL_IF_FORMS.to_string(),
        };
        let (left, op, right) =
            split_op(text).ok_or_else(|| err("no comparison (<, <=, >, >=)".into()))?;
        let (name, args) =
            split_call(left).ok_or_else(|| err(format!("`{left}` has an unclosed parenthesis")))?;
        let measure = Measure::of(name).ok_or_else(|| err(format!("unknown measure `{name}`")))?;
        let phase = match args.as_slice() {
            [] => None,
            [one] => {
                Some(Phase::from_name(one).ok_or_else(|| err(format!("unknown phase `{one}`")))?)
            }
            _ => return Err(err("name at most one phase".into())),
        };
        if !right.starts_with(['+', '-']) {
            return Err(err(format!(
                "`{right}` is not a change: give it a sign (+10% for an increase, -10% for a decrease)"
            )));
        }
        let (value, unit) =
            split_number(right).ok_or_else(|| err(format!("`{right}` is not a number")))?;
        let change = match unit {
            "%" => Change::Relative(value / 100.0),
            "" if !measure.is_latency() => Change::Absolute(value),
            u if measure.is_latency() => Change::Absolute(
                value
                    * latency_scale(u).ok_or_else(|| {
                        err(format!("unknown unit `{u}` (use %, us, ms, s, min or h)"))
                    })?,
            ),
            u => return Err(err(format!("unknown unit `{u}` (use % or a plain number)"))),
        };
        Ok(FailIf {
            text: text.trim().to_string(),
            measure,
            phase,
            op,
            change,
        })
    }

    /// The regressions this rule finds, one line each, and the changes it saw but could
    /// not call: a percentile with too few samples behind it, or a change within what
    /// the two runs' samples can tell apart.
    fn check(&self, base: &Summary, new: &Summary) -> (Vec<String>, Vec<String>) {
        let (mut found, mut noted) = (Vec::new(), Vec::new());
        for (name, b) in &base.phases {
            if self.phase.is_some_and(|p| p.name() != name) {
                continue;
            }
            let Some(n) = new.phases.get(name) else {
                continue;
            };
            let (Some(bv), Some(nv)) = (self.measure.read(b), self.measure.read(n)) else {
                continue;
            };
            let delta = match self.change {
                Change::Relative(limit) => {
                    if bv == 0.0 {
                        continue;
                    }
                    ((nv - bv) / bv, limit)
                }
                Change::Absolute(limit) => (nv - bv, limit),
            };
            if !self.op.holds(delta.0, delta.1) {
                continue;
            }
            let line = format!(
                "{}: {name}: {} → {} ({})",
                self.text,
                show(self.measure, bv),
                show(self.measure, nv),
                percent(bv, nv)
            );
            match noise::tell_apart(self.measure, self.op, b, n) {
                noise::Apart::Yes(why) => found.push(format!("{line}, {why}")),
                noise::Apart::Unknown => found.push(line),
                noise::Apart::No(why) => noted.push(format!("{line}: {why}")),
            }
        }
        (found, noted)
    }
}

fn show(m: Measure, v: f64) -> String {
    match m {
        Measure::Rate => format!("{v:.1}/s"),
        Measure::ErrorRate => format!("{:.3}%", v * 100.0),
        _ => format_us(v),
    }
}

fn percent(base: f64, new: f64) -> String {
    if base == 0.0 {
        return if new == 0.0 { "=".into() } else { "new".into() };
    }
    format!("{:+.1}%", (new - base) / base * 100.0)
}

/// The comparison: a table for people and the regressions the rules found.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub text: String,
    pub regressions: Vec<String>,
    /// Changes past a rule that the samples could not tell from noise: not regressions.
    pub not_called: Vec<String>,
}

pub fn compare(base: &Summary, new: &Summary, rules: &[FailIf]) -> Comparison {
    compare_with(base, new, rules, None)
}

/// How two runs differ in what they measured: a line for each of load model, target,
/// profile (its name, and the `profile.toml` texts when given), mcp-fleet version and
/// schema version that is not the same. Figures of such runs are not like for like.
pub fn differences(base: &Summary, new: &Summary, profiles: Option<(&str, &str)>) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, b: &str, n: &str| {
        if b != n {
            out.push(format!("the runs differ in {what}: {b} → {n}"));
        }
    };
    differ("load model", &base.run.load.model, &new.run.load.model);
    differ("target", &base.run.target, &new.run.target);
    differ("profile", &base.run.name, &new.run.name);
    differ("mcp-fleet version", &base.tool.version, &new.tool.version);
    differ(
        "schema version",
        &base.schema_version.to_string(),
        &new.schema_version.to_string(),
    );
    if let Some((b, n)) = profiles {
        if b.trim() != n.trim() && base.run.name == new.run.name {
            out.push(format!(
                "the runs differ in profile: profile.toml of {} is not the same file in both",
                base.run.name
            ));
        }
    }
    out
}

/// How far a tool's accepted share may fall between two runs, in points, before
/// `compare` warns.
pub const ACCEPTED_DROP_POINTS: f64 = 10.0;

/// Each run's tools and how the server took their calls: `tool_acceptance`, or for
/// summaries before schema 9 (which have none) the same computed from `tools`.
fn acceptance_of(s: &Summary) -> BTreeMap<String, ToolAcceptance> {
    if s.tool_acceptance.is_empty() {
        s.tools
            .iter()
            .map(|(name, p)| (name.clone(), ToolAcceptance::from_summary(p)))
            .collect()
    } else {
        s.tool_acceptance.clone()
    }
}

/// Tools whose accepted share fell by more than [`ACCEPTED_DROP_POINTS`] points, one
/// line each: the server now rejects calls it took before (or the arguments changed).
pub fn acceptance_drops(base: &Summary, new: &Summary) -> Vec<String> {
    let (b, n) = (acceptance_of(base), acceptance_of(new));
    b.iter()
        .filter_map(|(name, bt)| {
            let before = bt.accepted_share()? * 100.0;
            let after = n.get(name)?.accepted_share()? * 100.0;
            (before - after > ACCEPTED_DROP_POINTS).then(|| {
                format!(
                    "tool {name}: the server accepted {before:.1}% → {after:.1}% of its calls ({:+.1} points)",
                    after - before
                )
            })
        })
        .collect()
}

/// [`compare`], with `warning:` lines first for every way the runs differ
/// ([`differences`]); `profiles` are the two `profile.toml` texts when there are both.
pub fn compare_with(
    base: &Summary,
    new: &Summary,
    rules: &[FailIf],
    profiles: Option<(&str, &str)>,
) -> Comparison {
    let mut text = String::new();
    for d in differences(base, new, profiles) {
        let _ = writeln!(text, "warning: {d}");
    }
    for d in acceptance_drops(base, new) {
        let _ = writeln!(text, "warning: {d}");
    }
    for d in robustness_losses(base, new) {
        let _ = writeln!(text, "warning: {d}");
    }
    let _ = writeln!(
        text,
        "base: {} · {} · seed {} · {:.1}s · {:.1} sessions/s",
        base.run.name,
        base.run.started_at,
        base.run.seed,
        base.run.duration_s,
        base.sessions.rate_per_s
    );
    let _ = writeln!(
        text,
        "new:  {} · {} · seed {} · {:.1}s · {:.1} sessions/s ({})\n",
        new.run.name,
        new.run.started_at,
        new.run.seed,
        new.run.duration_s,
        new.sessions.rate_per_s,
        percent(base.sessions.rate_per_s, new.sessions.rate_per_s)
    );
    let _ = writeln!(
        text,
        "  {:<26} {:>28} {:>28} {:>28} {:>24} {:>14}",
        "phase",
        "p50 base → new",
        "p95 base → new",
        "p99 base → new",
        "rate/s base → new",
        "errors"
    );
    let mut names: Vec<&String> = base.phases.keys().chain(new.phases.keys()).collect();
    names.sort_by_key(|n| (Phase::from_name(n).map_or(usize::MAX, Phase::index), *n));
    names.dedup();
    for name in names {
        let (b, n) = (base.phases.get(name), new.phases.get(name));
        let cell = |m: Measure| {
            let bv = b.and_then(|p| m.read(p));
            let nv = n.and_then(|p| m.read(p));
            match (bv, nv) {
                (Some(x), Some(y)) => {
                    format!("{} → {} {:>7}", show(m, x), show(m, y), percent(x, y))
                }
                (Some(x), None) => format!("{} → –", show(m, x)),
                (None, Some(y)) => format!("– → {}", show(m, y)),
                (None, None) => "–".into(),
            }
        };
        let errors = format!(
            "{} → {}",
            b.map_or(0, |p| p.errors),
            n.map_or(0, |p| p.errors)
        );
        let _ = writeln!(
            text,
            "  {name:<26} {:>28} {:>28} {:>28} {:>24} {errors:>14}",
            cell(Measure::P50),
            cell(Measure::P95),
            cell(Measure::P99),
            cell(Measure::Rate)
        );
    }
    let (mut regressions, mut not_called) = (Vec::new(), Vec::new());
    for r in rules {
        let (found, noted) = r.check(base, new);
        regressions.extend(found);
        not_called.extend(noted);
    }
    if !not_called.is_empty() {
        let _ = writeln!(text, "\nnot called (noise, or not enough data)");
        for r in &not_called {
            let _ = writeln!(text, "  {r}");
        }
    }
    if !rules.is_empty() {
        if regressions.is_empty() {
            let _ = writeln!(text, "\nno regression ({} rules)", rules.len());
        } else {
            let _ = writeln!(text, "\nREGRESSIONS");
            for r in &regressions {
                let _ = writeln!(text, "  {r}");
            }
        }
    }
    Comparison {
        text,
        regressions,
        not_called,
    }
}

#[cfg(test)]
mod tests;
