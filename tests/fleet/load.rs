//! Load models end to end against the built-in server: an open model's arrivals, set
//! arrivals of named personas, a ramp, long-lived paced sessions, weighted mixes with
//! generated arguments and parallel calls, and the command-line overrides.

use crate::support::{check_schema, count, fleet_command, write_profile, FleetRun};
use mcp_fleet::cli::RunArgs;
use std::path::PathBuf;

#[tokio::test]
async fn an_open_model_starts_sessions_at_the_rate() {
    let json = FleetRun::new(RunArgs {
        profile: Some(PathBuf::from("profiles/open-handshake.toml")),
        overrides: mcp_fleet::cli::Overrides {
            rate: Some("200/s".into()),
            duration: Some("1s".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    check_schema(&json);
    assert_eq!(json["run"]["load"]["model"], "open");
    assert_eq!(json["sessions"]["started"], 200, "200/s for 1 s, exactly");
    assert_eq!(json["sessions"]["failed"], 0);
    assert_eq!(count(&json, "lag"), 200, "every arrival's lag is recorded");
    assert!(json["counters"]["dropped"].is_null());
    // Response time is measured from the intended start, so it is never below service.
    let s = &json["phases"]["session"];
    assert!(s["response"]["p50_us"].as_u64() >= s["p50_us"].as_u64());
}

#[tokio::test]
async fn arrivals_beyond_the_cap_are_dropped_loudly() {
    let fleet = FleetRun::default().profile(
        r#"
[load]
rate = "100/s"
duration = "1s"
max_in_flight = 5
[[scenario]]
name = "slow"
steps = [{ op = "tools/call", tool = "sleep", arguments = { ms = 400 } }]
"#,
    );
    let json = fleet.run().await.json;
    let dropped = json["counters"]["dropped"].as_u64().unwrap_or(0);
    let started = json["sessions"]["started"].as_u64().unwrap_or(0);
    assert!(
        dropped >= 70,
        "at most 5 × 400 ms sessions in flight: {dropped} dropped"
    );
    assert_eq!(started + dropped, 100);
}

#[tokio::test]
async fn long_lived_sessions_repeat_their_scenario_at_their_pace() {
    let fleet = FleetRun::default().profile(
        r#"
[load]
clients = 3
duration = "1s"
[[persona]]
name = "chatty"
shape = "long-lived"
pace = "10/s"
[[scenario]]
name = "tick"
steps = [{ op = "tools/call", tool = "echo", arguments = { message = "x" } }]
"#,
    );
    let json = fleet.run().await.json;
    check_schema(&json);
    assert_eq!(
        json["sessions"]["started"], 3,
        "one session per client, held open"
    );
    assert_eq!(json["sessions"]["completed"], 3);
    let calls = count(&json, "tools/call");
    assert!(
        (27..=33).contains(&calls),
        "3 sessions × 10/s × 1 s: {calls}"
    );
    assert_eq!(count(&json, "initialize"), 3);
}

#[tokio::test]
async fn mixes_generate_arguments_and_run_calls_in_parallel() {
    let fleet = FleetRun::default().profile(
        r#"
[load]
clients = 2
sessions = 6
[[scenario]]
name = "mix"
steps = [{ op = "mix", count = 10, parallel = 4, calls = [
  { tool = "echo", weight = 3 },
  { tool = "add", weight = 1 },
] }]
"#,
    );
    let json = fleet.run().await.json;
    check_schema(&json);
    assert_eq!(
        json["sessions"]["completed"], 6,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(count(&json, "tools/call"), 60);
    // The server checks arguments against its schema: generated ones pass.
    assert_eq!(json["phases"]["tools/call"]["errors"], 0);
    assert_eq!(json["phases"]["tools/call"]["tool_errors"], 0);
    // Schemas were learnt from one tools/list per session.
    assert_eq!(count(&json, "tools/list"), 6);
    let echo = json["tools"]["echo"]["count"].as_u64().unwrap_or(0);
    assert!(echo > 30, "weights 3:1 → {echo} of 60");
}

#[tokio::test]
async fn a_ramp_from_the_command_line_ends_with_its_stages() {
    let started = std::time::Instant::now();
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            ramp: Some("4:500ms,0:500ms".into()),
            think: Some("10ms..50ms".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    assert!(started.elapsed().as_secs_f64() < 5.0);
    assert_eq!(json["run"]["stopped_by"], "duration");
    assert_eq!(
        json["run"]["load"]["description"],
        "closed model, stages 4:500ms,0:500ms"
    );
    assert!(json["sessions"]["completed"].as_u64() > Some(4));
    assert_eq!(json["sessions"]["failed"], 0);
}

#[tokio::test]
async fn keep_alive_reuses_connections_across_sessions() {
    let json = FleetRun::new(RunArgs {
        profile: Some(PathBuf::from("profiles/quickstart.toml")),
        overrides: mcp_fleet::cli::Overrides {
            keep_alive: true,
            clients: Some(4),
            sessions: Some(80),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    check_schema(&json);
    assert_eq!(
        json["sessions"]["completed"], 80,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(count(&json, "connect"), 80);
    let opened = json["counters"]["http_connections"].as_u64().unwrap_or(0);
    assert!(
        opened <= 8,
        "4 clients share their connections: {opened} opened"
    );
}

/// `tools/call`'s service and response p99 (ms) and its count.
fn call_times(json: &serde_json::Value) -> (f64, f64, u64) {
    let p = &json["phases"]["tools/call"];
    let ms = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN) / 1000.0;
    (
        ms(&p["p99_us"]),
        ms(&p["response"]["p99_us"]),
        count(json, "tools/call"),
    )
}

/// One held session calling `sleep` (100 ms) at `pace`: the persona's own (`pace =`)
/// or the fleet's (`iteration_rate`).
fn sleeper(own_pace: Option<&str>, fleet_rate: Option<&str>) -> FleetRun {
    let pace = own_pace.map_or(String::new(), |p| format!("pace = \"{p}\""));
    let rate = fleet_rate.map_or(String::new(), |r| format!("iteration_rate = \"{r}\""));
    FleetRun::default().profile(&format!(
        r#"
[load]
clients = 1
duration = "1500ms"
{rate}
[[persona]]
name = "held"
shape = "long-lived"
{pace}
[[scenario]]
name = "slow"
steps = [{{ op = "tools/call", tool = "sleep", arguments = {{ ms = 100 }} }}]
"#
    ))
}

#[tokio::test]
async fn an_iteration_rate_paces_the_whole_fleet_and_times_each_call_from_its_slot() {
    // Four held sessions share 40 iterations a second: 40 calls a second in all,
    // whichever session is free.
    let fleet = FleetRun::default().profile(
        r#"
[load]
clients = 4
duration = "1s"
iteration_rate = "40/s"
[[persona]]
name = "held"
shape = "long-lived"
[[scenario]]
name = "tick"
steps = [{ op = "tools/call", tool = "echo", arguments = { message = "x" } }]
"#,
    );
    let json = fleet.run().await.json;
    check_schema(&json);
    assert_eq!(json["sessions"]["started"], 4, "one held session a client");
    assert_eq!(json["run"]["load"]["iteration_rate_per_s"], 40.0);
    let described = json["run"]["load"]["description"].as_str().unwrap_or("");
    assert!(described.contains("40 iterations/s in all"), "{described}");
    let calls = count(&json, "tools/call");
    assert!(
        (34..=44).contains(&calls),
        "40/s for 1 s across 4 sessions: {calls}"
    );

    // One session that serves 10 calls a second asked for 20: every call is later than
    // its slot by more than the last, and the response time (from the slot) says so.
    let late = sleeper(None, Some("20/s")).run().await.json;
    let (service, response, n) = call_times(&late);
    assert!(n >= 8, "{n} calls");
    assert!(
        response > service + 250.0,
        "behind the schedule: response p99 {response} ms, service p99 {service} ms"
    );
    // The same session asked for 5 a second keeps up: response ≈ service.
    let kept_up = sleeper(None, Some("5/s")).run().await.json;
    let (service, response, n) = call_times(&kept_up);
    assert!((5..=9).contains(&n), "5/s for 1.5 s: {n} calls");
    assert!(
        response < service + 60.0,
        "on schedule: response p99 {response} ms, service p99 {service} ms"
    );
}

#[tokio::test]
async fn a_personas_own_pace_times_a_late_call_from_its_due_time() {
    // 20/s asked of a session that serves 10/s: late calls count from their due time
    // (they used to count from when the session came free, hiding the delay).
    let late = sleeper(Some("20/s"), None).run().await.json;
    let (service, response, _) = call_times(&late);
    assert!(
        response > service + 250.0,
        "response p99 {response} ms, service p99 {service} ms"
    );
    let kept_up = sleeper(Some("5/s"), None).run().await.json;
    let (service, response, _) = call_times(&kept_up);
    assert!(
        response < service + 60.0,
        "response p99 {response} ms, service p99 {service} ms"
    );
}

#[tokio::test]
async fn dash_q_without_a_profile_holds_one_session_a_client_listing_tools() {
    let served = crate::support::Served::start(&[]);
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(served.url()),
            clients: Some(2),
            duration: Some("1s".into()),
            iteration_rate: Some("30/s".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["started"], 2, "{:#}", json["sessions"]);
    assert_eq!(json["sessions"]["failed"], 0);
    let lists = count(&json, "tools/list");
    assert!((25..=34).contains(&lists), "30/s for 1 s: {lists}");
    assert_eq!(
        count(&json, "resources/list"),
        0,
        "one request an iteration"
    );
}

#[tokio::test]
async fn an_iteration_rate_needs_held_sessions_without_a_pace_of_their_own() {
    let churn = FleetRun::default()
        .profile("[load]\nclients = 1\nsessions = 1\niteration_rate = \"10/s\"\n[[persona]]\nname = \"c\"\n")
        .error()
        .await;
    assert!(
        format!("{churn:#}").contains("no persona has shape = \"long-lived\""),
        "{churn:#}"
    );
    let both = FleetRun::default()
        .profile("[load]\nclients = 1\nduration = \"1s\"\niteration_rate = \"10/s\"\n[[persona]]\nname = \"c\"\nshape = \"long-lived\"\npace = \"2/s\"\n")
        .error()
        .await;
    assert!(format!("{both:#}").contains("pace both pace"), "{both:#}");
    let zero = FleetRun::default()
        .profile("[load]\nclients = 1\nduration = \"1s\"\niteration_rate = \"0/s\"\n[[persona]]\nname = \"c\"\nshape = \"long-lived\"\n")
        .error()
        .await;
    assert!(format!("{zero:#}").contains("iteration_rate"), "{zero:#}");
}

/// Five sessions of two personas at set times from 0 to 400 ms, each calling `sleep`
/// for 300 ms; a third persona is never named. No weights: the list says who comes.
const ARRIVALS: &str = r#"
name = "arrivals"
[load]
arrivals = [
  { at = "400ms", persona = "claude" },
  { at = "0s", persona = "claude" },
  { at = "100ms", persona = "cursor" },
  { at = "200ms", persona = "claude" },
  { at = "300ms", persona = "cursor" },
]
[[persona]]
name = "claude"
weight = 0
[[persona]]
name = "cursor"
weight = 0
[[persona]]
name = "never"
weight = 0
[[scenario]]
name = "slow"
steps = [{ op = "tools/call", tool = "sleep", arguments = { ms = 300 } }]
"#;

#[test]
fn set_arrivals_start_each_persona_at_its_time_and_the_run_waits_for_the_last() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(dir.path(), ARRIVALS);
    let out = dir.path().join("results");
    let started = std::time::Instant::now();
    let run = fleet_command()
        .args(["run", "--quiet", "--seed", "1", "--out"])
        .arg(&out)
        .arg(&profile)
        .output()
        .expect("runs");
    let took = started.elapsed();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    let json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    check_schema(&json);
    let load = &json["run"]["load"];
    assert_eq!(load["model"], "arrivals");
    assert_eq!(
        load["description"],
        "arrivals at set times, 5 sessions from 0s to 400ms, at most 10000 in flight"
    );
    assert!(load["clients"].is_null());
    assert_eq!(load["max_in_flight"], 10_000);
    assert_eq!(load["duration_s"], 0.4, "until the last arrival");
    assert_eq!(json["sessions"]["started"], 5);
    assert_eq!(
        json["sessions"]["completed"], 5,
        "{:#}",
        json["failure_examples"]
    );
    assert_eq!(json["personas"]["claude"]["sessions"], 3);
    assert_eq!(json["personas"]["cursor"]["sessions"], 2);
    assert!(
        json["personas"]["never"].is_null(),
        "a persona not named runs no session"
    );
    assert_eq!(count(&json, "lag"), 5, "every arrival's lag is recorded");
    assert_eq!(count(&json, "tools/call"), 5);
    // The last arrival (400 ms) ran its 300 ms call to the end: the run ended after it.
    let secs = json["run"]["duration_s"].as_f64().unwrap_or(0.0);
    assert!(secs >= 0.7, "the run lasted {secs} s");
    assert!(took.as_secs_f64() >= 0.7, "{took:?}");
    assert_eq!(json["run"]["stopped_by"], "duration");
}

#[test]
fn arrivals_of_an_unknown_persona_fail_validation_and_ceiling_refuses_arrivals() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wrong = ARRIVALS.replace(
        r#"at = "300ms", persona = "cursor""#,
        r#"at = "300ms", persona = "gpt""#,
    );
    let profile = write_profile(dir.path(), &wrong);
    let out = fleet_command()
        .arg("validate")
        .arg(&profile)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("profile.toml: `load.arrivals[4].persona`: names no persona: \"gpt\""),
        "{err}"
    );
    assert!(
        err.contains("fix: use one of the profile's persona names (claude, cursor, never)"),
        "{err}"
    );

    let profile = write_profile(dir.path(), ARRIVALS);
    let out = fleet_command()
        .arg("validate")
        .arg(&profile)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("load     arrivals at set times, 5 sessions"),
        "{text}"
    );
    assert!(text.contains("stop after 400ms"), "{text}");

    // A ceiling has no rate to climb in a list of arrivals.
    let out = fleet_command()
        .arg("ceiling")
        .arg(&profile)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[load] arrivals") && err.contains("fix: "),
        "{err}"
    );
}
