//! `[soak]`: which part of a long run the soak verdicts read.

use serde::{Deserialize, Serialize};

/// `[soak]`: which part of a long run the soak verdicts (leak slopes, drift) read.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SoakSection {
    /// Left out at the start: a share of the run (`"10%"`, the default) or a duration
    /// (`"2m"`).
    pub warmup: Option<String>,
    /// The drift windows' length: a share of the steady part (`"10%"`) or a duration;
    /// default 10 % of the run.
    pub window: Option<String>,
}

impl SoakSection {
    pub fn is_empty(&self) -> bool {
        self.warmup.is_none() && self.window.is_none()
    }
}
