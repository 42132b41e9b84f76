//! Unit tests of the diagnosis on hand-built failure tables (the causes a real run
//! cannot easily make are tested here; `tests/fleet/diagnosis.rs` makes the others).

use super::*;

struct Table {
    phases: BTreeMap<String, PhaseSummary>,
    failures: BTreeMap<String, u64>,
    examples: BTreeMap<String, Vec<String>>,
}

fn table(phase: &str, kind: &str, n: u64, example: &str) -> Table {
    let failures: BTreeMap<String, u64> = [(kind.to_string(), n)].into();
    let phase_summary = PhaseSummary {
        count: n,
        errors: n,
        tool_errors: 0,
        skipped: 0,
        rate_per_s: 0.0,
        service: None,
        response: None,
        clamped: 0,
        failures: failures.clone(),
    };
    Table {
        phases: [(phase.to_string(), phase_summary)].into(),
        failures,
        examples: [(kind.to_string(), vec![example.to_string()])].into(),
    }
}

fn diagnose_table(
    t: &Table,
    ended: u64,
    failed: u64,
    target: &str,
    transport: &str,
) -> Option<Diagnosis> {
    diagnose_evidence(&Evidence {
        ended,
        failed,
        phases: &t.phases,
        failures: &t.failures,
        examples: &t.examples,
        target,
        transport,
    })
}

fn cause_of(phase: &str, kind: &str, example: &str) -> Diagnosis {
    let t = table(phase, kind, 10, example);
    diagnose_table(&t, 10, 10, "http://127.0.0.1:9/mcp", "http").expect("diagnosed")
}

#[test]
fn no_diagnosis_when_most_sessions_worked() {
    let t = table("initialize", "timeout", 5, "no answer");
    assert_eq!(diagnose_table(&t, 10, 5, "http://h/mcp", "http"), None);
    assert_eq!(diagnose_table(&t, 0, 0, "http://h/mcp", "http"), None);
    assert!(diagnose_table(&t, 10, 6, "http://h/mcp", "http").is_some());
}

#[test]
fn auth_required_on_401_and_403() {
    for kind in ["http_status:401", "http_status:403"] {
        let d = cause_of("initialize", kind, "initialize: HTTP 401 Unauthorized");
        assert_eq!(d.cause, cause::AUTH_REQUIRED, "{kind}");
        assert!(d.fix.contains("--header"), "{}", d.fix);
    }
}

#[test]
fn server_errors_on_5xx_and_internal_errors() {
    let d = cause_of("initialize", "http_status:502", "HTTP 502 Bad Gateway");
    assert_eq!(d.cause, cause::SERVER_ERRORS);
    assert_eq!(
        d.message,
        "10 of 10 sessions failed: every initialize got a server error (http_status:502)"
    );
    let d = cause_of(
        "tools/list",
        "rpc_error:-32603",
        "tools/list: boom (-32603)",
    );
    assert_eq!(d.cause, cause::SERVER_ERRORS);
}

#[test]
fn version_rejected_from_rpc_errors_and_400s() {
    assert_eq!(
        cause_of("initialize", "rpc_error:-32022", "unsupported").cause,
        cause::VERSION_REJECTED
    );
    let d = cause_of(
        "initialized",
        "rpc_error:-32000",
        "initialized: HTTP 400 Bad Request: MCP-Protocol-Version is not accepted (-32000)",
    );
    assert_eq!(d.cause, cause::VERSION_REJECTED);
    let d = cause_of(
        "initialize",
        "http_status:400",
        "HTTP 400 Bad Request: unsupported protocol version",
    );
    assert_eq!(d.cause, cause::VERSION_REJECTED);
}

#[test]
fn spawn_failed_and_server_down() {
    let d = cause_of(
        "connect",
        "spawn_failed",
        "cannot start `nope`: No such file or directory",
    );
    assert_eq!(d.cause, cause::SPAWN_FAILED);
    let d = cause_of(
        "connect",
        "connect_failed",
        "connect to 127.0.0.1:9: Connection refused (os error 111)",
    );
    assert_eq!(d.cause, cause::SERVER_DOWN);
    assert_eq!(
        d.message,
        "10 of 10 sessions failed: every connect could not connect to 127.0.0.1:9"
    );
}

#[test]
fn wrong_transport_suggests_the_transport_of_the_path() {
    let t = table(
        "initialize",
        "http_status:405",
        4,
        "HTTP 405 Method Not Allowed",
    );
    let d = diagnose_table(&t, 4, 4, "http://127.0.0.1:9/sse", "http").expect("diagnosed");
    assert_eq!(d.cause, cause::WRONG_TRANSPORT);
    assert!(d.fix.contains("--transport sse"), "{}", d.fix);
    let t = table(
        "connect",
        "connect_failed",
        4,
        "ws://h/mcp: the server refused the WebSocket upgrade with HTTP 405 Method Not Allowed",
    );
    let d = diagnose_table(&t, 4, 4, "ws://127.0.0.1:9/mcp", "ws").expect("diagnosed");
    assert_eq!(d.cause, cause::WRONG_TRANSPORT);
    assert!(d.fix.contains("http://"), "{}", d.fix);
}

#[test]
fn the_first_phase_decides_and_counts_are_told() {
    // 6 of 10 sessions could not connect; later calls of the others timed out more often.
    let mut t = table(
        "connect",
        "connect_failed",
        6,
        "connect to h:1: Connection refused",
    );
    let calls = table("tools/call", "timeout", 40, "no answer");
    t.phases.extend(calls.phases);
    t.failures.extend(calls.failures);
    t.examples.extend(calls.examples);
    let d = diagnose_table(&t, 10, 8, "http://h:1/mcp", "http").expect("diagnosed");
    assert_eq!(d.cause, cause::SERVER_DOWN);
    assert_eq!(d.failed_share, 0.8);
    assert!(
        d.message
            .starts_with("8 of 10 sessions failed: 6 connect requests"),
        "{}",
        d.message
    );
}

#[test]
fn unknown_names_the_kind_and_no_secret_leaks() {
    let t = table(
        "initialize",
        "invalid_result",
        3,
        "initialize: result lacks serverInfo",
    );
    let d =
        diagnose_table(&t, 3, 3, "http://127.0.0.1:9/mcp?token=***", "http").expect("diagnosed");
    assert_eq!(d.cause, cause::UNKNOWN);
    assert!(d.message.contains("invalid_result"), "{}", d.message);
    let t = table("initialize", "http_status:404", 3, "HTTP 404 Not Found");
    let d = diagnose_table(&t, 3, 3, "http://user:***@127.0.0.1:9/x?key=***", "http")
        .expect("diagnosed");
    assert_eq!(
        d.message,
        "3 of 3 sessions failed: every initialize got HTTP 404 Not Found from /x"
    );
    assert!(!d.message.contains("key") && !d.message.contains("user"));
}
