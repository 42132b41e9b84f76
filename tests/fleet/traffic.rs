//! The traffic soak tests are made of, end to end against the built-in server: sessions
//! that vanish instead of closing (`abandon`: no DELETE over HTTP, no process left over
//! stdio), keep-alive pings of idle long-lived sessions, a reconnect storm every
//! long-lived session comes back from, and a server restart the run lives through and
//! reports as an outage.

use crate::support::{builtin_http, check_schema, count, fleet_program, FleetRun};
use mcp_fleet::server::{spawn_http, ServerOptions};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// A TCP proxy in front of `upstream` that counts the HTTP DELETEs going through.
async fn delete_counter(upstream: SocketAddr) -> (SocketAddr, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let deletes = Arc::new(AtomicU64::new(0));
    let counted = deletes.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(server) = TcpStream::connect(upstream).await else {
                continue;
            };
            let counted = counted.clone();
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(k) = cr.read(&mut buf).await {
                        if k == 0 {
                            break;
                        }
                        let seen = buf[..k].windows(7).filter(|w| w == b"DELETE ").count();
                        counted.fetch_add(seen as u64, Ordering::Relaxed);
                        if sw.write_all(&buf[..k]).await.is_err() {
                            break;
                        }
                    }
                };
                let down = async move {
                    let _ = tokio::io::copy(&mut sr, &mut cw).await;
                };
                tokio::join!(up, down);
            });
        }
    });
    (addr, deletes)
}

fn churn_profile(url: &str, abandon: Option<f64>) -> String {
    let abandon = abandon
        .map(|a| format!("abandon = {a}"))
        .unwrap_or_default();
    format!(
        r#"
[target]
url = "{url}"
[load]
clients = 2
sessions = 6
[[persona]]
name = "laptop"
{abandon}
[[scenario]]
name = "one"
steps = [{{ op = "tools/call", tool = "echo", arguments = {{ message = "x" }} }}]
"#
    )
}

#[tokio::test]
async fn abandoned_http_sessions_send_no_delete() {
    let server = builtin_http(ServerOptions::default()).await;
    let (proxy, deletes) = delete_counter(server.addr).await;
    let url = format!("http://{proxy}/mcp");

    let json = FleetRun::default()
        .profile(&churn_profile(&url, None))
        .run()
        .await
        .json;
    assert_eq!(n(&json["sessions"]["completed"]), 6);
    assert_eq!(deletes.load(Ordering::Relaxed), 6, "the proxy sees DELETEs");

    deletes.store(0, Ordering::Relaxed);
    let json = FleetRun::default()
        .profile(&churn_profile(&url, Some(1.0)))
        .run()
        .await
        .json;
    check_schema(&json);
    assert_eq!(deletes.load(Ordering::Relaxed), 0, "abandoned: no DELETE");
    assert_eq!(n(&json["sessions"]["completed"]), 6, "they did their work");
    assert_eq!(n(&json["sessions"]["failed"]), 0);
    assert_eq!(n(&json["counters"]["abandoned"]), 6);
    assert_eq!(count(&json, "close"), 0, "no close sample");
}

#[tokio::test]
async fn half_abandoned_sessions_are_drawn_from_the_seed() {
    let server = builtin_http(ServerOptions::default()).await;
    let profile = churn_profile(&server.url(), Some(0.5)).replace("sessions = 6", "sessions = 40");
    let mut seen = Vec::new();
    for _ in 0..2 {
        let json = FleetRun::default().profile(&profile).run().await.json;
        check_schema(&json);
        let abandoned = n(&json["counters"]["abandoned"]);
        assert_eq!(
            abandoned + count(&json, "close"),
            40,
            "{}",
            json["counters"]
        );
        assert!((8..=32).contains(&abandoned), "about half: {abandoned}");
        seen.push(abandoned);
    }
    assert_eq!(seen[0], seen[1], "the same seed abandons the same sessions");
}

/// Processes whose command line holds `marker`, and zombie children of this process.
fn left_behind(marker: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let path = entry.path();
        let cmdline = std::fs::read(path.join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(format!("{}: {cmdline}", path.display()));
        }
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        // pid (comm) state ppid …; comm has no spaces here (mcp-fleet).
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
        if fields.len() > 1 && fields[0] == "Z" && fields[1] == me && stat.contains("(mcp-fleet)") {
            found.push(format!("{}: zombie {stat}", path.display()));
        }
    }
    found
}

#[tokio::test]
async fn abandoned_stdio_sessions_leave_no_process_behind() {
    // A page size no other test uses marks this test's servers.
    let marker = "--page-size 977";
    let command = format!("{} serve --stdio {marker}", fleet_program());
    let json = FleetRun::default()
        .profile(&format!(
            r#"
[target]
command = "{command}"
[load]
clients = 2
sessions = 4
[[persona]]
name = "crash"
abandon = 1.0
[[scenario]]
name = "one"
steps = [{{ op = "tools/list" }}]
"#
        ))
        .run()
        .await
        .json;
    assert_eq!(n(&json["counters"]["abandoned"]), 4);
    assert_eq!(n(&json["sessions"]["completed"]), 4);
    // The kill and the reaping happen as the handles drop: give them a moment.
    let mut left = left_behind(marker);
    for _ in 0..40 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = left_behind(marker);
    }
    assert!(left.is_empty(), "left behind: {left:#?}");
}

#[tokio::test]
async fn idle_long_lived_sessions_ping_on_their_cadence() {
    let server = builtin_http(ServerOptions::default()).await;
    let json = FleetRun::default()
        .profile(&format!(
            r#"
[target]
url = "{}"
[load]
clients = 1
duration = "2s"
[[persona]]
name = "host"
era = "legacy"
shape = "long-lived"
ping_every = "200ms"
[[scenario]]
name = "quiet"
steps = []
"#,
            server.url()
        ))
        .run()
        .await
        .json;
    check_schema(&json);
    let pings = count(&json, "ping");
    assert!((7..=11).contains(&pings), "2 s / 200 ms: {pings}");
    assert_eq!(json["phases"]["ping"]["errors"], 0);
}

#[tokio::test]
async fn ping_every_is_refused_for_churn_and_modern_personas() {
    for persona in [
        "ping_every = \"1s\"",
        "era = \"modern\"\nshape = \"long-lived\"\nping_every = \"1s\"",
    ] {
        let e = FleetRun::default()
            .profile(&format!("[[persona]]\nname = \"p\"\n{persona}\n"))
            .error()
            .await;
        let text = format!("{e:#}");
        assert!(text.contains("persona[0].ping_every"), "{text}");
    }
}

fn long_lived_profile(url: &str, clients: u32, duration: &str, extra: &str) -> String {
    format!(
        r#"
[target]
url = "{url}"
[load]
clients = {clients}
duration = "{duration}"
reconnect_backoff = "50ms..300ms"
{extra}
[[persona]]
name = "host"
shape = "long-lived"
pace = "5/s"
[[scenario]]
name = "tick"
steps = [{{ op = "tools/call", tool = "echo", arguments = {{ message = "x" }} }}]
"#
    )
}

#[tokio::test]
async fn every_long_lived_session_comes_back_from_a_reconnect_storm() {
    let server = builtin_http(ServerOptions::default()).await;
    let profile = long_lived_profile(
        &server.url(),
        20,
        "5s",
        "events = [{ at = \"2s\", storm = \"reconnect\" }]",
    );
    let json = FleetRun::default().profile(&profile).run().await.json;
    check_schema(&json);
    let storm = &json["soak"]["storms"][0];
    assert_eq!(storm["kind"], "reconnect");
    assert_eq!(n(&storm["dropped"]), 20, "{storm}");
    assert_eq!(n(&storm["recovered"]), 20, "{storm}");
    assert!(storm["recovery_s"].as_f64().is_some(), "{storm}");
    let at = storm["at_s"].as_f64().unwrap_or(0.0);
    assert!((2.0..2.5).contains(&at), "{storm}");
    assert_eq!(n(&json["counters"]["storm_dropped"]), 20);
    let s = &json["sessions"];
    assert_eq!(n(&s["failed"]), 0, "a storm is not a failure: {s}");
    assert_eq!(n(&s["started"]), 40, "each client reconnected once: {s}");
    assert_eq!(json["soak"]["outages"], serde_json::json!([]));
}

#[tokio::test]
async fn a_storm_outside_the_run_is_refused() {
    let profile = long_lived_profile(
        "http://127.0.0.1:9/mcp",
        1,
        "5s",
        "events = [{ at = \"5s\", storm = \"reconnect\" }]",
    );
    let e = FleetRun::default().profile(&profile).error().await;
    assert!(format!("{e:#}").contains("load.events[0].at"), "{e:#}");
}

#[tokio::test]
async fn a_server_restart_is_an_outage_the_long_lived_sessions_recover_from() {
    // A port of our own, so the server can come back on it.
    let addr: SocketAddr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let server = spawn_http(addr, ServerOptions::default())
        .await
        .expect("server");
    let url = server.url();
    let run = FleetRun::default()
        .profile(&long_lived_profile(&url, 10, "5s", ""))
        .run();
    let restart = async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        // Stops accepting at once; `shutdown` would wait for the sessions' connections.
        drop(server);
        tokio::time::sleep(Duration::from_millis(1000)).await;
        spawn_http(addr, ServerOptions::default())
            .await
            .expect("the server comes back on its port")
    };
    let (finished, _again) = tokio::join!(run, restart);
    let json = &finished.json;
    check_schema(json);
    let outages = json["soak"]["outages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(outages.len(), 1, "{outages:#?}");
    let o = &outages[0];
    let down = o["downtime_s"].as_f64().unwrap_or(0.0);
    assert!(
        (0.5..3.0).contains(&down),
        "about 1 s: {o} {} {}",
        json["sessions"],
        json["failure_examples"]
    );
    assert!(o["recovery_s"].as_f64().is_some(), "{o}");
    assert_eq!(n(&o["sessions_before"]), 10, "{o}");
    let s = &json["sessions"];
    assert!(n(&s["failed"]) + n(&s["unreachable"]) > 0, "{s}");
    assert!(n(&s["completed"]) > 0, "the run went on: {s}");
}

#[tokio::test]
async fn a_lifetime_ends_long_lived_sessions_and_their_clients_open_the_next() {
    let server = builtin_http(ServerOptions::default()).await;
    let json = FleetRun::default()
        .profile(&format!(
            r#"
[target]
url = "{}"
[load]
clients = 2
duration = "2s"
[[persona]]
name = "host"
shape = "long-lived"
pace = "20/s"
lifetime = "400ms"
[[scenario]]
name = "tick"
steps = [{{ op = "tools/call", tool = "echo", arguments = {{ message = "x" }} }}]
"#,
            server.url()
        ))
        .run()
        .await
        .json;
    check_schema(&json);
    let s = &json["sessions"];
    // 2 s of 400 ms lives: about five sessions per client, each closed (not failed).
    let completed = n(&s["completed"]);
    assert!((6..=12).contains(&completed), "{s}");
    assert_eq!(n(&s["failed"]), 0, "{s}");
    assert!(
        count(&json, "close") >= completed - 2,
        "ended with a close: {s}"
    );
    // Paced at 20/s, a 400 ms life holds about eight calls, never one cut in half.
    let calls = count(&json, "tools/call");
    assert!(
        calls >= 6 * completed && calls <= 10 * (completed + 2),
        "{calls} calls"
    );
    assert_eq!(json["phases"]["tools/call"]["errors"], 0);
}

#[tokio::test]
async fn a_lifetime_is_refused_for_churn_personas() {
    let e = FleetRun::default()
        .profile("[[persona]]\nname = \"p\"\nlifetime = \"1m\"\n")
        .error()
        .await;
    let text = format!("{e:#}");
    assert!(text.contains("persona[0].lifetime"), "{text}");
}

#[tokio::test]
async fn drained_long_lived_sessions_close_spread_over_half_the_grace() {
    let server = builtin_http(ServerOptions::default()).await;
    // 30 held sessions, a 2 s grace: they close over the first second after the drain,
    // not at one instant; none is cut off by the end of the grace.
    let profile = format!(
        r#"
[target]
url = "{}"
[load]
clients = 30
duration = "1s"
grace = "2s"
[[persona]]
name = "host"
shape = "long-lived"
[[scenario]]
name = "hold"
steps = []
"#,
        server.url()
    );
    let mut run = FleetRun::new(mcp_fleet::cli::RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            interval: Some("100ms".into()),
            ..Default::default()
        },
        ..Default::default()
    });
    run = run.profile(&profile);
    let done = run.run().await;
    let s = &done.json["sessions"];
    assert_eq!(n(&s["completed"]), 30, "{s}");
    assert_eq!(n(&s["interrupted"]), 0, "{s}");
    assert_eq!(count(&done.json, "close"), 30);
    let csv = std::fs::read_to_string(done.dir.path().join("intervals.csv")).expect("csv");
    let closing: Vec<f64> = csv
        .lines()
        .filter(|l| l.split(',').nth(2) == Some("close"))
        .filter_map(|l| l.split(',').next()?.parse().ok())
        .collect();
    // Uniform over 1 s in 100 ms intervals: ~10 of them see closes (all in one or two
    // without the spread); they all lie in the second after the drain.
    assert!(closing.len() >= 4, "closes at {closing:?}");
    assert!(
        closing.iter().all(|t| (0.9..2.2).contains(t)),
        "{closing:?}"
    );
    server.shutdown().await;
}
