//! The watcher against real processes and a real results folder.

use super::*;
use crate::plan::{Overrides, Source};
use std::time::Duration;

fn plan(overrides: Overrides) -> Plan {
    let overrides = Overrides {
        target: Some("http://127.0.0.1:9/mcp".into()),
        interval: Some("50ms".into()),
        ..overrides
    };
    Plan::from_source(&Source::CommandLine, &overrides).expect("plan")
}

fn series<'a>(all: &'a [Series], name: &str) -> &'a Series {
    all.iter().find(|s| s.name == name).unwrap_or_else(|| {
        panic!(
            "no {name} in {:?}",
            all.iter().map(|s| &s.name).collect::<Vec<_>>()
        )
    })
}

#[tokio::test]
async fn a_spawned_process_is_sampled_until_it_is_killed() {
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .expect("spawn sleep");
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = plan(Overrides {
        server_pids: vec![child.id()],
        ..Default::default()
    });
    let watcher = Watcher::start(&plan, ChildRegistry::default(), Instant::now(), dir.path())
        .expect("starts");
    tokio::time::sleep(Duration::from_millis(300)).await;
    child.kill().expect("kill");
    child.wait().expect("reap");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let all = watcher.stop().await;
    let rss = series(&all, "server.rss");
    assert!(rss.points.iter().any(|p| p[1] > 0.0), "{rss:?}");
    let fds = series(&all, "server.fds");
    assert!(fds.points.iter().any(|p| p[1] >= 3.0), "{fds:?}");
    let procs = &series(&all, "server.processes").points;
    assert_eq!(procs.first().map(|p| p[1]), Some(1.0), "{procs:?}");
    assert_eq!(procs.last().map(|p| p[1]), Some(0.0), "gone: {procs:?}");
    assert!(procs.windows(2).all(|w| w[0][0] < w[1][0]), "time order");
    let gen = series(&all, "generator.rss");
    assert!(gen.points.iter().all(|p| p[1] > 0.0));
    let lag = series(&all, "generator.lag");
    assert_eq!(lag.unit, SeriesUnit::Seconds);
    let csv = std::fs::read_to_string(dir.path().join(CSV_FILE)).expect("csv");
    assert!(csv.starts_with("t_s,series,unit,value\n"), "{csv}");
    assert!(csv.contains(",server.rss,bytes,"), "{csv}");
}

#[tokio::test]
async fn a_missing_process_or_cgroup_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan_pid = plan(Overrides {
        server_pids: vec![u32::MAX - 1],
        ..Default::default()
    });
    let e = Watcher::start(
        &plan_pid,
        ChildRegistry::default(),
        Instant::now(),
        dir.path(),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(e.contains("no process 4294967294 (--server-pid"), "{e}");
    let plan_cg = plan(Overrides {
        server_cgroup: Some(dir.path().display().to_string()),
        ..Default::default()
    });
    let e = Watcher::start(
        &plan_cg,
        ChildRegistry::default(),
        Instant::now(),
        dir.path(),
    )
    .err()
    .map(|e| e.to_string())
    .unwrap_or_default();
    assert!(e.contains("not a cgroup v2 folder"), "{e}");
}
