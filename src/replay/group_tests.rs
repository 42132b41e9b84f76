//! `profile --from-trace`: grouping by identity and steps, pause ranges, argument pools,
//! and a rendered profile that resolves.

use super::tests::{
    answer, call, client, close, initialize, open, pause, request, server, stdio_session, trace,
};
use super::*;
use crate::plan::{Overrides, Plan, Source};
use crate::profile::{Profile, Step};
use crate::trace::{ClosedBy, RecordedSession, Transport};
use serde_json::json;

/// A claude-code session: tools/list, a wait of `wait_ms`, a search for `query`, the
/// same `stats` call every time.
fn searching(id: u64, opened_ms: u64, wait_ms: u64, query: &str) -> RecordedSession {
    let mut s = open(id, Transport::Stdio, opened_ms);
    let t = opened_ms;
    initialize(
        &mut s,
        t + 1,
        "claude-code",
        "1.2.0",
        json!({"sampling": {}}),
    );
    client(&mut s, t + 5, request(1, "tools/list", json!({})));
    server(&mut s, t + 6, answer(json!(1), json!({"tools": []})));
    let search = json!({"name": "search", "arguments": {"query": query, "limit": 5}});
    client(&mut s, t + 6 + wait_ms, request(2, "tools/call", search));
    server(
        &mut s,
        t + 8 + wait_ms,
        answer(json!(2), json!({"content": []})),
    );
    let stats = json!({"name": "stats", "arguments": {"scope": "all"}});
    client(&mut s, t + 8 + wait_ms, request(3, "tools/call", stats));
    server(
        &mut s,
        t + 9 + wait_ms,
        answer(json!(3), json!({"content": []})),
    );
    close(&mut s, t + 9 + wait_ms, ClosedBy::Client);
    s
}

fn four_sessions() -> Trace {
    trace(vec![
        searching(1, 0, 100, "rust"),
        searching(2, 50, 300, "tokio"),
        searching(3, 100, 200, "rust"),
        stdio_session(4),
    ])
}

#[test]
fn sessions_fold_into_weighted_personas_scenarios_and_pools() {
    let mut t = four_sessions();
    let late = &mut t.sessions[3];
    late.opened += 5_000_000;
    late.messages.iter_mut().for_each(|m| m.0 += 5_000_000);
    late.closed.iter_mut().for_each(|c| c.0 += 5_000_000);
    let d = grouped_profile(&t, "traces/claude.jsonl");
    let p = &d.profile;
    let personas: Vec<(&str, Option<u32>)> = p
        .personas
        .iter()
        .map(|x| (x.name.as_str(), x.weight))
        .collect();
    assert_eq!(
        personas,
        [("claude-code-1.2.0", Some(3)), ("cursor-0.9", Some(1))]
    );
    assert_eq!(
        p.personas[0].scenarios,
        Some(vec!["claude-code-1.2.0".to_string()])
    );
    assert_eq!(
        p.personas[1].scenarios,
        Some(vec!["cursor-0.9".to_string()])
    );
    let s = &p.scenarios[0];
    assert_eq!(s.weight, Some(3));
    let want = vec![
        pause("2ms"),
        Step::ToolsList {},
        pause("100ms..300ms"),
        call(
            "search",
            json!({"query": "${pool.search.query}", "limit": 5}),
        ),
        call("stats", json!({"scope": "all"})),
    ];
    assert_eq!(s.steps, want);
    let pool = &p.data["search"];
    assert_eq!(
        (pool.file.as_str(), pool.order.as_deref()),
        ("claude.data/search.jsonl", Some("random"))
    );
    assert_eq!(
        d.data,
        [(
            "claude.data/search.jsonl".to_string(),
            "{\"limit\":5,\"query\":\"rust\"}\n{\"limit\":5,\"query\":\"tokio\"}\n".to_string()
        )]
    );
    assert_eq!(p.load.clients, Some(3), "three sessions were open at once");
    assert_eq!(p.load.duration.as_deref(), Some("30s"));
}

#[test]
fn personas_split_on_habits_and_scenarios_on_steps() {
    let mut other_steps = searching(5, 0, 10, "x");
    // One call fewer: another scenario of the same persona.
    other_steps
        .messages
        .truncate(other_steps.messages.len() - 2);
    let mut http = searching(6, 0, 10, "x");
    http.transport = Transport::Ws;
    let t = trace(vec![searching(1, 0, 10, "a"), other_steps, http]);
    let d = grouped_profile(&t, "t.jsonl");
    let p = &d.profile;
    let personas: Vec<&str> = p.personas.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(personas, ["claude-code-1.2.0", "claude-code-1.2.0-2"]);
    let scenarios: Vec<(&str, Option<u32>)> = p
        .scenarios
        .iter()
        .map(|s| (s.name.as_str(), s.weight))
        .collect();
    assert_eq!(
        scenarios,
        [
            ("claude-code-1.2.0-1", Some(1)),
            ("claude-code-1.2.0-2", Some(1)),
            ("claude-code-1.2.0-2-2", Some(1))
        ]
    );
    // Two queries, "a" and "x": a pool, shared by every scenario that calls search.
    assert_eq!(d.data.len(), 1);
}

#[test]
fn the_rendered_profile_says_where_it_came_from_and_resolves() {
    let d = grouped_profile(&four_sessions(), "traces/claude.jsonl");
    let text = render(&d, "traces/claude.jsonl");
    assert!(text.starts_with("# Inferred by mcp-fleet"), "{text}");
    for said in [
        "traces/claude.jsonl",
        "4 session(s) → 2 persona(s)",
        "claude-code-1.2.0 ×3",
        "pool search",
    ] {
        assert!(text.contains(said), "{said}:\n{text}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("profile.toml");
    std::fs::write(&path, &text).expect("write profile");
    for (file, contents) in &d.data {
        let at = dir.path().join(file);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("data folder");
        std::fs::write(at, contents).expect("write data");
    }
    assert!(Profile::parse(&text, "profile.toml").is_ok());
    let plan = Plan::from_source(&Source::File(path), &Overrides::default()).expect("resolves");
    assert_eq!(plan.personas.len(), 2);
    assert_eq!(plan.pools.0.len(), 1);
    assert_eq!(plan.pools.0[0].rows.len(), 2);
}
