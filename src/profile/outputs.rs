//! `[outputs]`: where a run pushes its figures while it goes (besides the results
//! folder, which `--out` names).

use serde::{Deserialize, Serialize};

/// `[outputs]`: push the run's figures to a time-series database every `push_every`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputsSection {
    /// `KIND=URL` (`--push`): `prometheus-rw=http://127.0.0.1:9090/api/v1/write`,
    /// `otlp=http://127.0.0.1:4318/v1/metrics`.
    /// `${VAR}` allowed; user info in the URL is sent as Basic auth.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub push: Vec<String>,
    /// How often to push (`--push-every`), e.g. `5s` (the default).
    pub push_every: Option<String>,
    /// The `run` label of every pushed series (`--run-label`). Default: the profile's
    /// name and the run's start, `quickstart-20261205T130000Z` (shards started with
    /// one `--start-at` share it).
    pub run_label: Option<String>,
}

impl OutputsSection {
    pub fn is_empty(&self) -> bool {
        self.push.is_empty() && self.push_every.is_none() && self.run_label.is_none()
    }
}
