//! `profiles/wild-mix.toml` as a user runs it (shortened): good, buggy, authenticated and
//! task-using clients together against the built-in server with tokens required — every
//! persona ran, every committed fault was handled, tokens and tasks were timed, and no
//! session failed. Also the case that mix found: a buggy client's health check on a new
//! connection carries the session's token.

use crate::support::{builtin_http, check_schema, codes, count, counter, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::ServerOptions;
use std::path::PathBuf;

fn wild_mix(sessions: u64) -> FleetRun {
    FleetRun::new(RunArgs {
        profile: Some(PathBuf::from("profiles/wild-mix.toml")),
        overrides: mcp_fleet::cli::Overrides {
            sessions: Some(sessions),
            duration: Some("60s".into()),
            think: Some("0ms".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
}

#[tokio::test]
async fn the_wild_mix_runs_every_kind_of_client_together() {
    let json = wild_mix(300).run().await.json;
    check_schema(&json);
    assert_eq!(json["sessions"]["completed"], 300, "{:#}", json["failures"]);
    assert_eq!(json["failures"], serde_json::json!({}));
    for persona in ["desktop", "service", "tasks", "buggy"] {
        let n = json["personas"][persona]["sessions"].as_u64().unwrap_or(0);
        assert!(n > 0, "{persona} ran no session");
    }
    // The service mints its token once (the discovery walk first), the others use theirs.
    assert!(count(&json, "token") >= 1);
    assert!(count(&json, "auth") >= 1);
    assert!(json["counters"]["tokens_minted"].as_u64() >= Some(1));
    // Tasks: created by tools/call, polled, fetched or cancelled.
    let tasks = count(&json, "task");
    assert!(tasks > 0);
    let cancelled = count(&json, "tasks/cancel");
    assert_eq!(count(&json, "tasks/result") + cancelled, tasks);
    assert!(count(&json, "tasks/get") >= tasks);
    // Buggy clients: faults committed, all handled, no robustness finding.
    let faults = json["client_faults"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!faults.is_empty(), "no fault committed");
    for f in &faults {
        assert_eq!(f["persona"], "buggy");
        assert_eq!(f["verdicts"]["handled"], f["sessions"], "{f:#}");
    }
    let findings = json["findings"].as_array().cloned().unwrap_or_default();
    assert!(
        findings
            .iter()
            .all(|f| !f["code"].as_str().unwrap_or("").starts_with("robustness.")),
        "{findings:#?}"
    );
    for t in &json["thresholds"].as_array().cloned().unwrap_or_default() {
        assert_eq!(t["passed"], true, "{t:#}");
    }
}

#[tokio::test]
async fn the_wild_mix_against_a_server_without_oauth_goes_without_tokens() {
    // Authorization is optional in MCP: a server with no protected resource metadata
    // that never answers 401 is not at fault, and the service persona (client
    // credentials, found through the discovery) goes ahead without a token.
    let server = builtin_http(ServerOptions {
        tasks: true,
        ..ServerOptions::default()
    })
    .await;
    let json = FleetRun::new(RunArgs {
        profile: Some(PathBuf::from("profiles/wild-mix.toml")),
        overrides: mcp_fleet::cli::Overrides {
            target: Some(server.url()),
            sessions: Some(200),
            duration: Some("60s".into()),
            think: Some("0ms".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    check_schema(&json);
    assert_eq!(json["sessions"]["completed"], 200, "{:#}", json["failures"]);
    assert_eq!(json["sessions"]["unreachable"], 0);
    assert_eq!(json["failures"], serde_json::json!({}));
    assert!(json["personas"]["service"]["sessions"].as_u64() > Some(0));
    let auth: Vec<String> = codes(&json)
        .into_iter()
        .filter(|c| c.starts_with("auth."))
        .collect();
    assert!(auth.is_empty(), "{auth:?}");
    assert_eq!(counter(&json, "tokens_minted"), 0);
    assert_eq!(count(&json, "auth"), 0);
    assert!(
        json["diagnosis"]["cause"].is_null(),
        "{}",
        json["diagnosis"]
    );
}

#[tokio::test]
async fn a_buggy_clients_second_connection_carries_its_token() {
    // `vanish` drops the connection and checks the server on a new one: behind `[target]
    // auth` that one needs the session's token too, or a 401 passes for a crash.
    let text = std::fs::read_to_string("profiles/wild-mix.toml").expect("the profile");
    let only_vanish = format!(
        "{}\n",
        text.lines()
            .filter(|l| !l.trim_start().starts_with("{ fault = ") || l.contains("vanish"))
            .collect::<Vec<_>>()
            .join("\n")
    )
    .replace(
        "{ fault = \"vanish\", share = 0.1 },",
        "{ fault = \"vanish\", share = 1.0 },",
    )
    .replace("file:data/wild-tokens.txt", &tokens_path());
    let fleet = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            sessions: Some(60),
            duration: Some("60s".into()),
            think: Some("0ms".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&only_vanish);
    let json = fleet.run().await.json;
    let faults = json["client_faults"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(faults.len(), 1, "{faults:#?}");
    assert_eq!(faults[0]["fault"], "vanish");
    assert_eq!(faults[0]["verdicts"]["handled"], faults[0]["sessions"]);
    assert_eq!(faults[0]["verdicts"]["crashed"], 0);
    assert_eq!(json["sessions"]["failed"], 0);
}

/// The profile's tokens file, by an absolute path (the test writes its copy elsewhere).
fn tokens_path() -> String {
    let p = std::fs::canonicalize("profiles/data/wild-tokens.txt").expect("tokens file");
    format!("file:{}", p.display())
}
