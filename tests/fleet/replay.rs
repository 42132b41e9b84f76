//! `mcp-fleet replay` and `profile --from-trace` on traces the proxy recorded of real
//! sessions (the fleet's own, against the built-in server, over every transport and
//! both eras). A replay recorded in turn must show each session's identity, transport
//! and method sequence again; the derived profile must validate and run green; a trace
//! that cannot be trusted is exit 2 with its reason.

use crate::record::Recording;
use crate::support::{builtin_http, fleet_command, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::protocol::TransportKind;
use mcp_fleet::server::ServerOptions;
use mcp_fleet::trace::{RecordedSession, Trace};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

/// What a replay must reproduce of a session: who, over what, and its requests' methods
/// in order (ids, session ids and cursors are the server's, so not compared).
fn shape(s: &RecordedSession) -> (String, String, Vec<String>) {
    let summary = s.summary();
    let who = format!(
        "{} {} {} {}",
        summary.era,
        summary.protocol_version.unwrap_or_default(),
        summary.client_info.unwrap_or_default(),
        summary.capabilities.unwrap_or_default()
    );
    let methods = s
        .client_messages()
        .filter(|m| m.get("id").is_some())
        .filter_map(|m| m["method"].as_str())
        .map(str::to_string)
        .collect();
    (who, s.transport.name().to_string(), methods)
}

fn shapes(t: &Trace) -> Vec<(String, String, Vec<String>)> {
    let mut v: Vec<_> = t.sessions.iter().map(shape).collect();
    v.sort();
    v
}

async fn fleet_through(target: String, transport: Option<TransportKind>, modern: bool) {
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(target),
            sessions: Some(3),
            clients: Some(1),
            client: mcp_fleet::cli::ClientArgs {
                transport,
                era: modern.then_some(mcp_fleet::plan::EraMode::Modern),
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(QUICKSTART_LIKE)
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["completed"], 3, "{}", json["sessions"]);
}

/// Two clients of their own identity; lists, calls, a read, a prompt, a ping, a pause.
const QUICKSTART_LIKE: &str = r#"
[[persona]]
name = "desk"
client_info = { name = "desk-host", version = "2.1.0" }
capabilities = { roots = { listChanged = true } }
roots = [{ uri = "file:///work", name = "work" }]
[[persona]]
name = "ide"
client_info = { name = "ide-host", version = "0.9.1" }
capabilities = { sampling = {} }
[[scenario]]
name = "work"
steps = [
  { op = "tools/list" }, { op = "resources/list" }, { op = "pause", duration = "30ms" },
  { op = "tools/call", tool = "echo", arguments = { message = "hi" } },
  { op = "resources/read", uri = "fleet://resources/1" },
  { op = "prompts/get", prompt = "greeting", arguments = { name = "x" } }, { op = "ping" },
]
"#;

fn replay(trace: &Path, args: &[&str], out: &Path) -> Value {
    let o = fleet_command()
        .arg("replay")
        .arg(trace)
        .args(args)
        .args(["--quiet", "--seed", "1", "--out"])
        .arg(out)
        .stdin(Stdio::null())
        .output()
        .expect("replay runs");
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_shows_every_session_again_and_scales() {
    let server = builtin_http(ServerOptions::default()).await;
    let addr = server.addr;
    let dir = tempfile::tempdir().expect("tempdir");
    let first = Recording::of(addr, dir.path(), "a.jsonl");
    let via = first.addr.clone();
    fleet_through(format!("http://{via}/mcp"), None, false).await;
    fleet_through(format!("http://{via}/sse"), Some(TransportKind::Sse), false).await;
    fleet_through(format!("ws://{via}/ws"), None, false).await;
    fleet_through(format!("http://{via}/mcp"), None, true).await;
    let recorded = first.stop();
    assert_eq!(recorded.sessions.len(), 12);
    // The replay, recorded in turn through a second proxy.
    let second = Recording::of(addr, dir.path(), "b.jsonl");
    let target = format!("--target=http://{}/mcp", second.addr);
    let json = replay(
        &dir.path().join("a.jsonl"),
        &[&target],
        &dir.path().join("r1"),
    );
    assert_eq!(json["sessions"]["completed"], 12, "{}", json["sessions"]);
    assert_eq!(json["run"]["load"]["model"], "arrivals");
    let replayed = second.stop();
    assert_eq!(shapes(&replayed), shapes(&recorded));
    // Scaled: twice the arrivals, or a rate for a count, and faster.
    let direct = format!("--target=http://{addr}/mcp");
    // (In two shard processes, which run the replay's profile, not the quickstart.)
    let twice = replay(
        &dir.path().join("a.jsonl"),
        &[&direct, "--times", "2", "--processes", "2"],
        &dir.path().join("r2"),
    );
    assert_eq!(twice["run"]["load"]["model"], "arrivals");
    assert_eq!(twice["sessions"]["completed"], 24);
    let rated = replay(
        &dir.path().join("a.jsonl"),
        &[
            &direct,
            "--rate",
            "40/s",
            "--sessions",
            "7",
            "--speed",
            "4x",
        ],
        &dir.path().join("r3"),
    );
    assert_eq!(rated["sessions"]["completed"], 7);
    // The results folder's profile is the replay as a profile, with the recorded identities.
    let profile = std::fs::read_to_string(dir.path().join("r1/profile.toml")).expect("profile");
    assert!(
        profile.contains("desk-host") && profile.contains("ide-host"),
        "{profile}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_derived_profile_validates_and_runs_green() {
    let server = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Recording::of(server.addr, dir.path(), "t.jsonl");
    fleet_through(format!("http://{}/mcp", rec.addr), None, false).await;
    fleet_through(format!("ws://{}/ws", rec.addr), None, false).await;
    drop(rec.stop());
    let out = dir.path().join("derived/p.toml");
    let o = fleet_command()
        .args(["profile", "--from-trace"])
        .arg(dir.path().join("t.jsonl"))
        .arg("--out")
        .arg(&out)
        .output()
        .expect("profile runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).expect("written");
    // Two identities over two transports: four personas, weighted by what was seen.
    assert_eq!(text.matches("[[persona]]").count(), 4, "{text}");
    let v = fleet_command()
        .arg("validate")
        .arg(&out)
        .output()
        .expect("validate");
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
    let json = FleetRun::new(RunArgs {
        profile: Some(out),
        overrides: mcp_fleet::cli::Overrides {
            target: Some(format!("http://{}/mcp", server.addr)),
            sessions: Some(12),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["completed"], 12, "{}", json["sessions"]);
    assert_eq!(json["sessions"]["failed"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_recording_replays_against_a_stdio_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trace = dir.path().join("s.jsonl");
    let server = crate::support::builtin_stdio(&[]);
    let wrapped = format!(
        "{} record --trace {} --stdio -- {server}",
        crate::support::fleet_program(),
        trace.display()
    );
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(wrapped),
            sessions: Some(1),
            clients: Some(1),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(QUICKSTART_LIKE)
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["completed"], 1);
    // Without a server to start: a clear refusal.
    let o = fleet_command()
        .arg("replay")
        .arg(&trace)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--stdio"));
    let stdio = format!("--stdio={server}");
    let replayed = replay(&trace, &[&stdio], &dir.path().join("r"));
    assert_eq!(replayed["sessions"]["completed"], 1);
    let recorded = Trace::load(&trace, false).expect("trace");
    let calls = recorded.sessions[0]
        .client_messages()
        .filter(|m| m["method"] == "tools/call")
        .count() as u64;
    assert_eq!(replayed["phases"]["tools/call"]["count"], calls);
}

#[test]
fn traces_that_cannot_be_trusted_exit_2_with_their_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let header = r#"{"format":"mcp-fleet-trace","version":1,"recorder":"mcp-fleet 0.2.0","started":"2026-12-05T00:00:00Z","mode":"http","upstream":"http://127.0.0.1:9/mcp"}"#;
    let open = r#"{"kind":"open","t":1,"session":1,"transport":"http"}"#;
    let end = r#"{"kind":"end","t":9,"sessions":1,"messages":0}"#;
    let cases = [
        (
            "newer.jsonl",
            header.replace("\"version\":1", "\"version\":2") + "\n" + end + "\n",
            "newer than this mcp-fleet reads",
        ),
        (
            "cut.jsonl",
            format!("{header}\n{open}\n{{\"kind\":\"mess"),
            "truncated",
        ),
        (
            "noend.jsonl",
            format!("{header}\n{open}\n"),
            "no `end` line",
        ),
        (
            "corrupt.jsonl",
            format!("{header}\n{open}\nnot json\n{end}\n"),
            "corrupt trace line",
        ),
        (
            "empty.jsonl",
            format!("{header}\n{end}\n"),
            "holds no session",
        ),
        (
            "nohandshake.jsonl",
            format!("{header}\n{open}\n{end}\n"),
            "got past connecting",
        ),
        (
            "notatrace.jsonl",
            "{\"hello\":1}\n".to_string(),
            "not an mcp-fleet trace",
        ),
    ];
    for (name, text, says) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        for args in [
            vec![
                "replay".to_string(),
                path.display().to_string(),
                "--target=http://127.0.0.1:9/mcp".into(),
            ],
            vec![
                "profile".into(),
                "--from-trace".into(),
                path.display().to_string(),
                "--out".into(),
                dir.path().join("p.toml").display().to_string(),
            ],
        ] {
            let o = fleet_command()
                .args(&args)
                .stdin(Stdio::null())
                .output()
                .expect("runs");
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name} {args:?}: {err}");
            assert!(err.contains(says), "{name} {args:?}: {err}");
        }
    }
}

/// The persona library: each recorded SDK client, started from by name, shows on the
/// wire (recorded in turn) the identity and habits it was recorded with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn library_personas_show_the_recorded_clients_identity_and_habits() {
    let server = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Recording::of(server.addr, dir.path(), "t.jsonl");
    let names = [
        "ts-sdk-1",
        "ts-sdk-2",
        "python-sdk-1",
        "python-sdk-2",
        "inspector-cli",
    ];
    let mut profile = String::from("[load]\narrivals = [");
    for (i, n) in names.iter().enumerate() {
        profile.push_str(&format!("{{ at = \"{}ms\", persona = \"{n}\" }}, ", i * 50));
    }
    profile.push_str("]\n");
    for n in names {
        profile.push_str(&format!("[[persona]]\nname = \"{n}\"\nfrom = \"{n}\"\n"));
    }
    profile.push_str("[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/list\" }]\n");
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(format!("http://{}/mcp", rec.addr)),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&profile)
    .run()
    .await
    .json;
    assert_eq!(json["sessions"]["completed"], 5, "{}", json["sessions"]);
    let trace = rec.stop();
    let seen: Vec<_> = trace.sessions.iter().map(|s| s.summary()).collect();
    for (name, text) in mcp_fleet::plan::library::LIBRARY {
        let lib = mcp_fleet::profile::Profile::parse(text, name)
            .expect("parses")
            .personas
            .remove(0);
        let info = lib.client_info.as_ref().expect("client_info");
        // python-sdk-1 and -2 share the SDK's default clientInfo: told apart by era.
        let modern = lib.era.as_deref() == Some("auto");
        let s = seen
            .iter()
            .find(|s| {
                s.client_info.as_ref().and_then(|c| c["name"].as_str()) == info.name.as_deref()
                    && s.client_info.as_ref().and_then(|c| c["version"].as_str())
                        == info.version.as_deref()
                    // A dual-era client against a modern server stays modern after its probe.
                    && (s.era == "modern") == modern
            })
            .unwrap_or_else(|| panic!("{name} not seen: {seen:?}"));
        assert_eq!(
            s.capabilities.as_ref().map(|c| c.get("roots").is_some()),
            Some(true),
            "{name}"
        );
        if !modern {
            assert_eq!(s.protocol_version, lib.protocol_version, "{name}");
            assert_eq!(s.habits.get_stream, lib.get_stream == Some(true), "{name}");
            // The Inspector's CLI leaves without a DELETE; the SDK clients send one.
            assert_eq!(s.habits.delete, lib.abandon.is_none(), "{name}");
        }
    }
}
