//! The handshake's answers checked: complete and incomplete `initialize` results, a
//! result read in place, and the `server/discover` refusals that mean a legacy server.

use super::*;
use serde_json::json;

#[test]
fn accepts_a_complete_result() {
    let info = ServerInfo::from_result(&json!({
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": "s", "version": "1"}
    }))
    .expect("valid");
    assert!(info.declares("tools"));
    assert!(!info.declares("prompts"));
}

#[test]
fn names_what_is_missing() {
    let cases = [
        (json!({}), "`protocolVersion` is missing"),
        (
            json!({"protocolVersion": 3}),
            "`protocolVersion` is missing or not a string",
        ),
        (
            json!({"protocolVersion": "x", "capabilities": []}),
            "`capabilities` is missing or not an object",
        ),
        (
            json!({"protocolVersion": "x", "capabilities": {}}),
            "`serverInfo` is missing",
        ),
        (
            json!({"protocolVersion": "x", "capabilities": {}, "serverInfo": {"name": "n"}}),
            "`serverInfo.version` is missing",
        ),
    ];
    for (v, want) in cases {
        let e = ServerInfo::from_result(&v).expect_err("invalid");
        assert_eq!(e.kind, FailureKind::InvalidResult);
        assert!(e.detail.contains(want), "{} vs {want}", e.detail);
    }
}

#[test]
fn a_result_read_in_place_says_what_the_tree_says() {
    // Differential: `from_raw` (the fast path, and its fallback) against `from_result`
    // on the tree, for results it must take and results it must refuse.
    let texts = [
        r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","title":"S","version":"1"},"instructions":"hi"}"#,
        r#"{ "serverInfo" : {"version":"2\u00e9","name":"\"q\""}, "capabilities":{}, "protocolVersion":"2025-06-18" }"#,
        r#"{"protocolVersion":"x","capabilities":{},"serverInfo":{"name":"a","version":"1"},"protocolVersion":"y"}"#,
        r#"{"protocolVersion":"x","capabilities":[],"serverInfo":{"name":"a","version":"1"}}"#,
        r#"{"protocolVersion":"x","capabilities":{},"serverInfo":["a","1"]}"#,
        r#"["x",{},{"name":"a","version":"1"}]"#,
        r#"{"protocolVersion":"x","capabilities":{},"serverInfo":{"name":7,"version":"1"}}"#,
        r#"{"protocolVersion":null,"capabilities":{},"serverInfo":{"name":"a","version":"1"}}"#,
        r#"{"capabilities":{},"serverInfo":{"name":"a","version":"1"}}"#,
        r#"{"protocolVersion":"x","capabilities":{},"serverInfo":{"name":"a"}}"#,
        r#"null"#,
    ];
    for text in texts {
        let raw = RawResult::from(serde_json::from_str::<Value>(text).expect("json"));
        let tree = ServerInfo::from_result(&raw.value());
        // The text as the server sent it, not re-encoded.
        let sent = match crate::protocol::Incoming::parse(
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{text}}}"#).as_bytes(),
        ) {
            Ok(crate::protocol::Incoming::Response { outcome: Ok(r), .. }) => r,
            other => panic!("{other:?}"),
        };
        for got in [ServerInfo::from_raw(&raw), ServerInfo::from_raw(&sent)] {
            match (&got, &tree) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(
                        (&a.protocol_version, &a.name, &a.version, &a.capabilities),
                        (&b.protocol_version, &b.name, &b.version, &b.capabilities),
                        "{text}"
                    );
                }
                (Err(a), Err(b)) => assert_eq!((a.kind, &a.detail), (b.kind, &b.detail)),
                _ => panic!("{text}: {:?} vs {:?}", got.is_ok(), tree.is_ok()),
            }
        }
    }
}

#[test]
fn refusals_of_discover_that_mean_legacy() {
    let f = |kind, detail: &str| Failure::new(kind, detail);
    assert!(not_modern(&f(
        FailureKind::RpcError(-32601),
        "Method not found"
    )));
    assert!(not_modern(&f(
        FailureKind::HttpStatus(400),
        "HTTP 400: Mcp-Session-Id header is required"
    )));
    assert!(!not_modern(&f(
        FailureKind::HttpStatus(400),
        r#"HTTP 400: {"error":{"code":-32020,"message":"x"}}"#
    )));
    assert!(not_modern(&f(
        FailureKind::RpcError(-32000),
        "HTTP 400 Bad Request: Mcp-Session-Id header is required (-32000)"
    )));
    assert!(!not_modern(&f(
        FailureKind::RpcError(-32020),
        "HTTP 400 Bad Request: header mismatch (-32020)"
    )));
    assert!(!not_modern(&f(FailureKind::RpcError(-32603), "internal")));
    // Not keyed on one code: Python's 1.x SDK says -32602, others -32600.
    assert!(not_modern(&f(
        FailureKind::RpcError(-32602),
        "Invalid request parameters"
    )));
    assert!(not_modern(&f(
        FailureKind::RpcError(-32600),
        "Invalid Request"
    )));
    assert!(!not_modern(&f(FailureKind::Timeout, "slow")));
}

#[test]
fn discover_results_are_checked() {
    let ok = ServerInfo::from_discover(
        &json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}}}),
        "2026-07-28",
    )
    .expect("valid");
    assert_eq!((ok.name.as_str(), ok.version.as_str()), ("s", "2"));
    assert!(ok.declares("tools"));
    let e = ServerInfo::from_discover(&json!({"capabilities": {}}), "2026-07-28")
        .expect_err("no versions");
    assert!(e.detail.contains("supportedVersions"));
}
