//! Tests of the live view: the block's figures and lines, drawn from fake counters.

use super::*;
use crate::metrics::{IntervalRow, SessionOutcome};

#[tokio::test]
async fn block_shows_rates_latency_and_errors() {
    let live = Arc::new(LiveCounters::default());
    live.completed.store(90, Ordering::Relaxed);
    live.failed.store(10, Ordering::Relaxed);
    let started = Instant::now();
    let mut view = View {
        goal: Goal {
            duration: None,
            sessions: Some(400),
            target: "8 clients".into(),
        },
        live,
        started,
        last: (started, 0),
        resources: None,
    };
    let mut f = LiveFigures {
        totals: vec![(0, 0); Phase::COUNT],
        ..LiveFigures::default()
    };
    f.totals[Phase::Initialize.index()] = (100, 2);
    f.failures.insert("timeout".into(), 2);
    f.last.push(IntervalRow {
        start_s: 0.0,
        len_s: 1.0,
        phase: Phase::Initialize,
        count: 50,
        errors: 1,
        p50_us: 1_200,
        p90_us: 2_000,
        p95_us: 2_000,
        p99_us: 4_500,
        max_us: 9_000,
    });
    // Listeners' fan-out is a headline figure too.
    f.last.push(IntervalRow {
        start_s: 0.0,
        len_s: 1.0,
        phase: Phase::FanOut,
        count: 80,
        errors: 0,
        p50_us: 900,
        p90_us: 2_000,
        p95_us: 2_500,
        p99_us: 3_100,
        max_us: 3_500,
    });
    let now = started + Duration::from_secs(1);
    let rate = view.rate(now);
    let text = bar_message(&view, &f, now, rate);
    assert!(text.starts_with("8 clients · "), "{text}");
    assert!(text.contains("100.0 sessions/s"), "{text}");
    assert!(text.contains("1.20ms") && text.contains("4.50ms"), "{text}");
    assert!(text.contains("errors: timeout 2"), "{text}");
    let one = line(&mut view, &f, started + Duration::from_secs(2));
    assert!(
        one.starts_with("[mcp-fleet]") && !one.contains('\n'),
        "{one}"
    );
    assert!(
        one.contains("p99 initialize 4.50ms, fanout 3.10ms"),
        "{one}"
    );
    assert!(one.contains("(300 sessions left"), "{one}");
    assert!(one.contains(" · 8 clients · "), "{one}");
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_target_is_named_while_it_lasts() {
    let live = Arc::new(LiveCounters::default());
    let started = Instant::now();
    let mut view = View {
        goal: Goal {
            duration: None,
            sessions: Some(100),
            target: "2 clients".into(),
        },
        live: live.clone(),
        started,
        last: (started, 0),
        resources: None,
    };
    let f = LiveFigures::default();
    live.session_ended(SessionOutcome::Completed);
    tokio::time::advance(Duration::from_secs(3)).await;
    live.session_ended(SessionOutcome::Unreachable);
    live.session_ended(SessionOutcome::Unreachable);
    let now = started + Duration::from_secs(5);
    let text = bar_message(&view, &f, now, 0.0);
    assert!(
        text.contains("TARGET UNREACHABLE since 3.0s (for 2.0s)"),
        "{text}"
    );
    assert!(text.contains("1 ok 0 failed 2 unreachable"), "{text}");
    assert!(
        line(&mut view, &f, now).contains("97 sessions left"),
        "the budget pays for them"
    );
    assert_eq!(view.progress(Duration::from_secs(5)), Some(0.03));
    assert!(line(&mut view, &f, now).contains("TARGET UNREACHABLE since 3.0s"));
    live.session_ended(SessionOutcome::Completed);
    let text = bar_message(&view, &f, now, 0.0);
    assert!(!text.contains("UNREACHABLE"), "reached again: {text}");
    // A push output in trouble is said in both forms while it lasts.
    live.set_push_warning(Some(
        "PUSH FAILING: prometheus-rw http://x/: refused".into(),
    ));
    assert!(bar_message(&view, &f, now, 0.0).contains("PUSH FAILING"));
    assert!(line(&mut view, &f, now).contains("PUSH FAILING"));
    live.set_push_warning(None);
    assert!(!line(&mut view, &f, now).contains("PUSH"));
}

#[test]
fn progress_is_whichever_of_time_and_sessions_ends_first() {
    let live = Arc::new(LiveCounters::default());
    let started = Instant::now();
    let view = |duration: Option<u64>, sessions: Option<u64>| View {
        goal: Goal {
            duration: duration.map(Duration::from_secs),
            sessions,
            target: "4 clients".into(),
        },
        live: live.clone(),
        started,
        last: (started, 0),
        resources: None,
    };
    live.completed.store(30, Ordering::Relaxed);
    let at = Duration::from_secs(5);
    assert_eq!(view(Some(10), None).progress(at), Some(0.5));
    assert_eq!(view(None, Some(40)).progress(at), Some(0.75));
    assert_eq!(view(Some(10), Some(40)).progress(at), Some(0.75));
    assert_eq!(view(Some(4), Some(40)).progress(at), Some(1.0));
    assert_eq!(view(None, None).progress(at), None, "a spinner");
    let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    assert_eq!(secs(view(Some(10), None).eta(at, 0.0)), Some(5.0));
    assert_eq!(secs(view(None, Some(40)).eta(at, 2.0)), Some(5.0));
    assert_eq!(secs(view(None, Some(40)).eta(at, 0.0)), None, "no rate yet");
    assert_eq!(secs(view(Some(100), Some(40)).eta(at, 5.0)), Some(2.0));
}

#[test]
fn watched_resources_and_a_busy_generator_are_one_line() {
    use crate::metrics::resources::SeriesUnit;
    let r = Latest {
        t_s: 3.0,
        values: vec![
            ("server.rss".into(), SeriesUnit::Bytes, 50.0 * 1048576.0),
            ("server.cpu".into(), SeriesUnit::Cores, 0.25),
            ("server.fds".into(), SeriesUnit::Count, 42.0),
            ("server.processes".into(), SeriesUnit::Count, 1.0),
            ("generator.cpu_share".into(), SeriesUnit::Count, 0.97),
            ("generator.lag".into(), SeriesUnit::Seconds, 0.002),
        ],
        scrape_failures: 0,
        bottleneck: Some(
            "the generator is at 97 % CPU: figures describe mcp-fleet, not the server".into(),
        ),
    };
    let line = resources_line(&r).unwrap_or_default();
    assert!(
        line.contains("server rss 50.0MiB cpu 0.25 fds 42"),
        "{line}"
    );
    assert!(line.contains("generator cpu 97% lag 2.00ms"), "{line}");
    assert!(
        line.contains("WARNING: the generator is at 97 % CPU: figures describe mcp-fleet"),
        "{line}"
    );
    assert_eq!(resources_line(&Latest::default()), None);
}
