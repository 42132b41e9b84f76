//! `[data.NAME]`: pools of values from a CSV or JSON-lines file.

use serde::{Deserialize, Serialize};

/// `[data.NAME]`: a pool of values from a file, drawn by `${pool.NAME}` (the pool's
/// `column`, else its first CSV column or the whole JSON line) or `${pool.NAME.FIELD}`.
/// All references to one pool in one call take the same row.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// CSV with a header line, or JSON lines (one value per line); relative paths are
    /// relative to the profile's folder.
    pub file: String,
    /// `"csv"` or `"jsonl"`; default from the file's extension (`.csv`, else JSON lines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The field `${pool.NAME}` gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// `"sequential"` (default: each virtual client walks the rows in order from a row
    /// of its own), `"random"` (seeded), or `"unique"` (each row once across the run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
}
