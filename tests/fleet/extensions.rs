//! Protocol extensions (SEP-2133) against the built-in server: personas declare them
//! (`extensions = [...]`, into `capabilities.extensions` of either era), and the results
//! say per extension how many sessions' servers accepted, ignored, offered or required
//! one; a server that uses the tasks extension with a client that did not declare it is
//! a finding.

use crate::support::{builtin_http, check_schema, codes, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::{Fault, ServerOptions};
use serde_json::Value;

const UI: &str = "io.modelcontextprotocol/ui";
const NEEDED: &str = "com.example/needed";

fn persona(name: &str, version: &str, extensions: &str) -> String {
    format!(
        "[[persona]]\nname = \"{name}\"\nprotocol_version = \"{version}\"\nextensions = {extensions}\n"
    )
}

async fn run(url: String, personas: &str, sessions: u64) -> Value {
    let text = format!(
        "[load]\nclients = 2\nsessions = {sessions}\n{personas}\
         [[scenario]]\nname = \"call\"\nsteps = [{{ op = \"tools/call\", tool = \"echo\", arguments = {{ message = \"hi\" }} }}]\n"
    );
    let json = FleetRun::new(RunArgs {
        overrides: mcp_fleet::cli::Overrides {
            target: Some(url),
            seed: Some(3),
            ..Default::default()
        },
        ..RunArgs::default()
    })
    .profile(&text)
    .run()
    .await
    .json;
    check_schema(&json);
    json
}

fn verdicts(json: &Value, id: &str) -> [u64; 4] {
    let e = &json["extensions"][id];
    ["accepted", "ignored", "offered", "required"].map(|v| e[v].as_u64().unwrap_or(0))
}

#[tokio::test]
async fn each_extension_is_accepted_ignored_offered_or_required_in_both_eras() {
    let srv = builtin_http(ServerOptions {
        extensions: vec![UI.into()],
        require_extensions: vec![NEEDED.into()],
        ..ServerOptions::default()
    })
    .await;
    for version in ["2026-07-28", "2025-11-25"] {
        let personas = [
            persona("full", version, &format!("[\"{UI}\", \"{NEEDED}\"]")),
            persona("plain", version, "[]"),
            persona(
                "other",
                version,
                "{ \"com.example/unknown\" = { level = 2 } }",
            ),
        ]
        .concat();
        let json = run(srv.url(), &personas, 30).await;
        let by = |p: &str| json["personas"][p]["sessions"].as_u64().unwrap_or(0);
        let (full, plain, other) = (by("full"), by("plain"), by("other"));
        assert_eq!(full + plain + other, 30, "{version}");
        assert!(
            full > 0 && plain > 0 && other > 0,
            "{version}: {full} {plain} {other}"
        );
        // The server offers ui and needs `needed`: the full persona uses both.
        assert_eq!(
            verdicts(&json, UI),
            [full, 0, plain + other, 0],
            "{version} ui"
        );
        // Without `needed`, every tool call is refused naming it: required.
        assert_eq!(
            verdicts(&json, NEEDED),
            [full, 0, plain + other, plain + other],
            "{version} needed"
        );
        assert_eq!(
            verdicts(&json, "com.example/unknown"),
            [0, other, 0, 0],
            "{version}"
        );
        let refused = json["phases"]["tools/call"]["errors"].as_u64();
        assert_eq!(refused, Some(plain + other), "{version}: the refused calls");
        assert_eq!(codes(&json), Vec::<String>::new(), "{version}: no finding");
    }
}

#[tokio::test]
async fn the_tasks_extension_used_with_a_client_that_did_not_declare_it_is_a_finding() {
    let srv = builtin_http(ServerOptions {
        faults: vec![Fault::TaskUndeclared],
        ..ServerOptions::default()
    })
    .await;
    let undeclared = persona("agent", "2026-07-28", "[]");
    let json = run(srv.url(), &undeclared, 4).await;
    assert_eq!(codes(&json), vec!["extension.used-undeclared"]);
    // A client that declared the extension is answered as usual: no finding.
    let declared = persona("agent", "2026-07-28", "[\"io.modelcontextprotocol/tasks\"]");
    let json = run(srv.url(), &declared, 4).await;
    assert_eq!(codes(&json), Vec::<String>::new());
    assert_eq!(json["sessions"]["failed"], 0);
    assert_eq!(
        verdicts(&json, "io.modelcontextprotocol/tasks"),
        [0, 4, 0, 0]
    );
}

#[tokio::test]
async fn a_malformed_extension_id_stops_the_run_before_it_starts() {
    let srv = builtin_http(ServerOptions::default()).await;
    let text = format!(
        "[target]\nurl = \"{}\"\n{}",
        srv.url(),
        persona("p", "2026-07-28", "[\"ui\"]")
    );
    let err = FleetRun::new(RunArgs::default())
        .profile(&text)
        .error()
        .await;
    let text = format!("{err:#}");
    assert!(text.contains("extension id"), "{text}");
}
