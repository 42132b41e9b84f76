//! No secret is ever written: one unique secret planted through every route (a CLI
//! header, a profile header, URL userinfo and query, `${VAR}` from the environment, a
//! `--header @file`) reaches the server and appears in no file of the results folder and
//! in no output of `run`, `validate` and `inspect` (text, `--raw`, `--json`), nor in the
//! error messages of refused runs.

use crate::support::{builtin_http, fleet_program};
use mcp_fleet::server::ServerOptions;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Upper bound on one command of these tests.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);

/// A forwarder to `upstream` that keeps every byte the clients sent, so the test can
/// tell the secrets did reach the server.
async fn snooping_proxy(upstream: SocketAddr) -> (SocketAddr, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("local addr");
    let wire = Arc::new(Mutex::new(Vec::new()));
    let sent = wire.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let sent = sent.clone();
            tokio::spawn(async move {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    return;
                };
                let (mut from_client, mut to_client) = client.into_split();
                let (mut from_server, mut to_server) = server.into_split();
                let up = async {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n @ 1..) = from_client.read(&mut buf).await {
                        sent.lock().expect("lock").extend_from_slice(&buf[..n]);
                        if to_server.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = to_server.shutdown().await;
                };
                let down = async {
                    let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
                    let _ = to_client.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    (addr, wire)
}

/// Run the binary with `args` and the environment variable `MCP_TOKEN`, off the async
/// workers (the servers live on them).
async fn fleet(args: Vec<String>, token: &str) -> Output {
    let token = token.to_string();
    let run = tokio::task::spawn_blocking(move || {
        Command::new(fleet_program())
            .args(&args)
            .env("MCP_TOKEN", token)
            .env_remove("MCP_FLEET_UNSET_VARIABLE")
            .output()
            .expect("the binary runs")
    });
    tokio::time::timeout(COMMAND_LIMIT, run)
        .await
        .expect("the command finished in time")
        .expect("the command's thread")
}

/// Neither stdout nor stderr holds the secret; both, for the next checks.
fn clean_output(what: &str, out: &Output, secret: &str) -> String {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains(secret), "{what} printed the secret:\n{text}");
    text
}

/// No file below `dir` holds the secret; the files read.
fn clean_files(dir: &Path, secret: &str) -> usize {
    let mut read = 0;
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            read += clean_files(&path, secret);
            continue;
        }
        let bytes = std::fs::read(&path).expect("read file");
        let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
        assert!(!found, "{} holds the secret", path.display());
        read += 1;
    }
    read
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_planted_through_every_route_is_sent_and_never_written() {
    let server = builtin_http(ServerOptions::default()).await;
    let (proxy, wire) = snooping_proxy(server.addr).await;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let secret = format!("zq{}s{nanos}", std::process::id());
    let dir = tempfile::tempdir().expect("tempdir");
    let header_file = dir.path().join("auth.header");
    std::fs::write(&header_file, format!("X-File: {secret}-file\n")).expect("write");
    let url = format!("http://fleet:{secret}-pw@{proxy}/mcp?api_key={secret}-query&mode=x");
    let profile = dir.path().join("p.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"secrets\"\n[target]\nurl = \"{url}\"\n\
             headers = {{ X-Profile = \"{secret}-profile\", X-Env = \"Token ${{MCP_TOKEN}}\" }}\n\
             [load]\nclients = 1\nsessions = 2\n"
        ),
    )
    .expect("write profile");
    let results = dir.path().join("results");
    let (profile, results) = (profile.display().to_string(), results.display().to_string());
    let file_header = format!("@{}", header_file.display());
    let cli_header = format!("X-Cli: {secret}-cli");
    let token = format!("{secret}-env");

    // The run: every result file and the terminal.
    let out = fleet(
        strings(&[
            "run",
            &profile,
            "--out",
            &results,
            "--seed",
            "1",
            "--header",
            &cli_header,
            "--header",
            "Authorization: Bearer ${MCP_TOKEN}",
            "--header",
            &file_header,
            "--threshold",
            "error_rate < 100%",
        ]),
        &token,
    )
    .await;
    let text = clean_output("run", &out, &secret);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("http://fleet:***@"), "{text}");
    assert!(text.contains("/mcp?api_key=***&mode=***"), "{text}");
    let written = clean_files(Path::new(&results), &secret);
    assert!(written >= 6, "only {written} result files");
    assert!(Path::new(&results).join("state.json").is_file());
    // Nor does a merge of it (state.json is read back and written again).
    let merged = dir.path().join("merged").display().to_string();
    let out = fleet(strings(&["merge", &results, "--out", &merged]), &token).await;
    let text = clean_output("merge", &out, &secret);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(clean_files(Path::new(&merged), &secret) >= 6);
    let sent = String::from_utf8_lossy(&wire.lock().expect("lock")).to_string();
    for route in ["cli", "profile", "env", "file", "query"] {
        assert!(
            sent.contains(&format!("{secret}-{route}")),
            "{route} not sent"
        );
    }
    assert!(
        sent.contains(&format!("x-env: Token {secret}-env")),
        "{sent}"
    );

    // The results' profile names the variables and the file, and says what was redacted.
    let written_profile =
        std::fs::read_to_string(Path::new(&results).join("profile.toml")).expect("profile.toml");
    for kept in [
        "Bearer ${MCP_TOKEN}",
        "Token ${MCP_TOKEN}",
        &file_header[1..],
    ] {
        assert!(written_profile.contains(kept), "{kept}:\n{written_profile}");
    }
    assert!(
        written_profile.starts_with("# Secrets were redacted"),
        "{written_profile}"
    );
    // Run again, it asks for the redacted secrets instead of sending "***".
    let written_path = format!("{results}/profile.toml");
    let out = fleet(strings(&["validate", &written_path]), &token).await;
    let text = clean_output("validate of the written profile", &out, &secret);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("a secret redacted when this profile was written"),
        "{text}"
    );

    // validate and inspect (text, raw, JSON) of the same planted secrets.
    let out = fleet(strings(&["validate", &profile]), &token).await;
    let text = clean_output("validate", &out, &secret);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for form in [&[][..], &["--raw"][..], &["--json"][..]] {
        let mut args = strings(&["inspect", &url, "--header", &cli_header]);
        args.extend(strings(&["--header", &file_header, "--header"]));
        args.push("Authorization: Bearer ${MCP_TOKEN}".into());
        args.extend(strings(form));
        let out = fleet(args, &token).await;
        let text = clean_output(&format!("inspect {form:?}"), &out, &secret);
        assert_eq!(out.status.code(), Some(0), "{text}");
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_runs_name_the_problem_without_the_secret() {
    let secret = format!("zq{}refused", std::process::id());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let down = format!("http://u:{secret}@127.0.0.1:{port}/mcp?k={secret}");
    let cases: [(Vec<String>, &str); 5] = [
        (strings(&["run", "--target", &down]), "cannot reach"),
        (strings(&["inspect", &down]), "cannot reach"),
        (
            strings(&["run", "--target", &format!("http://u:{secret}@[::1/mcp")]),
            "is not a URL",
        ),
        (
            strings(&[
                "run",
                "--target",
                &down,
                "--header",
                "Authorization: Bearer ${MCP_FLEET_UNSET_VARIABLE}",
            ]),
            "the environment variable MCP_FLEET_UNSET_VARIABLE is not set",
        ),
        (
            strings(&["run", "--target", &down, "--header", "@/nonexistent/auth"]),
            "cannot read the header file \"/nonexistent/auth\"",
        ),
    ];
    for (args, expected) in cases {
        let out = fleet(args.clone(), &secret).await;
        let text = clean_output(&format!("{args:?}"), &out, &secret);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(expected), "{args:?}: {text}");
    }
}
