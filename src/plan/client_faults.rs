//! `faults = [...]` of a persona resolved: which client-side faults its sessions commit,
//! and with what share. What a fault does lives in `client::faults`; its names in
//! `metrics::ClientFault`.

use super::error::PlanError;
use super::session_kind::EraMode;
use crate::metrics::{ClientFault, FaultEra};
use crate::profile::PersonaSection;
use crate::protocol::TransportKind;
use serde_json::Value;

/// The faults one persona commits, each with the share of its sessions (the shares add
/// up to at most 1; the rest of the sessions are well-behaved).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultMix {
    pub faults: Vec<(ClientFault, f64)>,
}

/// Rounding slack when shares are added up (0.1 + 0.2 …).
const SHARE_SLACK: f64 = 1e-9;

impl FaultMix {
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// The fault a session commits for a uniform draw `u` in [0, 1), or none.
    pub fn pick(&self, u: f64) -> Option<ClientFault> {
        let mut edge = 0.0;
        for (fault, share) in &self.faults {
            edge += share;
            if u < edge {
                return Some(*fault);
            }
        }
        None
    }

    /// Every session commits `fault` (`inspect --client-fault`), when a persona of this
    /// era, transport and capabilities can.
    pub fn only(
        fault: ClientFault,
        era: EraMode,
        transport: TransportKind,
        capabilities: &Value,
    ) -> Result<FaultMix, String> {
        match misfit(fault, era, transport, capabilities) {
            Some(problem) => Err(format!("{}: {problem}; {}", fault.name(), fix_for(fault))),
            None => Ok(FaultMix {
                faults: vec![(fault, 1.0)],
            }),
        }
    }

    /// Resolve `faults = [...]`: known names, shares in 0…1 adding up to at most 1, each
    /// fault at most once, a fault the persona's era can commit, on a transport where it
    /// means something.
    pub fn from_section(
        p: &PersonaSection,
        era: EraMode,
        transport: TransportKind,
        capabilities: &Value,
        key: &str,
        origin: &str,
    ) -> Result<FaultMix, PlanError> {
        let Some(list) = &p.faults else {
            return Ok(FaultMix::default());
        };
        let mut mix = FaultMix::default();
        let mut total = 0.0;
        for (i, f) in list.iter().enumerate() {
            let k = format!("{key}.faults[{i}]");
            let err = |field: &str, problem: String, fix: String| {
                PlanError::new(origin, format!("{k}.{field}"), problem, fix)
            };
            let Some(fault) = ClientFault::from_name(&f.fault) else {
                let names: Vec<&str> = ClientFault::ALL.iter().map(|f| f.name()).collect();
                return Err(err(
                    "fault",
                    format!("{:?} is not a client fault", f.fault),
                    format!("use one of {}", names.join(", ")),
                ));
            };
            if !(f.share > 0.0 && f.share <= 1.0) {
                return Err(err(
                    "share",
                    format!("is {}, not in (0, 1]", f.share),
                    "use a share of the persona's sessions, e.g. share = 0.02".into(),
                ));
            }
            if mix.faults.iter().any(|(g, _)| *g == fault) {
                return Err(err(
                    "fault",
                    format!("{:?} is listed twice", f.fault),
                    "list each fault once, with the sum of its shares".into(),
                ));
            }
            if let Some(problem) = misfit(fault, era, transport, capabilities) {
                return Err(err(
                    "fault",
                    format!("{:?}: {problem}", f.fault),
                    fix_for(fault),
                ));
            }
            total += f.share;
            mix.faults.push((fault, f.share));
        }
        if total > 1.0 + SHARE_SLACK {
            return Err(PlanError::new(
                origin,
                format!("{key}.faults"),
                format!("the shares add up to {total}, more than 1"),
                "make the shares of one persona add up to at most 1",
            ));
        }
        Ok(mix)
    }
}

/// Why `fault` cannot happen for this persona, if it cannot.
fn misfit(
    fault: ClientFault,
    era: EraMode,
    transport: TransportKind,
    capabilities: &Value,
) -> Option<String> {
    match (fault.era(), era) {
        (FaultEra::Legacy, EraMode::Modern) => {
            return Some("needs the initialize handshake, and the persona's era is modern".into())
        }
        (FaultEra::Modern, EraMode::Legacy) => {
            return Some("belongs to the 2026-07-28 era, and the persona's era is legacy".into())
        }
        _ => {}
    }
    match fault {
        ClientFault::HeaderMismatch if transport != TransportKind::StreamableHttp => Some(format!(
            "HTTP headers exist only on Streamable HTTP, and the persona uses {}",
            transport.name()
        )),
        ClientFault::SlowReader if transport == TransportKind::Stdio => {
            Some("stdio has no stream to read slowly".into())
        }
        ClientFault::IgnoreServerRequests
            if !["sampling", "elicitation", "roots"]
                .iter()
                .any(|c| capabilities.get(c).is_some()) =>
        {
            Some("the persona declares none of sampling, elicitation, roots, so the server asks nothing".into())
        }
        _ => None,
    }
}

fn fix_for(fault: ClientFault) -> String {
    match fault.era() {
        FaultEra::Legacy => "use it in a persona with era = \"legacy\" or \"auto\"".into(),
        FaultEra::Modern => "use it in a persona with era = \"modern\" or \"auto\"".into(),
        FaultEra::Any => match fault {
            ClientFault::IgnoreServerRequests => {
                "declare e.g. capabilities = { sampling = {} } in the persona".into()
            }
            _ => "use it in a persona of another transport".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::FaultSection;
    use serde_json::json;

    fn section(faults: &[(&str, f64)]) -> PersonaSection {
        PersonaSection {
            faults: Some(
                faults
                    .iter()
                    .map(|(f, s)| FaultSection {
                        fault: f.to_string(),
                        share: *s,
                    })
                    .collect(),
            ),
            ..PersonaSection::default()
        }
    }

    fn resolve(
        faults: &[(&str, f64)],
        era: EraMode,
        transport: TransportKind,
    ) -> Result<FaultMix, PlanError> {
        let caps = json!({"sampling": {}});
        FaultMix::from_section(
            &section(faults),
            era,
            transport,
            &caps,
            "persona[0]",
            "p.toml",
        )
    }

    #[test]
    fn a_valid_mix_resolves_and_picks_by_share() {
        let mix = resolve(
            &[("invalid-json", 0.25), ("unknown-tool", 0.5)],
            EraMode::Legacy,
            TransportKind::StreamableHttp,
        )
        .expect("valid");
        assert_eq!(mix.pick(0.1), Some(ClientFault::InvalidJson));
        assert_eq!(mix.pick(0.3), Some(ClientFault::UnknownTool));
        assert_eq!(mix.pick(0.8), None);
        let none = FaultMix::from_section(
            &PersonaSection::default(),
            EraMode::Legacy,
            TransportKind::Stdio,
            &json!({}),
            "persona[0]",
            "p.toml",
        )
        .expect("no faults");
        assert!(none.is_empty());
    }

    #[test]
    fn bad_mixes_name_the_key_and_the_problem() {
        use EraMode::*;
        use TransportKind::*;
        type Case<'a> = (
            &'a [(&'a str, f64)],
            EraMode,
            TransportKind,
            &'a str,
            &'a str,
        );
        let cases: &[Case] = &[
            (
                &[("typo", 0.1)],
                Legacy,
                Stdio,
                "faults[0].fault",
                "not a client fault",
            ),
            (
                &[("vanish", 0.0)],
                Legacy,
                Stdio,
                "faults[0].share",
                "not in (0, 1]",
            ),
            (
                &[("vanish", 1.5)],
                Legacy,
                Stdio,
                "faults[0].share",
                "not in (0, 1]",
            ),
            (
                &[("vanish", 0.1), ("vanish", 0.1)],
                Legacy,
                Stdio,
                "faults[1].fault",
                "twice",
            ),
            (
                &[("vanish", 0.6), ("oversized", 0.6)],
                Legacy,
                Stdio,
                "faults",
                "more than 1",
            ),
            (
                &[("no-jsonrpc", 0.1)],
                Modern,
                Stdio,
                "faults[0].fault",
                "era is modern",
            ),
            (
                &[("no-meta", 0.1)],
                Legacy,
                Stdio,
                "faults[0].fault",
                "era is legacy",
            ),
            (
                &[("header-mismatch", 0.1)],
                Modern,
                WebSocket,
                "faults[0].fault",
                "Streamable HTTP",
            ),
            (
                &[("slow-reader", 0.1)],
                Legacy,
                Stdio,
                "faults[0].fault",
                "stdio",
            ),
        ];
        for (faults, era, transport, key, problem) in cases {
            let e = resolve(faults, *era, *transport).expect_err(key);
            assert!(e.key.ends_with(key), "{} vs {key}", e.key);
            assert!(e.problem.contains(problem), "{} vs {problem}", e.problem);
        }
        let e = FaultMix::from_section(
            &section(&[("ignore-server-requests", 0.1)]),
            EraMode::Legacy,
            TransportKind::Stdio,
            &json!({}),
            "persona[0]",
            "p.toml",
        )
        .expect_err("nothing to ignore");
        assert!(e.fix.contains("sampling"));
    }

    #[test]
    fn auto_personas_may_commit_both_kinds() {
        let mix = resolve(
            &[
                ("no-jsonrpc", 0.1),
                ("no-meta", 0.1),
                ("header-mismatch", 0.1),
            ],
            EraMode::Auto,
            TransportKind::StreamableHttp,
        )
        .expect("auto");
        assert_eq!(mix.faults.len(), 3);
    }
}
