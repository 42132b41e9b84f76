use super::*;

fn read_text(text: &str) -> anyhow::Result<Summary> {
    read(Box::new(std::io::Cursor::new(text.as_bytes().to_vec())))
}

const HEADER: &str = r#"{"mcp_fleet_requests":1,"run":"r","started_at":"2026-01-01T00:00:00Z","shard":"0/1","personas":[{"name":"p \"q\"","transport":"http"}],"tools":["echo"],"requests":[]}"#;

fn with_header(lines: &[&str]) -> String {
    let mut text = format!("{HEADER}\n");
    for l in lines {
        text.push_str(l);
        text.push('\n');
    }
    text
}

#[test]
fn records_fold_into_the_summary_counts() {
    let text = with_header(&[
        r#"{"session":1,"persona":"p \"q\"","era":"legacy","version":"2025-06-18","phase":"initialize","intended_us":0,"start_us":0,"latency_us":900,"outcome":"ok"}"#,
        r#"{"session":1,"persona":"p \"q\"","era":"legacy","version":"2025-06-18","phase":"tools/call","tool":"echo","intended_us":1000,"start_us":1000,"latency_us":50,"outcome":"failed","kind":"rpc_error:-32601"}"#,
        r#"{"session":1,"persona":"p \"q\"","era":"legacy","version":"2025-06-18","phase":"session","intended_us":0,"start_us":0,"latency_us":2000,"outcome":"failed","kind":"rpc_error:-32601"}"#,
        r#"{"session":2,"persona":"p \"q\"","end":"unreachable"}"#,
        r#"{"session":0,"persona":null,"era":null,"version":null,"phase":"lag","intended_us":5,"start_us":5,"latency_us":7,"outcome":"ok"}"#,
        r#"{"mcp_fleet_requests_end":1,"records":5}"#,
    ]);
    let s = read_text(&text).expect("a whole file");
    assert_eq!(
        (
            s.sessions.started,
            s.sessions.failed,
            s.sessions.unreachable
        ),
        (2, 1, 1)
    );
    assert_eq!(s.phases["tools/call"].errors, 1);
    assert_eq!(s.phases["lag"].count, 1);
    assert_eq!(s.failures.get("rpc_error:-32601"), Some(&1));
    assert_eq!(s.tools["echo"].count, 1);
    assert_eq!(s.personas["p \"q\""].sessions, 2);
}

#[test]
fn a_newer_format_an_empty_file_and_a_cut_one_are_errors() {
    let newer = HEADER.replace("\"mcp_fleet_requests\":1", "\"mcp_fleet_requests\":2");
    let e = read_text(&format!("{newer}\n")).expect_err("newer");
    assert!(format!("{e:#}").contains("newer mcp-fleet"), "{e:#}");
    let e = read_text("").expect_err("empty");
    assert!(format!("{e:#}").contains("empty"), "{e:#}");
    let e = read_text(&with_header(&[])).expect_err("no footer");
    assert!(format!("{e:#}").contains("cut short"), "{e:#}");
    let cut = format!("{HEADER}\n{{\"session\":1,\"pers");
    let e = read_text(&cut).expect_err("cut line");
    assert!(format!("{e:#}").contains("truncated"), "{e:#}");
    let e = read_text(&with_header(&[
        r#"{"mcp_fleet_requests_end":1,"records":3}"#,
    ]))
    .expect_err("wrong count");
    assert!(format!("{e:#}").contains("footer counts"), "{e:#}");
    let e = read_text(&with_header(&["not json"])).expect_err("garbage");
    assert!(format!("{e:#}").contains("line 2 is not a record"), "{e:#}");
}
