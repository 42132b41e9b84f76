//! Conformance findings: each check against the built-in server committing the fault
//! that provokes it (`serve --fault NAME`), and no findings at all from a correct server
//! over every transport and era. (rmcp, an independent server, is checked for false
//! findings in `rmcp_peer`.)

use crate::support::{
    builtin_http, builtin_stdio, check_schema, codes, fleet_command, write_profile, FleetRun,
};
use mcp_fleet::cli::{ClientArgs, RunArgs};
use mcp_fleet::server::{Fault, HttpServer, ServerOptions};
use serde_json::Value;

/// Where a test's server is reached.
#[derive(Clone, Copy, Debug)]
enum Via {
    Http,
    Sse,
    Ws,
    Stdio,
}

async fn server(faults: &[Fault], sse_responses: bool) -> HttpServer {
    builtin_http(ServerOptions {
        faults: faults.to_vec(),
        sse_responses,
        ..ServerOptions::default()
    })
    .await
}

/// Point `a` at `server` (or a stdio child with the same faults) over `via`.
fn target(a: &mut RunArgs, via: Via, server: &HttpServer, faults: &[Fault]) {
    match via {
        Via::Http => a.overrides.target = Some(server.url()),
        Via::Sse => {
            a.overrides.target = Some(format!("http://{}/sse", server.addr));
            a.overrides.client.transport = mcp_fleet::protocol::TransportKind::from_name("sse");
        }
        Via::Ws => a.overrides.target = Some(format!("ws://{}/ws", server.addr)),
        Via::Stdio => a.overrides.stdio = Some(builtin_stdio(faults)),
    }
}

/// Run `sessions` sessions against a server with `fault` and return summary.json.
async fn run_faulty(
    fault: Fault,
    via: Via,
    sse_responses: bool,
    tweak: impl FnOnce(&mut RunArgs),
) -> Value {
    let faults = [fault];
    let srv = server(&faults, sse_responses).await;
    let mut a = RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            clients: Some(1),
            sessions: Some(2),
            client: ClientArgs {
                timeout: Some("1s".into()),
                ..Default::default()
            },
            ..Default::default()
        },
        ..RunArgs::default()
    };
    target(&mut a, via, &srv, &faults);
    tweak(&mut a);
    let json = FleetRun::new(a).run().await.json;
    check_schema(&json);
    json
}

/// The fault provokes the finding `code`, with a count, an example, a message and a spec.
async fn detects(fault: Fault, via: Via, code: &str, tweak: impl FnOnce(&mut RunArgs)) {
    let sse = matches!(fault, Fault::SseGarbage) && matches!(via, Via::Http);
    let json = run_faulty(fault, via, sse, tweak).await;
    let found = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| {
            panic!(
                "fault {} over {via:?}: no {code}; findings {:#}",
                fault.name(),
                json["findings"]
            )
        });
    assert!(found["count"].as_u64().unwrap_or(0) >= 1);
    assert!(
        !found["example"].as_str().unwrap_or_default().is_empty(),
        "{found}"
    );
    assert!(!found["message"].as_str().unwrap_or_default().is_empty());
    assert!(!found["spec"].as_str().unwrap_or_default().is_empty());
}

fn none(_: &mut RunArgs) {}

fn version(v: &'static str) -> impl FnOnce(&mut RunArgs) {
    move |a| a.overrides.client.protocol_version = Some(v.into())
}

// 1. Malformed messages.

#[tokio::test]
async fn conformance_wrong_jsonrpc() {
    detects(
        Fault::WrongJsonrpc,
        Via::Http,
        "jsonrpc.wrong-version",
        none,
    )
    .await;
}

#[tokio::test]
async fn conformance_result_and_error() {
    detects(
        Fault::ResultAndError,
        Via::Http,
        "jsonrpc.result-and-error",
        none,
    )
    .await;
}

#[tokio::test]
async fn conformance_wrong_id() {
    detects(Fault::WrongId, Via::Http, "jsonrpc.unknown-id", none).await;
}

#[tokio::test]
async fn conformance_response_to_notification() {
    detects(
        Fault::RespondToNotification,
        Via::Stdio,
        "jsonrpc.response-to-notification",
        none,
    )
    .await;
}

#[tokio::test]
async fn conformance_capabilities_not_object() {
    detects(
        Fault::CapabilitiesNotObject,
        Via::Http,
        "handshake.capabilities-not-object",
        none,
    )
    .await;
    detects(
        Fault::CapabilitiesNotObject,
        Via::Http,
        "discover.invalid-result",
        |a| a.overrides.client.era = mcp_fleet::plan::EraMode::from_name("modern"),
    )
    .await;
}

#[tokio::test]
async fn conformance_server_info_invalid() {
    detects(
        Fault::NoServerInfoVersion,
        Via::Ws,
        "handshake.server-info-invalid",
        none,
    )
    .await;
}

// 2. Version negotiation.

#[tokio::test]
async fn conformance_unknown_version() {
    detects(Fault::UnknownVersion, Via::Http, "version.unknown", none).await;
}

#[tokio::test]
async fn conformance_echoed_unsupported_version() {
    detects(
        Fault::EchoVersion,
        Via::Http,
        "version.echoed-unsupported",
        version("1999-01-01"),
    )
    .await;
}

#[tokio::test]
async fn conformance_version_error_instead_of_offer() {
    detects(
        Fault::VersionError,
        Via::Sse,
        "version.error-instead-of-offer",
        version("1999-01-01"),
    )
    .await;
}

#[tokio::test]
async fn conformance_version_header_rejected() {
    detects(
        Fault::RejectVersionHeader,
        Via::Http,
        "version.header-rejected",
        none,
    )
    .await;
}

#[tokio::test]
async fn conformance_unsupported_without_list() {
    detects(
        Fault::ModernNoSupported,
        Via::Http,
        "version.unsupported-without-list",
        |a| a.overrides.client.era = mcp_fleet::plan::EraMode::from_name("modern"),
    )
    .await;
}

// 3 and 4. Capabilities.

#[tokio::test]
async fn conformance_declared_but_missing() {
    detects(
        Fault::MissingPrompts,
        Via::Http,
        "capability.declared-but-missing",
        none,
    )
    .await;
}

#[tokio::test]
async fn conformance_undeclared_but_works() {
    detects(
        Fault::UndeclaredPrompts,
        Via::Http,
        "capability.undeclared-but-works",
        |a| a.probe_undeclared = true,
    )
    .await;
    // Without `--probe-undeclared` a default run still probes, once per run and target.
    let json = run_faulty(Fault::UndeclaredPrompts, Via::Http, false, none).await;
    assert_eq!(
        codes(&json),
        ["capability.undeclared-but-works"],
        "{:#}",
        json["findings"]
    );
}

#[tokio::test]
async fn conformance_undeclared_wrong_error() {
    detects(
        Fault::UndeclaredResourcesError,
        Via::Stdio,
        "capability.undeclared-wrong-error",
        |a| a.probe_undeclared = true,
    )
    .await;
}

#[tokio::test]
async fn conformance_list_changed_not_honoured() {
    detects(
        Fault::ToolsDrift,
        Via::Http,
        "capability.list-changed-not-honoured",
        |a| a.overrides.sessions = Some(3),
    )
    .await;
}

// 5. Speaking too early.

#[tokio::test]
async fn conformance_early_message() {
    for via in [Via::Stdio, Via::Ws, Via::Sse] {
        detects(Fault::EarlyMessage, via, "lifecycle.early-message", none).await;
    }
}

// 7. The rest.

#[tokio::test]
async fn conformance_input_schema_not_object() {
    detects(
        Fault::BadInputSchema,
        Via::Http,
        "tools.input-schema-not-object",
        none,
    )
    .await;
}

#[tokio::test]
async fn conformance_duplicate_tool_names() {
    detects(Fault::DuplicateTools, Via::Ws, "tools.duplicate-name", none).await;
}

#[tokio::test]
async fn conformance_pagination_loop() {
    detects(Fault::PaginationLoop, Via::Http, "pagination.loop", none).await;
}

#[tokio::test]
async fn conformance_empty_cursor() {
    detects(
        Fault::EmptyCursor,
        Via::Stdio,
        "pagination.empty-cursor",
        none,
    )
    .await;
}

const CALL_ADD: &str = r#"
[[scenario]]
name = "add"
steps = [
  { op = "tools/list" },
  { op = "tools/call", tool = "add", arguments = { a = 1, b = 2 } },
]
"#;

#[tokio::test]
async fn conformance_structured_content_mismatch() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(dir.path(), CALL_ADD);
    detects(
        Fault::BadStructuredContent,
        Via::Http,
        "tools.structured-content-mismatch",
        |a| a.profile = Some(profile),
    )
    .await;
}

#[tokio::test]
async fn conformance_invalid_session_id() {
    detects(
        Fault::BadSessionId,
        Via::Http,
        "http.invalid-session-id",
        none,
    )
    .await;
}

#[tokio::test]
async fn conformance_sse_invalid_event() {
    detects(Fault::SseGarbage, Via::Http, "sse.invalid-event", none).await;
    detects(Fault::SseGarbage, Via::Sse, "sse.invalid-event", none).await;
    detects(Fault::SseGarbage, Via::Stdio, "jsonrpc.not-json", none).await;
}

// A correct server: no findings, over every transport and era.

#[tokio::test]
async fn conformance_correct_server_has_no_findings() {
    let srv = server(&[], false).await;
    for via in [Via::Http, Via::Sse, Via::Ws, Via::Stdio] {
        for era in ["legacy", "modern", "auto"] {
            let mut a = RunArgs {
                probe_undeclared: true,
                overrides: mcp_fleet::cli::Overrides {
                    clients: Some(2),
                    sessions: Some(6),
                    client: ClientArgs {
                        era: mcp_fleet::plan::EraMode::from_name(era),
                        ..Default::default()
                    },
                    ..Default::default()
                },
                ..RunArgs::default()
            };
            target(&mut a, via, &srv, &[]);
            let json = FleetRun::new(a).profile(CALL_ADD).run().await.json;
            check_schema(&json);
            assert_eq!(
                json["findings"],
                serde_json::json!([]),
                "{via:?} {era}: {:#}",
                json["findings"]
            );
            assert_eq!(json["sessions"]["failed"], 0, "{via:?} {era}: {json:#}");
        }
    }
}

#[tokio::test]
async fn conformance_quickstart_has_no_findings() {
    let json = FleetRun::default().run().await.json;
    assert_eq!(
        json["findings"],
        serde_json::json!([]),
        "{:#}",
        json["findings"]
    );
}

// --strict.

#[test]
fn conformance_strict_fails_on_error_findings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stdio = builtin_stdio(&[Fault::BadInputSchema]);
    let out_dir = dir.path().to_str().expect("utf-8");
    let fleet = |strict: bool| {
        let mut c = fleet_command();
        c.args([
            "run",
            "--stdio",
            &stdio,
            "--sessions",
            "1",
            "--quiet",
            "--out",
            out_dir,
        ]);
        if strict {
            c.arg("--strict");
        }
        c.output().expect("runs")
    };
    let lenient = fleet(false);
    assert_eq!(lenient.status.code(), Some(0), "{lenient:?}");
    let strict = fleet(true);
    assert_eq!(strict.status.code(), Some(1), "{strict:?}");
    assert!(String::from_utf8_lossy(&strict.stderr).contains("--strict"));
    let text = std::fs::read_to_string(dir.path().join("summary.txt")).expect("summary.txt");
    assert!(text.contains("tools.input-schema-not-object"), "{text}");
    // A warning alone does not fail a strict run.
    let stdio = builtin_stdio(&[Fault::EmptyCursor]);
    let out = fleet_command()
        .args([
            "run",
            "--stdio",
            &stdio,
            "--sessions",
            "1",
            "--quiet",
            "--strict",
            "--out",
            out_dir,
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
