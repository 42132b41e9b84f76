//! `[arguments]`: how tool arguments are generated from `inputSchema`s.

use serde::{Deserialize, Serialize};

/// `[arguments]`: generation of tool arguments from their `inputSchema`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ArgumentsSection {
    /// The share of optional properties a generated call includes (0 to 1, default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<f64>,
    /// Call tools annotated `destructiveHint: true` (and not `readOnlyHint`) with
    /// generated arguments too (default false: they are left out, and said so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_destructive: Option<bool>,
}

impl ArgumentsSection {
    pub fn is_empty(&self) -> bool {
        *self == ArgumentsSection::default()
    }
}
