//! The shapes a resource series takes in a soak, made up point by point: each must get
//! its own verdict and only that one.

use super::*;

/// Deterministic noise in ±`amp`.
fn noise(amp: f64) -> impl FnMut() -> f64 {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 2.0 * amp
    }
}

/// 120 s at 1 s: `fleet.sessions` ending 10 a second (`per_s`), and `name` from `f(t)`.
fn run(name: &str, unit: SeriesUnit, per_s: f64, mut f: impl FnMut(f64) -> f64) -> Vec<Series> {
    let mut v = Series::new(name, unit);
    let mut x = Series::new(SESSIONS, SeriesUnit::Count);
    for i in 1..=120 {
        let t = i as f64;
        v.push(t, f(t));
        x.push(t, (per_s * t).floor());
    }
    vec![v, x]
}

fn per_session(s: &Slope) -> &PerCount {
    s.per
        .iter()
        .find(|p| p.per == "session")
        .expect("per session")
}

fn judged(all: &[Series]) -> Slope {
    judge(&all[0], all, 0.0, 12.0, 120.0).expect("enough points")
}

#[test]
fn a_linear_leak_per_session_is_a_leak_with_its_figure() {
    let mut n = noise(2e6);
    let all = run("server.rss", SeriesUnit::Bytes, 10.0, |t| {
        5e7 + 72.0 * 1024.0 * 10.0 * t + n()
    });
    let s = judged(&all);
    assert_eq!(s.trend, Some(Trend::Leak), "{}", s.decided_by);
    let per = per_session(&s);
    assert!((per.value / 1024.0 - 72.0).abs() < 3.0, "{per:?}");
    assert!(per.ci95[0] > 60.0 * 1024.0, "{per:?}");
    assert!(s.decided_by.contains("per session"), "{}", s.decided_by);
}

#[test]
fn growth_that_stops_is_a_warm_up_not_a_leak() {
    // Sessions held for 5 s, then reclaimed: memory climbs to a plateau and stays,
    // wobbling by 1 MB.
    let mut n = noise(1e6);
    let all = run("server.rss", SeriesUnit::Bytes, 50.0, |t| {
        8e6 + 11e6 * (t / 20.0).min(1.0) + n()
    });
    let s = judged(&all);
    assert_eq!(s.trend, Some(Trend::WarmUp), "{}", s.decided_by);
    let at = s.levels_off_at_s.expect("where it levels off");
    assert!((15.0..=30.0).contains(&at), "{at}");
    // The figures are those after the plateau: nothing kept per session.
    let per = per_session(&s);
    assert!(per.value.abs() < FLOOR_BYTES_PER_SESSION, "{per:?}");
}

#[test]
fn noise_is_no_trend_and_says_how_long_a_run_would_tell() {
    let mut n = noise(3e7);
    let all = run("server.rss", SeriesUnit::Bytes, 0.1, |_| 1.8e8 + n());
    let s = judged(&all);
    assert_eq!(s.trend, Some(Trend::NoTrend), "{}", s.decided_by);
    // Too few sessions ended (12): judged in time, and a longer run could tell.
    assert!(s.decided_by.contains("per second"), "{}", s.decided_by);
    assert!(s.needs_s.is_some_and(|n| n > 108.0), "{s:?}");
    let flat = run("server.fds", SeriesUnit::Count, 10.0, |_| 40.0);
    assert_eq!(judged(&flat).trend, Some(Trend::NoTrend));
}

#[test]
fn a_series_pinned_at_the_servers_limit_is_a_verdict_of_its_own() {
    // One descriptor per session until the open-file limit, then flat: after a fixed
    // warm-up the steady part alone would show no slope.
    let mut all = run("server.fds", SeriesUnit::Count, 1000.0, |t| {
        (1000.0 * t).min(20_000.0)
    });
    let mut limit = Series::new(FDS_LIMIT, SeriesUnit::Count);
    for i in 1..=120 {
        limit.push(i as f64, 20_000.0);
    }
    all.push(limit);
    let s = judged(&all);
    assert_eq!(s.trend, Some(Trend::AtLimit), "{}", s.decided_by);
    assert_eq!((s.limit, s.at_limit_from_s), (Some(20_000.0), Some(19.0)));
    let per = per_session(&s);
    assert!((per.value - 1.0).abs() < 0.01, "{per:?}");
    // Without a limit to reach, the same series simply levelled off; below the
    // limit, growth to the end is an ordinary leak.
    all[2].points.iter_mut().for_each(|p| p[1] = 1e6);
    assert_eq!(judged(&all).trend, Some(Trend::WarmUp));
    all[0].points.iter_mut().for_each(|p| p[1] = 1000.0 * p[0]);
    assert_eq!(judged(&all).trend, Some(Trend::Leak));
}

#[test]
fn a_leak_behind_a_warm_up_jump_is_still_a_leak() {
    let all = run("server.rss", SeriesUnit::Bytes, 10.0, |t| {
        let jump = if t < 10.0 { 3e6 * t } else { 3e7 };
        5e6 + jump + 45.0 * 1024.0 * 10.0 * t
    });
    let s = judged(&all);
    assert_eq!(s.trend, Some(Trend::Leak), "{}", s.decided_by);
    let per = per_session(&s);
    assert!((per.value / 1024.0 - 45.0).abs() < 1.0, "{per:?}");
}

#[test]
fn without_churn_growth_is_judged_in_time() {
    let all = run("server.threads", SeriesUnit::Count, 0.0, |t| {
        10.0 + t / 10.0
    });
    let s = judged(&all);
    assert_eq!(s.trend, Some(Trend::Leak), "{}", s.decided_by);
    assert!(s.per.is_empty(), "{:?}", s.per);
    assert!(s.decided_by.contains("per second"), "{}", s.decided_by);
}

#[test]
fn only_levels_are_judged() {
    for (name, unit, yes) in [
        ("server.rss", SeriesUnit::Bytes, true),
        ("scrape.mcp_active_sessions", SeriesUnit::Count, true),
        ("server.cpu", SeriesUnit::Cores, false),
        ("generator.cpu_share", SeriesUnit::Count, false),
        ("generator.lag", SeriesUnit::Seconds, false),
        (FDS_LIMIT, SeriesUnit::Count, false),
        (SESSIONS, SeriesUnit::Count, false),
    ] {
        assert_eq!(super::judged(&Series::new(name, unit)), yes, "{name}");
    }
}

#[test]
fn memory_that_stops_when_descriptors_hit_their_limit_was_capped_not_warmed_up() {
    // The leak keeps 256 KiB and a descriptor per session; at 20,000 descriptors the
    // server takes almost no more sessions, and both series go flat.
    let sessions = |t: f64| {
        if t <= 80.0 {
            250.0 * t
        } else {
            20_000.0 + 3.0 * (t - 80.0)
        }
    };
    let mut rss = Series::new("server.rss", SeriesUnit::Bytes);
    let mut fds = Series::new("server.fds", SeriesUnit::Count);
    let mut limit = Series::new(FDS_LIMIT, SeriesUnit::Count);
    let mut x = Series::new(SESSIONS, SeriesUnit::Count);
    for i in 1..=120 {
        let t = i as f64;
        let kept = sessions(t).min(20_000.0);
        rss.push(t, 1e8 + 256.0 * 1024.0 * kept);
        fds.push(t, 10.0 + kept.min(19_990.0));
        limit.push(t, 20_000.0);
        x.push(t, sessions(t));
    }
    let all = vec![rss, fds, limit, x];
    let slopes = fit::slopes(&all, 12.0, 120.0);
    let get = |name: &str| slopes.iter().find(|s| s.series == name).expect(name);
    assert_eq!(get("server.fds").trend, Some(Trend::AtLimit));
    let rss = get("server.rss");
    assert_eq!(rss.trend, Some(Trend::AtLimit), "{}", rss.decided_by);
    assert!(
        rss.decided_by.contains("FDs reached the server's limit"),
        "{}",
        rss.decided_by
    );
    let per = per_session(rss);
    assert!((per.value / 1024.0 - 256.0).abs() < 2.0, "{per:?}");
    // Without a limit to name, the plateau came with the sessions stopping: the growth
    // while they came decides, a leak.
    let mut free = all.clone();
    free[2].points.iter_mut().for_each(|p| p[1] = 1e6);
    let slopes = fit::slopes(&free, 12.0, 120.0);
    let rss = slopes
        .iter()
        .find(|s| s.series == "server.rss")
        .expect("rss");
    assert_eq!(rss.trend, Some(Trend::Leak), "{}", rss.decided_by);
    assert!(
        rss.decided_by.contains("nearly stopped"),
        "{}",
        rss.decided_by
    );
}
