//! Buggy clients (`faults = [...]`): against the built-in server every fault a transport
//! allows is handled, with no `robustness.*` finding and no harm to the good persona
//! beside it; against `serve --fault` mistakes each verdict shows, with its finding.

use crate::support::{builtin_http, builtin_stdio, check_schema, FleetRun};
use mcp_fleet::cli::{ClientArgs, InspectArgs, RunArgs};
use mcp_fleet::metrics::{ClientFault, FaultEra};
use mcp_fleet::protocol::TransportKind;
use mcp_fleet::server::{Fault, ServerOptions};
use serde_json::Value;

/// The faults a persona of `era` can commit over `transport`.
fn faults_for(era: FaultEra, transport: &str) -> Vec<ClientFault> {
    ClientFault::ALL
        .into_iter()
        .filter(|f| f.era() == FaultEra::Any || f.era() == era)
        .filter(|f| !(*f == ClientFault::HeaderMismatch && transport != "http"))
        .filter(|f| !(*f == ClientFault::SlowReader && transport == "stdio"))
        .collect()
}

fn persona(name: &str, era: &str, faults: &[ClientFault]) -> String {
    let share = 1.0 / faults.len() as f64 - 1e-6;
    let list: Vec<String> = faults
        .iter()
        .map(|f| format!("{{ fault = \"{}\", share = {share} }}", f.name()))
        .collect();
    format!(
        "[[persona]]\nname = \"{name}\"\nera = \"{era}\"\nweight = 2\n\
         capabilities = {{ sampling = {{}} }}\nfaults = [{}]\n",
        list.join(", ")
    )
}

const SCENARIO: &str = "[[persona]]\nname = \"good\"\nweight = 1\n\
    [[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/list\" }, \
    { op = \"tools/call\", tool = \"echo\", arguments = { message = \"x\" } }]\n";

async fn run(transport: &str, profile: &str, sessions: u64) -> Value {
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            client: ClientArgs {
                transport: TransportKind::from_name(transport),
                ..Default::default()
            },
            clients: Some(16),
            sessions: Some(sessions),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(profile)
    .run()
    .await
    .json;
    check_schema(&json);
    json
}

fn robustness(json: &Value) -> Vec<String> {
    json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str())
        .filter(|c| c.starts_with("robustness."))
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn the_built_in_server_handles_every_fault() {
    for transport in ["http", "ws", "stdio"] {
        let legacy = faults_for(FaultEra::Legacy, transport);
        let modern = faults_for(FaultEra::Modern, transport);
        let profile = format!(
            "{}{}{SCENARIO}",
            persona("buggy", "legacy", &legacy),
            persona("buggy-modern", "modern", &modern)
        );
        let json = run(transport, &profile, 240).await;
        let seen = json["client_faults"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mishandled: Vec<String> = seen
            .iter()
            .filter(|f| f["verdicts"]["handled"] != f["sessions"])
            .map(|f| {
                format!(
                    "{} {}: {}",
                    f["persona"], f["fault"], f["examples"][0]["text"]
                )
            })
            .collect();
        assert!(mishandled.is_empty(), "{transport}: {mishandled:#?}");
        let committed = |who: &str| seen.iter().filter(|f| f["persona"] == who).count();
        assert_eq!(committed("buggy"), legacy.len(), "{transport}: {seen:#?}");
        assert_eq!(
            committed("buggy-modern"),
            modern.len(),
            "{transport}: {seen:#?}"
        );
        assert!(
            robustness(&json).is_empty(),
            "{transport}: {:?}",
            robustness(&json)
        );
        let good = &json["personas"]["good"];
        assert_eq!(good["failed"], 0, "{transport}: {good:#}");
        assert!(good["sessions"].as_u64().unwrap_or(0) > 0);
    }
}

/// One persona committing `fault` in every session, against a server with `mistake`.
async fn against(mistake: Fault, fault: ClientFault, stdio: bool) -> Value {
    let srv = builtin_http(ServerOptions {
        faults: vec![mistake],
        ..ServerOptions::default()
    })
    .await;
    let profile = format!(
        "[load]\nclients = 2\nsessions = 4\n[target]\ntimeout = \"1s\"\n\
         [[persona]]\nname = \"buggy\"\nfaults = [{{ fault = \"{}\", share = 1.0 }}]\n\
         [[scenario]]\nname = \"s\"\nsteps = [{{ op = \"tools/list\" }}]\n",
        fault.name()
    );
    let mut args = RunArgs::default();
    if stdio {
        args.overrides.stdio = Some(builtin_stdio(&[mistake]));
    } else {
        args.overrides.target = Some(srv.url());
    }
    let json = FleetRun::new(args).profile(&profile).run().await.json;
    check_schema(&json);
    json
}

#[tokio::test]
async fn each_server_mistake_earns_its_verdict_and_finding() {
    let cases = [
        (
            Fault::AcceptInvalid,
            ClientFault::NoClientInfo,
            false,
            "accepted",
            "robustness.accepted-invalid",
        ),
        (
            Fault::AcceptInvalid,
            ClientFault::CapabilitiesNotObject,
            true,
            "accepted",
            "robustness.accepted-invalid",
        ),
        (
            Fault::WrongErrorCodes,
            ClientFault::UnknownTool,
            false,
            "wrong_error",
            "robustness.wrong-error",
        ),
        (
            Fault::WrongErrorCodes,
            ClientFault::WrongMethod,
            true,
            "wrong_error",
            "robustness.wrong-error",
        ),
        (
            Fault::CrashOnInvalidJson,
            ClientFault::InvalidJson,
            false,
            "crashed",
            "robustness.crashed",
        ),
        (
            Fault::CrashOnInvalidJson,
            ClientFault::InvalidJson,
            true,
            "crashed",
            "robustness.crashed",
        ),
        (
            Fault::HangOnUnknownTool,
            ClientFault::UnknownTool,
            false,
            "hung",
            "robustness.hung",
        ),
        (
            Fault::HangOnUnknownTool,
            ClientFault::UnknownTool,
            true,
            "hung",
            "robustness.hung",
        ),
    ];
    for (mistake, fault, stdio, verdict, code) in cases {
        let json = against(mistake, fault, stdio).await;
        let what = format!("{} / {} (stdio: {stdio})", mistake.name(), fault.name());
        let entry = &json["client_faults"][0];
        assert_eq!(entry["fault"], fault.name(), "{what}: {json:#}");
        // Over HTTP a crashed server refuses the sessions after it at `initialize`.
        let committed = entry["sessions"].as_u64().unwrap_or(0);
        assert!(committed >= 1, "{what}");
        if verdict != "crashed" {
            assert_eq!(committed, 4, "{what}");
        }
        assert_eq!(entry["verdicts"][verdict], committed, "{what}: {entry:#}");
        assert_eq!(json["counters"]["client_faults"], committed, "{what}");
        let findings = robustness(&json);
        assert_eq!(findings, vec![code.to_string()], "{what}");
        let example = json["findings"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["code"] == code))
            .map(|f| f["example"].to_string())
            .unwrap_or_default();
        assert!(example.contains(fault.name()), "{what}: {example}");
        // A crash or a hang fails the session; a server that went along does not.
        let failed = json["sessions"]["failed"].as_u64().unwrap_or(0);
        match verdict {
            "crashed" | "hung" => assert_eq!(failed, 4, "{what}"),
            _ => assert_eq!(failed, 0, "{what}"),
        }
    }
}

#[tokio::test]
async fn inspect_shows_a_handled_and_a_mishandled_fault() {
    let good = mcp_fleet::inspect::run(InspectArgs {
        client_fault: Some("invalid-json".into()),
        raw: true,
        ..InspectArgs::default()
    })
    .await
    .expect("inspects");
    assert!(good.passed, "{}", good.text);
    assert!(good.text.contains("verdict:  handled"), "{}", good.text);
    assert!(good.text.contains("-32700"), "{}", good.text);

    let srv = builtin_http(ServerOptions {
        faults: vec![Fault::WrongErrorCodes],
        ..ServerOptions::default()
    })
    .await;
    let args = InspectArgs {
        target: Some(srv.url()),
        client_fault: Some("unknown-tool".into()),
        json: true,
        ..InspectArgs::default()
    };
    let bad = mcp_fleet::inspect::run(args).await.expect("inspects");
    assert!(!bad.passed);
    let problem = bad.problem.unwrap_or_default();
    assert!(problem.contains("wrong_error"), "{problem}");
    let json: Value = serde_json::from_str(&bad.text).expect("json");
    assert_eq!(json["client_fault"]["verdict"], "wrong_error");
    assert!(json["client_fault"]["detail"]
        .to_string()
        .contains("-32603"));
    let codes: Vec<&str> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"robustness.wrong-error"), "{codes:?}");

    let typo = mcp_fleet::inspect::run(InspectArgs {
        client_fault: Some("invalid-jsn".into()),
        ..InspectArgs::default()
    })
    .await
    .expect_err("unknown fault");
    assert!(format!("{typo:#}").contains("invalid-json"), "{typo:#}");
}

/// A Streamable HTTP server that refuses a message without `"jsonrpc": "2.0"` with HTTP
/// `status` and a JSON-RPC error body whose code is not -32600 (-32700, as the TypeScript
/// SDK answers anything its message schema refuses), and serves the rest: `initialize`
/// (with a session id), 202 for notifications, an empty result for requests.
async fn refusing_without_jsonrpc(status: u16) -> (String, tokio::task::JoinHandle<()>) {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let mcp = move |body: axum::body::Bytes| async move {
        let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let json = [("content-type", "application/json")];
        if msg["jsonrpc"] != "2.0" {
            let error = serde_json::json!({"jsonrpc": "2.0", "id": null, "error":
                {"code": -32700, "message": "Parse error: Invalid JSON-RPC message"}});
            let status = StatusCode::from_u16(status).expect("status");
            return (status, json, error.to_string()).into_response();
        }
        let Some(id) = msg.get("id") else {
            return StatusCode::ACCEPTED.into_response();
        };
        let result = match msg["method"].as_str() {
            Some("initialize") => serde_json::json!({
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "refusing", "version": "0"}}),
            _ => serde_json::json!({}),
        };
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
        (
            [
                ("content-type", "application/json"),
                ("mcp-session-id", "s-1"),
            ],
            answer.to_string(),
        )
            .into_response()
    };
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(mcp).delete(|| async { StatusCode::METHOD_NOT_ALLOWED }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

/// `no-jsonrpc` in every session against a server refusing it with `status`.
async fn no_jsonrpc_refused_with(status: u16) -> Value {
    let (url, task) = refusing_without_jsonrpc(status).await;
    let profile = "[load]\nclients = 1\nsessions = 2\n[target]\ntimeout = \"2s\"\n\
         [[persona]]\nname = \"buggy\"\nfaults = [{ fault = \"no-jsonrpc\", share = 1.0 }]\n";
    let mut args = RunArgs::default();
    args.overrides.target = Some(url);
    let json = FleetRun::new(args).profile(profile).run().await.json;
    task.abort();
    check_schema(&json);
    json
}

#[tokio::test]
async fn an_http_400_is_the_right_refusal_whatever_code_its_body_says() {
    // Streamable HTTP asks only for an error status for a message that is not JSON-RPC:
    // 400 with -32700 in its body is handled, not a wrong error.
    let json = no_jsonrpc_refused_with(400).await;
    let entry = &json["client_faults"][0];
    assert_eq!(entry["fault"], "no-jsonrpc", "{json:#}");
    assert_eq!(entry["verdicts"]["handled"], 2, "{entry:#}");
    assert!(robustness(&json).is_empty(), "{:?}", robustness(&json));
    // The same body with 200 is a wrong error: no status says the message was refused.
    let json = no_jsonrpc_refused_with(200).await;
    let entry = &json["client_faults"][0];
    assert_eq!(entry["verdicts"]["wrong_error"], 2, "{entry:#}");
    assert_eq!(
        robustness(&json),
        vec!["robustness.wrong-error".to_string()]
    );
}
