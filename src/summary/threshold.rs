//! A threshold's verdict in `summary.json` (`report::threshold` evaluates the rules).

use crate::plan::threshold::Unit;
use serde::{Deserialize, Serialize};

/// A threshold's verdict, as stored in `summary.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThresholdResult {
    pub expression: String,
    /// `None` when there was nothing to measure (no samples): that fails.
    pub observed: Option<f64>,
    pub limit: f64,
    pub unit: Unit,
    pub passed: bool,
    /// The observed value for people, e.g. `63.2ms`, `0.25%`, or why there is none.
    pub observed_text: String,
    /// A soak slope whose 95 % interval holds the limit: it passed, but the run could not
    /// tell (`decided_by` says how long a run would).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inconclusive: bool,
    /// The test that decided, in words (soak slopes: the interval and the trend).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub decided_by: String,
}
