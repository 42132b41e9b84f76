//! Checks on responses (k6's `check()`): named conditions on a step's result, counted
//! per check in `summary.json`, the terminal summary and report.html, read by
//! thresholds `checks(NAME)` and `checks`; silent on a healthy built-in server, firing
//! where the result is wrong (a wrong expectation, `--fault bad-structured-content`),
//! and failing sessions only when the profile says so.

use crate::support::{builtin_stdio, check_schema, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::Fault;
use serde_json::{json, Value};

const CHECKED: &str = r#"
thresholds = ["checks(schema) > 99%", "checks(sum) > 99%", "checks(wrong) > 99%", "checks > 99%"]

[load]
clients = 2
sessions = 12

[[scenario]]
name = "s"
steps = [
  { op = "tools/call", tool = "echo", arguments = { message = "hello" }, checks = [
    { name = "echoed", pointer = "/content/0/text", contains = "hello" },
    { name = "echoed-path", path = "$.content[?@.type == 'text'].text", matches = "hello" },
    { name = "no-error", is_error = false },
  ] },
  { op = "tools/call", tool = "add", arguments = { a = 40, b = 2 }, checks = [
    { name = "sum", pointer = "/structuredContent/sum", equals = 42 },
    { name = "schema", output_schema = true },
    { name = "wrong", pointer = "/structuredContent/sum", equals = 41 },
    { name = "wrong-path", path = "$..sum", equals = 41 },
  ] },
  { op = "request", method = "completion/complete", params = { ref = { type = "ref/prompt", name = "review" }, argument = { name = "language", value = "ja" } }, checks = [
    { name = "completes", pointer = "/completion/values/0", matches = "^java" },
  ] },
]
"#;

fn run_args(faults: &[Fault]) -> RunArgs {
    RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            stdio: Some(builtin_stdio(faults)),
            ..Default::default()
        },
        ..RunArgs::default()
    }
}

fn passed(json: &Value, text: &str) -> bool {
    json["thresholds"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["expression"] == text))
        .unwrap_or_else(|| panic!("{text}"))["passed"]
        == true
}

#[tokio::test]
async fn checks_are_counted_and_fire_only_where_the_result_is_wrong() {
    let run = FleetRun::new(run_args(&[])).profile(CHECKED).run().await;
    let json = run.json;
    check_schema(&json);
    assert_eq!(
        json["sessions"]["completed"], 12,
        "{:#}",
        json["failure_examples"]
    );
    let checks = &json["checks"];
    // Silent where the server is right.
    for name in [
        "echoed",
        "echoed-path",
        "no-error",
        "sum",
        "schema",
        "completes",
    ] {
        assert_eq!(checks[name]["passes"], 12, "{name}: {checks:#}");
        assert_eq!(checks[name]["fails"], 0, "{name}");
        assert!(checks[name].get("example").is_none(), "{name}");
    }
    // Firing where the expectation is wrong, with the reason; the sessions go on.
    assert_eq!(
        checks["wrong"],
        json!({"passes": 0, "fails": 12,
        "example": "wrong: /structuredContent/sum is 42, not 41"})
    );
    assert_eq!(
        checks["wrong-path"],
        json!({"passes": 0, "fails": 12, "example": "wrong-path: $..sum is 42, not 41"})
    );
    assert!(passed(&json, "checks(schema) > 99%"));
    assert!(passed(&json, "checks(sum) > 99%"));
    assert!(!passed(&json, "checks(wrong) > 99%"));
    assert!(!passed(&json, "checks > 99%"));
    let text = std::fs::read_to_string(run.dir.path().join("summary.txt")).expect("summary.txt");
    assert!(text.contains("checks\n"), "{text}");
    assert!(
        text.contains("first failure: wrong: /structuredContent/sum is 42, not 41"),
        "{text}"
    );
    let html = std::fs::read_to_string(run.dir.path().join("report.html")).expect("report.html");
    assert!(html.contains("<h2 id=checks>Checks</h2>"));
}

#[tokio::test]
async fn an_output_schema_check_fires_on_bad_structured_content_and_may_fail_sessions() {
    let profile = r#"
[load]
clients = 2
sessions = 6
[[scenario]]
name = "s"
steps = [
  { op = "tools/call", tool = "add", arguments = { a = 1, b = 2 }, checks = [
    { name = "schema", output_schema = true, fail_session = true },
  ] },
  { op = "tools/call", tool = "echo", arguments = { message = "never sent" } },
]
"#;
    let json = FleetRun::new(run_args(&[Fault::BadStructuredContent]))
        .profile(profile)
        .run()
        .await
        .json;
    check_schema(&json);
    assert_eq!(json["checks"]["schema"]["fails"], 6, "{:#}", json["checks"]);
    // fail_session: the step fails as check_failed and the session ends there.
    assert_eq!(json["sessions"]["failed"], 6);
    assert_eq!(json["failures"]["check_failed"], 6);
    assert_eq!(json["phases"]["tools/call"]["errors"], 6);
    assert!(json["tools"].get("echo").is_none(), "{:#}", json["tools"]);
    // The same profile on a healthy server: silent, nothing failed.
    let json = FleetRun::new(run_args(&[]))
        .profile(profile)
        .run()
        .await
        .json;
    assert_eq!(json["checks"]["schema"], json!({"passes": 6, "fails": 0}));
    assert_eq!(json["sessions"]["failed"], 0);
}

#[tokio::test]
async fn a_check_threshold_names_a_check_some_step_has() {
    let profile = r#"
thresholds = ["checks(nope) > 99%"]
[[scenario]]
name = "s"
steps = [{ op = "tools/call", tool = "echo", checks = [{ name = "yes", is_error = false }] }]
"#;
    let e = FleetRun::new(RunArgs::default())
        .profile(profile)
        .error()
        .await
        .to_string();
    assert!(
        e.contains("no step has check `nope`") && e.contains("yes"),
        "{e}"
    );
}
