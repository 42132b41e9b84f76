//! `[load] arrivals` resolved: sorted, the personas by id, the run's length, every
//! refusal with its key and fix, the persona per session, and the command line's load
//! flags replacing the list.

use crate::plan::{Arrival, LoadModel, Overrides, Plan, PlanError};
use crate::profile::Profile;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::time::Duration;

const PERSONAS: &str = "[[persona]]\nname = \"claude-1\"\n[[persona]]\nname = \"cursor-2\"\n";

fn plan_with(load: &str, overrides: &Overrides) -> Result<Plan, PlanError> {
    let text = format!("[load]\n{load}\n{PERSONAS}");
    let profile = Profile::parse(&text, "p.toml").expect("parses");
    Plan::resolve(profile, overrides, "p.toml")
}

fn plan(load: &str) -> Result<Plan, PlanError> {
    plan_with(load, &Overrides::default())
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const FIVE: &str = r#"arrivals = [
  { at = "400ms", persona = "cursor-2" },
  { at = "0s", persona = "claude-1" },
  { at = "1.5s", persona = "claude-1" },
  { at = "100ms", persona = "cursor-2" },
  { at = "100ms", persona = "claude-1" },
]"#;

#[test]
fn arrivals_are_sorted_by_time_keeping_the_order_of_ties() {
    let p = plan(FIVE).expect("resolves");
    let LoadModel::Arrivals {
        arrivals,
        max_in_flight,
    } = &p.load.model
    else {
        panic!("set arrivals: {:?}", p.load.model);
    };
    let at = |n, persona| Arrival { at: ms(n), persona };
    assert_eq!(
        arrivals,
        &[at(0, 0), at(100, 1), at(100, 0), at(400, 1), at(1_500, 0)],
        "by time; the two at 100 ms in the profile's order"
    );
    assert_eq!(*max_in_flight, 10_000, "the open model's default cap");
    // No duration: the run lasts until the last arrival (then the grace), with no
    // default session budget.
    assert_eq!(p.load.duration, Some(ms(1_500)));
    assert_eq!(p.load.sessions, None);
    assert_eq!(p.load.grace, Duration::from_secs(5));
    assert_eq!(p.load.clients(), 10_000);
    assert_eq!(
        p.load.describe(),
        "arrivals at set times, 5 sessions from 0s to 1s 500ms, at most 10000 in flight"
    );
}

#[test]
fn a_duration_session_budget_and_cap_apply_as_in_the_open_model() {
    let p = plan(&format!(
        "{FIVE}\nduration = \"200ms\"\nsessions = 2\nmax_in_flight = 3"
    ))
    .expect("resolves");
    assert_eq!(
        p.load.duration,
        Some(ms(200)),
        "a shorter duration stops it earlier"
    );
    assert_eq!(p.load.sessions, Some(2));
    assert!(matches!(
        p.load.model,
        LoadModel::Arrivals {
            max_in_flight: 3,
            ..
        }
    ));
    assert!(
        p.load.describe().ends_with("(3 before the deadline)"),
        "{}",
        p.load.describe()
    );
    // A longer one keeps long-lived sessions open after the last arrival.
    let p = plan(&format!("{FIVE}\nduration = \"1m\"")).expect("resolves");
    assert_eq!(p.load.duration, Some(Duration::from_secs(60)));
    // Every arrival at 0 s still makes a run with a deadline after its start.
    let p = plan("arrivals = [{ at = \"0s\", persona = \"claude-1\" }]").expect("resolves");
    assert_eq!(p.load.duration, Some(ms(1)));
}

#[test]
fn wrong_arrivals_are_refused_with_the_key_and_the_fix() {
    let one = r#"arrivals = [{ at = "1s", persona = "claude-1" }]"#;
    for (load, key, problem) in [
        (
            "arrivals = []",
            "load.arrivals",
            "is empty, so no session would start",
        ),
        (
            r#"arrivals = [{ at = "0s", persona = "claude-1" }, { at = "soon", persona = "claude-1" }]"#,
            "load.arrivals[1].at",
            "\"soon\" is not a duration",
        ),
        (
            r#"arrivals = [{ at = "1s", persona = "gpt" }]"#,
            "load.arrivals[0].persona",
            "names no persona: \"gpt\"",
        ),
        (&format!("{one}\nclients = 4"), "load.arrivals", "`clients`"),
        (
            &format!("{one}\nrate = \"5/s\"\nduration = \"1s\""),
            "load.arrivals",
            "`rate`",
        ),
        (
            &format!("{one}\nstages = [{{ rate = \"5/s\", duration = \"1s\" }}]"),
            "load.arrivals",
            "`stages`",
        ),
        (
            &format!("{one}\niteration_rate = \"10/s\""),
            "load.arrivals",
            "`iteration_rate`",
        ),
        (
            &format!("{one}\nmax_in_flight = 0"),
            "load.max_in_flight",
            "is 0",
        ),
        (
            &format!("{one}\nduration = \"500ms\""),
            "load.duration",
            "ends before the first arrival (at 1s)",
        ),
    ] {
        let e = plan(load).expect_err(load);
        assert_eq!(e.origin, "p.toml", "{load}");
        assert_eq!(e.key, key, "{load}: {e}");
        assert!(e.problem.contains(problem), "{load}: {e}");
        assert!(!e.fix.is_empty(), "{load}");
    }
    let e = plan(r#"arrivals = [{ at = "1s", persona = "gpt" }]"#).expect_err("unknown");
    assert!(
        e.fix.contains("claude-1, cursor-2"),
        "the names to use: {e}"
    );
}

#[test]
fn the_persona_is_the_arrivals_never_drawn_and_weights_do_not_matter() {
    // Weights of 0 everywhere would refuse any other model.
    let text = format!(
        "[load]\n{FIVE}\n[[persona]]\nname = \"claude-1\"\nweight = 0\n[[persona]]\nname = \"cursor-2\"\nweight = 0\n[[persona]]\nname = \"unused\"\nweight = 0\n"
    );
    let p = Plan::resolve(
        Profile::parse(&text, "p.toml").expect("parses"),
        &Overrides::default(),
        "p.toml",
    )
    .expect("weights are not needed");
    assert!(p.persona_weights.is_none());
    let mut rng = SmallRng::seed_from_u64(1);
    let untouched = rng.clone();
    let names: Vec<&str> = (0..5)
        .map(|k| p.session_persona(k, &mut rng).name.as_str())
        .collect();
    assert_eq!(
        names,
        ["claude-1", "cursor-2", "claude-1", "cursor-2", "claude-1"]
    );
    assert_eq!(
        format!("{rng:?}"),
        format!("{untouched:?}"),
        "nothing drawn"
    );
    assert_eq!(p.persona_shares(), [0.6, 0.4, 0.0], "shares of the list");
    let shown = p.describe();
    assert!(shown.contains("claude-1"), "{shown}");
    assert!(shown.contains(" 60.0%"), "{shown}");
    assert!(!shown.contains("think"), "no think time: {shown}");
    // The default persona when the profile has none.
    let p = Plan::resolve(
        Profile::parse(
            "[load]\narrivals = [{ at = \"0s\", persona = \"default\" }]\n",
            "p.toml",
        )
        .expect("parses"),
        &Overrides::default(),
        "p.toml",
    )
    .expect("the default persona");
    assert_eq!(p.session_persona(0, &mut rng).name, "default");
}

#[test]
fn a_load_model_on_the_command_line_replaces_the_arrivals() {
    let rate = Overrides {
        rate: Some("20/s".into()),
        duration: Some("1s".into()),
        ..Default::default()
    };
    let p = plan_with(FIVE, &rate).expect("the rate replaces the list");
    assert!(matches!(p.load.model, LoadModel::Open { .. }));
    assert!(
        p.persona_weights.is_some(),
        "personas drawn by weight again"
    );
    assert!(
        p.effective_profile.load.arrivals.is_none(),
        "{:?}",
        p.effective_profile.load
    );
    for o in [
        Overrides {
            clients: Some(3),
            ..Default::default()
        },
        Overrides {
            ramp: Some("3:1s".into()),
            ..Default::default()
        },
    ] {
        let p = plan_with(FIVE, &o).expect("clients replace the list");
        assert!(matches!(p.load.model, LoadModel::Closed { .. }), "{o:?}");
    }
    // The other load flags apply to the arrivals.
    let o = Overrides {
        duration: Some("300ms".into()),
        sessions: Some(4),
        max_in_flight: Some(2),
        ..Default::default()
    };
    let p = plan_with(FIVE, &o).expect("flags on arrivals");
    assert_eq!((p.load.duration, p.load.sessions), (Some(ms(300)), Some(4)));
    assert!(matches!(
        p.load.model,
        LoadModel::Arrivals {
            max_in_flight: 2,
            ..
        }
    ));
    // -q cannot pace sessions the list starts one by one.
    let o = Overrides {
        iteration_rate: Some("10/s".into()),
        ..Default::default()
    };
    let e = plan_with(FIVE, &o).expect_err("-q");
    assert_eq!(e.key, "load.arrivals", "{e}");
    assert!(e.problem.contains("iteration_rate"), "{e}");
}

#[test]
fn a_shard_runs_its_arrivals() {
    let p = plan(FIVE).expect("resolves");
    let shard = crate::shard::Shard { index: 1, count: 2 };
    assert_eq!(
        p.describe_shard(shard, false),
        "  shard    1/2 (arrivals k with k mod 2 = 1)\n"
    );
}
