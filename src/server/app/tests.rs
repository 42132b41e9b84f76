//! The application tools through the handler: listed only when asked for, valid calls
//! accepted, invalid ones refused with -32602 naming the first error, notes round trip.

use serde_json::{json, Value};

use super::*;
use crate::protocol::{Incoming, RequestId};
use crate::server::handler::{Handler, Session};
use crate::server::notifier::Notifier;
use crate::server::ServerOptions;

fn app_handler() -> Handler {
    Handler::new(&ServerOptions {
        app_tools: true,
        page_size: 100,
        ..ServerOptions::default()
    })
}

async fn request(h: &Handler, s: &Session, method: &str, params: Value) -> Value {
    let msg = Incoming::Request {
        id: RequestId::Number(7),
        method: method.into(),
        params: Some(params),
    };
    let reply = h
        .handle(s, msg, &Notifier::none())
        .await
        .expect("requests get a reply");
    serde_json::from_slice(&reply).expect("reply is JSON")
}

async fn session(h: &Handler) -> Session {
    let s = Session::new();
    let r = request(
        h,
        &s,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    )
    .await;
    assert!(r.get("result").is_some(), "{r}");
    s
}

async fn call(h: &Handler, s: &Session, tool: &str, arguments: Value) -> Value {
    request(
        h,
        s,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await
}

/// Arguments each feature tool accepts.
fn valid(tool: AppTool) -> Vec<Value> {
    match tool {
        AppTool::FeatureRef => vec![
            json!({"task": {"title": "ship", "priority": "high"}}),
            json!({"task": {"title": "x", "priority": "low", "estimate": null,
                            "subtasks": [{"title": "y", "priority": "medium", "estimate": 3}]}}),
        ],
        AppTool::FeaturePattern => vec![json!({"code": "ABC-1234", "at": "09:30"})],
        AppTool::FeatureFormats => vec![json!({
            "when": "2026-12-02T03:04:05Z", "day": "2026-12-02", "clock": "03:04:05Z",
            "span": "P1DT2H", "email": "ada@example.com", "link": "https://example.com/a",
            "uuid": "123e4567-e89b-12d3-a456-426614174000", "v4": "192.0.2.1",
            "v6": "2001:db8::1", "host": "db.example.com"})],
        AppTool::FeatureNumbers => vec![
            json!({"quantity": 2.75, "step": 25, "ratio": 0.5, "count": 1}),
            json!({"quantity": 0, "step": 500, "ratio": 0.999, "count": 10}),
        ],
        AppTool::FeatureLengths => vec![json!({"name": "abc", "tags": ["a", "b"],
                                               "scores": [0, 3, 2]})],
        AppTool::FeatureChoice => vec![
            json!({"target": "ada@example.com", "shape": {"kind": "circle", "radius": 1.5},
                   "level": 0, "version": 2, "comment": null}),
            json!({"target": 7, "shape": {"kind": "square", "side": 2},
                   "level": 10, "version": 2, "comment": "ok"}),
        ],
        AppTool::FeatureObjects => vec![
            json!({"config": {"name": "alpha", "server": {"host": "localhost", "port": 80}}}),
            json!({"config": {"name": "b", "retries": 5,
                              "server": {"host": "a.b", "port": 65535}},
                   "labels": {"env": "prod"}}),
        ],
        AppTool::NoteCreate => vec![json!({"title": "t", "body": ""})],
        AppTool::NoteGet | AppTool::NoteDelete => vec![json!({"id": "n-424242"})],
        AppTool::NoteList => vec![json!({}), json!({"limit": 100})],
    }
}

/// Arguments each tool refuses, each breaking one rule of its schema.
fn invalid(tool: AppTool) -> Vec<Value> {
    match tool {
        AppTool::FeatureRef => vec![
            json!({}),
            json!({"task": "{\"title\": \"ship\", \"priority\": \"high\"}"}),
            json!({"task": {"title": "ship", "priority": "urgent"}}),
            json!({"task": {"title": "ship", "priority": "low", "estimate": 1.5}}),
            json!({"task": {"title": "a", "priority": "low",
                            "subtasks": [{"title": "", "priority": "low"}]}}),
        ],
        AppTool::FeaturePattern => vec![
            json!({"code": "abc-1234", "at": "09:30"}),
            json!({"code": "ABC-1234", "at": "9:30"}),
            json!({"code": "ABC-1234"}),
        ],
        AppTool::FeatureFormats => {
            let good = valid(AppTool::FeatureFormats).remove(0);
            [
                ("when", "yesterday"),
                ("day", "2026-13-01"),
                ("clock", "25:00:00Z"),
                ("span", "1 day"),
                ("email", "not an email"),
                ("link", "no scheme"),
                ("uuid", "1234"),
                ("v4", "300.1.1.1"),
                ("v6", "2001:db8:::1"),
                ("host", "-bad-.example"),
            ]
            .into_iter()
            .map(|(k, v)| {
                let mut args = good.clone();
                args[k] = json!(v);
                args
            })
            .collect()
        }
        AppTool::FeatureNumbers => vec![
            json!({"quantity": 2.3, "step": 25, "ratio": 0.5, "count": 1}),
            json!({"quantity": 2.5, "step": 26, "ratio": 0.5, "count": 1}),
            json!({"quantity": 2.5, "step": 25, "ratio": 0, "count": 1}),
            json!({"quantity": 2.5, "step": 25, "ratio": 1, "count": 1}),
            json!({"quantity": 2.5, "step": 25, "ratio": 0.5, "count": 1.5}),
        ],
        AppTool::FeatureLengths => vec![
            json!({"name": "ab", "tags": ["a", "b"], "scores": [0, 1]}),
            json!({"name": "abcdefghijklm", "tags": ["a", "b"], "scores": [0, 1]}),
            json!({"name": "abc", "tags": ["a"], "scores": [0, 1]}),
            json!({"name": "abc", "tags": ["a", "a"], "scores": [0, 1]}),
            json!({"name": "abc", "tags": ["a", "b"], "scores": [1, 1]}),
            json!({"name": "abc", "tags": [], "scores": []}),
        ],
        AppTool::FeatureChoice => vec![
            json!({"target": "nobody", "shape": {"kind": "circle", "radius": 1},
                   "level": 0, "version": 2, "comment": null}),
            json!({"target": 1, "shape": {"kind": "circle", "side": 1},
                   "level": 0, "version": 2, "comment": null}),
            json!({"target": 1, "shape": {"kind": "circle", "radius": 1},
                   "level": 11, "version": 2, "comment": null}),
            json!({"target": 1, "shape": {"kind": "circle", "radius": 1},
                   "level": 0, "version": 3, "comment": null}),
            json!({"target": 1, "shape": {"kind": "circle", "radius": 1},
                   "level": 0, "version": 2}),
        ],
        AppTool::FeatureObjects => vec![
            json!({"config": {"name": "a", "server": {"host": "h", "port": 1}}, "extra": 1}),
            json!({"config": {"name": "a", "server": {"host": "h", "port": 0}}}),
            json!({"config": {"name": "a", "server": {"host": "h", "port": 1, "tls": true}}}),
            json!({"config": {"name": "a"}}),
            json!({"config": {"name": "a", "server": {"host": "h", "port": 1}},
                   "labels": {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}}),
        ],
        AppTool::NoteCreate => vec![
            json!({"title": "", "body": ""}),
            json!({"title": "t"}),
            json!({"title": "t", "body": "x".repeat(1001)}),
        ],
        AppTool::NoteGet | AppTool::NoteDelete => vec![json!({"id": "42"}), json!({})],
        AppTool::NoteList => vec![json!({"limit": 0}), json!({"limit": "5"})],
    }
}

#[test]
fn every_schema_compiles_strictly_and_tools_are_named_once() {
    let app = AppTools::default();
    assert!(app.entries.iter().all(|e| e.validator.is_some()));
    for tool in AppTool::ALL {
        assert_eq!(AppTool::from_name(tool.name()), Some(tool));
        assert_eq!(tool.definition()["inputSchema"]["type"], "object");
        assert!(crate::server::catalog::Tool::from_name(tool.name()).is_none());
    }
    assert_eq!(app.definitions().len(), AppTool::ALL.len());
}

#[tokio::test]
async fn app_tools_are_listed_only_when_asked_for() {
    let names = |r: &Value| -> Vec<String> {
        r["result"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(String::from))
            .collect()
    };
    let h = app_handler();
    let s = session(&h).await;
    let listed = names(&request(&h, &s, "tools/list", json!({})).await);
    assert_eq!(listed.len(), 9 + AppTool::ALL.len(), "{listed:?}");
    assert!(listed.iter().any(|n| n == "echo") && listed.iter().any(|n| n == "note_delete"));

    let plain = Handler::new(&ServerOptions {
        page_size: 100,
        ..ServerOptions::default()
    });
    let s = session(&plain).await;
    let listed = names(&request(&plain, &s, "tools/list", json!({})).await);
    assert_eq!(listed.len(), 9);
    let r = call(
        &plain,
        &s,
        "feature_pattern",
        json!({"code": "ABC-1234", "at": "09:30"}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Unknown tool: feature_pattern");
}

#[tokio::test]
async fn valid_calls_are_accepted() {
    let h = app_handler();
    let s = session(&h).await;
    for tool in AppTool::FEATURES {
        for args in valid(tool) {
            let r = call(&h, &s, tool.name(), args.clone()).await;
            assert!(r.get("error").is_none(), "{} {args}: {r}", tool.name());
            assert!(
                r["result"].get("isError").is_none(),
                "{} {args}: {r}",
                tool.name()
            );
            let text = r["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            assert!(
                text.starts_with(&format!("{} accepted", tool.name())),
                "{text}"
            );
        }
    }
    // The built-in tools still answer beside them.
    let r = call(&h, &s, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(r["result"]["structuredContent"]["sum"], 3);
}

#[tokio::test]
async fn invalid_calls_are_refused_with_invalid_params() {
    let h = app_handler();
    let s = session(&h).await;
    for tool in AppTool::ALL {
        for args in invalid(tool) {
            let r = call(&h, &s, tool.name(), args.clone()).await;
            assert_eq!(r["error"]["code"], -32602, "{} {args}: {r}", tool.name());
            let message = r["error"]["message"].as_str().unwrap_or_default();
            assert!(message.starts_with("Invalid params: "), "{message}");
            assert!(message.chars().count() <= MAX_ERROR_CHARS + 60, "{message}");
            assert_eq!(r["error"]["data"]["tool"], tool.name());
        }
    }
    // Where the error is, is named.
    let r = call(
        &h,
        &s,
        "feature_ref",
        json!({"task": {"title": "t", "priority": "urgent"}}),
    )
    .await;
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Invalid params: /task/priority: "),
        "{message}"
    );
    // No arguments at all is a call with `{}`.
    let r = request(&h, &s, "tools/call", json!({"name": "feature_pattern"})).await;
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Invalid params: arguments: "),
        "{message}"
    );
    // Arguments that are not an object.
    let r = call(&h, &s, "note_list", json!([1])).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn notes_round_trip_across_sessions() {
    let h = app_handler();
    let (a, b) = (session(&h).await, session(&h).await);
    let created = call(
        &h,
        &a,
        "note_create",
        json!({"title": "groceries", "body": "milk"}),
    )
    .await;
    let id = created["result"]["structuredContent"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(id.starts_with(ID_PREFIX), "{created}");
    assert_eq!(
        created["result"]["content"][0]["text"],
        format!("created note {id}")
    );
    // Another session of the same server sees it.
    let got = call(&h, &b, "note_get", json!({"id": id})).await;
    assert_eq!(got["result"]["structuredContent"]["body"], "milk", "{got}");
    let listed = call(&h, &b, "note_list", json!({})).await;
    assert_eq!(
        listed["result"]["content"][0]["text"],
        format!("[NOTE] {id} groceries")
    );
    assert_eq!(listed["result"]["structuredContent"]["total"], 1);
    let deleted = call(&h, &a, "note_delete", json!({"id": id})).await;
    assert_eq!(
        deleted["result"]["content"][0]["text"],
        format!("deleted note {id}")
    );
    for tool in ["note_get", "note_delete"] {
        let gone = call(&h, &b, tool, json!({"id": id})).await;
        assert_eq!(gone["result"]["isError"], true, "{gone}");
        assert_eq!(
            gone["result"]["content"][0]["text"],
            format!("no note {id}")
        );
    }
    let empty = call(&h, &a, "note_list", json!({"limit": 5})).await;
    assert_eq!(empty["result"]["content"][0]["text"], "no notes");
}

#[tokio::test]
async fn modern_requests_reach_the_app_tools() {
    let h = app_handler();
    let s = Session::new();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let r = request(
        &h,
        &s,
        "tools/call",
        json!({"name": "feature_pattern", "arguments": {"code": "X", "at": "1"},
               "_meta": meta}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = request(
        &h,
        &s,
        "tools/call",
        json!({"name": "note_create", "arguments": {"title": "t", "body": "b"},
               "_meta": meta}),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert!(r["result"]["structuredContent"]["id"].is_string(), "{r}");
}

#[test]
fn annotations_mark_what_changes_state() {
    let hints = |t: AppTool| t.definition()["annotations"].clone();
    for t in AppTool::FEATURES
        .into_iter()
        .chain([AppTool::NoteGet, AppTool::NoteList])
    {
        assert_eq!(hints(t)["readOnlyHint"], true, "{}", t.name());
        assert_eq!(hints(t)["destructiveHint"], false, "{}", t.name());
    }
    assert_eq!(hints(AppTool::NoteCreate)["readOnlyHint"], false);
    assert_eq!(hints(AppTool::NoteCreate)["destructiveHint"], false);
    assert_eq!(hints(AppTool::NoteDelete)["readOnlyHint"], false);
    assert_eq!(hints(AppTool::NoteDelete)["destructiveHint"], true);
    assert!(AppTool::NoteCreate.definition()["outputSchema"].is_object());
}

#[test]
fn long_error_texts_are_cut() {
    assert_eq!(bounded("abc", 5), "abc");
    assert_eq!(bounded("abcdef", 3), "abc…");
    assert_eq!(bounded("ééé", 2), "éé…");
}

#[test]
fn the_note_store_bound_drops_the_oldest_through_the_tools() {
    let app = AppTools::new(NoteStore::new(2));
    let create = |title: &str| {
        let r = app
            .call(&json!({"name": "note_create", "arguments": {"title": title, "body": "b"}}))
            .expect("an app tool")
            .expect("accepted");
        r["structuredContent"]["id"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let ids: Vec<String> = ["a", "b", "c"].into_iter().map(create).collect();
    let get = |id: &str| {
        app.call(&json!({"name": "note_get", "arguments": {"id": id}}))
            .expect("an app tool")
            .expect("valid arguments")
    };
    assert_eq!(get(&ids[0])["isError"], true);
    assert_eq!(get(&ids[2])["structuredContent"]["title"], "c");
    let listed = app
        .call(&json!({"name": "note_list"}))
        .expect("an app tool")
        .expect("accepted");
    assert_eq!(listed["structuredContent"]["total"], 2);
    assert_eq!(
        listed["content"][0]["text"],
        format!("[NOTE] {} c\n[NOTE] {} b", ids[2], ids[1])
    );
    assert!(app.call(&json!({"name": "echo"})).is_none());
}
