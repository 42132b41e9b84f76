//! JSON-RPC framing both ways: the four shapes classified, what is not JSON-RPC
//! refused with its id kept, results kept as sent, and compact encoding.

use super::*;
use serde_json::json;

#[test]
fn classifies_the_four_shapes() {
    let req = Incoming::parse(br#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#);
    assert_eq!(
        req,
        Ok(Incoming::Request {
            id: RequestId::String("p1".into()),
            method: "ping".into(),
            params: None
        })
    );
    let note = Incoming::parse(
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
    );
    assert!(
        matches!(note, Ok(Incoming::Notification { method, .. }) if method == "notifications/progress")
    );
    let ok = Incoming::parse(b" {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n");
    assert_eq!(
        ok,
        Ok(Incoming::Response {
            id: Some(RequestId::Number(7)),
            outcome: Ok(RawResult::from(json!({})))
        })
    );
    let err = Incoming::parse(
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
    );
    assert!(matches!(
        err,
        Ok(Incoming::Response {
            id: None,
            outcome: Err(RpcError { code: -32700, .. })
        })
    ));
}

#[test]
fn null_result_is_a_result() {
    let r = Incoming::parse(br#"{"jsonrpc":"2.0","id":1,"result":null}"#);
    assert_eq!(
        r,
        Ok(Incoming::Response {
            id: Some(RequestId::Number(1)),
            outcome: Ok(RawResult::from(Value::Null))
        })
    );
}

#[test]
fn rejects_what_is_not_json_rpc() {
    assert_eq!(Incoming::parse(b"[]"), Err(Malformed::Batch));
    assert_eq!(Incoming::parse(b"42"), Err(Malformed::NotObject));
    assert!(matches!(
        Incoming::parse(b"{oops"),
        Err(Malformed::NotJson(_))
    ));
    assert_eq!(
        Incoming::parse(br#"{"id":1,"result":{}}"#),
        Err(Malformed::WrongVersion)
    );
    assert_eq!(
        Incoming::parse(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#),
        Err(Malformed::WrongVersion)
    );
    assert_eq!(
        Incoming::parse(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1}}"#),
        Err(Malformed::ResultAndError)
    );
    assert_eq!(
        Incoming::parse(br#"{"jsonrpc":"2.0","id":1}"#),
        Err(Malformed::ResultAndError)
    );
    assert_eq!(
        Incoming::parse(br#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#),
        Err(Malformed::BadId)
    );
    assert_eq!(
        Incoming::parse(br#"{"jsonrpc":"2.0","id":1,"error":"bad"}"#),
        Err(Malformed::BadError)
    );
    assert_eq!(
        Incoming::parse(br#"{"jsonrpc":"2.0","method":5}"#),
        Err(Malformed::BadMethod)
    );
}

#[test]
fn a_malformed_message_still_names_its_id() {
    let both = br#"{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1}}"#;
    assert_eq!(Incoming::parse(both), Err(Malformed::ResultAndError));
    assert_eq!(stray_id(both), Some(RequestId::Number(4)));
    let old = br#"{"jsonrpc":"1.0","id":"7","result":{}}"#;
    assert_eq!(stray_id(old).and_then(|i| i.retyped_own()), Some(7));
    assert_eq!(
        stray_id(br#"{"jsonrpc":"2.0","id":1,"error":"bad"}"#),
        Some(RequestId::Number(1))
    );
    assert_eq!(stray_id(b"{oops"), None);
    assert_eq!(
        stray_id(br#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#),
        None
    );
    assert_eq!(stray_id(b"[1,2]"), None);
    assert_eq!(stray_id(br#"{"jsonrpc":"2.0","id":1.5}"#), None);
}

#[test]
fn a_result_kept_as_text_nests_as_deep_as_a_tree_would() {
    // Differential: `Incoming::parse` admits a nested result exactly when serde_json
    // could build the whole message as a tree, at the limit and around it, with
    // brackets inside strings that must not count.
    for depth in [1, 125, 126, 127, 128, 300] {
        for filler in ["", r#""[{\"[""#] {
            let result = format!("{}{filler}{}", "[".repeat(depth), "]".repeat(depth));
            let msg = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            let tree = serde_json::from_str::<Value>(&msg);
            let parsed = Incoming::parse(msg.as_bytes());
            assert_eq!(parsed.is_ok(), tree.is_ok(), "depth {depth} {filler}");
            if let (Ok(Incoming::Response { outcome: Ok(r), .. }), Ok(tree)) = (parsed, tree) {
                assert_eq!(r.value(), tree["result"]);
            }
        }
    }
    // Numbers: a result serde_json could not build (beyond f64) is malformed still.
    assert!(
        serde_json::from_str::<Value>("1e309").is_err(),
        "the premise"
    );
    let nines = "9".repeat(400);
    let long_fraction = format!("1.{}", "0".repeat(400));
    for number in [
        "1e308",
        "1e309",
        "-1e400",
        "1E+400",
        "1e-400",
        "0e99999",
        "1.7976931348623157e308",
        "18446744073709551616",
        nines.as_str(),
        long_fraction.as_str(),
        r#""1e400""#,
        r#"{"a\"":[1,1e999]}"#,
        r#"{"a\\":"\"","b":-2.5e-3}"#,
    ] {
        let msg = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{number}}}"#);
        let tree = serde_json::from_str::<Value>(&msg);
        let parsed = Incoming::parse(msg.as_bytes());
        assert_eq!(parsed.is_ok(), tree.is_ok(), "{number}: {parsed:?}");
        if let (Ok(Incoming::Response { outcome: Ok(r), .. }), Ok(tree)) = (parsed, tree) {
            assert_eq!(r.value(), tree["result"], "{number}");
        }
    }
    // The precheck lets a result with none of those through untouched, and one that
    // only looks like them (in a string) goes through the full pass and is admitted.
    assert!(!may_be_refused(
        br#"{"tools":[{"name":"add","n":12345}]}"#,
        126
    ));
    for looks in [r#""2e""#, r#"["v1e9-name"]"#] {
        assert!(may_be_refused(looks.as_bytes(), 126), "{looks}");
        assert_eq!(tree_refusal(looks.as_bytes(), 126), None, "{looks}");
    }
    for offset in 0..=300 {
        let run = format!("[{:offset$}{}]", "", "9".repeat(309), offset = offset);
        assert!(may_be_refused(run.as_bytes(), 126), "a run after {offset}");
    }
    let short_runs = format!("[{}]", vec!["9".repeat(299); 4].join(","));
    assert!(!may_be_refused(short_runs.as_bytes(), 126));
    let wide = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":[{}]}}"#,
        vec!["{}"; 500].join(",")
    );
    assert!(Incoming::parse(wide.as_bytes()).is_ok());
}

#[test]
fn a_reply_keeps_the_result_as_sent() {
    let r = Incoming::parse(br#"{"jsonrpc":"2.0","id":1,"result": {"b":1, "a":[true]} }"#);
    let Ok(Incoming::Response {
        outcome: Ok(reply), ..
    }) = r
    else {
        panic!("{r:?}")
    };
    assert_eq!(reply.json(), r#"{"b":1, "a":[true]}"#);
    assert_eq!(reply, RawResult::from(json!({"a": [true], "b": 1})));
    assert_eq!(reply.into_value(), json!({"a": [true], "b": 1}));
    // An escaped version string is still "2.0"; a number is not.
    assert!(Incoming::parse(br#"{"jsonrpc":"2\u002e0","id":1,"result":1}"#).is_ok());
    assert_eq!(
        Incoming::parse(br#"{"jsonrpc":2.0,"id":1,"result":1}"#),
        Err(Malformed::WrongVersion)
    );
}

#[test]
fn params_encoded_ahead_give_the_same_bytes() {
    let params = json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": "a\"b"},
        "capabilities": {"roots": {"listChanged": true}}});
    for (id, method) in [(0, "initialize"), (u64::MAX, "x/\"odd\"\n")] {
        assert_eq!(
            String::from_utf8(encode_request_encoded(id, method, &params.to_string())),
            String::from_utf8(encode_request(id, method, Some(&params)))
        );
    }
}

#[test]
fn encodes_compactly_without_newlines() {
    let params = json!({"text": "a\nb"});
    let bytes = encode_request(3, "tools/call", Some(&params));
    assert!(!bytes.contains(&b'\n'));
    assert_eq!(
        String::from_utf8(bytes).unwrap_or_default(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"text":"a\nb"}}"#
    );
    assert_eq!(
        String::from_utf8(encode_notification("notifications/initialized", None))
            .unwrap_or_default(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    let e = RpcError {
        code: codes::METHOD_NOT_FOUND,
        message: "Method not found".into(),
        data: None,
    };
    assert_eq!(
        String::from_utf8(encode_response(&RequestId::String("s".into()), Err(&e)))
            .unwrap_or_default(),
        r#"{"jsonrpc":"2.0","id":"s","error":{"code":-32601,"message":"Method not found"}}"#
    );
}

#[test]
fn own_ids_match_numbers_and_decimal_strings() {
    assert_eq!(RequestId::Number(5).as_own(), Some(5));
    assert_eq!(RequestId::String("5".into()).as_own(), None);
    assert_eq!(RequestId::String("5".into()).retyped_own(), Some(5));
    assert_eq!(RequestId::String("x".into()).as_own(), None);
    assert_eq!(RequestId::Number(-1).as_own(), None);
}
