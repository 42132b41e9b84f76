//! `run --requests FILE`: the collector's writer of every sample, made from the plan's
//! name tables (`metrics::requests` writes the records).

use crate::metrics::requests::{Header, RequestsSink};
use crate::plan::Plan;
use crate::shard::Shard;
use anyhow::Context;
use std::path::Path;
use std::time::SystemTime;

/// The writer of `path` for a run of `plan` (shard `shard`) that starts at `started_at`
/// (`started` on the monotonic clock): its header is written now, so a path that cannot
/// be written stops the run before it starts.
pub(super) fn sink(
    plan: &Plan,
    path: &Path,
    shard: Shard,
    (started_at, started): (SystemTime, tokio::time::Instant),
) -> anyhow::Result<RequestsSink> {
    let header = Header {
        run: plan.name.clone(),
        started_at: humantime::format_rfc3339_micros(started_at).to_string(),
        shard: shard.to_string(),
        personas: plan.persona_routes(),
        tools: plan.tools.clone(),
        requests: plan.requests.clone(),
    };
    RequestsSink::create(path, &header, started)
        .with_context(|| format!("--requests: creating {}", path.display()))
}
