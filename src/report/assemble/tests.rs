//! Tests of the assembler: a tool's calls split by how the server took them.

use super::{shard_load, tool_acceptance};
use crate::metrics::{FailureKind, LeftOut, Outcome, Phase, Sample, Stats};
use crate::protocol::{Era, VersionId};
use crate::summary::ToolAcceptance;

fn call(tool: u16, outcome: Outcome) -> Sample {
    let t = tokio::time::Instant::now();
    Sample {
        phase: Phase::ToolsCall,
        session: 1,
        persona: 0,
        era: Era::Legacy,
        version: VersionId::of("2025-06-18"),
        tool: Some(tool),
        intended: t,
        started: t,
        finished: t,
        outcome,
    }
}

#[test]
fn tool_acceptance_splits_calls_by_how_the_server_took_them() {
    let mut stats = Stats::new(1, 3);
    for outcome in [
        Outcome::Ok,
        Outcome::Ok,
        Outcome::ToolError,
        Outcome::Failed(FailureKind::RpcError(-32602)),
        Outcome::Failed(FailureKind::RpcError(-32602)),
        Outcome::Failed(FailureKind::Timeout),
        Outcome::Failed(FailureKind::NoValue),
    ] {
        stats.tools[0].add(&call(0, outcome));
    }
    stats.tool_counts[0].add_generated(Outcome::Ok);
    stats.tool_counts[0].add_generated(Outcome::ToolError);
    stats.tool_counts[2].add_left_out(LeftOut::Destructive);
    stats.tool_counts[2].add_left_out(LeftOut::Destructive);
    let names = ["get_time".to_string(), "never".into(), "delete".into()];
    let t = tool_acceptance(&names, &stats);
    assert_eq!(
        t.len(),
        2,
        "a tool neither called nor left out has no entry"
    );
    let a = &t["get_time"];
    assert_eq!(
        (
            a.calls,
            a.accepted,
            a.tool_errors,
            a.invalid_params,
            a.other_errors
        ),
        (7, 2, 1, 2, 2)
    );
    assert_eq!(
        a.calls,
        a.accepted + a.tool_errors + a.invalid_params + a.other_errors
    );
    assert_eq!((a.generated, a.generated_accepted), (2, 1));
    assert_eq!(a.generated_share(), Some(0.5));
    let d = &t["delete"];
    assert_eq!(d.calls, 0, "only left out, still an entry");
    assert_eq!(d.left_out.get("destructive"), Some(&2));
    assert_eq!(d.left_out_total(), 2);
    assert_eq!(d.accepted_share(), None);
    // A schema 8 summary's tools give the same call counts.
    let p = super::phase_summary(&stats.tools[0], 1.0);
    let old = ToolAcceptance::from_summary(&p);
    assert_eq!(
        (
            old.calls,
            old.accepted,
            old.tool_errors,
            old.invalid_params,
            old.other_errors
        ),
        (7, 2, 1, 2, 2)
    );
}

#[test]
fn a_shards_load_says_what_the_shard_ran() {
    let load = crate::summary::LoadInfo {
        model: "closed".into(),
        clients: Some(8),
        max_in_flight: None,
        rate_per_s: None,
        iteration_rate_per_s: None,
        sessions: None,
        duration_s: Some(10.0),
        think: "0s".into(),
        description: "closed model, 8 clients".into(),
        timeout_ms: 10_000.0,
    };
    assert_eq!(
        shard_load(&load, Some("0/2")).description,
        "closed model, 4 of 8 clients (shard 0/2)"
    );
    assert_eq!(
        shard_load(&load, Some("2/3")).description,
        "closed model, 2 of 8 clients (shard 2/3)"
    );
    // Unsharded (and a merged report): the whole fleet, as the plan says.
    assert_eq!(
        shard_load(&load, None).description,
        "closed model, 8 clients"
    );
}
