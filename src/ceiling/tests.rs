//! Unit tests of the ceiling search: the ladder and its bisection against fake servers,
//! the knee, and every verdict on what bounds the ceiling, where it must fire and where
//! it must stay silent.

use super::search::{self, Ladder};
use super::step::{PhaseFigures, ServerLoad, StepFigures};
use super::verdict::{answer, knee, BoundKind, Context};
use crate::summary::soak::GeneratorLoad;

/// Climb `ladder` against a server that passes every rate up to `capacity`.
fn climb(ladder: &Ladder, capacity: f64) -> Vec<(f64, bool)> {
    let mut steps = Vec::new();
    while let Some(rate) = ladder.next(&steps) {
        steps.push((rate, rate <= capacity));
        assert!(steps.len() < 60, "the search ends: {steps:?}");
    }
    steps
}

#[test]
fn the_ladder_climbs_then_bisects_to_the_resolution() {
    let ladder = Ladder::new(10.0, 10_000.0, 2.0, 0.05).expect("ladder");
    for capacity in [37.0, 200.0, 1_000.0, 5_000.0] {
        let steps = climb(&ladder, capacity);
        let rates: Vec<f64> = steps.iter().map(|s| s.0).collect();
        assert_eq!(&rates[..3], &[10.0, 20.0, 40.0][..rates.len().min(3)]);
        let search::Bracket::Between { passed, failed } = search::bracket(&steps) else {
            panic!("bracketed: {steps:?}");
        };
        assert!(passed <= capacity && failed > capacity, "{steps:?}");
        assert!(failed / passed <= 1.05 + 0.01, "to 5 %: {passed} {failed}");
        // Two decades at ×2 and a bisection to 5 %: a dozen steps, not more.
        assert!(steps.len() <= 16, "{} steps: {steps:?}", steps.len());
    }
}

#[test]
fn the_ladder_stops_at_its_top_and_at_a_failing_first_step() {
    let ladder = Ladder::new(10.0, 100.0, 2.0, 0.05).expect("ladder");
    let all = climb(&ladder, f64::INFINITY);
    let rates: Vec<f64> = all.iter().map(|s| s.0).collect();
    assert_eq!(rates, vec![10.0, 20.0, 40.0, 80.0, 100.0]);
    assert_eq!(search::bracket(&all), search::Bracket::AllPassed);
    let none = climb(&ladder, 1.0);
    assert_eq!(none, vec![(10.0, false)]);
    assert_eq!(search::bracket(&none), search::Bracket::NonePassed);
}

#[test]
fn a_retried_rate_passes_when_any_try_passes_and_fails_only_when_all_do() {
    let ladder = Ladder {
        retries: 1,
        ..Ladder::new(10.0, 10_000.0, 2.0, 0.05).expect("ladder")
    };
    // A server that holds 1,000/s, with one stall: the first try at 40/s fails.
    let mut steps: Vec<(f64, bool)> = Vec::new();
    while let Some(rate) = ladder.next(&steps) {
        let stalled = rate == 40.0 && !steps.iter().any(|s| s.0 == 40.0);
        steps.push((rate, rate <= 1_000.0 && !stalled));
        assert!(steps.len() < 60, "the search ends: {steps:?}");
    }
    assert_eq!(
        &steps[..4],
        &[(10.0, true), (20.0, true), (40.0, false), (40.0, true)]
    );
    let search::Bracket::Between { passed, failed } = search::bracket(&steps) else {
        panic!("bracketed: {steps:?}");
    };
    assert!(
        passed <= 1_000.0 && failed > 1_000.0,
        "past the stall: {steps:?}"
    );
    // Every failing rate above the capacity was tried twice, no rate three times.
    for &(rate, _) in &steps {
        let tries = steps.iter().filter(|s| s.0 == rate).count();
        assert_eq!(
            tries,
            if rate > 1_000.0 || rate == 40.0 { 2 } else { 1 },
            "{rate}: {steps:?}"
        );
    }
    // Without retries the same stall sets the ceiling at 20/s.
    let once = Ladder::new(10.0, 10_000.0, 2.0, 0.05).expect("ladder");
    let mut steps: Vec<(f64, bool)> = Vec::new();
    while let Some(rate) = once.next(&steps) {
        steps.push((rate, rate <= 1_000.0 && rate != 40.0));
        assert!(steps.len() < 60, "the search ends: {steps:?}");
    }
    let search::Bracket::Between { passed, failed } = search::bracket(&steps) else {
        panic!("bracketed: {steps:?}");
    };
    assert!(
        failed == 40.0 && passed < 40.0,
        "the stall decides: {steps:?}"
    );
    // A lowest rate that fails every try: the search ends there, tried 1 + retries times.
    let twice = Ladder {
        retries: 2,
        ..Ladder::new(10.0, 100.0, 2.0, 0.05).expect("ladder")
    };
    assert_eq!(climb(&twice, 1.0), vec![(10.0, false); 3]);
}

#[test]
fn the_answer_of_a_retried_search_reads_the_try_that_decided() {
    let mut stalled = step(100.0, false, 900.0);
    stalled.reasons = vec!["p99(initialize) < 50ms: 900ms (a stall)".into()];
    let mut last = step(200.0, false, 400.0);
    last.reasons = vec!["p99(initialize) < 50ms: 400ms (the second try)".into()];
    let steps = vec![
        step(50.0, true, 21.0),
        stalled,
        step(100.0, true, 22.0),
        step(200.0, false, 380.0),
        last,
        step(150.0, true, 48.0),
    ];
    let a = answer(&steps, &ctx());
    assert_eq!(a.ceiling_per_s, Some(150.0));
    assert_eq!(a.first_failing_per_s, Some(200.0));
    assert_eq!(
        a.failures_past,
        vec!["p99(initialize) < 50ms: 400ms (the second try)".to_string()]
    );
    assert!(!a.why.contains("a stall"), "{}", a.why);
}

#[test]
fn a_ladder_of_clients_climbs_in_whole_clients() {
    let ladder = Ladder {
        whole: true,
        ..Ladder::new(1.0, 64.0, 2.0, 0.05).expect("ladder")
    };
    let steps = climb(&ladder, 9.0);
    assert!(steps.iter().all(|(n, _)| n.fract() == 0.0), "{steps:?}");
    assert_eq!(
        search::bracket(&steps),
        search::Bracket::Between {
            passed: 9.0,
            failed: 10.0
        },
        "{steps:?}"
    );
}

#[test]
fn bad_ladders_and_rates_are_refused_and_rates_round_to_three_figures() {
    assert!(Ladder::new(0.0, 10.0, 2.0, 0.05).is_err());
    assert!(Ladder::new(10.0, 5.0, 2.0, 0.05).is_err());
    assert!(Ladder::new(10.0, 50.0, 1.0, 0.05).is_err());
    assert!(Ladder::new(10.0, 50.0, 2.0, 0.0).is_err());
    assert_eq!(search::round(141.4213), 141.0);
    assert_eq!(search::round(1414.213), 1410.0);
    assert_eq!(search::round(9.87654), 9.88);
    assert_eq!(search::parse_rate("500/s", "--to").expect("rate"), 500.0);
    assert_eq!(search::parse_rate("120/m", "--to").expect("rate"), 2.0);
    assert_eq!(search::parse_rate("75", "--to").expect("rate"), 75.0);
    assert!(search::parse_rate("fast", "--to").is_err());
    assert_eq!(search::parse_share("5%").expect("share"), 0.05);
    assert_eq!(search::parse_share("0.1").expect("share"), 0.1);
    assert_eq!(super::step::rate_name(12.5), "12.5");
    assert_eq!(super::step::folder(3, 40.0), "steps/03-40");
    assert_eq!(super::server::count_cpus("0-3,6,8-9"), Some(7));
    assert_eq!(super::server::count_cpus("1"), Some(1));
}

/// A step at `rate` with p99 (of `initialize` and `session`) `p99_ms`.
fn step(rate: f64, passed: bool, p99_ms: f64) -> StepFigures {
    let us = (p99_ms * 1000.0) as u64;
    let phase = PhaseFigures {
        count: 100,
        errors: 0,
        p50_us: Some(us / 2),
        p95_us: Some(us),
        p99_us: Some(us),
    };
    StepFigures {
        offered_per_s: rate,
        achieved_per_s: rate,
        passed,
        reasons: if passed {
            Vec::new()
        } else {
            vec![format!("p99(initialize) < 50ms: {p99_ms}ms")]
        },
        started: (rate * 10.0) as u64,
        completed: (rate * 10.0) as u64,
        calls_per_session: 4.0,
        phases: [
            ("initialize".to_string(), phase.clone()),
            ("session".to_string(), phase),
        ]
        .into_iter()
        .collect(),
        server: ServerLoad {
            cpu_cores: Some(0.2),
            threads_max: Some(4.0),
            fds_max: Some(30.0),
            ..ServerLoad::default()
        },
        generator: GeneratorLoad {
            cpu_share_max: Some(0.2),
            lag_p99_ms: Some(1.0),
            ..GeneratorLoad::default()
        },
        ..StepFigures::default()
    }
}

/// A search that passed 50, 100, 150/s and failed at 200/s (p99 rising past 100/s).
fn searched() -> Vec<StepFigures> {
    vec![
        step(50.0, true, 21.0),
        step(100.0, true, 22.0),
        step(200.0, false, 400.0),
        step(150.0, true, 48.0),
    ]
}

fn ctx() -> Context {
    Context {
        server_cores: Some(2.0),
        server_fd_limit: Some(1024),
        knee_phase: "initialize".into(),
        clients: false,
        shards: 1,
    }
}

#[test]
fn the_answer_is_the_highest_passing_rate_with_its_calls_and_knee() {
    let a = answer(&searched(), &ctx());
    assert_eq!(a.ceiling_per_s, Some(150.0));
    assert_eq!(a.calls_per_s, Some(600.0));
    assert_eq!(a.first_failing_per_s, Some(200.0));
    assert_eq!(a.knee_per_s, Some(100.0));
    assert_eq!(a.failures_past, vec!["p99(initialize) < 50ms: 400ms"]);
    // Idle CPU, rising latency: queueing; not the CPU, not the generator.
    assert_eq!(a.bound, BoundKind::Queueing, "{}", a.why);
    assert!(a.why.contains("0.20 of its 2 cores"), "{}", a.why);
    assert!(!a.lower_bound && a.notes.is_empty());
}

#[test]
fn the_knee_needs_a_steep_rise_over_the_lowest_step() {
    let steps = searched();
    let refs: Vec<&StepFigures> = steps.iter().collect();
    assert_eq!(knee(&refs, "initialize"), Some(100.0));
    let flat = [
        step(50.0, true, 1.0),
        step(100.0, true, 1.5),
        step(200.0, true, 1.9),
    ];
    let refs: Vec<&StepFigures> = flat.iter().collect();
    assert_eq!(
        knee(&refs, "initialize"),
        None,
        "sub-millisecond jitter is no knee"
    );
    assert_eq!(knee(&refs, "tools/call"), None, "no such phase");
    // A slow first step (a cold start) is not the base.
    let cold = [
        step(50.0, true, 30.0),
        step(100.0, true, 10.0),
        step(150.0, true, 12.0),
        step(200.0, false, 45.0),
    ];
    let refs: Vec<&StepFigures> = cold.iter().collect();
    assert_eq!(knee(&refs, "initialize"), Some(150.0));
}

#[test]
fn a_busy_server_cpu_bounds_the_ceiling_and_idle_cpu_does_not() {
    let mut steps = searched();
    steps[2].server.cpu_cores = Some(1.9);
    let a = answer(&steps, &ctx());
    assert_eq!(a.bound, BoundKind::ServerCpu, "{}", a.why);
    assert!(a.why.contains("1.90 of its 2 cores"), "{}", a.why);
    // The same step on a server with 8 cores: queueing.
    let a = answer(
        &steps,
        &Context {
            server_cores: Some(8.0),
            ..ctx()
        },
    );
    assert_eq!(a.bound, BoundKind::Queueing, "{}", a.why);
}

#[test]
fn a_busy_generator_makes_the_ceiling_a_lower_bound_and_a_calm_one_does_not() {
    let mut steps = searched();
    steps[2].generator.bottleneck = true;
    steps[2].generator.reasons =
        vec!["the generator's scheduler lag p99 was 40.0 ms (> 10 ms)".into()];
    let a = answer(&steps, &ctx());
    assert_eq!(a.bound, BoundKind::Generator, "{}", a.why);
    assert!(a.lower_bound);
    assert!(
        a.why.contains("lower bound") && a.why.contains("--processes"),
        "{}",
        a.why
    );
    // Busy only at a passing step: a note, not the bound.
    let mut steps = searched();
    steps[1].generator.bottleneck = true;
    steps[1].generator.reasons = vec!["busy".into()];
    let a = answer(&steps, &ctx());
    assert_eq!(a.bound, BoundKind::Queueing);
    assert!(!a.lower_bound);
    assert_eq!(a.notes.len(), 1, "{:?}", a.notes);
    // A machine busy with other work at the deciding step: not the generator's bound,
    // but said, with the ceiling possibly low.
    let mut steps = searched();
    steps[2].generator.machine_busy = true;
    let a = answer(&steps, &ctx());
    assert_eq!(a.bound, BoundKind::Queueing);
    assert!(!a.lower_bound);
    assert!(
        a.notes
            .iter()
            .any(|n| n.contains("machine was busy") && n.contains("deciding step")),
        "{:?}",
        a.notes
    );
}

#[test]
fn failed_connects_and_a_full_descriptor_table_bound_it_and_stray_ones_do_not() {
    let mut steps = searched();
    steps[2].failures.insert("connect_failed".into(), 300);
    steps[2].failure_examples.insert(
        "connect_failed".into(),
        "Connection refused (os error 111)".into(),
    );
    let a = answer(&steps, &ctx());
    assert_eq!(a.bound, BoundKind::Connections, "{}", a.why);
    assert!(a.why.contains("refused"), "{}", a.why);
    // One failed connect in 2,000 sessions is noise.
    steps[2].failures.insert("connect_failed".into(), 1);
    assert_eq!(answer(&steps, &ctx()).bound, BoundKind::Queueing);
    // The server's descriptors at its limit.
    steps[2].server.fds_max = Some(1020.0);
    let a = answer(&steps, &ctx());
    assert_eq!(a.bound, BoundKind::Connections, "{}", a.why);
    assert!(a.why.contains("ulimit"), "{}", a.why);
    let a = answer(
        &steps,
        &Context {
            server_fd_limit: None,
            ..ctx()
        },
    );
    assert_eq!(
        a.bound,
        BoundKind::Queueing,
        "no known limit, no verdict on it"
    );
}

#[test]
fn an_unwatched_server_says_latency_and_asks_to_be_watched() {
    let mut steps = searched();
    for s in &mut steps {
        s.server = ServerLoad::default();
    }
    let a = answer(
        &steps,
        &Context {
            server_cores: None,
            ..ctx()
        },
    );
    assert_eq!(a.bound, BoundKind::Latency, "{}", a.why);
    assert!(a.why.contains("--server-pid"), "{}", a.why);
    // Watched: it says which.
    assert_ne!(answer(&searched(), &ctx()).bound, BoundKind::Latency);
}

#[test]
fn no_ceiling_below_the_top_and_none_above_the_bottom_are_said_so() {
    let all = [step(10.0, true, 5.0), step(20.0, true, 5.0)];
    let a = answer(&all, &ctx());
    assert_eq!(a.bound, BoundKind::NotReached);
    assert_eq!(a.ceiling_per_s, Some(20.0));
    assert!(a.why.contains("raise --to"), "{}", a.why);
    let none = [step(10.0, false, 80.0)];
    let a = answer(&none, &ctx());
    assert_eq!((a.bound, a.ceiling_per_s), (BoundKind::BelowLowest, None));
    assert_eq!(a.first_failing_per_s, Some(10.0));
    // A step cut short by a signal decides nothing.
    let mut cut = searched();
    cut[2].interrupted = true;
    let a = answer(&cut, &ctx());
    assert_eq!(
        (a.bound, a.ceiling_per_s),
        (BoundKind::NotReached, Some(150.0))
    );
}

#[test]
fn the_report_draws_a_chart_per_phase_and_the_file_round_trips() {
    let steps = searched();
    let file = super::file::CeilingFile {
        schema_version: super::file::SCHEMA_VERSION,
        settings: super::file::Settings {
            slos: vec!["p99(initialize) < 50ms".into()],
            target: "http://127.0.0.1:1/mcp".into(),
            server_cores: Some(2.0),
            ..Default::default()
        },
        answer: Some(answer(&steps, &ctx())),
        steps,
        ..Default::default()
    };
    let page = super::html::render(&file);
    assert_eq!(
        page.matches("<svg").count(),
        4,
        "initialize, session, rate, CPU"
    );
    assert!(page.contains("SLO p99(initialize) &lt; 50ms") && page.contains(">knee<"));
    let dir = tempfile::tempdir().expect("tempdir");
    file.write(dir.path()).expect("write");
    assert_eq!(
        super::file::CeilingFile::read(dir.path()).expect("read"),
        file
    );
    let text = super::file::verdict_text(file.answer.as_ref().expect("answer"), false);
    assert!(
        text.starts_with("ceiling: 150 sessions/s (600 calls/s)"),
        "{text}"
    );
}

#[test]
fn each_local_shard_gets_the_searchs_options_its_shard_and_the_shared_folder() {
    use std::ffi::OsString;
    let os = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
    let argv = os(&[
        "p.toml",
        "--processes",
        "2",
        "--from=20/s",
        "--out",
        "res",
        "--quiet",
        "-v",
        "--slo",
        "p99(initialize) < 50ms",
    ]);
    let extra = os(&["--target", "http://127.0.0.1:1/mcp", "--server-pid", "7"]);
    let leader = super::local::shard_args(
        &argv,
        &extra,
        crate::shard::Shard { index: 0, count: 2 },
        std::path::Path::new("res"),
        false,
    );
    assert_eq!(
        leader,
        os(&[
            "p.toml",
            "--from=20/s",
            "-v",
            "--slo",
            "p99(initialize) < 50ms",
            "--target",
            "http://127.0.0.1:1/mcp",
            "--server-pid",
            "7",
            "--shard",
            "0/2",
            "--out",
            "res",
        ])
    );
    // The others are quiet (their logs are files); so is the leader under --quiet.
    let follower = super::local::shard_args(
        &argv,
        &[],
        crate::shard::Shard { index: 1, count: 2 },
        std::path::Path::new("res"),
        false,
    );
    assert_eq!(follower.last(), Some(&OsString::from("--quiet")));
    assert!(follower.contains(&OsString::from("1/2")));
}
