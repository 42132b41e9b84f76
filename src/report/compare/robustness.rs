//! `compare`'s robustness warning: a mistaken verdict (`robustness.wrong-error`,
//! `crashed`, `hung`, `accepted-invalid`) the base never earned on the client faults
//! both runs committed, which the new run did earn: the server got less robust.

use crate::conformance::Check;
use crate::metrics::Verdict;
use crate::summary::Summary;
use std::collections::{BTreeMap, BTreeSet};

/// The finding code that reports a verdict.
fn code(v: Verdict) -> Option<&'static str> {
    let check = match v {
        Verdict::Handled => return None,
        Verdict::WrongError => Check::RobustnessWrongError,
        Verdict::Crashed => Check::RobustnessCrashed,
        Verdict::Hung => Check::RobustnessHung,
        Verdict::Accepted => Check::RobustnessAccepted,
    };
    Some(check.code())
}

/// Sessions per fault name and verdict, summed over personas.
fn counts(s: &Summary) -> BTreeMap<&str, BTreeMap<&str, u64>> {
    let mut out: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
    for f in s.client_faults.iter().filter(|f| f.sessions > 0) {
        let per = out.entry(f.fault.as_str()).or_default();
        for (v, n) in &f.verdicts {
            *per.entry(v.as_str()).or_default() += n;
        }
    }
    out
}

/// One line per mistaken verdict that was 0 in the base and is not in the new run,
/// counted over the faults both runs committed, with the faults that earned it.
pub fn robustness_losses(base: &Summary, new: &Summary) -> Vec<String> {
    let (b, n) = (counts(base), counts(new));
    let both: BTreeSet<&str> = b.keys().filter(|f| n.contains_key(*f)).copied().collect();
    let mut out = Vec::new();
    for v in Verdict::ALL {
        let Some(code) = code(v) else {
            continue;
        };
        let get = |m: &BTreeMap<&str, BTreeMap<&str, u64>>, f: &str| {
            m.get(f).and_then(|p| p.get(v.name())).copied().unwrap_or(0)
        };
        let before: u64 = both.iter().map(|f| get(&b, f)).sum();
        let by_fault: Vec<(&str, u64)> = both
            .iter()
            .map(|f| (*f, get(&n, f)))
            .filter(|(_, x)| *x > 0)
            .collect();
        let after: u64 = by_fault.iter().map(|(_, x)| x).sum();
        if before == 0 && after > 0 {
            let faults: Vec<String> = by_fault.iter().map(|(f, x)| format!("{f} {x}")).collect();
            out.push(format!(
                "the server got less robust: {code} 0 → {after} sessions ({})",
                faults.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::ClientFaultSummary;

    fn fault(name: &str, handled: u64, crashed: u64, hung: u64) -> ClientFaultSummary {
        ClientFaultSummary {
            persona: "buggy".into(),
            fault: name.into(),
            description: String::new(),
            expected: String::new(),
            sessions: handled + crashed + hung,
            verdicts: [
                ("handled", handled),
                ("wrong_error", 0),
                ("crashed", crashed),
                ("hung", hung),
                ("accepted", 0),
            ]
            .into_iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect(),
            examples: Vec::new(),
        }
    }

    fn run(faults: Vec<ClientFaultSummary>) -> Summary {
        let mut s = crate::report::threshold::tests::summary();
        s.client_faults = faults;
        s
    }

    #[test]
    fn a_verdict_the_base_never_earned_is_warned_about() {
        let base = run(vec![fault("oversized", 10, 0, 1), fault("vanish", 5, 0, 0)]);
        let new = run(vec![
            fault("oversized", 7, 2, 3),
            fault("vanish", 4, 1, 0),
            fault("invalid-json", 0, 9, 0),
        ]);
        assert_eq!(
            robustness_losses(&base, &new),
            ["the server got less robust: robustness.crashed 0 → 3 sessions (oversized 2, vanish 1)"],
            "hung was not 0 in the base; invalid-json was not committed in the base"
        );
        assert!(robustness_losses(&new, &base).is_empty(), "more robust");
        assert!(robustness_losses(&base, &base).is_empty());
        assert!(
            robustness_losses(&run(Vec::new()), &new).is_empty(),
            "a base without client faults says nothing"
        );
        let c = crate::report::compare::compare(&base, &new, &[]);
        assert!(
            c.text
                .contains("warning: the server got less robust: robustness.crashed 0 → 3"),
            "{}",
            c.text
        );
        assert!(c.regressions.is_empty(), "a warning, not a regression");
    }
}
