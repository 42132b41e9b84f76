//! The collector against sessions' events: slices per persona and tool, counted
//! server methods, snapshots, and intervals that rotate on the tick and reach every sink.

use super::*;
use crate::metrics::{Counter, FailureKind, LeftOut, Origin, Outcome};
use crate::protocol::{Era, VersionId};
use tokio::time::Instant;

#[tokio::test]
async fn folds_samples_into_overall_persona_and_tool_slices() {
    let (collector, rec) = Collector::new(vec![TransportKind::Stdio, TransportKind::WebSocket], 1);
    let handle = tokio::spawn(collector.run());
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);
    let s = |persona, tool, started, finished, outcome| Sample {
        phase: Phase::ToolsCall,
        session: 1,
        persona,
        era: if persona == 1 {
            Era::Modern
        } else {
            Era::Legacy
        },
        version: VersionId::of("2025-11-25"),
        tool,
        intended: t0,
        started,
        finished,
        outcome,
    };
    rec.sample(s(1, Some(0), ms(10), ms(30), Outcome::Ok));
    rec.sample(s(1, Some(0), t0, ms(5), Outcome::ToolError));
    rec.sample(s(0, None, t0, ms(1), Outcome::Failed(FailureKind::Timeout)));
    rec.count(Counter::SessionExpired);
    rec.count(Counter::SessionExpired);
    rec.count_n(Counter::CacheHit, 0);
    rec.send(Event::SessionStarted { persona: 1 });
    rec.send(Event::SessionEnded {
        session: 1,
        persona: 1,
        outcome: SessionOutcome::Failed,
    });
    drop(rec);
    let stats = handle.await.expect("collector task");
    let call = stats.phases.get(Phase::ToolsCall);
    assert_eq!(
        (call.count(), call.ok, call.errors(), call.tool_errors),
        (3, 2, 1, 1)
    );
    // service = 20 ms for the first sample, response (from intended) = 30 ms.
    assert_eq!(call.service.max() / 1000, 20);
    assert_eq!(call.response.max() / 1000, 30);
    assert_eq!(stats.personas[1].0.get(Phase::ToolsCall).count(), 2);
    assert_eq!(stats.personas[0].0.get(Phase::ToolsCall).errors(), 1);
    assert_eq!(stats.tools[0].count(), 2);
    assert_eq!(stats.sessions.failed, 1);
    assert_eq!(stats.personas[1].1.started, 1);
    assert_eq!(stats.failures().get(&FailureKind::Timeout), Some(&1));
    assert_eq!(
        stats.by_transport[&TransportKind::WebSocket]
            .get(Phase::ToolsCall)
            .count(),
        2
    );
    assert_eq!(stats.by_era[&Era::Legacy].get(Phase::ToolsCall).errors(), 1);
    assert_eq!(stats.counters.get(Counter::SessionExpired), 2);
    assert_eq!(
        stats.counters.seen().count(),
        1,
        "zero counts are not counted"
    );
}

#[tokio::test]
async fn generated_calls_and_left_out_ones_are_counted_per_tool() {
    let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 2);
    let snapshots = collector.snapshots();
    let handle = tokio::spawn(collector.run());
    for outcome in [
        Outcome::Ok,
        Outcome::ToolError,
        Outcome::Failed(FailureKind::RpcError(-32602)),
        Outcome::Ok,
    ] {
        rec.send(Event::Generated { tool: 0, outcome });
    }
    rec.send(Event::LeftOut {
        tool: 1,
        reason: LeftOut::Destructive,
    });
    rec.send(Event::LeftOut {
        tool: 1,
        reason: LeftOut::Destructive,
    });
    // An unknown tool id is ignored, not a panic.
    rec.send(Event::Generated {
        tool: 9,
        outcome: Outcome::Ok,
    });
    rec.send(Event::ToolError {
        tool: 0,
        text: "-32602 Invalid params: timezone".into(),
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let snap = snapshots.take().await.expect("a running collector answers");
    assert_eq!(snap.tool_counts[0].generated, 4, "a checkpoint has them");
    drop(rec);
    let stats = handle.await.expect("collector task");
    let t0 = &stats.tool_counts[0];
    assert_eq!((t0.generated, t0.generated_accepted), (4, 2));
    assert!(t0.left_out.is_empty());
    let t1 = &stats.tool_counts[1];
    assert_eq!(t1.generated, 0);
    assert_eq!(t1.left_out.get(&LeftOut::Destructive), Some(&2));
    assert_eq!(
        stats.tool_error_examples[&0],
        ["-32602 Invalid params: timezone"]
    );
    // Counts merge like phase figures.
    let mut merged = t0.clone();
    merged.merge(t1);
    merged.merge(t0);
    assert_eq!((merged.generated, merged.generated_accepted), (8, 4));
    assert_eq!(merged.left_out.get(&LeftOut::Destructive), Some(&2));
    assert!(!merged.is_empty());
    assert!(crate::metrics::ToolCounts::default().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_snapshot_has_the_figures_so_far_and_the_collector_goes_on() {
    let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 0);
    let collector = collector.with_intervals(Duration::from_secs(1), Vec::new());
    let snapshots = collector.snapshots();
    let handle = tokio::spawn(collector.run());
    let sample = || {
        let t = Instant::now();
        Sample {
            phase: Phase::Initialize,
            session: 1,
            persona: 0,
            era: Era::Legacy,
            version: VersionId::of("2025-03-26"),
            tool: None,
            intended: t,
            started: t,
            finished: t + Duration::from_millis(2),
            outcome: Outcome::Ok,
        }
    };
    rec.sample(sample());
    rec.send(Event::SessionStarted { persona: 0 });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    rec.sample(sample());
    // Requests and samples travel apart: let the collector fold the sample first.
    tokio::time::sleep(Duration::from_millis(10)).await;
    let snap = snapshots.take().await.expect("a running collector answers");
    assert_eq!(snap.phases.get(Phase::Initialize).count(), 2);
    assert_eq!(snap.sessions.started, 1);
    assert_eq!(snap.timeline.len(), 1, "the finished interval only");
    assert_eq!(snap.interval_s, 1.0);
    assert_eq!(
        snap.by_transport[&TransportKind::Stdio]
            .get(Phase::Initialize)
            .count(),
        2
    );
    rec.sample(sample());
    drop(rec);
    let stats = handle.await.expect("collector task");
    assert_eq!(stats.phases.get(Phase::Initialize).count(), 3, "it went on");
    assert_eq!(
        stats.by_transport[&TransportKind::Stdio]
            .get(Phase::Initialize)
            .count(),
        3,
        "a snapshot does not fold the transports twice"
    );
    assert!(
        snapshots.take().await.is_none(),
        "a finished collector answers none"
    );
}

#[tokio::test]
async fn server_method_names_are_counted_in_a_bounded_map() {
    let (collector, rec) = Collector::new(vec![TransportKind::StreamableHttp], 0);
    let handle = tokio::spawn(collector.run());
    // A server that invents a method name per message: one map entry each before.
    for i in 0..10_000 {
        rec.send(Event::ServerMessage {
            method: format!("notifications/progress/{i}"),
        });
    }
    rec.send(Event::ServerMessage {
        method: "notifications/progress/3".into(),
    });
    drop(rec);
    let stats = handle.await.expect("collector task");
    let m = &stats.server_messages;
    assert_eq!(m.len(), SERVER_METHODS_KEPT + 1, "bounded");
    assert_eq!(
        m.values().sum::<u64>(),
        10_001,
        "every message still counted"
    );
    assert_eq!(
        m.get("notifications/progress/3"),
        Some(&2),
        "a kept name counts on"
    );
    assert_eq!(
        m.get(OTHER_METHODS),
        Some(&(10_000 - SERVER_METHODS_KEPT as u64))
    );
}

#[tokio::test]
async fn every_breakdown_is_the_sum_of_the_cells_it_covers() {
    // Persona 0 speaks two eras and versions (an `auto` persona), persona 1 one; the
    // fleet's lag sample belongs to no persona; a skipped step has no sample.
    let (collector, rec) = Collector::new(
        vec![TransportKind::StreamableHttp, TransportKind::WebSocket],
        0,
    );
    let snapshots = collector.snapshots();
    let handle = tokio::spawn(collector.run());
    let (old, new) = (VersionId::of("2025-03-26"), VersionId::of("2026-07-28"));
    let sample = |persona, era, version, ms, outcome| {
        let t = Instant::now();
        Sample {
            phase: Phase::Initialize,
            session: 1,
            persona,
            era,
            version,
            tool: None,
            intended: t,
            started: t,
            finished: t + Duration::from_millis(ms),
            outcome,
        }
    };
    rec.sample(sample(0, Era::Legacy, old, 1, Outcome::Ok));
    rec.sample(sample(0, Era::Legacy, old, 2, Outcome::Ok));
    rec.sample(sample(0, Era::Modern, new, 3, Outcome::Ok));
    rec.sample(sample(
        1,
        Era::Legacy,
        old,
        4,
        Outcome::Failed(FailureKind::Timeout),
    ));
    rec.sample(sample(1, Era::Legacy, old, 5, Outcome::Ok));
    let mut lag = sample(Origin::FLEET.persona, Era::Legacy, old, 6, Outcome::Ok);
    lag.phase = Phase::Lag;
    rec.sample(lag);
    rec.send(Event::Skipped {
        persona: 0,
        phase: Phase::ToolsList,
    });
    // Samples and snapshot requests come by separate channels: let the collector
    // take the samples first (this test's runtime has one thread).
    for _ in 0..3 {
        tokio::task::yield_now().await;
    }
    let mid = snapshots.take().await.expect("a snapshot while running");
    drop(rec);
    let end = handle.await.expect("collector task");
    for stats in [&mid, &end] {
        let init = |t: &PhaseTable| {
            let p = t.get(Phase::Initialize);
            (p.ok, p.errors(), p.service.len(), p.service.max() / 1000)
        };
        assert_eq!(init(&stats.phases), (4, 1, 4, 5), "overall");
        assert_eq!(init(&stats.personas[0].0), (3, 0, 3, 3));
        assert_eq!(init(&stats.personas[1].0), (1, 1, 1, 5));
        assert_eq!(init(&stats.by_era[&Era::Legacy]), (3, 1, 3, 5));
        assert_eq!(init(&stats.by_era[&Era::Modern]), (1, 0, 1, 3));
        assert_eq!(init(&stats.by_version[&old]), (3, 1, 3, 5));
        assert_eq!(init(&stats.by_version[&new]), (1, 0, 1, 3));
        assert_eq!(
            init(&stats.by_transport[&TransportKind::StreamableHttp]),
            (3, 0, 3, 3)
        );
        assert_eq!(
            stats.phases.get(Phase::Lag).count(),
            1,
            "the fleet's sample"
        );
        assert_eq!(stats.personas[0].0.get(Phase::Lag).count(), 0);
        assert_eq!(stats.by_era[&Era::Legacy].get(Phase::Lag).count(), 0);
        assert_eq!(stats.phases.get(Phase::ToolsList).skipped, 1);
        assert_eq!(stats.personas[0].0.get(Phase::ToolsList).skipped, 1);
        assert_eq!(stats.failures().get(&FailureKind::Timeout), Some(&1));
    }
}

struct Recording(std::sync::Arc<std::sync::Mutex<Vec<(Phase, u64)>>>);

impl IntervalSink for Recording {
    fn interval(
        &mut self,
        row: &crate::metrics::IntervalRow,
        hist: &hdrhistogram::Histogram<u64>,
    ) -> std::io::Result<()> {
        if let Ok(mut v) = self.0.lock() {
            v.push((row.phase, hist.len()));
        }
        Ok(())
    }
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn intervals_rotate_on_the_tick_and_reach_sinks_and_the_live_view() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (collector, rec) = Collector::new(vec![TransportKind::Stdio], 0);
    let collector = collector.with_intervals(
        Duration::from_secs(1),
        vec![Box::new(Recording(seen.clone()))],
    );
    let mut live = collector.live();
    let handle = tokio::spawn(collector.run());
    let sample = |outcome| {
        let t = Instant::now();
        Sample {
            phase: Phase::Initialize,
            session: 1,
            persona: 0,
            era: Era::Legacy,
            version: VersionId::of("2025-03-26"),
            tool: None,
            intended: t,
            started: t,
            finished: t + Duration::from_millis(3),
            outcome,
        }
    };
    rec.sample(sample(Outcome::Ok));
    rec.sample(sample(Outcome::Failed(FailureKind::Timeout)));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    live.changed().await.expect("published");
    {
        let f = live.borrow();
        assert_eq!(f.last.len(), 1);
        assert_eq!((f.last[0].count, f.last[0].errors), (2, 1));
        assert_eq!(f.last[0].p99_us / 1000, 3);
        assert_eq!(f.failures.get("timeout"), Some(&1));
    }
    rec.sample(sample(Outcome::Ok));
    drop(rec);
    let stats = handle.await.expect("collector task");
    assert_eq!(
        stats.timeline.len(),
        2,
        "one full interval and the last partial one"
    );
    assert_eq!(stats.timeline[1].start_s, 1.0);
    // The last interval is as long as it lasted (0.5 s of a 1 s interval), so a
    // rate read from it (count / length) is per its real length.
    assert_eq!(stats.timeline[0].len_s, 1.0);
    assert!(
        stats.timeline[1].len_s > 0.0 && stats.timeline[1].len_s < 1.0,
        "partial: {}",
        stats.timeline[1].len_s
    );
    assert_eq!(stats.interval_s, 1.0);
    let by_version = &stats.by_version[&VersionId::of("2025-03-26")];
    assert_eq!(by_version.get(Phase::Initialize).count(), 3);
    let seen = seen.lock().map(|v| v.clone()).unwrap_or_default();
    assert_eq!(seen, vec![(Phase::Initialize, 1), (Phase::Initialize, 1)]);
}
