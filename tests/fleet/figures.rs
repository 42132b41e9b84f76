//! What the outputs say: the diagnosis of runs where most sessions failed, made from
//! real situations (a wrong path, the wrong transport, a rejected version, a stalled
//! server); failure examples as exact texts; an open model's labels and breakdowns;
//! p95 thresholds on a real run.

use crate::support::{builtin_http, check_schema, Finished, FleetRun};
use mcp_fleet::cli::{ClientArgs, Overrides, RunArgs};
use mcp_fleet::protocol::TransportKind;
use mcp_fleet::server::{Fault, ServerOptions};
use serde_json::Value;
use std::time::Duration;

/// A closed run of `sessions` sessions against `target`.
async fn run_against(target: String, sessions: u64, client: ClientArgs) -> Finished {
    FleetRun::new(RunArgs {
        overrides: Overrides {
            target: Some(target),
            clients: Some(2),
            sessions: Some(sessions),
            client,
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await
}

fn diagnosis(json: &Value) -> (&str, &str, &str) {
    let d = &json["diagnosis"];
    (
        d["cause"].as_str().unwrap_or_default(),
        d["message"].as_str().unwrap_or_default(),
        d["fix"].as_str().unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_wrong_path_is_diagnosed_with_its_404() {
    let srv = builtin_http(ServerOptions::default()).await;
    let run = run_against(
        format!("http://{}/wrong", srv.addr),
        6,
        ClientArgs::default(),
    )
    .await;
    check_schema(&run.json);
    let (cause, message, fix) = diagnosis(&run.json);
    assert_eq!(cause, "wrong_path");
    assert_eq!(
        message,
        "6 of 6 sessions failed: every initialize got HTTP 404 Not Found from /wrong"
    );
    assert!(fix.contains("/mcp"), "{fix}");
    assert_eq!(run.json["diagnosis"]["failed_share"], 1.0);
    assert_eq!(
        run.json["failure_examples"]["http_status:404"][0], "initialize: HTTP 404 Not Found",
        "no trailing colon for an empty body"
    );
}

#[tokio::test]
async fn the_sse_transport_against_streamable_http_is_the_wrong_transport() {
    let srv = builtin_http(ServerOptions::default()).await;
    let client = ClientArgs {
        transport: TransportKind::from_name("sse"),
        ..Default::default()
    };
    let run = run_against(srv.url(), 4, client).await;
    let (cause, _, fix) = diagnosis(&run.json);
    assert_eq!(cause, "wrong_transport", "{}", run.json["diagnosis"]);
    assert_eq!(fix, "use --transport http, which fits the path /mcp");
    // And Streamable HTTP against the legacy SSE endpoint.
    let run = run_against(format!("http://{}/sse", srv.addr), 4, ClientArgs::default()).await;
    let (cause, _, fix) = diagnosis(&run.json);
    assert_eq!(cause, "wrong_transport", "{}", run.json["diagnosis"]);
    assert_eq!(fix, "use --transport sse, which fits the path /sse");
}

#[tokio::test]
async fn a_rejected_version_header_is_version_rejected() {
    let srv = builtin_http(ServerOptions {
        faults: vec![Fault::RejectVersionHeader],
        ..ServerOptions::default()
    })
    .await;
    let run = run_against(srv.url(), 4, ClientArgs::default()).await;
    let (cause, message, _) = diagnosis(&run.json);
    assert_eq!(cause, "version_rejected", "{message}");
    assert!(message.contains("MCP-Protocol-Version"), "{message}");
}

#[tokio::test]
async fn a_stalled_server_is_timeouts_with_an_exact_example() {
    let srv = builtin_http(ServerOptions {
        stall: Some((Duration::ZERO, Duration::from_secs(20))),
        ..ServerOptions::default()
    })
    .await;
    let client = ClientArgs {
        timeout: Some("300ms".into()),
        ..Default::default()
    };
    let run = run_against(srv.url(), 2, client).await;
    let (cause, message, _) = diagnosis(&run.json);
    assert_eq!(cause, "timeouts");
    assert_eq!(
        message,
        "2 of 2 sessions failed: every initialize got no answer within the timeout"
    );
    assert_eq!(
        run.json["failure_examples"]["timeout"][0],
        "initialize: no answer within 300ms"
    );
}

#[tokio::test]
async fn a_healthy_run_has_no_diagnosis() {
    let run = FleetRun::default().run().await;
    assert!(
        run.json.get("diagnosis").is_none(),
        "{}",
        run.json["diagnosis"]
    );
}

#[tokio::test]
async fn an_open_run_is_labelled_as_it_ran_and_p95_thresholds_judge_it() {
    let run = FleetRun::new(RunArgs {
        profile: Some("profiles/open-handshake.toml".into()),
        overrides: Overrides {
            rate: Some("100/s".into()),
            duration: Some("1s".into()),
            thresholds: vec![
                "p95(initialize) < 10s".into(),
                "p95(initialize) < 1us".into(),
            ],
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .run()
    .await;
    let json = &run.json;
    check_schema(json);
    assert_eq!(json["run"]["stopped_by"], "duration");
    assert!(json["run"]["load"]["clients"].is_null());
    // Scheduler lag is the fleet's, not a session's: in `phases`, in no breakdown.
    assert_eq!(json["phases"]["lag"]["count"], 100);
    for breakdown in ["protocol_versions", "eras", "transports"] {
        for (group, phases) in json[breakdown].as_object().into_iter().flatten() {
            assert!(phases.get("lag").is_none(), "{breakdown}.{group} has lag");
            assert!(
                !phases.as_object().is_some_and(|p| p.is_empty()),
                "{breakdown}.{group} is empty"
            );
        }
    }
    for (name, p) in json["personas"].as_object().into_iter().flatten() {
        assert!(p["phases"].get("lag").is_none(), "persona {name} has lag");
    }
    assert!(json["protocol_versions"].get("other").is_none());
    let p95 = json["phases"]["initialize"]["p95_us"].as_f64();
    let verdicts: Vec<(bool, Option<f64>)> = json["thresholds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| (t["passed"] == true, t["observed"].as_f64()))
        .collect();
    assert_eq!(verdicts, [(true, p95), (false, p95)]);
    assert!(!run.summary.passed());
}
