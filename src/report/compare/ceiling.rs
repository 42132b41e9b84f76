//! `compare` of two ceiling searches (folders holding `ceiling.json`): the ceiling, the
//! knee and the calls a second side by side, what bounded each, and the steps both
//! searches measured at the same rate, phase by phase. `--fail-if` takes the ceiling's
//! own rules — `ceiling < -10%`, `knee < -10%`, `calls < -10%` — and every rule of a run
//! comparison (`p99 > +20%`), read on the steps at the same rate, so one CI job can keep
//! one baseline search.

use super::{Comparison, FailIf};
use crate::plan::threshold::{split_number, split_op, Op, ThresholdError};
use crate::summary::ceiling::{Answer, CeilingFile};
use std::fmt::Write;
use std::path::Path;

/// What a ceiling rule compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Figure {
    Ceiling,
    Knee,
    Calls,
}

/// A ceiling rule: `ceiling < -10%`.
#[derive(Debug, Clone, PartialEq)]
pub struct CeilingRule {
    pub text: String,
    pub figure: Figure,
    pub op: Op,
    /// A fraction of the base figure (`-10%` → -0.10).
    pub change: f64,
}

/// A `--fail-if` rule for ceilings: one of the ceiling's own, or a run rule for the steps.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    Ceiling(CeilingRule),
    Steps(FailIf),
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, ThresholdError> {
        let figure = |name: &str| match name.trim() {
            "ceiling" => Some(Figure::Ceiling),
            "knee" => Some(Figure::Knee),
            "calls" => Some(Figure::Calls),
            _ => None,
        };
        let Some((left, op, right)) = split_op(text).filter(|(l, _, _)| figure(l).is_some()) else {
            return FailIf::parse(text).map(Rule::Steps);
        };
        let err = |problem: String| ThresholdError {
            text: text.to_string(),
            problem,
            fix: "write FIGURE OP CHANGE%, e.g. 'ceiling < -10%' (figures: ceiling knee calls)"
                .into(),
        };
        let (value, unit) = split_number(right)
            .filter(|_| right.starts_with(['+', '-']))
            .ok_or_else(|| err(format!("`{right}` is not a signed change, e.g. -10%")))?;
        if unit != "%" {
            return Err(err(format!(
                "`{right}`: a ceiling changes by a share, e.g. -10%"
            )));
        }
        Ok(Rule::Ceiling(CeilingRule {
            text: text.trim().to_string(),
            figure: figure(left).unwrap_or(Figure::Ceiling),
            op,
            change: value / 100.0,
        }))
    }
}

/// Whether `dir` holds a ceiling search.
pub fn is_ceiling(dir: &Path) -> bool {
    dir.join(crate::summary::ceiling::FILE_NAME).is_file()
}

/// Compare the searches in `base` and `new`.
pub fn compare(base: &Path, new: &Path, rules: &[Rule]) -> anyhow::Result<Comparison> {
    let (b, n) = (CeilingFile::read(base)?, CeilingFile::read(new)?);
    let mut text = String::new();
    let mut regressions = Vec::new();
    let mut not_called = Vec::new();
    let (ba, na) = (b.answer.clone(), n.answer.clone());
    let figure = |f: &CeilingFile, which: Figure| -> Option<f64> {
        let a = f.answer.as_ref()?;
        match which {
            Figure::Ceiling => a.ceiling_per_s,
            Figure::Knee => a.knee_per_s,
            Figure::Calls => a.calls_per_s,
        }
    };
    let _ = writeln!(
        text,
        "{:<10} {:>12} {:>12} {:>9}",
        "", "base", "new", "change"
    );
    for (name, which) in [
        ("ceiling/s", Figure::Ceiling),
        ("knee/s", Figure::Knee),
        ("calls/s", Figure::Calls),
    ] {
        let (bv, nv) = (figure(&b, which), figure(&n, which));
        let shown = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v}"));
        let change = match (bv, nv) {
            (Some(x), Some(y)) if x > 0.0 => format!("{:+.1}%", (y - x) / x * 100.0),
            _ => "–".into(),
        };
        let _ = writeln!(
            text,
            "{name:<10} {:>12} {:>12} {change:>9}",
            shown(bv),
            shown(nv)
        );
        for r in rules.iter().filter_map(|r| match r {
            Rule::Ceiling(c) if c.figure == which => Some(c),
            _ => None,
        }) {
            let broke = match (bv, nv) {
                (Some(x), Some(y)) if x > 0.0 => r.op.holds((y - x) / x, r.change),
                // A ceiling that vanished (the lowest step fails now) is the worst drop.
                (Some(_), None) => matches!(r.op, Op::Lt | Op::Le),
                _ => false,
            };
            // Each search knows its ceiling to within its resolution: a change inside
            // both together cannot be told from the search's own step.
            let tolerance = (1.0 + b.settings.resolution) * (1.0 + n.settings.resolution) - 1.0;
            let within = matches!((bv, nv), (Some(x), Some(y)) if x > 0.0 && ((y - x) / x).abs() <= tolerance);
            let line = format!("{}: {} → {} ({change})", r.text, shown(bv), shown(nv));
            if broke && within {
                not_called.push(format!(
                    "{line}: within the searches' resolution (±{:.1}%)",
                    tolerance * 100.0
                ));
            } else if broke {
                regressions.push(line);
            }
        }
    }
    let bound = |a: &Option<Answer>| a.as_ref().map_or("–", |a| a.bound.name()).to_string();
    let _ = writeln!(
        text,
        "{:<10} {:>12} {:>12}",
        "bound",
        bound(&ba),
        bound(&na)
    );
    let ceiling_rules = rules
        .iter()
        .filter(|r| matches!(r, Rule::Ceiling(_)))
        .count();
    if ceiling_rules > 0 {
        if regressions.is_empty() {
            let _ = writeln!(
                text,
                "\nno regression of the ceiling ({ceiling_rules} rules)"
            );
        } else {
            let _ = writeln!(text, "\nREGRESSIONS");
            for r in &regressions {
                let _ = writeln!(text, "  {r}");
            }
        }
    }
    // The steps both searches measured at the same rate.
    let step_rules: Vec<FailIf> = rules
        .iter()
        .filter_map(|r| match r {
            Rule::Steps(f) => Some(f.clone()),
            Rule::Ceiling(_) => None,
        })
        .collect();
    for bs in b.steps.iter().filter(|s| !s.interrupted) {
        let Some(ns) = n
            .steps
            .iter()
            .find(|s| !s.interrupted && s.offered_per_s == bs.offered_per_s)
        else {
            continue;
        };
        let (Ok(bsum), Ok(nsum)) = (
            crate::report::load_summary(&base.join(&bs.dir)),
            crate::report::load_summary(&new.join(&ns.dir)),
        ) else {
            continue;
        };
        let c = super::compare(&bsum, &nsum, &step_rules);
        let _ = writeln!(
            text,
            "\nat {}/s ({} → {}):",
            bs.offered_per_s, bs.dir, ns.dir
        );
        text.push_str(&c.text);
        regressions.extend(
            c.regressions
                .into_iter()
                .map(|r| format!("at {}/s: {r}", bs.offered_per_s)),
        );
        not_called.extend(
            c.not_called
                .into_iter()
                .map(|r| format!("at {}/s: {r}", bs.offered_per_s)),
        );
    }
    if !not_called.is_empty() {
        let _ = writeln!(text, "\nnot called (noise, or not enough data)");
        for r in &not_called {
            let _ = writeln!(text, "  {r}");
        }
    }
    Ok(Comparison {
        text,
        regressions,
        not_called,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::ceiling::{BoundKind, StepFigures};

    fn search(dir: &Path, ceiling: Option<f64>, knee: f64) {
        let f = CeilingFile {
            schema_version: 1,
            steps: vec![StepFigures {
                offered_per_s: 100.0,
                passed: true,
                dir: "steps/01-100".into(),
                ..StepFigures::default()
            }],
            answer: Some(Answer {
                ceiling_per_s: ceiling,
                sessions_per_s: ceiling,
                calls_per_s: ceiling.map(|c| c * 2.0),
                first_failing_per_s: Some(300.0),
                knee_per_s: Some(knee),
                knee_phase: "session".into(),
                failures_past: Vec::new(),
                bound: BoundKind::Queueing,
                why: String::new(),
                lower_bound: false,
                notes: Vec::new(),
            }),
            complete: true,
            ..CeilingFile::default()
        };
        f.write(dir).expect("write");
    }

    #[test]
    fn ceiling_rules_parse_and_run_rules_go_to_the_steps() {
        let Ok(Rule::Ceiling(r)) = Rule::parse("ceiling < -10%") else {
            panic!("a ceiling rule");
        };
        assert_eq!((r.figure, r.op, r.change), (Figure::Ceiling, Op::Lt, -0.1));
        assert!(matches!(Rule::parse("knee < -5%"), Ok(Rule::Ceiling(_))));
        assert!(matches!(Rule::parse("p99 > +20%"), Ok(Rule::Steps(_))));
        assert!(Rule::parse("ceiling < 10%").is_err(), "unsigned");
        assert!(Rule::parse("ceiling < -10ms").is_err(), "not a share");
        assert!(Rule::parse("nonsense > +1%").is_err());
    }

    #[test]
    fn a_ceiling_that_fell_past_the_budget_is_a_regression_and_one_within_it_is_not() {
        let (base, new) = (
            tempfile::tempdir().expect("tmp"),
            tempfile::tempdir().expect("tmp"),
        );
        search(base.path(), Some(200.0), 150.0);
        search(new.path(), Some(170.0), 150.0);
        let rule = |t: &str| Rule::parse(t).expect("rule");
        let c = compare(base.path(), new.path(), &[rule("ceiling < -10%")]).expect("compare");
        assert_eq!(c.regressions.len(), 1, "{}", c.text);
        assert!(
            c.regressions[0].contains("200 → 170 (-15.0%)"),
            "{:?}",
            c.regressions
        );
        assert!(c.text.contains("latency/queueing"), "{}", c.text);
        let c = compare(
            base.path(),
            new.path(),
            &[rule("ceiling < -20%"), rule("knee < -10%")],
        )
        .expect("compare");
        assert!(c.regressions.is_empty(), "{}", c.text);
        assert!(
            c.text.contains("no regression of the ceiling (2 rules)"),
            "{}",
            c.text
        );
        // No ceiling at all now: the worst drop.
        search(new.path(), None, 150.0);
        let c = compare(base.path(), new.path(), &[rule("ceiling < -10%")]).expect("compare");
        assert_eq!(c.regressions.len(), 1, "{}", c.text);
        assert!(is_ceiling(base.path()) && !is_ceiling(&base.path().join("steps")));
    }
}
