//! `faults = [...]` of a persona resolved: which client-side faults its sessions commit,
//! and with what share. What a fault does lives in `client::faults`; its names in
//! `metrics::ClientFault`.

use super::PlanError;
use crate::metrics::ClientFault;
use crate::profile::PersonaSection;

/// The faults one persona commits, each with the share of its sessions (the shares add
/// up to at most 1; the rest of the sessions are well-behaved).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultMix {
    pub faults: Vec<(ClientFault, f64)>,
}

impl FaultMix {
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// Resolve `faults = [...]`: known names, shares in 0…1 adding up to at most 1, each
    /// fault at most once, and a fault the persona's era can commit.
    pub fn from_section(
        _p: &PersonaSection,
        _key: &str,
        _origin: &str,
    ) -> Result<FaultMix, PlanError> {
        // Contract stub: the client-faults part fills this in.
        Ok(FaultMix::default())
    }
}
