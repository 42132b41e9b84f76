//! What a new user meets first: closed pipes (`| head`), shell completions, the help
//! texts (defaults, exit codes, URL schemes, the server's endpoints) and `validate`.

use crate::support::{fleet_command, write_profile};
use std::process::{Command, Stdio};

/// Start `cmd` with stdout (and stderr too when `close_stderr`) piped, close the read
/// ends at once, as `| head -0` would, and wait; (exit code, stderr text).
fn with_closed_pipes(cmd: &mut Command, close_stderr: bool) -> (Option<i32>, String) {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    cmd.stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawns");
    drop(child.stdout.take());
    let stderr = if close_stderr {
        drop(child.stderr.take());
        String::new()
    } else {
        let mut text = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
        }
        text
    };
    let status = child.wait().expect("waits");
    (status.code(), stderr)
}

#[test]
fn a_closed_stdout_ends_run_and_report_quietly_with_the_results_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let (code, err) = with_closed_pipes(
        fleet_command()
            .args(["run", "--sessions", "20", "--think", "0ms", "--out"])
            .arg(&out),
        false,
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(code, Some(0), "the run's verdict, not 101: {err}");
    assert!(out.join("summary.json").is_file());

    // Thresholds that fail keep their exit code 1 with nobody reading.
    let (code, err) = with_closed_pipes(
        fleet_command()
            .args([
                "run",
                "--sessions",
                "5",
                "--threshold",
                "rate(sessions) > 1000000000",
            ])
            .args(["--out"])
            .arg(dir.path().join("failed")),
        false,
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(code, Some(1), "{err}");

    for args in [
        vec!["report", out.to_str().expect("utf-8")],
        vec!["validate", "profiles/version-mix.toml"],
        vec!["completions", "zsh"],
    ] {
        let (code, err) = with_closed_pipes(fleet_command().args(&args), false);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
}

#[test]
fn a_closed_stderr_does_not_stop_the_run_or_its_live_view() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    // Not --quiet: the banner, the live view's lines and the summary all meet closed
    // pipes; the live view draws every 5 s off a terminal, so the run lasts past one.
    let (code, _) = with_closed_pipes(
        fleet_command()
            .args([
                "run",
                "--duration",
                "6s",
                "--clients",
                "2",
                "--think",
                "50ms",
            ])
            .args(["--out"])
            .arg(&out),
        true,
    );
    assert_eq!(code, Some(0));
    let summary = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    assert!(summary.contains("\"completed\""), "{summary}");
}

/// What bash's own completion machinery offers for `words` (the last one being typed):
/// the script sourced in a non-interactive bash, COMP_WORDS / COMP_CWORD set as readline
/// would, the function `complete -p` registered for `mcp-fleet` called, COMPREPLY read.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let words: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        r#"source "$1" || exit 3
COMP_WORDS=(mcp-fleet {words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
spec=$(complete -p mcp-fleet) || exit 4
function=$(sed -E 's/.*-F ([^ ]+).*/\1/' <<<"$spec")
"$function" mcp-fleet "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        words = words.join(" ")
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program, "bash"])
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn bash_completes_flags_after_a_subcommand_and_subcommand_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("mcp-fleet.bash");
    let out = fleet_command()
        .args(["completions", "bash"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    std::fs::write(&script, &out.stdout).expect("writes the script");

    for (words, flag) in [
        (["run", "--tr"], "--transport"),
        (["ceiling", "--st"], "--step"),
    ] {
        let offered = bash_completes(&script, &words);
        assert!(offered.iter().any(|w| w == flag), "{flag} in {offered:?}");
        assert!(
            offered.iter().all(|w| w.starts_with(words[1])),
            "{offered:?}"
        );
    }
    let values = bash_completes(&script, &["run", "--transport", ""]);
    for transport in ["http", "sse", "ws", "stdio"] {
        assert!(
            values.iter().any(|v| v == transport),
            "{transport} in {values:?}"
        );
    }
    assert_eq!(bash_completes(&script, &["insp"]), ["inspect"]);
    // Silent where nothing matches: no flag of `run` starts with --zz.
    assert!(bash_completes(&script, &["run", "--zz"]).is_empty());
}

#[test]
fn completions_for_bash_name_the_commands_and_flags() {
    let out = fleet_command()
        .args(["completions", "bash"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8_lossy(&out.stdout);
    for word in ["run", "inspect", "--target", "completions", "serve"] {
        assert!(script.contains(word), "{word} in {script}");
    }
    let out = fleet_command()
        .args(["completions", "tcsh"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

fn help(args: &[&str]) -> String {
    let out = fleet_command().args(args).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn run_help_shows_exit_codes_url_schemes_and_defaults() {
    let text = help(&["run", "--help"]);
    for needle in [
        "Exit codes",
        "128 + N",
        "ws://",
        "wss://",
        "https://",
        "--transport sse",
        "Default: 1s",
        "Default: 10s",
    ] {
        assert!(text.contains(needle), "{needle:?} in run --help:\n{text}");
    }
    for cmd in ["compare", "report", "inspect"] {
        let text = help(&[cmd, "--help"]);
        assert!(text.contains("Exit codes"), "{cmd} --help:\n{text}");
    }
}

#[test]
fn serve_help_lists_every_endpoint() {
    let text = help(&["serve", "--help"]);
    for endpoint in ["/mcp", "/sse", "/messages", "/ws", "/metrics"] {
        assert!(
            text.contains(endpoint),
            "{endpoint} in serve --help:\n{text}"
        );
    }
    assert!(text.contains("[default: 10]"), "{text}");
}

#[test]
fn validate_prints_thresholds_checkpoint_habits_events_and_soak() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(
        dir.path(),
        r#"
name = "details"
thresholds = ["p99(initialize) < 200ms", "error_rate < 1%"]

[load]
clients = 4
duration = "20m"
checkpoint = "2m"
events = [{ at = "10m", storm = "reconnect" }]

[soak]
warmup = "2m"
window = "5m"

[[persona]]
name = "lingerer"
shape = "long-lived"
abandon = 0.25
ping_every = "30s"
idle = "1s..5s"
lifetime = "2m..10m"
"#,
    );
    let out = fleet_command()
        .arg("validate")
        .arg(&profile)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for needle in [
        "threshold p99(initialize) < 200ms",
        "threshold error_rate < 1%",
        "checkpoint every 2m",
        "event    at 10m: reconnect storm",
        "soak     warm-up 2m, drift window 5m",
        "abandon 25%",
        "ping every 30s",
        "idle 1s..5s",
        "lifetime 2m..10m",
    ] {
        assert!(text.contains(needle), "{needle:?} in:\n{text}");
    }
}
