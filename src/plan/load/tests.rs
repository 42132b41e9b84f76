//! `[load]` resolved from profile text: models, ends, pauses and the loads that could
//! start no session.

use super::*;

fn load(text: &str) -> Result<Load, PlanError> {
    let p = crate::profile::Profile::parse(text, "p.toml").expect("parses");
    Load::from_section(&p.load, &crate::plan::persona::names(&p.personas), "p.toml")
}

#[test]
fn models_are_inferred_and_checked() {
    let l =
        load("[load]\nrate = \"200/s\"\nduration = \"10s\"\nmax_in_flight = 50\n").expect("open");
    assert!(matches!(
        l.model,
        LoadModel::Open {
            max_in_flight: 50,
            ..
        }
    ));
    let l = load("[load]\nstages = [{ clients = 5, duration = \"2s\" }, { clients = 0, duration = \"1s\" }]\n")
        .expect("closed stages");
    assert_eq!(l.duration, Some(Duration::from_secs(3)));
    assert_eq!(l.sessions, None);
    let l = load("[load]\nstages = [{ rate = \"10/s\", duration = \"5s\" }]\nduration = \"2s\"\n")
        .expect("open stages");
    assert_eq!(
        l.duration,
        Some(Duration::from_secs(2)),
        "the shorter end wins"
    );
    for (text, want) in [
        ("[load]\nrate = \"5/s\"\n", "an open model needs an end"),
        (
            "[load]\nrate = \"5/s\"\nclients = 3\nduration = \"1s\"\n",
            "sets both",
        ),
        (
            "[load]\nclients = 3\nmax_in_flight = 5\n",
            "only applies to an open model",
        ),
        (
            "[load]\nstages = [{ clients = 1, rate = \"1/s\", duration = \"1s\" }]\n",
            "every stage needs",
        ),
        ("[load]\nstages = []\n", "is empty"),
        ("[load]\nthink = \"1s..100ms\"\n", "ends before it starts"),
    ] {
        let e = load(text).expect_err(text).to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}

#[test]
fn a_load_that_can_start_no_session_is_refused() {
    for (text, want) in [
        (
            "[load]\nstages = [{ clients = 0, duration = \"1s\" }]\n",
            "never reaches one client",
        ),
        (
            "[load]\nstages = [{ rate = \"0/s\", duration = \"5s\" }, { rate = \"0/s\", duration = \"5s\" }]\n",
            "the rate stays 0",
        ),
        // The stages would start sessions, but only after the run has ended.
        (
            "[load]\nstages = [{ clients = 0, duration = \"10s\" }, { clients = 5, duration = \"10s\" }]\nduration = \"5s\"\n",
            "never reaches one client",
        ),
        (
            "[load]\nstages = [{ rate = \"0/s\", duration = \"10s\" }, { rate = \"9/s\", duration = \"10s\" }]\nduration = \"10s\"\n",
            "the rate stays 0",
        ),
        ("[load]\nrate = \"0/s\"\nduration = \"5s\"\n", "load.rate"),
    ] {
        let e = load(text).expect_err(text).to_string();
        assert!(e.contains(want) && e.contains("fix: "), "{text}: {e}");
    }
    // Reaching one client (rounded) or any rate before the end is enough.
    for ok in [
        "[load]\nstages = [{ clients = 1, duration = \"1s\" }]\n",
        "[load]\nstages = [{ clients = 0, duration = \"1s\" }, { clients = 4, duration = \"1s\" }]\nduration = \"1500ms\"\n",
        "[load]\nstages = [{ rate = \"1/m\", duration = \"1s\" }]\n",
    ] {
        load(ok).expect(ok);
    }
}

#[test]
fn reconnecting_and_giving_up_are_load_settings() {
    let l = load("[load]\nclients = 2\n").expect("defaults");
    assert_eq!(l.reconnect, Some(DEFAULT_BACKOFF), "on by default");
    assert_eq!(l.abort_on_unreachable, None, "off by default");
    let l =
        load("[load]\nreconnect_backoff = \"off\"\nabort_on_unreachable = \"30s\"\n").expect("set");
    assert_eq!(l.reconnect, None);
    assert_eq!(l.abort_on_unreachable, Some(Duration::from_secs(30)));
    let e = load("[load]\nabort_on_unreachable = \"0s\"\n").expect_err("zero");
    assert!(e.to_string().contains("load.abort_on_unreachable"), "{e}");
}

#[test]
fn events_happen_inside_the_run_in_time_order() {
    let l = load(
        "[load]\nclients = 5\nduration = \"10m\"\nevents = [{ at = \"5m\", storm = \"reconnect\" }, { at = \"1m\", storm = \"reconnect\" }]",
    )
    .expect("two storms");
    let at: Vec<u64> = l.events.iter().map(|e| e.at.as_secs()).collect();
    assert_eq!(at, [60, 300]);
    assert_eq!(l.events[0].storm, Storm::Reconnect);
    let l = load(
        "[load]\nclients = 5\nduration = \"1m\"\nevents = [{ at = \"1s\", storm = \"list-changed\" }, { at = \"2s\", storm = \"list-changed\", count = 50 }]",
    )
    .expect("list changes");
    assert_eq!(l.events[0].storm, Storm::ListChanged { count: 1 });
    assert_eq!(l.events[1].storm, Storm::ListChanged { count: 50 });
    for (text, key) in [
        (
            "duration = \"1m\"\nevents = [{ at = \"2m\", storm = \"reconnect\" }]",
            "load.events[0].at",
        ),
        (
            "sessions = 5\nevents = [{ at = \"1s\", storm = \"reconnect\" }]",
            "load.events[0].at",
        ),
        (
            "duration = \"1m\"\nevents = [{ at = \"1s\", storm = \"thunder\" }]",
            "load.events[0].storm",
        ),
        (
            "duration = \"1m\"\nevents = [{ at = \"1s\", storm = \"list-changed\", count = 0 }]",
            "load.events[0].count",
        ),
        (
            "duration = \"1m\"\nevents = [{ at = \"1s\", storm = \"reconnect\", count = 2 }]",
            "load.events[0].count",
        ),
    ] {
        let e = load(&format!("[load]\n{text}")).expect_err(text);
        assert!(e.to_string().contains(key), "{text}: {e}");
    }
}

#[test]
fn an_event_at_a_share_of_the_run_scales_with_its_length() {
    for (duration, secs) in [("1h", 1440), ("30s", 12)] {
        let l = load(&format!(
            "[load]\nclients = 5\nduration = \"{duration}\"\nevents = [{{ at = \"40%\", storm = \"reconnect\" }}]"
        ))
        .expect("a share");
        assert_eq!(l.events[0].at.as_secs(), secs, "{duration}");
    }
    let e = load(
        "[load]\nclients = 5\nduration = \"30s\"\nevents = [{ at = \"25m\", storm = \"reconnect\" }]",
    )
    .expect_err("past the end");
    let text = e.to_string();
    assert!(
        text.contains("25m is not before the end of the run (30s)"),
        "{text}"
    );
    assert!(text.contains("share of the run"), "{text}");
    for bad in ["100%", "-5%", "half"] {
        let profile = format!(
            "[load]\nclients = 5\nduration = \"1m\"\nevents = [{{ at = \"{bad}\", storm = \"reconnect\" }}]"
        );
        load(&profile).expect_err(bad);
    }
}
