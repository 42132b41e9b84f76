//! The serde mirror against profile text: a full profile parses, and unknown keys,
//! unknown steps and a missing persona name are errors that name the file, line and fix.

use super::*;

#[test]
fn parses_a_full_profile() {
    let p = Profile::parse(
        r#"
name = "t"
seed = 7
[target]
url = "http://127.0.0.1:1/mcp"
headers = { Authorization = "Bearer x" }
timeout = "5s"
[load]
clients = 3
sessions = 10
[[persona]]
name = "a"
weight = 2
protocol_version = "2025-06-18"
capabilities = { roots = { listChanged = true }, sampling = {} }
client_info = { name = "c", version = "1" }
[[scenario]]
name = "s"
steps = [
  { op = "tools/list" },
  { op = "tools/call", tool = "echo", arguments = { message = "hi" } },
  { op = "pause", duration = "10ms" },
]
"#,
        "t.toml",
    )
    .expect("valid profile");
    assert_eq!(p.personas[0].weight, Some(2));
    assert_eq!(
        p.personas[0].capabilities,
        Some(serde_json::json!({"roots": {"listChanged": true}, "sampling": {}}))
    );
    assert_eq!(p.scenarios[0].steps.len(), 3);
    assert_eq!(
        p.scenarios[0].steps[1],
        Step::ToolsCall {
            tool: "echo".into(),
            arguments: Some(serde_json::json!({"message": "hi"})),
            generate: None,
            optional: None,
            capture: None,
            checks: None,
        }
    );
    // What we write back parses again to the same thing.
    let again = Profile::parse(&p.to_toml(), "again").expect("round trip");
    assert_eq!(again.scenarios[0].steps, p.scenarios[0].steps);
}

#[test]
fn unknown_key_names_file_line_and_fix() {
    let err = Profile::parse("[load]\nclient = 3\n", "bad.toml")
        .expect_err("unknown key")
        .to_string();
    assert!(
        err.starts_with("bad.toml: TOML parse error at line 2, column 1"),
        "{err}"
    );
    assert!(
        err.contains("unknown field `client`, expected one of"),
        "{err}"
    );
    assert!(err.contains("fix: remove or rename the key"), "{err}");
}

#[test]
fn unknown_step_and_unknown_step_key_are_errors() {
    let err = Profile::parse(
        "[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/lst\" }]\n",
        "s.toml",
    )
    .expect_err("bad op")
    .to_string();
    assert!(err.contains("unknown variant `tools/lst`"), "{err}");
    let err = Profile::parse(
        "[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/call\", tool = \"x\", args = {} }]\n",
        "s.toml",
    )
    .expect_err("bad key")
    .to_string();
    assert!(err.contains("unknown field `args`"), "{err}");
}

#[test]
fn missing_persona_name_is_an_error() {
    let err = Profile::parse("[[persona]]\nweight = 1\n", "p.toml")
        .expect_err("missing name")
        .to_string();
    assert!(err.contains("missing field `name`"), "{err}");
    assert!(err.contains("fix: add the key"), "{err}");
}
