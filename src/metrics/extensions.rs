//! What servers made of the protocol extensions (SEP-2133) in a run: per extension id,
//! the sessions where the server accepted one the persona declared, ignored it, offered
//! one the persona did not declare, or required it (refused a request naming it).

use std::collections::BTreeMap;

/// Distinct extension ids a run keeps (a server listing thousands is not a reason to
/// grow without bound); the rest are counted under [`OTHER`].
pub const EXTENSIONS_KEPT: usize = 32;
pub const OTHER: &str = "(other)";

/// One session's verdict on one extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtensionVerdict {
    /// Both declared it: in use.
    Accepted,
    /// The persona declared it, the server did not.
    Ignored,
    /// The server declared it, the persona did not.
    Offered,
    /// The server refused a request of a persona without it, naming it.
    Required,
}

impl ExtensionVerdict {
    pub const ALL: [ExtensionVerdict; 4] = [
        ExtensionVerdict::Accepted,
        ExtensionVerdict::Ignored,
        ExtensionVerdict::Offered,
        ExtensionVerdict::Required,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ExtensionVerdict::Accepted => "accepted",
            ExtensionVerdict::Ignored => "ignored",
            ExtensionVerdict::Offered => "offered",
            ExtensionVerdict::Required => "required",
        }
    }
}

/// Sessions per verdict, by extension id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extensions(pub BTreeMap<String, [u64; 4]>);

impl Extensions {
    pub fn add(&mut self, id: &str, verdict: ExtensionVerdict, n: u64) {
        let key = if self.0.contains_key(id) || self.0.len() < EXTENSIONS_KEPT {
            id
        } else {
            OTHER
        };
        let i = ExtensionVerdict::ALL
            .iter()
            .position(|v| *v == verdict)
            .unwrap_or(0);
        self.0.entry(key.to_string()).or_default()[i] += n;
    }

    /// Another part's (a shard's) counts, added id by id: each part kept its own bound,
    /// so the ids are taken as they are (a merge of N parts holds at most N bounds).
    pub fn merge(&mut self, other: &Extensions) {
        for (id, counts) in &other.0 {
            let mine = self.0.entry(id.clone()).or_default();
            for (m, n) in mine.iter_mut().zip(counts) {
                *m += n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_add_up_by_id_within_a_bound() {
        let mut a = Extensions::default();
        a.add("io.modelcontextprotocol/ui", ExtensionVerdict::Accepted, 1);
        a.add("io.modelcontextprotocol/ui", ExtensionVerdict::Accepted, 1);
        a.add("io.modelcontextprotocol/ui", ExtensionVerdict::Ignored, 1);
        for i in 0..40 {
            a.add(&format!("com.example/x{i}"), ExtensionVerdict::Offered, 1);
        }
        assert_eq!(a.0["io.modelcontextprotocol/ui"], [2, 1, 0, 0]);
        assert_eq!(a.0.len(), EXTENSIONS_KEPT + 1);
        assert_eq!(a.0[OTHER][2], 40 + 1 - EXTENSIONS_KEPT as u64);
        let mut b = Extensions::default();
        b.merge(&a);
        assert_eq!(a, b);
    }
}
