//! `inspect --client-fault NAME`: which fault the session commits, and how the server
//! took it (the verdict, what was seen, the finding), read from the session's stats.

use crate::metrics::{ClientFault, Stats, Verdict};
use crate::plan::{FaultMix, Persona};
use serde::Serialize;

/// The committed fault, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct FaultShown {
    pub fault: String,
    pub description: String,
    pub expected: String,
    /// `handled`, `wrong_error`, `crashed`, `hung`, `accepted`; `not_committed` when
    /// the session could not commit it (e.g. an `auto` session that ended up modern).
    pub verdict: String,
    pub detail: Option<String>,
}

impl FaultShown {
    pub fn handled(&self) -> bool {
        self.verdict == Verdict::Handled.name()
    }

    /// One line for stderr when the fault was not handled.
    pub fn problem(&self) -> Option<String> {
        (!self.handled()).then(|| {
            format!(
                "client fault {}: {} ({}); expected {}",
                self.fault,
                self.verdict,
                self.detail.as_deref().unwrap_or("-"),
                self.expected
            )
        })
    }

    pub fn text(&self) -> String {
        format!(
            "\nClient fault\n  {} — {}\n  expected: {}\n  verdict:  {}\n  seen:     {}\n",
            self.fault,
            self.description,
            self.expected,
            self.verdict,
            self.detail.as_deref().unwrap_or("-"),
        )
    }
}

/// The persona, made to commit `name` in its session.
pub fn persona_with(name: &str, persona: &Persona) -> anyhow::Result<(ClientFault, Persona)> {
    let Some(fault) = ClientFault::from_name(name) else {
        let names: Vec<&str> = ClientFault::ALL.iter().map(|f| f.name()).collect();
        anyhow::bail!(
            "{name:?} is not a client fault; use one of {}",
            names.join(", ")
        );
    };
    let mut p = persona.clone();
    p.faults = FaultMix::only(
        fault,
        persona.era,
        persona.route.transport,
        &persona.capabilities,
    )
    .map_err(anyhow::Error::msg)?;
    Ok((fault, p))
}

/// How the server took `fault`, from the session's stats.
pub fn shown(fault: ClientFault, stats: &Stats) -> FaultShown {
    let counts = stats
        .client_faults
        .iter()
        .find(|((_, f), _)| *f == fault)
        .map(|(_, c)| c);
    let verdict = counts.and_then(|c| Verdict::ALL.into_iter().find(|v| c.get(*v) > 0));
    FaultShown {
        fault: fault.name().into(),
        description: fault.describe().into(),
        expected: fault.expected().into(),
        verdict: verdict.map_or("not_committed", Verdict::name).into(),
        detail: counts.and_then(|c| c.examples.first().map(|(_, t)| t.clone())),
    }
}
