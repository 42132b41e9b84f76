//! `mcp-fleet record` as a user runs it: the proxy between the fleet (a real client) and
//! the built-in server over every transport. What goes through it must come out the
//! same (the fleet's own figures with and without it), the trace must hold every
//! session with its identity and habits, a server that dies must break the client's
//! connection and be written down, no secret may reach the trace, and bad flags exit 2.

use crate::support::{builtin_http, count, fleet_command, fleet_program, FleetRun, Served};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::protocol::TransportKind;
use mcp_fleet::server::ServerOptions;
use mcp_fleet::trace::{ClosedBy, Trace, Transport};
use serde_json::Value;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

/// A recording proxy process; stopped (SIGINT) by [`Recording::stop`], killed if dropped.
pub struct Recording {
    child: Child,
    /// `127.0.0.1:PORT` it listens on.
    pub addr: String,
    pub trace: PathBuf,
}

impl Recording {
    pub fn start(upstream: &str, trace: &Path, extra: &[&str]) -> Recording {
        let mut child = fleet_command()
            .args([
                "record",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                upstream,
                "--trace",
            ])
            .arg(trace)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("record starts");
        let mut line = String::new();
        std::io::BufReader::new(child.stderr.take().expect("stderr"))
            .read_line(&mut line)
            .expect("its first line");
        let addr = line
            .split("listening on ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Recording {
            child,
            addr,
            trace: trace.to_path_buf(),
        }
    }

    /// A recording in front of the built-in server at `server`, its trace `dir/name`.
    pub fn of(server: std::net::SocketAddr, dir: &Path, name: &str) -> Recording {
        Recording::start(&format!("http://{server}/mcp"), &dir.join(name), &[])
    }

    /// SIGINT, then its exit (bounded) and the trace it wrote.
    pub fn stop(mut self) -> Trace {
        let pid = nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).expect("pid"));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("signal");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                assert!(status.success(), "record exits 0 when stopped: {status}");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "record did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
        Trace::load(&self.trace, false).expect("a whole trace")
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn fleet(target: String, transport: Option<TransportKind>, sessions: u64) -> Value {
    FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(target),
            sessions: Some(sessions),
            clients: Some(2),
            client: mcp_fleet::cli::ClientArgs {
                transport,
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json
}

/// Each phase's sample count and failures: what must not change through the proxy.
fn shape(json: &Value) -> Vec<(String, u64, u64)> {
    let mut v: Vec<(String, u64, u64)> = json["phases"]
        .as_object()
        .expect("phases")
        .iter()
        .filter(|(name, _)| !["lag"].contains(&name.as_str()))
        .map(|(name, p)| {
            let errors = p["errors"].as_u64().unwrap_or(0);
            (name.clone(), p["count"].as_u64().unwrap_or(0), errors)
        })
        .collect();
    v.sort();
    v
}

fn methods(trace: &Trace, method: &str) -> usize {
    trace
        .sessions
        .iter()
        .flat_map(|s| s.client_messages())
        .filter(|m| m["method"] == method)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxy_changes_nothing_on_every_http_transport_and_the_trace_holds_every_session() {
    let server = builtin_http(ServerOptions::default()).await;
    let addr = server.addr;
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Recording::of(addr, dir.path(), "t.jsonl");
    let via = rec.addr.clone();
    let mut tools_list = 0;
    for (path, transport) in [
        ("http", "/mcp", None),
        ("http", "/sse", Some(TransportKind::Sse)),
        ("ws", "/ws", None),
    ]
    .map(|(scheme, path, t)| ((scheme, path), t))
    {
        let (scheme, path) = path;
        let direct = fleet(format!("{scheme}://{addr}{path}"), transport, 12).await;
        let proxied = fleet(format!("{scheme}://{via}{path}"), transport, 12).await;
        assert_eq!(shape(&direct), shape(&proxied), "{scheme}{path}");
        assert_eq!(proxied["sessions"]["completed"], 12, "{scheme}{path}");
        tools_list += count(&proxied, "tools/list");
    }
    let trace = rec.stop();
    assert!(trace.complete);
    assert_eq!(trace.sessions.len(), 36);
    for t in [Transport::Http, Transport::Sse, Transport::Ws] {
        let of: Vec<_> = trace.sessions.iter().filter(|s| s.transport == t).collect();
        assert_eq!(of.len(), 12, "{t:?}");
        for s in of {
            let summary = s.summary();
            assert_eq!(summary.era, "legacy");
            assert_eq!(
                summary.client_info.as_ref().map(|c| &c["name"]),
                Some(&Value::from("mcp-fleet"))
            );
            let closed = s.closed.as_ref().expect("closed");
            assert_eq!(closed.1, ClosedBy::Client, "{t:?}: {closed:?}");
            // Every request answered, in the trace too.
            let requests = s
                .client_messages()
                .filter(|m| m.get("id").is_some() && m.get("method").is_some())
                .count();
            let answers = s
                .messages
                .iter()
                .filter(|(_, f, m)| {
                    *f == mcp_fleet::trace::From::Server
                        && (m.get("result").is_some() || m.get("error").is_some())
                })
                .count();
            assert_eq!(requests, answers, "{t:?} session {}", s.id);
            if t == Transport::Http {
                assert!(
                    summary.habits.delete && summary.habits.session_header,
                    "{summary:?}"
                );
            }
        }
    }
    assert_eq!(methods(&trace, "tools/list") as u64, tools_list);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_clients_without_a_session_id_are_sessions_of_their_own() {
    let server = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Recording::of(server.addr, dir.path(), "t.jsonl");
    let run = |target: String| {
        FleetRun::new(RunArgs {
            overrides: mcp_fleet::cli::Overrides {
                target: Some(target),
                sessions: Some(8),
                clients: Some(2),
                client: mcp_fleet::cli::ClientArgs {
                    era: Some(mcp_fleet::plan::EraMode::Modern),
                    ..Default::default()
                },
                ..Default::default()
            },
            ..RunArgs::default()
        })
        .run()
    };
    let direct = run(format!("http://{}/mcp", server.addr)).await.json;
    let proxied = run(format!("http://{}/mcp", rec.addr)).await.json;
    assert_eq!(shape(&direct), shape(&proxied));
    let trace = rec.stop();
    // Two clients at once, one identity: still one session each.
    assert_eq!(trace.sessions.len(), 8);
    for s in &trace.sessions {
        let summary = s.summary();
        assert_eq!(
            (summary.era.as_str(), summary.protocol_version.as_deref()),
            ("modern", Some("2026-07-28"))
        );
        assert!(!summary.habits.session_header && !summary.habits.delete);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_subscriptions_listen_passes_through_and_is_a_habit() {
    let server = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Recording::of(server.addr, dir.path(), "t.jsonl");
    let profile = "[[persona]]\nname = \"listener\"\nera = \"modern\"\nlisten = { lists = [\"tools\"] }\n\
                   [[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/list\" }, { op = \"pause\", duration = \"600ms\" }]\n";
    let run = |target: String| {
        FleetRun::new(RunArgs {
            overrides: mcp_fleet::cli::Overrides {
                target: Some(target),
                sessions: Some(4),
                clients: Some(1),
                ..Default::default()
            },
            ..RunArgs::default()
        })
        .profile(profile)
        .run()
    };
    let direct = run(format!("http://{}/mcp", server.addr)).await.json;
    let proxied = run(format!("http://{}/mcp", rec.addr)).await.json;
    // (The `subscriptions/listen` phase's samples vary from run to run in sessions this
    // short, proxy or not: its count is left out; every listen opened is counted.)
    let without_listen = |json: &serde_json::Value| {
        let mut v = shape(json);
        v.retain(|(phase, _, _)| phase != "subscriptions/listen");
        v
    };
    assert_eq!(without_listen(&direct), without_listen(&proxied));
    for json in [&direct, &proxied] {
        assert_eq!(crate::support::counter(json, "listen_opened"), 4);
    }
    let trace = rec.stop();
    assert_eq!(trace.sessions.len(), 4);
    for s in &trace.sessions {
        assert!(s.summary().habits.listen, "session {}", s.id);
        // The listen's answer is a stream, held while the session lived.
        assert!(s
            .http
            .iter()
            .any(|(_, h)| h.content_type.as_deref() == Some("text/event-stream")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_is_wrapped_and_recorded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("s.jsonl");
    let direct = crate::support::builtin_stdio(&[]);
    let wrapped = format!(
        "{} record --trace {} --stdio -- {direct}",
        fleet_program(),
        trace.display()
    );
    let run = |stdio: String| {
        FleetRun::new(RunArgs {
            overrides: mcp_fleet::cli::Overrides {
                stdio: Some(stdio),
                sessions: Some(1),
                clients: Some(1),
                ..Default::default()
            },
            ..RunArgs::default()
        })
        .run()
    };
    let a = run(direct).await.json;
    let b = run(wrapped).await.json;
    assert_eq!(shape(&a), shape(&b));
    let trace = Trace::load(&trace, false).expect("trace");
    assert_eq!(trace.header.mode, "stdio");
    let s = &trace.sessions[0];
    assert_eq!(s.transport, Transport::Stdio);
    let first = s.client_messages().next().expect("a message");
    assert_eq!(first["method"], "initialize");
    assert_eq!(s.closed.as_ref().map(|c| c.1), Some(ClosedBy::Client));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_breaks_the_clients_connection_and_the_trace_says_so() {
    let served = Served::start(&[]);
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Recording::start(&served.url(), &dir.path().join("t.jsonl"), &[]);
    let via = format!("http://{}/mcp", rec.addr);
    // A session that pauses mid-way: the server dies during the pause.
    let profile = "[[scenario]]\nname = \"slow\"\nsteps = [{ op = \"tools/list\" }, { op = \"pause\", duration = \"1500ms\" }, { op = \"tools/list\" }]\n";
    let run = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(via),
            sessions: Some(1),
            clients: Some(1),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(profile);
    let kill = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(700)).await;
        drop(served);
    });
    let json = run.run().await.json;
    kill.await.expect("killed");
    assert_eq!(json["sessions"]["failed"], 1, "{}", json["sessions"]);
    let trace = rec.stop();
    let s = &trace.sessions[0];
    assert_eq!(
        s.closed.as_ref().map(|c| c.1),
        Some(ClosedBy::UpstreamFailed),
        "{:?}",
        s.closed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_reaches_the_trace() {
    let server = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let upstream = format!(
        "http://user:upstr3am-pass@{}/mcp?key=upstr3am-query",
        server.addr
    );
    let rec = Recording::start(
        &upstream,
        &dir.path().join("t.jsonl"),
        &["--redact-tool", "echo"],
    );
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(format!("http://{}/mcp?token=qu3ry-secret", rec.addr)),
            client: mcp_fleet::cli::ClientArgs {
                headers: vec![
                    "Authorization: Bearer b3arer-secret".into(),
                    "X-Api-Key: h3ader-secret".into(),
                ],
                ..Default::default()
            },
            sessions: Some(3),
            clients: Some(1),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile("[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/call\", tool = \"echo\", arguments = { message = \"arg-s3cret\" } }]\n")
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["completed"], 3);
    drop(rec.stop());
    let text = std::fs::read_to_string(dir.path().join("t.jsonl")).expect("trace");
    for secret in [
        "upstr3am-pass",
        "upstr3am-query",
        "qu3ry-secret",
        "b3arer-secret",
        "h3ader-secret",
        "arg-s3cret",
    ] {
        assert!(!text.contains(secret), "{secret} in the trace");
    }
    // The header names are kept, their values not.
    assert!(text.contains("\"authorization\""));
}

#[test]
fn bad_flags_and_an_address_taken_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = dir.path().join("t.jsonl");
    let t = t.to_str().expect("path");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let taken = taken.local_addr().expect("addr").to_string();
    for (args, says) in [
        (
            vec!["record", "--trace", t, "--listen", "127.0.0.1:0"],
            "--upstream",
        ),
        (
            vec![
                "record",
                "--trace",
                t,
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "http://127.0.0.1:9/mcp",
                "--redact",
                "password",
            ],
            "JSON pointer",
        ),
        (
            vec![
                "record",
                "--trace",
                t,
                "--listen",
                &taken,
                "--upstream",
                "http://127.0.0.1:9/mcp",
            ],
            "cannot listen",
        ),
        (
            vec![
                "record",
                "--trace",
                "/nonexistent/dir/t.jsonl",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "http://127.0.0.1:9/mcp",
            ],
            "cannot write the trace",
        ),
        (
            vec![
                "record",
                "--trace",
                t,
                "--stdio",
                "--",
                "/nonexistent/server",
            ],
            "cannot start the server",
        ),
    ] {
        let out = fleet_command()
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
