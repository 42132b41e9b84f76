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
                ..InspectArgs::default()
            };
            let i = mcp_fleet::inspect::inspect(&args)
                .await
                .unwrap_or_else(|e| panic!("{name} {era}: {e:#}"));
            let what = format!("{name} {era}");
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
