//! The protocol-version table: which strings exist, which era each belongs to, and which
//! wire features each brings. Versions are an enumerated set, not a date range, because
//! unknown strings must still be sendable (negative tests) without being "newer".

use serde::{Deserialize, Serialize};

/// Legacy (initialize handshake) or modern (stateless, `server/discover` + `_meta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    Legacy,
    Modern,
}

impl Era {
    pub fn name(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// A protocol version as sent on the wire; any string is allowed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ProtocolVersion(pub String);

/// What we know about each published version string.
struct Known {
    version: &'static str,
    era: Era,
    /// `MCP-Protocol-Version` header required on HTTP requests after initialize.
    version_header: bool,
}

const KNOWN: &[Known] = &[
    Known {
        version: "2024-11-05",
        era: Era::Legacy,
        version_header: false,
    },
    Known {
        version: "2025-03-26",
        era: Era::Legacy,
        version_header: false,
    },
    Known {
        version: "2025-06-18",
        era: Era::Legacy,
        version_header: true,
    },
    Known {
        version: "2025-11-25",
        era: Era::Legacy,
        version_header: true,
    },
    Known {
        version: "2026-07-28",
        era: Era::Modern,
        version_header: true,
    },
];

/// The newest handshake version; what a legacy persona offers by default.
pub const LATEST_LEGACY: &str = "2025-11-25";
/// The newest stateless version.
pub const LATEST_MODERN: &str = "2026-07-28";

/// The legacy versions, newest first.
pub fn legacy_versions() -> impl Iterator<Item = &'static str> {
    KNOWN
        .iter()
        .rev()
        .filter(|k| k.era == Era::Legacy)
        .map(|k| k.version)
}

/// A protocol version interned for the hot path: an index into the known-version table,
/// or [`VersionId::OTHER`] for any other string, so samples stay small and `Copy` and the
/// collector indexes instead of hashing strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VersionId(u8);

impl VersionId {
    /// Every string that is not a published version.
    pub const OTHER: VersionId = VersionId(KNOWN.len() as u8);

    pub fn of(version: &str) -> VersionId {
        KNOWN
            .iter()
            .position(|k| k.version == version)
            .and_then(|i| u8::try_from(i).ok())
            .map_or(VersionId::OTHER, VersionId)
    }

    /// The version string, or `other`.
    pub fn name(self) -> &'static str {
        KNOWN
            .get(usize::from(self.0))
            .map_or("other", |k| k.version)
    }
}

impl ProtocolVersion {
    pub fn new(s: impl Into<String>) -> Self {
        ProtocolVersion(s.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    fn known(&self) -> Option<&'static Known> {
        KNOWN.iter().find(|k| k.version == self.0)
    }

    pub fn is_known(&self) -> bool {
        self.known().is_some()
    }

    /// The era of a known version; unknown strings are treated as legacy (they travel in
    /// `initialize`, where the server can counter-offer).
    pub fn era(&self) -> Era {
        self.known().map_or(Era::Legacy, |k| k.era)
    }

    /// Whether HTTP requests after the handshake carry `MCP-Protocol-Version`. Unknown
    /// strings send it too: the header exists so servers can reject what they don't speak.
    pub fn sends_version_header(&self) -> bool {
        self.known().is_none_or(|k| k.version_header)
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_answers_era_and_header() {
        let v = ProtocolVersion::new("2025-03-26");
        assert!(v.is_known());
        assert_eq!(v.era(), Era::Legacy);
        assert!(!v.sends_version_header());
        assert!(ProtocolVersion::new("2025-06-18").sends_version_header());
        assert_eq!(ProtocolVersion::new("2026-07-28").era(), Era::Modern);
        let odd = ProtocolVersion::new("1999-01-01");
        assert!(!odd.is_known());
        assert_eq!(odd.era(), Era::Legacy);
        assert!(odd.sends_version_header());
    }

    #[test]
    fn versions_intern_and_unknown_ones_are_other() {
        assert_eq!(VersionId::of("2025-03-26").name(), "2025-03-26");
        assert_eq!(VersionId::of("2026-07-28").name(), "2026-07-28");
        assert_eq!(VersionId::of("1999-01-01"), VersionId::OTHER);
        assert_eq!(VersionId::OTHER.name(), "other");
    }

    #[test]
    fn legacy_list_is_newest_first() {
        let v: Vec<_> = legacy_versions().collect();
        assert_eq!(v, ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]);
        assert_eq!(v[0], LATEST_LEGACY);
    }
}
