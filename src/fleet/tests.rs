//! The scheduler under a paused clock, with a fake session that takes a fixed time:
//! exact session counts, arrival times, ramps, drops and stopping.

use super::*;
use crate::plan::Stage;
use std::sync::Mutex;

/// A session that takes `service` (or blocks until `stall_until`), recording when it was
/// meant to start and when it did.
struct Fake {
    service: Duration,
    stall_until: Option<Instant>,
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
            log: Mutex::new(Vec::new()),
            lags: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            peak: AtomicU64::new(0),
        })
    }
}

impl Work for Fake {
    async fn session(
        &self,
        intended: Instant,
        _rng: &mut SmallRng,
        _cache: &mut ResponseCache,
        stop: &StopSignals,
    ) -> SessionOutcome {
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
    }
}

async fn go(l: &Load, fake: &Arc<Fake>) -> Arc<LiveCounters> {
    let live = Arc::new(LiveCounters::default());
    run(l, 1, fake.clone(), live.clone(), StopSignals::default()).await;
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
    let end = run(&open, 1, fake.clone(), live, StopSignals::default()).await;
    assert_eq!(
        end,
        FleetEnd::Deadline,
        "an open model ends with its duration"
    );
}
