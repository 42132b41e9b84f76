//! Load models end to end against the built-in server: an open model's arrivals, a
//! ramp, long-lived paced sessions, weighted mixes with generated arguments and
//! parallel calls, and the command-line overrides.

use crate::support::{check_schema, count, FleetRun};
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
