//! The shards' rounds through their folder: orders reach the followers, arrivals and
//! departures reach the leader, a missing shard is named within the wait, and a folder
//! holding another search's rounds is refused.

use super::*;

fn shard(index: u32, count: u32) -> Shard {
    Shard { index, count }
}

fn ready(i: u32) -> Arrival {
    Arrival {
        shard: i,
        stopped_by: "ready".into(),
        error: None,
    }
}

fn order(part: Part, level: f64) -> Order {
    Order {
        part,
        level,
        start_at: "2026-12-05T10:00:00Z".into(),
        length_ms: 2000,
        dir: "steps/01-50".into(),
        abort: None,
    }
}

fn no_signals() -> SignalWatch {
    SignalWatch::start(
        crate::client::StopSignals::default(),
        Duration::from_secs(1),
        false,
    )
    .expect("signal watch")
}

#[tokio::test]
async fn an_order_reaches_every_follower_once_all_have_arrived() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut leader = Rounds::open(dir.path(), shard(0, 3)).expect("leader");
    let mut f1 = Rounds::open(dir.path(), shard(1, 3)).expect("f1");
    let mut f2 = Rounds::open(dir.path(), shard(2, 3)).expect("f2");
    leader.arrive(&ready(0)).expect("arrive");
    f1.arrive(&ready(1)).expect("arrive");
    // One shard is missing: the leader names it when its wait is over.
    let e = leader
        .gather(Duration::from_millis(300))
        .await
        .expect_err("shard 2 missing");
    let text = format!("{e:#}");
    assert!(
        text.starts_with("shard 2/3 of the ceiling search did not report within"),
        "{text}"
    );
    assert!(text.contains("\nfix: "), "{text}");
    f2.arrive(&ready(2)).expect("arrive");
    let all = leader.gather(Duration::from_secs(1)).await.expect("all in");
    assert_eq!(all.iter().map(|a| a.shard).collect::<Vec<_>>(), [0, 1, 2]);
    leader.order(&order(Part::Warmup, 50.0)).expect("order");
    let signals = no_signals();
    for f in [&mut f1, &mut f2] {
        let got = f
            .wait_order(Duration::from_secs(1), &signals)
            .await
            .expect("no error")
            .expect("no signal");
        assert_eq!(got, order(Part::Warmup, 50.0));
    }
    // The next round's files are new ones: round 0's arrivals do not count for round 1.
    let e = leader
        .gather(Duration::from_millis(200))
        .await
        .expect_err("nobody arrived in round 1");
    assert!(format!("{e:#}").contains("shard 0/3, 1/3, 2/3"), "{e:#}");
}

#[tokio::test]
async fn a_shard_that_left_counts_as_arrived_stopped_by_its_signal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let leader = Rounds::open(dir.path(), shard(0, 2)).expect("leader");
    let f1 = Rounds::open(dir.path(), shard(1, 2)).expect("f1");
    leader.arrive(&ready(0)).expect("arrive");
    f1.leave(StopSignal::Terminate);
    let all = leader.gather(Duration::from_secs(1)).await.expect("all in");
    assert_eq!(
        all[1].stop_reason(),
        Some(StopReason::Signal(StopSignal::Terminate))
    );
    assert_eq!(signal_of(&all), Some(StopSignal::Terminate));
    assert_eq!(signal_of(&all[..1]), None, "ready is no signal");
}

#[tokio::test]
async fn a_follower_gives_up_on_a_silent_leader_and_names_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut f1 = Rounds::open(dir.path(), shard(1, 2)).expect("f1");
    f1.arrive(&ready(1)).expect("arrive");
    let e = f1
        .wait_order(Duration::from_millis(300), &no_signals())
        .await
        .expect_err("no order");
    assert!(
        format!("{e:#}").starts_with("the leading shard (0/2) gave no order within"),
        "{e:#}"
    );
}

#[test]
fn a_folder_with_another_searchs_rounds_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut leader = Rounds::open(dir.path(), shard(0, 2)).expect("leader");
    // Before the first order a late shard may still join …
    Rounds::open(dir.path(), shard(1, 2)).expect("joins");
    leader.order(&order(Part::Measure, 10.0)).expect("order");
    // … after it, the folder is that search's.
    let e = Rounds::open(dir.path(), shard(1, 2))
        .err()
        .expect("refused");
    assert!(format!("{e:#}").contains("another ceiling search"), "{e:#}");
}

#[test]
fn an_arrival_says_how_the_part_ended_or_why_it_could_not_be_done() {
    let failed: anyhow::Result<crate::RunOutcome> = Err(anyhow::anyhow!("no route"));
    let a = Arrival::of(shard(1, 2), &failed);
    assert_eq!(
        (a.stopped_by.as_str(), a.error.as_deref()),
        ("error", Some("no route"))
    );
    assert_eq!(a.stop_reason(), None);
    // Round trip of an order through its file.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("x.go");
    write_json(&path, &order(Part::Stop, 0.0)).expect("write");
    assert_eq!(read_json::<Order>(&path), Some(order(Part::Stop, 0.0)));
    assert!(
        !path.with_extension("tmp").exists(),
        "written through a rename"
    );
    assert_eq!(read_json::<Order>(&dir.path().join("none.go")), None);
}

#[test]
fn a_generator_that_limited_one_shard_speaks_for_the_step() {
    let load = |share: f64, bottleneck: bool| GeneratorLoad {
        cpu_share_max: Some(share),
        bottleneck,
        ..GeneratorLoad::default()
    };
    let busiest = worst([load(0.3, false), load(0.6, false)].into_iter()).expect("one");
    assert_eq!(busiest.cpu_share_max, Some(0.6));
    // A shard that limited the load (its lag, say) outranks a busier one that did not.
    let limited =
        worst([load(0.9, false), load(0.4, true), load(0.5, false)].into_iter()).expect("one");
    assert_eq!(
        (limited.bottleneck, limited.cpu_share_max),
        (true, Some(0.4))
    );
    assert!(worst(std::iter::empty()).is_none());
    // Without the shards' summaries there is nothing to say.
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(worst_generator(dir.path(), 2, false).is_none());
}
