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
    diagnose_tools(t, ended, failed, target, transport, &BTreeMap::new())
}

fn diagnose_tools(
    t: &Table,
    ended: u64,
    failed: u64,
    target: &str,
    transport: &str,
    tools: &BTreeMap<String, ToolAcceptance>,
) -> Option<Diagnosis> {
    diagnose_evidence(&Evidence {
        ended,
        failed,
        phases: &t.phases,
        failures: &t.failures,
        examples: &t.examples,
        target,
        transport,
        tools,
    })
}

fn empty() -> Table {
    Table {
        phases: BTreeMap::new(),
        failures: BTreeMap::new(),
        examples: BTreeMap::new(),
    }
}

/// Tools by (name, generated, generated accepted).
fn generated(tools: &[(&str, u64, u64)]) -> BTreeMap<String, ToolAcceptance> {
    tools
        .iter()
        .map(|(name, n, ok)| {
            (
                name.to_string(),
                ToolAcceptance {
                    calls: *n,
                    accepted: *ok,
                    invalid_params: n - ok,
                    generated: *n,
                    generated_accepted: *ok,
                    ..ToolAcceptance::default()
                },
            )
        })
        .collect()
}

const URL: &str = "http://127.0.0.1:9/mcp";

#[test]
fn rejected_generated_arguments_are_a_diagnosis_though_sessions_completed() {
    let tools = generated(&[
        ("get_current_time", 100, 0),
        ("convert_time", 100, 6),
        ("echo", 30, 30),
    ]);
    let d = diagnose_tools(&empty(), 10, 0, URL, "http", &tools).expect("diagnosed");
    assert_eq!(d.cause, cause::ARGUMENTS_REJECTED);
    assert_eq!(
        d.message,
        "generated arguments were rejected in 194 of 230 calls: get_current_time 0 %, convert_time 6 %"
    );
    assert!(d.fix.contains("timezone = \"Europe/Paris\""), "{}", d.fix);
    assert!(d.fix.contains("[data]") && d.fix.contains("README › Arguments"));
    assert_eq!(d.failed_share, 0.0);
}

#[test]
fn accepted_or_few_generated_calls_are_no_diagnosis() {
    let all_accepted = generated(&[("a", 200, 200), ("b", 50, 50)]);
    assert_eq!(
        diagnose_tools(&empty(), 10, 0, URL, "http", &all_accepted),
        None
    );
    let half = generated(&[("a", 20, 10)]);
    assert_eq!(diagnose_tools(&empty(), 10, 0, URL, "http", &half), None);
    let few = generated(&[("a", 19, 0)]);
    assert_eq!(diagnose_tools(&empty(), 10, 0, URL, "http", &few), None);
    let enough = generated(&[("a", 20, 9)]);
    let d = diagnose_tools(&empty(), 10, 0, URL, "http", &enough).expect("diagnosed");
    assert_eq!(
        d.message,
        "generated arguments were rejected in 11 of 20 calls: a 45 %"
    );
    // Calls with pinned arguments only (nothing generated) are never this cause.
    let mut pinned = generated(&[("a", 100, 0)]);
    if let Some(t) = pinned.get_mut("a") {
        t.generated = 0;
        t.generated_accepted = 0;
    }
    assert_eq!(diagnose_tools(&empty(), 10, 0, URL, "http", &pinned), None);
}

#[test]
fn rejections_win_when_they_are_the_only_failures() {
    let t = table(
        "tools/call",
        "rpc_error:-32602",
        40,
        "tools/call: Invalid params (-32602)",
    );
    let tools = generated(&[("a", 40, 0), ("b", 10, 2), ("c", 10, 3), ("d", 10, 4)]);
    let d = diagnose_tools(&t, 10, 10, URL, "http", &tools).expect("diagnosed");
    assert_eq!(d.cause, cause::ARGUMENTS_REJECTED);
    assert_eq!(d.failed_share, 1.0);
    assert!(
        d.message.ends_with(": a 0 %, b 20 %, c 30 % and 1 more"),
        "{}",
        d.message
    );
    // Without generated calls, the same failures are an unknown RPC error, as before.
    let d = diagnose_table(&t, 10, 10, URL, "http").expect("diagnosed");
    assert_eq!(d.cause, cause::UNKNOWN);
}

#[test]
fn server_down_still_wins_over_rejected_arguments() {
    let mut t = table(
        "connect",
        "connect_failed",
        8,
        "connect to h:1: Connection refused",
    );
    let calls = table("tools/call", "rpc_error:-32602", 40, "Invalid params");
    t.phases.extend(calls.phases);
    t.failures.extend(calls.failures);
    let tools = generated(&[("a", 40, 0)]);
    let d = diagnose_tools(&t, 10, 8, "http://h:1/mcp", "http", &tools).expect("diagnosed");
    assert_eq!(d.cause, cause::SERVER_DOWN);
    // Timeouts of the calls themselves are not rejections either.
    let t = table("tools/call", "timeout", 40, "no answer");
    let d = diagnose_tools(&t, 10, 10, URL, "http", &tools).expect("diagnosed");
    assert_eq!(d.cause, cause::TIMEOUTS);
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
        assert!(
            d.fix.contains("auth = { tokens = \"file:") && d.fix.contains("client_credentials"),
            "the persona's auth section is the fix: {}",
            d.fix
        );
        assert!(!d.fix.contains("Bearer …"), "no literal token: {}", d.fix);
        // A persona that got tokens was refused them: the fix is about the tokens.
        for phase in ["token", "auth"] {
            let mut t = table("initialize", kind, 10, "initialize: HTTP 401 Unauthorized");
            let mut p = t.phases["initialize"].clone();
            p.errors = 0;
            p.failures.clear();
            t.phases.insert(phase.into(), p);
            let d =
                diagnose_table(&t, 10, 10, "http://127.0.0.1:9/mcp", "http").expect("diagnosed");
            assert_eq!(d.cause, cause::AUTH_REQUIRED, "{phase}");
            assert!(
                d.message.ends_with("though the persona authenticates"),
                "{}",
                d.message
            );
            assert!(d.fix.starts_with("the tokens were refused"), "{}", d.fix);
            assert!(!d.fix.contains("auth = {"), "{}", d.fix);
        }
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

#[test]
fn what_a_stdio_server_writes_that_is_not_json_rpc_is_not_a_wrong_transport() {
    // A banner on stdout, invalid UTF-8, 200k-deep nesting, 1e400: the transport is
    // right. Before, this advised "use --transport http, which fits the path " on stdio.
    for example in [
        "initialize: not JSON: expected value at line 1 column 1 (Starting server…)",
        "initialize: not JSON: invalid unicode code point",
        "initialize: not JSON: recursion limit exceeded",
        "initialize: not JSON: number out of range",
    ] {
        let t = table("initialize", "protocol_violation", 5, example);
        let d = diagnose_table(&t, 5, 5, "python server.py", "stdio").expect("diagnosed");
        assert_eq!(d.cause, cause::MALFORMED, "{example}");
        assert!(d.fix.contains("stderr"), "{}", d.fix);
        assert!(!d.fix.contains("--transport"), "{}", d.fix);
    }
    // An HTML page over HTTP still points at the URL or the transport.
    let t = table(
        "initialize",
        "protocol_violation",
        5,
        "initialize: an answer with content-type text/html",
    );
    let d = diagnose_table(&t, 5, 5, "http://127.0.0.1:9/", "http").expect("diagnosed");
    assert_eq!(d.cause, cause::WRONG_TRANSPORT);
}

#[test]
fn a_close_that_outlasts_the_stdio_wait_does_not_advise_a_longer_timeout() {
    let t = table(
        "close",
        "timeout",
        3,
        "close: the server ignored stdin EOF and SIGTERM for 2s each; killed",
    );
    let d = diagnose_table(&t, 3, 3, "./server", "stdio").expect("diagnosed");
    assert!(d.fix.contains("exit when stdin closes"), "{}", d.fix);
    assert!(!d.fix.contains("raise --timeout"), "{}", d.fix);
    // A request that timed out still does.
    let t = table("tools/call", "timeout", 3, "no answer within 1s");
    let d = diagnose_table(&t, 3, 3, "./server", "stdio").expect("diagnosed");
    assert!(d.fix.contains("raise --timeout"), "{}", d.fix);
}

#[test]
fn a_404_with_a_json_rpc_body_is_the_wrong_path() {
    let t = table(
        "initialize",
        "rpc_error:-32001",
        4,
        "initialize: HTTP 404 Not Found: Session not found (-32001)",
    );
    let d = diagnose_table(&t, 4, 4, "http://127.0.0.1:9/mpc", "http").expect("diagnosed");
    assert_eq!(d.cause, cause::WRONG_PATH);
    // An RPC error without a 404 is not.
    let t = table(
        "initialize",
        "rpc_error:-32001",
        4,
        "initialize: oops (-32001)",
    );
    let d = diagnose_table(&t, 4, 4, "http://127.0.0.1:9/mcp", "http").expect("diagnosed");
    assert_ne!(d.cause, cause::WRONG_PATH);
}

#[test]
fn a_refused_websocket_upgrade_of_any_status_is_the_wrong_transport() {
    let t = table(
        "connect",
        "http_status:200",
        4,
        "ws://h/mcp: the server refused the WebSocket upgrade with HTTP 200 OK",
    );
    let d = diagnose_table(&t, 4, 4, "ws://127.0.0.1:9/mcp", "ws").expect("diagnosed");
    assert_eq!(d.cause, cause::WRONG_TRANSPORT);
    assert!(d.fix.contains("http://"), "{}", d.fix);
}
