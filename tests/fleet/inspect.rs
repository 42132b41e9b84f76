//! `mcp-fleet inspect`: one session over every transport and era against the built-in
//! server, as text and as JSON, and a faulty server's findings in the inspection.

use crate::support::{builtin_http, builtin_stdio, fleet_command};
use mcp_fleet::cli::{ClientArgs, InspectArgs};
use mcp_fleet::server::{Fault, ServerOptions};
use serde_json::Value;

/// A transport's name, its URL or stdio command, and the `--transport` it needs.
type Route = (
    &'static str,
    Option<String>,
    Option<String>,
    Option<&'static str>,
);

#[tokio::test]
async fn inspect_every_transport_and_era() {
    let srv = builtin_http(ServerOptions::default()).await;
    let stdio = builtin_stdio(&[]);
    let routes: [Route; 4] = [
        ("http", Some(srv.url()), None, None),
        (
            "sse",
            Some(format!("http://{}/sse", srv.addr)),
            None,
            Some("sse"),
        ),
        ("ws", Some(format!("ws://{}/ws", srv.addr)), None, None),
        ("stdio", None, Some(stdio), None),
    ];
    for (name, target, stdio, transport) in routes {
        for era in ["legacy", "modern"] {
            let args = InspectArgs {
                target: target.clone(),
                stdio: stdio.clone(),
                client: ClientArgs {
                    transport: transport.and_then(mcp_fleet::protocol::TransportKind::from_name),
                    era: mcp_fleet::plan::EraMode::from_name(era),
                    ..Default::default()
                },
                call: vec!["echo".into(), format!(r#"{{"message":"{name} {era}"}}"#)],
                ..InspectArgs::default()
            };
            let i = mcp_fleet::inspect::inspect(&args)
                .await
                .unwrap_or_else(|e| panic!("{name} {era}: {e:#}"));
            let what = format!("{name} {era}");
            let echoed = i.answers.first().and_then(|a| a.result.as_ref());
            assert_eq!(
                echoed.map(|r| &r["content"][0]["text"]),
                Some(&Value::from(what.as_str())),
                "{what}: {:?}",
                i.answers
            );
            assert_eq!(i.outcome, "completed", "{what}: {:?}", i.failures);
            assert_eq!(i.transport, name, "{what}");
            assert_eq!(i.era, era, "{what}");
            assert_eq!(i.tools.len(), 9, "{what}");
            assert_eq!(i.resources.len(), 25, "{what}");
            assert_eq!(i.prompts.len(), 2, "{what}");
            assert!(i.capabilities["tools"].is_object(), "{what}");
            assert_eq!(i.server_info["name"], "mcp-fleet-reference", "{what}");
            assert!(i.instructions.is_some(), "{what}");
            assert!(i.findings.is_empty(), "{what}: {:?}", i.findings);
            let expected = if era == "modern" {
                "2026-07-28"
            } else {
                "2025-11-25"
            };
            assert_eq!(i.protocol_version.as_deref(), Some(expected), "{what}");
            assert!(i.timings.iter().any(|t| t.phase == "tools/list"), "{what}");
            assert!(i.transcript.len() >= 6, "{what}");
        }
    }
}

#[test]
fn inspect_text_json_and_raw_from_the_command_line() {
    let stdio = builtin_stdio(&[]);
    let out = fleet_command()
        .args(["inspect", "--stdio", &stdio, "--raw"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "era           legacy (initialize), protocol 2025-11-25",
        "server        mcp-fleet-reference",
        "tools (9)",
        "add(a: number*, b: number*) → {sum: number*}",
        "prompts (2)",
        "findings: none",
        "messages",
        "→ {\"id\":1,\"jsonrpc\":\"2.0\",\"method\":\"initialize\"",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }

    let out = fleet_command()
        .args(["inspect", "--stdio", &stdio, "--era", "modern", "--json"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(json["era"], "modern");
    assert_eq!(json["tools"].as_array().map(Vec::len), Some(9));
    assert_eq!(json["findings"], serde_json::json!([]));
    assert!(json["transcript"].as_array().is_some_and(|t| !t.is_empty()));
}

#[tokio::test]
async fn inspect_shows_findings() {
    let srv = builtin_http(ServerOptions {
        faults: vec![Fault::DuplicateTools, Fault::EchoVersion],
        ..ServerOptions::default()
    })
    .await;
    let inspect = |version: Option<&str>| {
        let args = InspectArgs {
            target: Some(srv.url()),
            client: ClientArgs {
                protocol_version: version.map(String::from),
                ..Default::default()
            },
            ..InspectArgs::default()
        };
        async move { mcp_fleet::inspect::inspect(&args).await.expect("inspects") }
    };
    let i = inspect(None).await;
    let codes: Vec<&str> = i.findings.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(codes, ["tools.duplicate-name"]);
    // A version that does not exist, echoed: the persona rejects it, the finding says why.
    let i = inspect(Some("1999-01-01")).await;
    let codes: Vec<&str> = i.findings.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(codes, ["version.echoed-unsupported"]);
    assert_eq!(i.outcome, "failed");
    assert_eq!(i.protocol_version.as_deref(), Some("1999-01-01"));
}

/// `mcp-fleet inspect ARGS…` against the built-in server over stdio: exit code, stdout,
/// stderr.
fn inspect_stdio(args: &[&str]) -> (Option<i32>, String, String) {
    inspect_stdio_with(&[], args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_calls_a_tool_as_the_issue_writes_it() {
    let srv = builtin_http(ServerOptions::default()).await;
    let url = srv.url();
    let out = tokio::task::spawn_blocking(move || {
        fleet_command()
            .args(["inspect", &url, "--call", "echo", r#"{"message":"hi"}"#])
            .output()
            .expect("runs")
    })
    .await
    .expect("joins");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let line = text
        .lines()
        .find(|l| l.starts_with(r#"  call echo {"message":"hi"}  ·  "#))
        .unwrap_or_else(|| panic!("no call line in\n{text}"));
    assert!(line.ends_with(" ms"), "{line}");
    assert!(
        text.contains("ms\n    hi\n"),
        "the answer's text under its line:\n{text}"
    );
}

#[test]
fn inspect_runs_every_request_in_one_session_and_exits_1_on_a_json_rpc_error() {
    let (code, stdout, stderr) = inspect_stdio(&[
        "--json",
        "--call",
        "echo",
        r#"{"message":"hi"}"#,
        "--call",
        "echo",
        r#"{"message":"again"}"#,
        "--call",
        "fail",
        "--call",
        "no_such_tool",
        "--read",
        "fleet://resources/3",
        "--get-prompt",
        "review",
        r#"{"code":"x = 1","language":"python"}"#,
    ]);
    // A JSON-RPC error to a request is a failed check: shown, exit 1.
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("1 of 6 requests got no result: call no_such_tool (a JSON-RPC error)"),
        "{stderr}"
    );
    let json: Value = serde_json::from_str(&stdout).expect("one JSON document");
    let initializes = json["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["direction"] == "sent" && e["message"]["method"] == "initialize")
        .count();
    assert_eq!(initializes, 1, "one session for all the requests");
    let answers = json["answers"].as_array().expect("answers");
    let names: Vec<&str> = answers.iter().filter_map(|a| a["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "echo",
            "echo",
            "fail",
            "no_such_tool",
            "fleet://resources/3",
            "review"
        ]
    );
    let text = |a: &Value| a["result"]["content"][0]["text"].clone();
    assert_eq!(text(&answers[0]), "hi");
    assert_eq!(text(&answers[1]), "again");
    for a in answers {
        assert!(a["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{a}");
    }
    // isError is the tool's answer, not a failed request.
    assert_eq!(answers[2]["status"], "answered");
    assert_eq!(answers[2]["is_error"], true);
    assert_eq!(answers[3]["status"], "error");
    assert_eq!(answers[3]["listed"], false);
    assert_eq!(answers[3]["error"]["code"], -32602);
    assert_eq!(answers[0]["listed"], true);
    assert!(answers[4]["result"]["contents"][0]["text"]
        .as_str()
        .is_some_and(|t| t.contains("resource 3")));
    assert_eq!(answers[5]["result"]["messages"][0]["role"], "user");
    assert!(answers[5]["result"]["messages"][0]["content"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("x = 1")));
}

#[test]
fn inspect_shows_results_readably() {
    let (code, text, stderr) = inspect_stdio(&[
        "--era",
        "modern",
        "--call",
        "fail",
        "--call",
        "add",
        r#"{"a":2,"b":3}"#,
        "--read",
        "fleet://resources/7",
        "--get-prompt",
        "greeting",
        r#"{"name":"Ada"}"#,
        "--call",
        "no_such_tool",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    for want in [
        "results (5)",
        "  call fail {}  ·  ",
        "    ✗ isError: true — the tool reports a failure",
        "    structuredContent:\n      {\n        \"sum\": 5",
        "  read fleet://resources/7  ·  ",
        "    [fleet://resources/7 text/plain, ",
        "      This is resource 7",
        "  prompt greeting {\"name\":\"Ada\"}  ·  ",
        "    user:\n      Please greet Ada",
        "  call no_such_tool {}  ·  ",
        "  ·  not in tools/list\n    ✗ JSON-RPC error -32602: ",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn inspect_refuses_bad_json_before_connecting() {
    // Nothing listens on port 1: the message is about the flag, not the connection.
    let out = fleet_command()
        .args([
            "inspect",
            "http://127.0.0.1:1/mcp",
            "--call",
            "echo",
            "{message: hi}",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--call echo: the arguments \"{message: hi}\" are not JSON"),
        "{stderr}"
    );
    assert!(stderr.contains("single quotes"), "{stderr}");
    assert!(!stderr.contains("cannot reach"), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_exits_2_when_no_session_could_be_made() {
    let srv = builtin_http(ServerOptions::default()).await;
    let url = format!("http://{}/not-mcp", srv.addr);
    let out = tokio::task::spawn_blocking(move || {
        fleet_command()
            .args(["inspect", &url, "--call", "echo"])
            .output()
            .expect("runs")
    })
    .await
    .expect("joins");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("could not open a session with"), "{stderr}");
    assert!(stderr.contains("404"), "{stderr}");
}

/// The server's requests during a call (sampling, elicitation, roots) are answered by
/// the persona and shown as the call's events: as requests in the legacy era, inside
/// `input_required` in the modern one.
#[tokio::test]
async fn inspect_shows_what_the_server_asked_during_a_call() {
    let srv = builtin_http(ServerOptions::default()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = crate::support::write_profile(
        dir.path(),
        r#"
name = "host"
[[persona]]
name = "host"
transport = "http"
capabilities = { sampling = {}, roots = { listChanged = true } }
sampling = { text = "Sure." }
roots = [{ uri = "file:///project", name = "project" }]
"#,
    );
    for (era, method, reply) in [
        ("legacy", "sampling/createMessage", Some("answered")),
        ("modern", "input_required", None),
    ] {
        let args = InspectArgs {
            target: Some(srv.url()),
            profile: Some(profile.clone()),
            call: ["ask_sampling", r#"{"prompt":"hey"}"#, "ask_roots"]
                .map(String::from)
                .to_vec(),
            client: ClientArgs {
                era: mcp_fleet::plan::EraMode::from_name(era),
                ..Default::default()
            },
            ..InspectArgs::default()
        };
        let i = mcp_fleet::inspect::inspect(&args).await.expect("inspects");
        let a = &i.answers[0];
        assert_eq!(a.status, "answered", "{era}: {a:?}");
        assert_eq!(
            a.result.as_ref().map(|r| &r["content"][0]["text"]),
            Some(&Value::from("Sure.")),
            "{era}"
        );
        let ev = a
            .events
            .first()
            .unwrap_or_else(|| panic!("{era}: no event in {a:?}"));
        assert_eq!(ev.method, method, "{era}");
        assert_eq!(ev.reply.as_deref(), reply, "{era}");
        assert!(
            i.answers[1]
                .events
                .iter()
                .any(|e| e.method == "roots/list" || e.detail.contains("roots/list")),
            "{era}: {:?}",
            i.answers[1]
        );
        if era == "modern" {
            assert_eq!(
                a.requests, 2,
                "the retry after input_required is the same call"
            );
        }
    }
}

/// A session that could not be made still prints its JSON under `--json` (exit 2), so a
/// CI job's `| jq` keeps the transcript and the failure; and a request that was never
/// sent because the session ended first does not blame an undeclared capability.
#[test]
fn inspect_json_is_printed_when_no_session_could_be_made() {
    let dying = "sh -c 'read line; exit 3'";
    let out = fleet_command()
        .args([
            "inspect",
            "--stdio",
            dying,
            "--json",
            "--call",
            "echo",
            "{\"message\":\"x\"}",
        ])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("could not open a session with"), "{stderr}");
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(json["connected"], false);
    assert!(
        json["transcript"].as_array().is_some_and(|t| !t.is_empty()),
        "{json:#}"
    );
    assert!(
        json["failures"][0]
            .as_str()
            .is_some_and(|f| f.contains("exited")),
        "{json:#}"
    );
    assert_eq!(json["answers"][0]["status"], "not_sent", "{json:#}");
    // Where the capability really is undeclared, that is what it says.
    let (code, text, _) = inspect_stdio_with(
        &[Fault::UndeclaredTools],
        &["--call", "echo", "{\"message\":\"x\"}"],
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("not sent: the server does not declare the tools capability"),
        "{text}"
    );
}

fn inspect_stdio_with(faults: &[Fault], args: &[&str]) -> (Option<i32>, String, String) {
    let stdio = builtin_stdio(faults);
    let out = fleet_command()
        .args(["inspect", "--stdio", &stdio])
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A traced, listening persona in `inspect --raw`: every request it sends, the listen
/// included, carries the same trace id and a span of its own.
#[test]
fn inspect_shows_a_traced_listen_on_the_wire() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        "name = \"i\"\n[[persona]]\nname = \"l\"\nprotocol_version = \"2026-07-28\"\n\
         trace = true\nlisten = { lists = [\"tools\"] }\n",
    )
    .expect("profile");
    let profile = profile.display().to_string();
    let (code, out, err) = inspect_stdio(&["--profile", &profile, "--raw"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let sent: Vec<Value> = out
        .lines()
        .filter_map(|l| l.split_once(" → ").map(|(_, m)| m))
        .filter_map(|m| serde_json::from_str(m).ok())
        .filter(|m: &Value| m.get("id").is_some() && m.get("method").is_some())
        .collect();
    let listen = sent
        .iter()
        .find(|m| m["method"] == "subscriptions/listen")
        .unwrap_or_else(|| panic!("no listen sent:\n{out}"));
    assert_eq!(listen["params"]["notifications"]["toolsListChanged"], true);
    let parent = |m: &Value| {
        m["params"]["_meta"]["traceparent"]
            .as_str()
            .map(String::from)
    };
    let parents: Vec<String> = sent.iter().filter_map(parent).collect();
    assert_eq!(parents.len(), sent.len(), "every request traced:\n{out}");
    assert!(
        parents.iter().all(|p| p[3..35] == parents[0][3..35]),
        "{parents:?}"
    );
    let spans: std::collections::BTreeSet<&str> = parents.iter().map(|p| &p[36..52]).collect();
    assert_eq!(spans.len(), parents.len(), "a span per request");
}
