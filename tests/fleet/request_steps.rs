//! `request` steps: any JSON-RPC method as a step, timed as its own phase (`complete`,
//! `set-level`, a method the server does not have), over every transport and in both
//! eras against the built-in server, and against rmcp, which lacks the methods: a
//! JSON-RPC error answer is that phase's error, not the session's.

use crate::support::{check_schema, run_profile, FleetRun};
use mcp_fleet::cli::RunArgs;
use serde_json::Value;

const STEPS: &str = r#"
thresholds = ["p99(complete) < 30s", "error_rate(complete) < 1%", "errors(acme/stats) < 1"]

[load]
clients = 4
sessions = 48

[[persona]]
name = "http-legacy"
transport = "http"
protocol_version = "2025-11-25"
scenarios = ["legacy"]
[[persona]]
name = "sse-legacy"
transport = "sse"
protocol_version = "2025-06-18"
scenarios = ["legacy"]
[[persona]]
name = "ws-legacy"
transport = "ws"
protocol_version = "2025-06-18"
scenarios = ["legacy"]
[[persona]]
name = "stdio-legacy"
transport = "stdio"
protocol_version = "2025-11-25"
scenarios = ["legacy"]
[[persona]]
name = "http-modern"
transport = "http"
era = "modern"
protocol_version = "2026-07-28"
scenarios = ["modern"]
[[persona]]
name = "stdio-modern"
transport = "stdio"
era = "modern"
protocol_version = "2026-07-28"
scenarios = ["modern"]

[[scenario]]
name = "legacy"
steps = [
  { op = "request", method = "completion/complete", phase = "complete", params = { ref = { type = "ref/prompt", name = "review" }, argument = { name = "language", value = "ja" } } },
  { op = "request", method = "logging/setLevel", phase = "set-level", params = { level = "info" } },
  { op = "request", method = "acme/stats" },
]
[[scenario]]
name = "modern"
steps = [
  { op = "request", method = "completion/complete", phase = "complete", params = { ref = { type = "ref/prompt", name = "review" }, argument = { name = "language", value = "py" } } },
]
"#;

/// The threshold written `text`, from `summary.json`.
fn threshold<'a>(json: &'a Value, text: &str) -> &'a Value {
    json["thresholds"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["expression"] == text))
        .unwrap_or_else(|| panic!("{text} in {:#}", json["thresholds"]))
}

#[tokio::test]
async fn request_steps_are_their_own_phases_on_every_transport_and_in_both_eras() {
    let json = run_profile(STEPS, None).await;
    assert_eq!(
        json["sessions"]["completed"], 48,
        "{:#}",
        json["failure_examples"]
    );
    let requests = &json["requests"];
    // Every session completes; legacy ones also set the level and try a method the
    // server lacks, whose -32601 is that phase's error only.
    assert_eq!(requests["complete"]["count"], 48);
    assert_eq!(requests["complete"]["errors"], 0);
    let legacy = requests["set-level"]["count"].as_u64().unwrap_or(0);
    assert!(legacy > 0 && legacy < 48, "{legacy}");
    assert_eq!(requests["set-level"]["errors"], 0);
    assert_eq!(requests["acme/stats"]["count"], legacy);
    assert_eq!(requests["acme/stats"]["errors"], legacy);
    assert_eq!(json["failures"]["rpc_error:-32601"], legacy);
    // The phase `request` adds the steps up, and the breakdowns see it.
    assert_eq!(json["phases"]["request"]["count"], 48 + 2 * legacy);
    for t in ["http", "sse", "ws", "stdio"] {
        assert!(
            json["transports"][t]["request"]["count"].as_u64() > Some(0),
            "{t}"
        );
    }
    for e in ["legacy", "modern"] {
        assert!(
            json["eras"][e]["request"]["count"].as_u64() > Some(0),
            "{e}"
        );
    }
    // Thresholds read a request step's own phase: two hold, one is lost.
    assert_eq!(threshold(&json, "p99(complete) < 30s")["passed"], true);
    assert_eq!(
        threshold(&json, "error_rate(complete) < 1%")["passed"],
        true
    );
    assert_eq!(threshold(&json, "errors(acme/stats) < 1")["passed"], false);
}

#[tokio::test]
async fn a_request_phase_may_not_take_a_built_in_name_and_thresholds_name_real_ones() {
    let built_in = r#"
[[scenario]]
name = "s"
steps = [{ op = "request", method = "tools/list" }]
"#;
    let e = FleetRun::new(RunArgs::default())
        .profile(built_in)
        .error()
        .await
        .to_string();
    assert!(e.contains("`tools/list` is a built-in phase"), "{e}");
    let unknown = r#"
thresholds = ["p99(completes) < 1s"]
[[scenario]]
name = "s"
steps = [{ op = "request", method = "completion/complete", phase = "complete" }]
"#;
    let e = FleetRun::new(RunArgs::default())
        .profile(unknown)
        .error()
        .await
        .to_string();
    assert!(
        e.contains("unknown phase `completes`") && e.contains("complete"),
        "{e}"
    );
}

#[tokio::test]
async fn without_request_steps_the_summary_has_no_requests() {
    let json = run_profile(
        "[load]\nclients = 1\nsessions = 2\n[[scenario]]\nname = \"s\"\nsteps = [{ op = \"ping\" }]\n",
        None,
    )
    .await;
    check_schema(&json);
    assert!(json.get("requests").is_none());
    assert!(json["phases"].get("request").is_none());
}
