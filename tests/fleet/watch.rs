//! Watching the server and the generator: the real binary serving HTTP in its own
//! process, watched by pid and scraped at its `/metrics`; the built-in server over stdio,
//! its children watched without asking.

use crate::support::{builtin_stdio, check_schema, FleetRun, Served};
use mcp_fleet::cli::{Overrides, RunArgs};
use serde_json::Value;

/// A series' values from `summary.json`.
fn values(json: &Value, name: &str) -> Vec<f64> {
    let all = json["resources"].as_array().cloned().unwrap_or_default();
    let s = all.iter().find(|s| s["name"] == name).unwrap_or_else(|| {
        let names: Vec<&Value> = all.iter().map(|s| &s["name"]).collect();
        panic!("no series {name} in {names:?}")
    });
    s["points"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p[1].as_f64()).collect())
        .unwrap_or_default()
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::MIN, f64::max)
}

#[tokio::test]
async fn a_server_in_its_own_process_is_watched_by_pid_and_scraped() {
    let served = Served::start(&[]);
    let (pid, addr) = (served.pid(), served.addr.clone());
    let fleet = FleetRun::new(RunArgs {
        overrides: Overrides {
            target: Some(format!("http://{addr}/mcp")),
            server_pids: vec![pid],
            // The password is sent (Basic auth) and written nowhere.
            server_metrics: Some(format!("http://scraper:s3cret-watch@{addr}/metrics")),
            interval: Some("100ms".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(
        r#"
[load]
clients = 2
duration = "1500ms"
[watch]
series = ["mcp_active_sessions", "mcp_sessions_total"]
"#,
    );
    let finished = fleet.run().await;
    let json = &finished.json;
    check_schema(json);
    assert!(json["sessions"]["completed"].as_u64() > Some(0));
    let rss = values(json, "server.rss");
    assert!(rss.len() >= 5, "about one point per 100ms: {rss:?}");
    assert!(max(&rss) > 1_048_576.0, "a real process's RSS: {rss:?}");
    assert!(max(&values(json, "server.fds")) >= 3.0);
    assert_eq!(max(&values(json, "server.processes")), 1.0);
    // Watched locally, so the scraped process figures keep their own names.
    assert!(max(&values(json, "scrape.process_resident_memory_bytes")) > 1_048_576.0);
    assert!(values(json, "scrape.mcp_active_sessions")
        .iter()
        .all(|&n| (0.0..=2.0).contains(&n)));
    assert!(max(&values(json, "scrape.mcp_sessions_total")) >= 1.0);
    assert_eq!(max(&values(json, "scrape.failures")), 0.0);
    let cpu = values(json, "generator.cpu");
    assert!(cpu.iter().all(|&c| (0.0..=64.0).contains(&c)), "{cpu:?}");
    assert!(max(&values(json, "generator.rss")) > 1_048_576.0);
    let share = values(json, "generator.cpu_share");
    assert!(share.iter().all(|&s| (0.0..=1.0).contains(&s)), "{share:?}");
    let csv = std::fs::read_to_string(finished.dir.path().join("resources.csv")).expect("csv");
    assert!(csv.starts_with("t_s,series,unit,value\n"), "{csv}");
    assert!(csv.contains(",scrape.mcp_sessions_total,count,"), "{csv}");
    for entry in std::fs::read_dir(finished.dir.path()).expect("results") {
        let path = entry.expect("entry").path();
        let bytes = std::fs::read(&path).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains("s3cret-watch"),
            "{} holds the secret",
            path.display()
        );
    }
    drop(served);
}

#[tokio::test]
async fn stdio_children_are_watched_without_asking() {
    let json = FleetRun::new(RunArgs {
        overrides: Overrides {
            stdio: Some(builtin_stdio(&[])),
            clients: Some(2),
            duration: Some("1s".into()),
            sessions: None,
            interval: Some("50ms".into()),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    check_schema(&json);
    assert!(max(&values(&json, "server.processes")) >= 1.0);
    assert!(max(&values(&json, "server.rss.max")) > 0.0);
    assert!(max(&values(&json, "server.rss.p99")) <= max(&values(&json, "server.rss.max")));
}

#[tokio::test]
async fn a_server_pid_that_is_not_there_stops_the_run_before_it_starts() {
    let e = FleetRun::new(RunArgs {
        overrides: Overrides {
            server_pids: vec![u32::MAX - 2],
            sessions: Some(1),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .error()
    .await;
    assert!(e.to_string().contains("no process 4294967293"), "{e}");
}
