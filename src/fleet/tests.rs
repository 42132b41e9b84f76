//! The scheduler under a paused clock, with a fake session that takes a fixed time:
//! exact session counts, arrival times, ramps, drops and stopping, and a target that is
//! down for a while: backoff, its reset, giving up.

use super::*;
use crate::plan::Stage;
use std::sync::Mutex;

/// A session that takes `service` (or blocks until `stall_until`), recording when it was
/// meant to start and when it did. One that starts while the target is `down` fails to
/// connect after a millisecond (a refused connection is quick, not free).
struct Fake {
    service: Duration,
    stall_until: Option<Instant>,
    down: Vec<(Instant, Instant)>,
    log: Mutex<Vec<(Instant, Instant)>>,
    lags: Mutex<Vec<Duration>>,
    dropped: AtomicU64,
    in_flight: AtomicU64,
    peak: AtomicU64,
}

impl Fake {
    fn new(service: Duration) -> Arc<Fake> {
        Arc::new(Fake {
            service,
            stall_until: None,
            down: Vec::new(),
            log: Mutex::new(Vec::new()),
            lags: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        })
    }
}

/// How long a refused connection takes.
const CONNECT_REFUSED: Duration = Duration::from_millis(1);

impl Fake {
    /// A fake whose target is down over each of `windows` (offsets from now).
    fn down(service: Duration, windows: &[(u64, u64)]) -> Arc<Fake> {
        let mut fake = Fake::new(service);
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        Arc::get_mut(&mut fake).expect("unique").down =
            windows.iter().map(|&(a, b)| (ms(a), ms(b))).collect();
        fake
    }

    fn is_down(&self, t: Instant) -> bool {
        self.down.iter().any(|&(a, b)| a <= t && t < b)
    }

    /// Start times of the sessions that found the target down.
    fn refused(&self) -> Vec<Instant> {
        let log = self.log.lock().expect("lock");
        log.iter()
            .map(|&(_, started)| started)
            .filter(|&t| self.is_down(t))
            .collect()
    }
}

impl Work for Fake {
    async fn session(
        &self,
        intended: Instant,
        _rng: &mut SmallRng,
        _memory: &mut crate::client::ClientMemory,
        stop: &StopSignals,
    ) -> SessionOutcome {
        let start = Instant::now();
        if self.is_down(start) {
            self.log.lock().expect("lock").push((intended, start));
            tokio::time::sleep(CONNECT_REFUSED).await;
            return SessionOutcome::Unreachable;
        }
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.log
            .lock()
            .expect("lock")
            .push((intended, Instant::now()));
        let done = async {
            if let Some(until) = self.stall_until {
                tokio::time::sleep_until(until).await;
            }
            tokio::time::sleep(self.service).await;
        };
        let outcome = tokio::select! {
            () = done => SessionOutcome::Completed,
            () = stop.abort.cancelled() => SessionOutcome::Interrupted,
        };
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        outcome
    }

    fn started_late(&self, intended: Instant, actual: Instant) {
        self.lags.lock().expect("lock").push(actual - intended);
    }

    fn dropped(&self) {
        self.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

fn load(model: LoadModel, sessions: Option<u64>, duration: Option<Duration>) -> Load {
    Load {
        model,
        sessions,
        duration,
        think: Think::Fixed(Duration::ZERO),
        grace: Duration::from_secs(1),
        reconnect: None,
        abort_on_unreachable: None,
        events: Vec::new(),
        iteration_rate: None,
    }
}

fn closed(clients: f64, duration_ms: u64) -> Load {
    load(
        LoadModel::Closed {
            clients: Curve::constant(clients, None),
        },
        None,
        Some(Duration::from_millis(duration_ms)),
    )
}

fn backoff(first_ms: u64, cap_ms: u64) -> Option<crate::plan::Backoff> {
    Some(crate::plan::Backoff {
        first: Duration::from_millis(first_ms),
        cap: Duration::from_millis(cap_ms),
    })
}

async fn go(l: &Load, fake: &Arc<Fake>) -> Arc<LiveCounters> {
    let live = Arc::new(LiveCounters::default());
    run(
        l,
        1,
        Anchor::now(),
        fake.clone(),
        live.clone(),
        StopSignals::default(),
    )
    .await;
    live
}

#[tokio::test(start_paused = true)]
async fn closed_clients_run_exactly_the_session_budget() {
    let fake = Fake::new(Duration::from_millis(100));
    let l = load(
        LoadModel::Closed {
            clients: Curve::constant(4.0, None),
        },
        Some(10),
        None,
    );
    let t0 = Instant::now();
    let live = go(&l, &fake).await;
    assert_eq!(live.completed.load(Ordering::SeqCst), 10);
    assert_eq!(fake.peak.load(Ordering::SeqCst), 4);
    // 10 sessions of 100 ms on 4 clients: three rounds.
    assert_eq!(t0.elapsed(), Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn closed_think_time_spaces_a_clients_sessions() {
    let fake = Fake::new(Duration::from_millis(100));
    let mut l = load(
        LoadModel::Closed {
            clients: Curve::constant(1.0, None),
        },
        None,
        Some(Duration::from_millis(1_000)),
    );
    l.think = Think::Fixed(Duration::from_millis(150));
    let live = go(&l, &fake).await;
    // Sessions start at 0, 250, 500, 750 ms; the deadline stops the fifth.
    assert_eq!(live.completed.load(Ordering::SeqCst), 4);
    let log = fake.log.lock().expect("lock");
    let t0 = log[0].1;
    let starts: Vec<u128> = log.iter().map(|(_, a)| (*a - t0).as_millis()).collect();
    assert_eq!(starts, [0, 250, 500, 750]);
}

#[tokio::test(start_paused = true)]
async fn closed_stages_ramp_clients_up_and_down() {
    let fake = Fake::new(Duration::from_millis(50));
    let l = load(
        LoadModel::Closed {
            clients: Curve {
                start: 0.0,
                stages: vec![
                    Stage {
                        target: 10.0,
                        duration: Duration::from_secs(1),
                    },
                    Stage {
                        target: 10.0,
                        duration: Duration::from_secs(1),
                    },
                    Stage {
                        target: 0.0,
                        duration: Duration::from_secs(1),
                    },
                ],
            },
        },
        None,
        Some(Duration::from_secs(3)),
    );
    let live = go(&l, &fake).await;
    assert_eq!(fake.peak.load(Ordering::SeqCst), 10);
    // During the hold, 10 clients × 20 sessions/s; less while ramping.
    let n = live.completed.load(Ordering::SeqCst);
    assert!((250..=400).contains(&n), "{n}");
}

#[tokio::test(start_paused = true)]
async fn open_arrivals_start_on_schedule_whatever_the_service_time() {
    // 100/s for 1 s while each session takes 350 ms: a closed model would slow down,
    // an open one starts all 100 on time with ~35 in flight.
    let fake = Fake::new(Duration::from_millis(350));
    let l = load(
        LoadModel::Open {
            rate: Curve::constant(100.0, Some(Duration::from_secs(1))),
            max_in_flight: 1_000,
        },
        None,
        Some(Duration::from_secs(1)),
    );
    let t0 = Instant::now();
    let live = go(&l, &fake).await;
    assert_eq!(live.completed.load(Ordering::SeqCst), 100);
    let log = fake.log.lock().expect("lock");
    for (k, (intended, actual)) in log.iter().enumerate() {
        assert_eq!(*intended - t0, Duration::from_millis(10 * k as u64), "{k}");
        assert_eq!(actual, intended, "no lag under a paused clock");
    }
    assert!((35..=36).contains(&fake.peak.load(Ordering::SeqCst)));
}

#[tokio::test(start_paused = true)]
async fn open_arrivals_beyond_the_cap_are_dropped_and_counted() {
    // A stalled server: nothing finishes for 2 s; 50/s with at most 20 in flight.
    let mut fake = Fake::new(Duration::from_millis(10));
    Arc::get_mut(&mut fake).expect("unique").stall_until =
        Some(Instant::now() + Duration::from_secs(2));
    let l = load(
        LoadModel::Open {
            rate: Curve::constant(50.0, Some(Duration::from_secs(1))),
            max_in_flight: 20,
        },
        None,
        Some(Duration::from_secs(1)),
    );
    let live = go(&l, &fake).await;
    assert_eq!(fake.dropped.load(Ordering::SeqCst), 30);
    assert_eq!(live.dropped.load(Ordering::SeqCst), 30);
    assert_eq!(fake.peak.load(Ordering::SeqCst), 20);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_drains_then_aborts_after_grace() {
    let fake = Fake::new(Duration::from_secs(60));
    let l = load(
        LoadModel::Closed {
            clients: Curve::constant(3.0, None),
        },
        None,
        Some(Duration::from_secs(2)),
    );
    let t0 = Instant::now();
    let live = go(&l, &fake).await;
    assert_eq!(live.interrupted.load(Ordering::SeqCst), 3);
    assert_eq!(t0.elapsed(), Duration::from_secs(3), "2 s + 1 s grace");
}

#[tokio::test(start_paused = true)]
async fn arrival_seeds_do_not_depend_on_timing() {
    // The k-th arrival's generator is seeded by k alone.
    let a: Vec<u64> = (0..5).map(|k| client_seed(9, k)).collect();
    let b: Vec<u64> = (0..5).map(|k| client_seed(9, k)).collect();
    assert_eq!(a, b);
}

#[tokio::test(start_paused = true)]
async fn think_time_never_outlasts_the_session_budget() {
    // One session, then an hour of think time: the budget is spent, so the run ends
    // when the session does, not an hour later.
    let fake = Fake::new(Duration::from_millis(5));
    let mut l = load(
        LoadModel::Closed {
            clients: Curve::constant(1.0, None),
        },
        Some(1),
        None,
    );
    l.think = Think::Fixed(Duration::from_secs(3600));
    let t0 = Instant::now();
    let end = run(
        &l,
        1,
        Anchor::now(),
        fake.clone(),
        Arc::new(LiveCounters::default()),
        StopSignals::default(),
    )
    .await;
    assert_eq!(end, FleetEnd::Budget);
    assert_eq!(t0.elapsed(), Duration::from_millis(5));
}

#[tokio::test(start_paused = true)]
async fn the_fleet_says_whether_the_budget_or_the_deadline_ended_it() {
    let fake = Fake::new(Duration::from_millis(10));
    let open = load(
        LoadModel::Open {
            rate: Curve::constant(100.0, Some(Duration::from_secs(1))),
            max_in_flight: 1_000,
        },
        None,
        Some(Duration::from_secs(1)),
    );
    let live = Arc::new(LiveCounters::default());
    let end = run(
        &open,
        1,
        Anchor::now(),
        fake.clone(),
        live,
        StopSignals::default(),
    )
    .await;
    assert_eq!(
        end,
        FleetEnd::Deadline,
        "an open model ends with its duration"
    );
}

#[tokio::test(start_paused = true)]
async fn closed_clients_back_off_from_an_unreachable_target() {
    // Down all along: without a backoff, 4 clients would try 4 × 10,000 times in 10 s.
    let fake = Fake::down(Duration::from_millis(10), &[(0, 3_600_000)]);
    let mut l = closed(4.0, 10_000);
    l.reconnect = backoff(100, 1_000);
    let live = go(&l, &fake).await;
    let attempts = fake.refused().len() as u64;
    // Waits of 50–100, 100–200, 200–400, 400–800 ms, then 0.5–1 s each: 13 to 24 tries
    // per client.
    assert!((4 * 13..=4 * 24).contains(&attempts), "{attempts}");
    assert_eq!(live.unreachable.load(Ordering::SeqCst), attempts);
    assert_eq!(live.completed.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn the_backoff_starts_over_after_a_session_that_reached_the_server() {
    // Down for 1.5 s, up until 5 s, down again. Backoff 1 s..60 s.
    let fake = Fake::down(
        Duration::from_millis(100),
        &[(0, 1_500), (5_000, 3_600_000)],
    );
    let t0 = Instant::now();
    let mut l = closed(1.0, 9_000);
    l.reconnect = backoff(1_000, 60_000);
    let live = go(&l, &fake).await;
    assert!(
        live.completed.load(Ordering::SeqCst) > 15,
        "back to back while up"
    );
    let second_spell: Vec<Instant> = fake
        .refused()
        .into_iter()
        .filter(|t| *t >= t0 + Duration::from_secs(5))
        .collect();
    assert!(second_spell.len() >= 2, "{}", second_spell.len());
    // The first wait of the new spell is the first step again (0.5–1 s), not the third
    // (2–4 s) that two earlier failures in a row would have made it.
    let gap = second_spell[1] - second_spell[0];
    assert!(gap <= Duration::from_millis(1_001), "{gap:?}");
}

#[tokio::test(start_paused = true)]
async fn open_arrivals_that_cannot_connect_are_counted_not_retried() {
    let fake = Fake::down(Duration::from_millis(10), &[(0, 3_600_000)]);
    let mut l = load(
        LoadModel::Open {
            rate: Curve::constant(10.0, Some(Duration::from_secs(2))),
            max_in_flight: 100,
        },
        None,
        Some(Duration::from_secs(2)),
    );
    l.reconnect = backoff(100, 1_000);
    let live = go(&l, &fake).await;
    assert_eq!(fake.refused().len(), 20, "one try per arrival");
    assert_eq!(live.unreachable.load(Ordering::SeqCst), 20);
}

#[tokio::test(start_paused = true)]
async fn the_run_gives_up_on_a_target_that_stays_unreachable() {
    // Up for 2 s, then down for good; give up after 5 s of it.
    let fake = Fake::down(Duration::from_millis(100), &[(2_000, 3_600_000)]);
    let t0 = Instant::now();
    let mut l = closed(2.0, 60_000);
    l.reconnect = backoff(100, 1_000);
    l.abort_on_unreachable = Some(Duration::from_secs(5));
    let end = run(
        &l,
        1,
        Anchor::now(),
        fake.clone(),
        Arc::new(LiveCounters::default()),
        StopSignals::default(),
    )
    .await;
    assert_eq!(end, FleetEnd::Unreachable);
    // The spell began with the first refused session, 2 s + 1 ms in.
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(7_001) && took <= Duration::from_millis(7_002),
        "{took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_target_that_comes_back_in_time_is_not_given_up_on() {
    // Down from 1 s to 4 s: shorter than the 5 s allowed.
    let fake = Fake::down(Duration::from_millis(100), &[(1_000, 4_000)]);
    let mut l = closed(2.0, 8_000);
    l.reconnect = backoff(100, 500);
    l.abort_on_unreachable = Some(Duration::from_secs(5));
    let live = Arc::new(LiveCounters::default());
    let end = run(
        &l,
        1,
        Anchor::now(),
        fake.clone(),
        live.clone(),
        StopSignals::default(),
    )
    .await;
    assert_eq!(end, FleetEnd::Deadline);
    assert!(live.unreachable.load(Ordering::SeqCst) > 0);
    assert_eq!(
        live.unreachable_since(),
        None,
        "it reached the server again"
    );
}

/// What a sharded run must reproduce: each session as (client or arrival index, when it
/// was meant to start from the schedule's start, the first draw of its generator).
type Entry = (u64, Duration, u64);

/// A session of fixed length that records its [`Entry`].
struct Tally {
    service: Duration,
    start: Instant,
    log: Mutex<Vec<Entry>>,
}

impl Work for Tally {
    async fn session(
        &self,
        intended: Instant,
        rng: &mut SmallRng,
        memory: &mut crate::client::ClientMemory,
        stop: &StopSignals,
    ) -> SessionOutcome {
        let draw = rand::RngCore::next_u64(&mut rng.clone());
        self.log
            .lock()
            .expect("lock")
            .push((memory.client(), intended - self.start, draw));
        tokio::select! {
            () = tokio::time::sleep(self.service) => SessionOutcome::Completed,
            () = stop.abort.cancelled() => SessionOutcome::Interrupted,
        }
    }

    fn started_late(&self, _intended: Instant, _actual: Instant) {}

    fn dropped(&self) {}
}

/// The sessions of `shard`'s part of `l` (seed 7), sorted.
async fn entries(l: &Load, shard: Shard, service: Duration) -> Vec<Entry> {
    let start = Instant::now();
    let tally = Arc::new(Tally {
        service,
        start,
        log: Mutex::new(Vec::new()),
    });
    let anchor = Anchor { shard, start };
    let live = Arc::new(LiveCounters::default());
    run(l, 7, anchor, tally.clone(), live, StopSignals::default()).await;
    let mut log = std::mem::take(&mut *tally.log.lock().expect("lock"));
    log.sort_unstable();
    log
}

/// For N in {1, 2, 3, 7}: the shards' sessions together are the unsharded run's, and
/// each shard's are its own indexes only.
async fn shards_make_the_whole(l: &Load, service: Duration) -> usize {
    let whole = entries(l, Shard::ONE, service).await;
    assert!(
        whole.len() > 10,
        "a test with something to split: {}",
        whole.len()
    );
    for n in [1u32, 2, 3, 7] {
        let mut union = Vec::new();
        for index in 0..n {
            let shard = Shard { index, count: n };
            let part = entries(l, shard, service).await;
            assert!(part.iter().all(|e| shard.owns(e.0)), "{shard}: {part:?}");
            union.extend(part);
        }
        union.sort_unstable();
        assert_eq!(union, whole, "{n} shards");
    }
    whole.len()
}

fn stage(target: f64, ms: u64) -> Stage {
    Stage {
        target,
        duration: Duration::from_millis(ms),
    }
}

fn open_load(rate: Curve, sessions: Option<u64>, ms: u64) -> Load {
    load(
        LoadModel::Open {
            rate,
            max_in_flight: 10_000,
        },
        sessions,
        Some(Duration::from_millis(ms)),
    )
}

#[tokio::test(start_paused = true)]
async fn open_shards_together_make_the_unsharded_schedule() {
    let ms = Duration::from_millis;
    let constant = Curve::constant(50.0, Some(Duration::from_secs(1)));
    let n = shards_make_the_whole(&open_load(constant.clone(), None, 1_000), ms(35)).await;
    assert_eq!(n, 50);
    // A budget takes the global arrivals 0..S, wherever they fall.
    let n = shards_make_the_whole(&open_load(constant, Some(37), 1_000), ms(35)).await;
    assert_eq!(n, 37);
    let ramp = Curve {
        start: 0.0,
        stages: vec![stage(40.0, 1_000), stage(40.0, 500), stage(5.0, 500)],
    };
    let n = shards_make_the_whole(&open_load(ramp.clone(), None, 2_000), ms(35)).await;
    assert_eq!(n, 20 + 20 + 12, "11.25 in the ramp-down: arrivals 40..=51");
    let n = shards_make_the_whole(&open_load(ramp, Some(29), 2_000), ms(35)).await;
    assert_eq!(n, 29);
}

#[tokio::test(start_paused = true)]
async fn closed_shards_together_make_the_unsharded_clients() {
    // 37 ms sessions never end on a 100 ms ramp tick within these runs, so no ordering
    // of simultaneous wake-ups can decide anything.
    let service = Duration::from_millis(37);
    let constant = closed(5.0, 1_000);
    shards_make_the_whole(&constant, service).await;
    // Up, hold, down to 2 (slots emptied from the top), up again (slots filled anew, with
    // new seeds).
    let ramp = load(
        LoadModel::Closed {
            clients: Curve {
                start: 0.0,
                stages: vec![
                    stage(9.0, 1_000),
                    stage(9.0, 500),
                    stage(2.0, 500),
                    stage(7.0, 500),
                ],
            },
        },
        None,
        Some(Duration::from_millis(2_500)),
    );
    let whole = entries(&ramp, Shard::ONE, service).await;
    let generations: std::collections::BTreeSet<u64> =
        whole.iter().filter(|e| e.0 == 5).map(|e| e.2).collect();
    assert_eq!(
        generations.len(),
        2,
        "slot 5 was filled twice: {generations:?}"
    );
    shards_make_the_whole(&ramp, service).await;
    // A budget of at most the clients goes to the first slots, on every shard alike.
    let mut budget = closed(7.0, 10_000);
    budget.sessions = Some(5);
    let firsts = entries(&budget, Shard::ONE, service).await;
    assert_eq!(
        firsts.iter().map(|e| e.0).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4]
    );
    budget.sessions = Some(3);
    let mut union = Vec::new();
    for index in 0..3 {
        union.extend(entries(&budget, Shard { index, count: 3 }, service).await);
    }
    union.sort_unstable();
    assert_eq!(union, entries(&budget, Shard::ONE, service).await);
}

#[tokio::test(start_paused = true)]
async fn a_closed_budget_is_shared_exactly() {
    // More sessions than clients: which client runs the last ones is the timing's, but
    // every shard runs exactly its share and the shares add up. Session g = j + 4·m is
    // slot j's, so with 4 clients and 23 sessions: 6, 6, 6, 5 per slot.
    let mut l = closed(4.0, 60_000);
    l.sessions = Some(23);
    for n in [2u32, 3, 7] {
        let mut total = 0;
        for index in 0..n {
            let shard = Shard { index, count: n };
            let got = entries(&l, shard, Duration::from_millis(37)).await.len() as u64;
            let slots: u64 = (0..4)
                .filter(|&j| shard.owns(j))
                .map(|j| if j < 3 { 6 } else { 5 })
                .sum();
            assert_eq!(got, slots, "{shard}");
            total += got;
        }
        assert_eq!(total, 23, "{n} shards");
    }
}

#[tokio::test(start_paused = true)]
async fn a_shard_starts_on_the_anchor_and_keeps_its_share_of_the_cap() {
    // The anchor is the schedule's time zero: a deadline counts from it.
    let fake = Fake::new(Duration::from_millis(10));
    let mut stalled = Fake::new(Duration::from_millis(10));
    Arc::get_mut(&mut stalled).expect("unique").stall_until =
        Some(Instant::now() + Duration::from_secs(5));
    let l = load(
        LoadModel::Open {
            rate: Curve::constant(50.0, Some(Duration::from_secs(1))),
            max_in_flight: 5,
        },
        None,
        Some(Duration::from_secs(1)),
    );
    let t0 = Instant::now();
    let anchor = Anchor {
        shard: Shard { index: 1, count: 2 },
        start: t0,
    };
    let live = Arc::new(LiveCounters::default());
    run(
        &l,
        1,
        anchor,
        fake.clone(),
        live.clone(),
        StopSignals::default(),
    )
    .await;
    assert_eq!(
        live.completed.load(Ordering::SeqCst),
        25,
        "the odd arrivals"
    );
    let intended: Vec<Duration> = fake
        .log
        .lock()
        .expect("lock")
        .iter()
        .map(|(i, _)| *i - t0)
        .collect();
    assert_eq!(intended[0], Duration::from_millis(20), "arrival 1 at 20 ms");
    // A stalled server: shard 1/2 holds at most share(5) = 2 in flight, drops the rest.
    let live = Arc::new(LiveCounters::default());
    let anchor = Anchor {
        shard: Shard { index: 1, count: 2 },
        start: Instant::now(),
    };
    run(
        &l,
        1,
        anchor,
        stalled.clone(),
        live.clone(),
        StopSignals::default(),
    )
    .await;
    assert_eq!(stalled.peak.load(Ordering::SeqCst), 2);
    assert_eq!(live.dropped.load(Ordering::SeqCst), 25 - 2);
}

#[tokio::test(start_paused = true)]
async fn a_shard_with_no_clients_or_budget_ends_at_once() {
    let fake = Fake::new(Duration::from_millis(10));
    let one_client = closed(1.0, 60_000);
    let anchor = Anchor {
        shard: Shard { index: 1, count: 2 },
        start: Instant::now(),
    };
    let t0 = Instant::now();
    let live = Arc::new(LiveCounters::default());
    run(
        &one_client,
        1,
        anchor,
        fake.clone(),
        live.clone(),
        StopSignals::default(),
    )
    .await;
    assert_eq!(live.completed.load(Ordering::SeqCst), 0);
    assert_eq!(t0.elapsed(), Duration::ZERO);
    let mut one_session = open_load(Curve::constant(1.0, None), Some(1), 60_000);
    one_session.duration = None;
    let end = run(&one_session, 1, anchor, fake, live, StopSignals::default()).await;
    assert_eq!(end, FleetEnd::Budget);
    assert_eq!(
        t0.elapsed(),
        Duration::ZERO,
        "no wait for an arrival not ours"
    );
}

#[test]
fn budget_shares_add_up_for_every_model() {
    let models = [
        LoadModel::Open {
            rate: Curve::constant(5.0, None),
            max_in_flight: 10,
        },
        LoadModel::Arrivals {
            arrivals: Vec::new(),
            max_in_flight: 10,
        },
        LoadModel::Closed {
            clients: Curve::constant(4.0, None),
        },
        LoadModel::Closed {
            clients: Curve {
                start: 0.0,
                stages: vec![stage(9.0, 1_000), stage(2.0, 1_000)],
            },
        },
    ];
    for model in &models {
        for n in [1u32, 2, 3, 7, 11] {
            for s in [0u64, 1, 5, 9, 23, 100] {
                let sum: u64 = (0..n)
                    .map(|index| budget_share(model, Shard { index, count: n }, s))
                    .sum();
                assert_eq!(sum, s, "{n} shards, {s} sessions, {model:?}");
            }
        }
    }
}

/// An open loop that reaches its arrivals late (here: its schedule began 1.5 s ago, so
/// the deadline has passed too) still starts every arrival whose time came before the
/// deadline, with its lag; a drain for any other reason (Ctrl-C) starts none.
#[tokio::test(start_paused = true)]
async fn late_arrivals_before_the_deadline_are_started_and_other_drains_stop_them() {
    // 300 arrivals: more than tokio's cooperative budget lets the loop start before the
    // deadline's task runs, which is how a late loop used to lose the rest unnoticed.
    let l = open_load(
        Curve::constant(300.0, Some(Duration::from_secs(1))),
        None,
        1_000,
    );
    let late = Anchor {
        shard: Shard::ONE,
        start: Instant::now() - Duration::from_millis(1_500),
    };
    let fake = Fake::new(Duration::from_millis(10));
    let live = Arc::new(LiveCounters::default());
    let end = run(
        &l,
        1,
        late,
        fake.clone(),
        live.clone(),
        StopSignals::default(),
    )
    .await;
    assert_eq!(end, FleetEnd::Deadline);
    assert_eq!(fake.log.lock().expect("lock").len(), 300);
    assert_eq!(live.dropped.load(Ordering::SeqCst), 0);
    let all_late =
        (fake.lags.lock().expect("lock").iter()).all(|lag| *lag >= Duration::from_millis(500));
    assert!(all_late, "every arrival was started late, with its lag");

    let fake = Fake::new(Duration::from_millis(10));
    let stop = StopSignals::default();
    stop.drain.cancel();
    let late = Anchor {
        shard: Shard::ONE,
        start: Instant::now() - Duration::from_millis(500),
    };
    run(
        &l,
        1,
        late,
        fake.clone(),
        Arc::new(LiveCounters::default()),
        stop,
    )
    .await;
    assert!(
        fake.log.lock().expect("lock").is_empty(),
        "a Ctrl-C drain starts nothing"
    );
}

/// Set arrivals at `ms` offsets (personas alternating), ending with the last as the plan
/// makes them end.
fn set_arrivals(ms: &[u64], max_in_flight: u32, sessions: Option<u64>) -> Load {
    let arrivals: Vec<crate::plan::Arrival> = ms
        .iter()
        .enumerate()
        .map(|(k, &n)| crate::plan::Arrival {
            at: Duration::from_millis(n),
            persona: (k % 2) as u16,
        })
        .collect();
    let last = Duration::from_millis(ms.last().copied().unwrap_or_default());
    load(
        LoadModel::Arrivals {
            arrivals,
            max_in_flight,
        },
        sessions,
        Some(last),
    )
}

#[tokio::test(start_paused = true)]
async fn set_arrivals_start_at_their_times_as_arrival_k_of_the_list() {
    let l = set_arrivals(&[0, 100, 100, 400, 1_500], 10_000, None);
    let ms = Duration::from_millis;
    let t0 = Instant::now();
    let log = entries(&l, Shard::ONE, ms(250)).await;
    // Arrival k is client k (its persona is the list's k-th) at its own time; the last
    // is due at the deadline and still started, then finishes within the grace.
    let got: Vec<(u64, Duration)> = log.iter().map(|&(k, at, _)| (k, at)).collect();
    assert_eq!(
        got,
        [
            (0, ms(0)),
            (1, ms(100)),
            (2, ms(100)),
            (3, ms(400)),
            (4, ms(1_500))
        ]
    );
    assert_eq!(
        t0.elapsed(),
        ms(1_750),
        "the run ends with the last session"
    );
    // Each arrival's seed is its index's, as in the open model.
    let seeds: Vec<u64> = log.iter().map(|e| e.2).collect();
    let mut want = Vec::new();
    for k in 0..5 {
        let mut rng = SmallRng::seed_from_u64(client_seed(7, k));
        want.push(rand::RngCore::next_u64(&mut rng));
    }
    assert_eq!(seeds, want);

    let fake = Fake::new(ms(10));
    let t0 = Instant::now();
    let live = go(&l, &fake).await;
    assert_eq!(live.completed.load(Ordering::SeqCst), 5);
    for (intended, actual) in fake.log.lock().expect("lock").iter() {
        assert_eq!(actual, intended, "no lag under a paused clock");
        assert!(*intended - t0 <= ms(1_500));
    }
}

#[tokio::test(start_paused = true)]
async fn set_arrivals_are_capped_budgeted_late_and_sharded_as_the_open_model() {
    let ms = Duration::from_millis;
    // A stalled server and at most 4 in flight: the other 6 are dropped and counted.
    let mut stalled = Fake::new(ms(10));
    Arc::get_mut(&mut stalled).expect("unique").stall_until = Some(Instant::now() + ms(500));
    let ten: Vec<u64> = (0..10).map(|k| k * 10).collect();
    let live = go(&set_arrivals(&ten, 4, None), &stalled).await;
    assert_eq!(stalled.peak.load(Ordering::SeqCst), 4);
    assert_eq!(stalled.dropped.load(Ordering::SeqCst), 6);
    assert_eq!(live.dropped.load(Ordering::SeqCst), 6);

    // A budget takes the first arrivals of the list.
    let fake = Fake::new(ms(10));
    let live = Arc::new(LiveCounters::default());
    let anchor = Anchor::now();
    let l = set_arrivals(&ten, 100, Some(3));
    let end = run(&l, 1, anchor, fake.clone(), live, StopSignals::default()).await;
    assert_eq!(end, FleetEnd::Budget);
    assert_eq!(fake.log.lock().expect("lock").len(), 3);

    // A loop that reaches the list late starts every arrival, each with its lag.
    let fake = Fake::new(ms(10));
    let late = Anchor {
        shard: Shard::ONE,
        start: Instant::now() - ms(1_000),
    };
    let l = set_arrivals(&[0, 200, 400, 1_200], 100, None);
    let live = Arc::new(LiveCounters::default());
    run(&l, 1, late, fake.clone(), live, StopSignals::default()).await;
    let lags = fake.lags.lock().expect("lock").clone();
    assert_eq!(lags, [ms(1_000), ms(800), ms(600), ms(0)]);

    // N shards together run the list once, each arrival at its own time and seed.
    let many: Vec<u64> = (0..23).map(|k| k * k * 3).collect();
    let n = shards_make_the_whole(&set_arrivals(&many, 10_000, None), ms(35)).await;
    assert_eq!(n, 23);
    let n = shards_make_the_whole(&set_arrivals(&many, 10_000, Some(17)), ms(35)).await;
    assert_eq!(n, 17);
}
