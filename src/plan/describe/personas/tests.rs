//! `validate`'s faults, auth and tasks lines, from plans given those sections by hand
//! (the sections' parsers belong to the parts that own them).

use crate::metrics::ClientFault;
use crate::plan::{
    AuthPlan, ClientCredentials, FaultMix, Overrides, Plan, TaskCalls, TaskPolicy, TokenSource,
};
use std::sync::Arc;
use std::time::Duration;

const SECRET: &str = "s3cr3t-client-secret";
const TOKEN: &str = "tok-abcdef-123456";

fn plan() -> Plan {
    let toml = "[[persona]]\nname = \"good\"\n[[persona]]\nname = \"buggy\"\n[[persona]]\nname = \"authed\"\n\
                [[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/list\" }]\n";
    Plan::resolve(
        crate::profile::Profile::parse(toml, "p.toml").expect("parses"),
        &Overrides::default(),
        "p.toml",
    )
    .expect("resolves")
}

fn lines_of<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("  {key} ")))
        .collect()
}

#[test]
fn a_persona_without_faults_auth_or_tasks_adds_no_line() {
    let text = plan().describe_details();
    for key in ["faults", "auth", "tasks"] {
        assert!(lines_of(&text, key).is_empty(), "{key}: {text}");
    }
}

#[test]
fn faults_are_told_with_their_shares_and_what_is_left_well_behaved() {
    let mut p = plan();
    p.personas[1].faults = FaultMix {
        faults: vec![
            (ClientFault::InvalidJson, 0.05),
            (ClientFault::Oversized, 0.025),
        ],
    };
    let text = p.describe_details();
    assert_eq!(
        lines_of(&text, "faults"),
        ["  faults   buggy                invalid-json 5%, oversized 2.5% (92.5% of its sessions well-behaved)"],
        "{text}"
    );
}

#[test]
fn auth_names_the_source_but_never_a_token_or_a_secret() {
    let mut p = plan();
    p.personas[2].auth = Some(AuthPlan {
        source: TokenSource::Tokens {
            file: "tokens.txt".into(),
            tokens: Arc::new(vec![TOKEN.into(), "another".into()]),
        },
        discover: true,
    });
    p.personas[1].auth = Some(AuthPlan {
        source: TokenSource::ClientCredentials(Arc::new(ClientCredentials {
            token_url: Some(url::Url::parse("http://127.0.0.1:9/token?key=hidden").expect("url")),
            client_id: "fleet".into(),
            client_secret: SECRET.into(),
            scope: Some("mcp:tools".into()),
            resource: None,
            refresh_before: Duration::from_secs(30),
        })),
        discover: false,
    });
    let text = p.describe_details();
    assert_eq!(
        lines_of(&text, "auth"),
        [
            "  auth     buggy                client credentials at http://127.0.0.1:9/token?key=***, client id fleet, scope mcp:tools, refreshed 30s before expiry; no discovery",
            "  auth     authed               bearer tokens from tokens.txt: 2 tokens, round-robin over the virtual clients; a session's first 401 walks the discovery",
        ],
        "{text}"
    );
    for secret in [SECRET, TOKEN, "hidden", "another"] {
        assert!(!text.contains(secret), "{secret} in {text}");
        assert!(!p.describe().contains(secret), "{secret} in the banner");
    }
}

#[test]
fn a_task_policy_other_than_the_default_is_told() {
    let mut p = plan();
    p.personas[0].tasks = TaskPolicy {
        calls: TaskCalls::Allowed,
        cancel: 0.1,
        ttl: Some(Duration::from_secs(60)),
        poll_interval: Duration::from_millis(250),
    };
    p.personas[1].tasks = TaskPolicy {
        calls: TaskCalls::Never,
        ..TaskPolicy::default()
    };
    let text = p.describe_details();
    assert_eq!(
        lines_of(&text, "tasks"),
        [
            "  tasks    good                 tools that allow a task as tasks, cancel 10%, ttl 1m, poll every 250ms unless the server gives a pollInterval",
            "  tasks    buggy                never as tasks (task-required tools fail), cancel 0%, the server's ttl, poll every 100ms unless the server gives a pollInterval",
        ],
        "{text}"
    );
}
