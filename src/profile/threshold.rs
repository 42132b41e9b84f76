//! `thresholds = [...]`: each a rule as text, or a table that also says whether a lost
//! rule stops the run early (k6's `abortOnFail`).

use serde::{Deserialize, Serialize};

/// One threshold as written.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum ThresholdEntry {
    Text(String),
    Table(ThresholdTable),
}

/// `{ threshold = "p99(session) < 50ms", abort_on_fail = true, delay = "10s" }`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThresholdTable {
    pub threshold: String,
    /// Stop the run as soon as the live figures lose it (not before `delay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_on_fail: Option<bool>,
    /// How long into the run the live figures are not judged (a warm-up); default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
}

impl ThresholdEntry {
    /// The rule's text.
    pub fn text(&self) -> &str {
        match self {
            ThresholdEntry::Text(t) => t,
            ThresholdEntry::Table(t) => &t.threshold,
        }
    }
}

impl From<String> for ThresholdEntry {
    fn from(text: String) -> ThresholdEntry {
        ThresholdEntry::Text(text)
    }
}
