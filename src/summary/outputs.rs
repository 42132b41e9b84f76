//! `summary.json` `outputs` (schema 16): how each push output fared. A receiver that was
//! down or refused the figures is said here and in the text summary; the run's own
//! figures never depend on it.

use serde::{Deserialize, Serialize};

/// One push output over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushSummary {
    /// `prometheus-rw` or `otlp`.
    pub kind: String,
    /// The receiver's URL, its secrets redacted.
    pub target: String,
    /// Pushes the receiver accepted (the last one carries the final figures).
    pub delivered: u64,
    /// Attempts that failed (each retried while the queue holds it).
    pub failed: u64,
    /// Pushes given up: the queue was full while the receiver was down, or the receiver
    /// refused them for good (a 4xx).
    pub dropped: u64,
    /// Whether the final figures reached the receiver.
    pub final_delivered: bool,
    /// Series in the last push.
    pub series: u64,
    /// Series left out of each push past the cardinality cap.
    pub series_left_out: u64,
    /// The last failure, in plain words (no secrets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl PushSummary {
    /// Whether something is worth a warning: a failure, a drop, a missed final push or
    /// series left out.
    pub fn troubled(&self) -> bool {
        self.failed > 0 || self.dropped > 0 || !self.final_delivered || self.series_left_out > 0
    }
}
