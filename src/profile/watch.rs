//! `[watch]`: the server's processes, cgroup and metrics endpoint to sample.

use serde::{Deserialize, Serialize};

/// `[watch]`: the server's resources to sample during the run (stdio children are
/// watched without asking).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WatchSection {
    /// Processes of the server (`--server-pid`): RSS, CPU, FDs, threads from procfs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_pid: Vec<u32>,
    /// A cgroup v2 folder holding the server (`--server-cgroup`).
    pub server_cgroup: Option<String>,
    /// The server's Prometheus text endpoint (`--server-metrics`), `${VAR}` allowed.
    pub server_metrics: Option<String>,
    /// More metrics to keep from that endpoint, each as `scrape.NAME` (summed over
    /// label sets), e.g. `["mcp_active_sessions"]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<String>,
}

impl WatchSection {
    pub fn is_empty(&self) -> bool {
        self.server_pid.is_empty()
            && self.server_cgroup.is_none()
            && self.server_metrics.is_none()
            && self.series.is_empty()
    }
}
