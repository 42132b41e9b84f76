//! Authenticated clients against `serve --auth`: a tokens file and the client-credentials
//! grant over Streamable HTTP, legacy SSE and WebSocket (every session completes, the
//! `token` and `auth` phases are timed, tokens are refreshed before a short TTL ends); a
//! persona without a token gets 401s and the `auth_required` diagnosis; each auth fault
//! of the server gives its finding; and no token or client secret is in any output or
//! results file.

use crate::support::{
    builtin_http, check_schema, codes, count, counter, fleet_command, FleetRun, Served,
};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::auth::AuthOptions;
use mcp_fleet::server::{Fault, HttpServer, ServerOptions};
use std::path::Path;
use std::time::Duration;

const TOKENS: [&str; 2] = ["tok-7f3a-first-static", "tok-91cd-second-static"];
const CLIENT_SECRET: &str = "cc-secret-5e2b9d";

async fn auth_server(faults: &[Fault], ttl: Duration) -> HttpServer {
    builtin_http(ServerOptions {
        auth: Some(AuthOptions {
            static_tokens: TOKENS.iter().map(|t| t.to_string()).collect(),
            client_id: "fleet".into(),
            client_secret: CLIENT_SECRET.into(),
            token_ttl: ttl,
        }),
        faults: faults.to_vec(),
        ..ServerOptions::default()
    })
    .await
}

/// A profile of `personas` (TOML lines) against `url`, with a tokens file beside it.
fn profile(dir: &Path, url: &str, load: &str, personas: &str) -> String {
    std::fs::write(
        dir.join("tokens.txt"),
        format!("# two\n{}\n", TOKENS.join("\n")),
    )
    .expect("tokens file");
    format!(
        "name = \"auth\"\n[load]\n{load}\n[target]\nurl = \"{url}\"\ntimeout = \"5s\"\n\
         {personas}\n[[scenario]]\nname = \"s\"\nsteps = [{{ op = \"tools/list\" }}, \
         {{ op = \"tools/call\", tool = \"echo\", arguments = {{ message = \"hi\" }} }}]\n"
    )
}

const STATIC: &str =
    "[[persona]]\nname = \"static\"\nget_stream = true\nauth = { tokens = \"file:tokens.txt\" }\n";

fn client_credentials(extra: &str) -> String {
    format!(
        "[[persona]]\nname = \"cc\"\nauth = {{ client_credentials = {{ client_id = \"fleet\", \
         client_secret = \"{CLIENT_SECRET}\"{extra} }} }}\n"
    )
}

/// Run `text` written to a folder of its own (the tokens file beside it).
async fn run_in(dir: &tempfile::TempDir, text: &str) -> crate::support::Finished {
    let path = dir.path().join("profile.toml");
    std::fs::write(&path, text).expect("profile");
    FleetRun::new(RunArgs {
        profile: Some(path),
        ..RunArgs::default()
    })
    .run()
    .await
}

/// No token and no client secret in any file under `dir`.
fn no_secret_in(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.file_name().is_some_and(|n| n == "tokens.txt") {
                continue;
            }
            let bytes = std::fs::read(&p).expect("read");
            let text = String::from_utf8_lossy(&bytes);
            for secret in TOKENS.iter().chain([&CLIENT_SECRET]) {
                assert!(!text.contains(secret), "{} holds a secret", p.display());
            }
        }
    }
}

#[tokio::test]
async fn tokens_and_client_credentials_over_every_http_transport() {
    let server = auth_server(&[], Duration::from_secs(3600)).await;
    for (url, transport) in [
        (server.url(), "http"),
        (format!("http://{}/sse", server.addr), "sse"),
        (format!("ws://{}/ws", server.addr), "ws"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let personas = format!("{STATIC}{}", client_credentials("")).replace(
            "\nauth = ",
            &format!("\ntransport = \"{transport}\"\nauth = "),
        );
        let text = profile(dir.path(), &url, "clients = 4\nsessions = 24", &personas);
        let run = run_in(&dir, &text).await;
        let json = &run.json;
        check_schema(json);
        assert_eq!(
            json["sessions"]["completed"], 24,
            "{url}: {}",
            json["failures"]
        );
        assert_eq!(json["failures"], serde_json::json!({}), "{url}");
        // One token for the persona (its clients wait for it), plus the wrong-audience
        // check's; found through the discovery, as the profile names no token_url.
        assert_eq!(count(json, "token"), 1, "{url}");
        assert_eq!(count(json, "auth"), 1, "{url}");
        assert_eq!(counter(json, "tokens_minted"), 2, "{url}");
        assert!(codes(json).is_empty(), "{url}: {:?}", codes(json));
        if transport == "http" {
            // The GET stream carries the token too (refused, it would be counted).
            assert!(
                counter(json, "get_stream_opened") > 0,
                "{}",
                json["counters"]
            );
            assert_eq!(counter(json, "get_stream_refused"), 0);
        }
        no_secret_in(run.dir.path());
    }
}

#[tokio::test]
async fn a_short_token_ttl_is_refreshed_before_it_ends() {
    let server = auth_server(&[], Duration::from_secs(1)).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let token_url = format!("http://{}/token", server.addr);
    let cc = client_credentials(&format!(
        ", token_url = \"{token_url}\", refresh_before = \"500ms\""
    ));
    let load = "clients = 2\nduration = \"2500ms\"\nthink = \"50ms\"";
    let text = profile(dir.path(), &server.url(), load, &cc);
    let json = run_in(&dir, &text).await.json;
    assert_eq!(json["sessions"]["failed"], 0, "{}", json["failures"]);
    // A token lives 1 s and is replaced after 0.5 s: 2.5 s take about 5 of them.
    let refreshed = counter(&json, "tokens_refreshed");
    assert!((2..=8).contains(&refreshed), "{refreshed}");
    assert_eq!(count(&json, "token"), refreshed + 1);
    // A token endpoint was named: nothing to discover.
    assert_eq!(count(&json, "auth"), 0);
}

#[tokio::test]
async fn no_token_is_a_401_failure_with_the_challenge_and_a_diagnosis() {
    let server = auth_server(&[], Duration::from_secs(3600)).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let text = profile(
        dir.path(),
        &server.url(),
        "clients = 2\nsessions = 6",
        "[[persona]]\nname = \"anon\"\n",
    );
    let json = run_in(&dir, &text).await.json;
    check_schema(&json);
    assert_eq!(
        json["failures"]["http_status:401"], 6,
        "{}",
        json["failures"]
    );
    let example = json["failure_examples"]["http_status:401"].to_string();
    assert!(example.contains("resource_metadata="), "{example}");
    assert_eq!(json["diagnosis"]["cause"], "auth_required");
    // A persona without `auth` walks the discovery once per run (not once per refused
    // session), and the server's metadata is right.
    assert_eq!(count(&json, "auth"), 1);
    assert!(codes(&json).is_empty(), "{:?}", codes(&json));
}

#[tokio::test]
async fn each_auth_fault_of_the_server_is_its_finding() {
    let cases = [
        (Fault::AuthNoChallenge, "auth.401-without-www-authenticate"),
        (Fault::AuthNoMetadata, "auth.resource-metadata-missing"),
        (Fault::AuthBadMetadata, "auth.metadata-malformed"),
        (Fault::AuthAnyAudience, "auth.wrong-audience-accepted"),
    ];
    for (fault, code) in cases {
        let server = auth_server(&[fault], Duration::from_secs(3600)).await;
        let dir = tempfile::tempdir().expect("tempdir");
        let token_url = format!("http://{}/token", server.addr);
        let personas = format!(
            "[[persona]]\nname = \"anon\"\n{}",
            client_credentials(&format!(", token_url = \"{token_url}\""))
        );
        let text = profile(
            dir.path(),
            &server.url(),
            "clients = 2\nsessions = 8",
            &personas,
        );
        let json = run_in(&dir, &text).await.json;
        check_schema(&json);
        let found = codes(&json);
        assert!(
            found.contains(&code.to_string()),
            "{}: {found:?}",
            fault.name()
        );
        let auth_codes = found.iter().filter(|c| c.starts_with("auth.")).count();
        assert_eq!(
            auth_codes,
            1,
            "{}: only its own finding: {found:?}",
            fault.name()
        );
    }
}

#[tokio::test]
async fn a_server_that_asks_for_a_token_and_has_no_metadata_fails_sessions_not_reachability() {
    // The other side of going without a token when no metadata is found: this server
    // answers 401, so the missing metadata is its fault, and its sessions fail (they
    // reached it); none is unreachable.
    let server = auth_server(&[Fault::AuthNoMetadata], Duration::from_secs(3600)).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let text = profile(
        dir.path(),
        &server.url(),
        "clients = 2\nsessions = 8",
        &client_credentials(""),
    );
    let json = run_in(&dir, &text).await.json;
    check_schema(&json);
    assert_eq!(json["sessions"]["failed"], 8, "{}", json["failures"]);
    assert_eq!(json["sessions"]["unreachable"], 0);
    let found = codes(&json);
    assert!(
        found.contains(&"auth.resource-metadata-missing".to_string()),
        "{found:?}"
    );
    assert_eq!(counter(&json, "tokens_minted"), 0);
}

#[tokio::test]
async fn a_bad_client_secret_is_a_counted_token_failure() {
    let server = auth_server(&[], Duration::from_secs(3600)).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let token_url = format!("http://{}/token", server.addr);
    let text = profile(
        dir.path(),
        &server.url(),
        "clients = 1\nsessions = 3",
        &format!(
            "[[persona]]\nname = \"cc\"\nauth = {{ client_credentials = {{ token_url = \"{token_url}\", \
             client_id = \"fleet\", client_secret = \"wrong-{CLIENT_SECRET}\" }} }}\n"
        ),
    );
    let run = run_in(&dir, &text).await;
    let json = &run.json;
    assert_eq!(json["phases"]["token"]["errors"], 3, "{}", json["failures"]);
    assert_eq!(json["sessions"]["completed"], 0);
    let example = json["failure_examples"]["http_status:401"].to_string();
    assert!(example.contains("invalid_client"), "{example}");
    no_secret_in(run.dir.path());
}

#[tokio::test]
async fn no_secret_in_the_output_of_run_validate_and_inspect() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("server-tokens.txt");
    std::fs::write(&tokens, TOKENS.join("\n")).expect("tokens");
    let client = format!("fleet:{CLIENT_SECRET}");
    let served = Served::start(&[
        "--auth",
        "--auth-tokens",
        &tokens.to_string_lossy(),
        "--auth-client",
        &client,
    ]);
    let personas = format!("{STATIC}{}", client_credentials(""));
    let text = profile(
        dir.path(),
        &served.url(),
        "clients = 2\nsessions = 6",
        &personas,
    );
    let path = dir.path().join("profile.toml");
    std::fs::write(&path, &text).expect("profile");
    let p = path.to_string_lossy().into_owned();
    let out = dir.path().join("results");
    let o = out.to_string_lossy().into_owned();
    let commands: [Vec<String>; 3] = [
        ["run", &p, "--out", &o, "-v", "--seed", "1"]
            .map(String::from)
            .to_vec(),
        ["validate", &p].map(String::from).to_vec(),
        ["inspect", "--profile", &p, "--persona", "cc", "--raw"]
            .map(String::from)
            .to_vec(),
    ];
    for args in commands {
        let output = tokio::task::spawn_blocking(move || {
            fleet_command()
                .args(args)
                .output()
                .expect("the binary runs")
        });
        let output = tokio::time::timeout(Duration::from_secs(60), output)
            .await
            .expect("in time")
            .expect("thread");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "{text}");
        for secret in TOKENS.iter().chain([&CLIENT_SECRET]) {
            assert!(!text.contains(secret), "a secret in the output: {text}");
        }
    }
    no_secret_in(&out);
}
