//! What the run's traffic did to its long-lived sessions: the reconnect storms the fleet
//! fired and the spans when the target could not be reached, each with how the sessions
//! came back. The fleet's follower (`fleet::traffic`) writes them into
//! [`super::LiveCounters`] as they change; the live view shows them and the soak
//! verdicts report them.

use std::time::Duration;

/// A storm the profile asked for, and how the fleet came back from it.
#[derive(Debug, Clone, PartialEq)]
pub struct StormRecord {
    /// From the start of the fleet.
    pub at: Duration,
    /// What the storm did, by its profile name (`reconnect`).
    pub kind: &'static str,
    /// Long-lived sessions live when it struck.
    pub dropped: u64,
    /// The most of them live again (established since the storm) at one time.
    pub recovered: u64,
    /// From the storm until as many were back as were dropped.
    pub recovery: Option<Duration>,
}

/// A span when sessions could not reach the target.
#[derive(Debug, Clone, PartialEq)]
pub struct OutageRecord {
    /// The first long-lived session lost, or the first session that could not connect.
    pub from: Duration,
    /// The first session that reached the target again (`None`: not yet).
    pub to: Option<Duration>,
    /// From `to` until as many long-lived sessions were live as before.
    pub recovery: Option<Duration>,
    /// Long-lived sessions live just before.
    pub sessions_before: u64,
}

/// The storms and outages so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrafficLog {
    pub storms: Vec<StormRecord>,
    pub outages: Vec<OutageRecord>,
}
