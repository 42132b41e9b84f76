//! Every command README.md shows, run as a reader pastes it: against the built-in server
//! started the way the README starts it (`mcp-fleet serve --http 127.0.0.1:3000`, on a
//! port of the OS here), from a folder where `profiles/` is the repository's, each with
//! exit 0; and the quickstart's sample output is what the binary prints now (same lines,
//! figures aside). Commands that need a third-party server, the network or a long build
//! are named in [`NOT_RUN`], with why; the list must match the README.

use crate::support::{fleet_command, Served};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Commands of the README this test does not run, and why. Each must be in the README.
const NOT_RUN: &[(&str, &str)] = &[
    ("cargo test --workspace", "the test suite itself"),
    (
        "cargo install --path . --locked",
        "a release build into ~/.cargo/bin (minutes)",
    ),
    (
        "npm install -g @modelcontextprotocol/server-everything",
        "a third-party server from the npm registry (network)",
    ),
    (
        "mcp-fleet run --stdio \"mcp-server-everything stdio\" --clients 8 --sessions 200",
        "needs the third-party server installed above (interop/run.sh runs it)",
    ),
    ("mkdir -p ~/.zfunc", "the reader's home folder"),
    (
        "Out-String",
        "PowerShell (the mcp-fleet part before it is run)",
    ),
    (
        "Invoke-Expression",
        "PowerShell (the mcp-fleet part before it is run)",
    ),
    (
        "mcp-fleet serve --http 127.0.0.1:3000",
        "started as the server the other commands target, on a port of the OS",
    ),
];

/// What the test changes in a command, and why: the address of the server it started,
/// and a profile's half-minute run shortened (CI time).
const SUBSTITUTIONS: &[(&str, &str)] = &[("--duration 30s", "--duration 3s")];

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The commands of README.md's shell blocks: continuation lines joined, `# comments`
/// dropped, cut at `&&` and `|`, without a `> redirection`.
fn readme_commands() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut commands = Vec::new();
    let mut in_shell = false;
    let mut pending = String::new();
    for line in text.lines() {
        if let Some(info) = line.strip_prefix("```") {
            in_shell = !in_shell && matches!(info.trim(), "sh" | "bash" | "shell");
            continue;
        }
        if !in_shell {
            continue;
        }
        let line = without_comment(line);
        if let Some(open) = line.trim_end().strip_suffix('\\') {
            pending.push_str(open);
            continue;
        }
        let whole = std::mem::take(&mut pending) + line.trim();
        for part in whole.split("&&").flat_map(|p| p.split(" | ")) {
            let command = part.split(" > ").next().unwrap_or_default().trim();
            if !command.is_empty() {
                commands.push(command.to_string());
            }
        }
    }
    commands
}

/// `line` up to a `#` that starts a comment (after a space, outside quotes).
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') if previous.is_whitespace() => return &line[..at],
            _ => {}
        }
        previous = c;
    }
    line
}

/// The arguments of an `mcp-fleet …` or `cargo run --release -- …` command.
fn fleet_arguments(command: &str) -> Option<&str> {
    command
        .strip_prefix("cargo run --release --")
        .or_else(|| command.strip_prefix("mcp-fleet"))
        .map(str::trim)
}

/// Start `arguments` (the server's address and [`SUBSTITUTIONS`] applied) in `cwd`.
fn start(arguments: &str, addr: &str, cwd: &Path) -> Child {
    let mut line = arguments.replace("127.0.0.1:3000", addr);
    for (from, to) in SUBSTITUTIONS {
        line = line.replace(from, to);
    }
    let words = shell_words::split(&line).expect("a shell line");
    fleet_command()
        .args(words)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts")
}

/// Wait for `child` at most until `deadline` (killed then); its exit code and output.
fn finish(mut child: Child, deadline: Instant) -> (Option<i32>, String, String) {
    use std::io::Read;
    // Read both pipes meanwhile: a command that prints more than a pipe holds (a shell
    // completion script is ~66 KB) would otherwise wait on us as we wait on it.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (
        status.and_then(|s| s.code()),
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    )
}

/// A line with its figures gone: every word holding a digit becomes `#`, so a sample
/// and a fresh run compare by their text.
fn skeleton(line: &str) -> String {
    line.split_whitespace()
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                "#"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The README's sample of the quickstart's output: the first `text` block.
fn sample_output() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let block = text
        .split("```text\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a text block in README.md");
    block
        .lines()
        .map(skeleton)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn every_readme_command_runs_as_shown() {
    let commands = readme_commands();
    for (skipped, why) in NOT_RUN {
        assert!(
            commands.iter().any(|c| c.contains(skipped)),
            "NOT_RUN names {skipped:?} ({why}), which README.md no longer shows"
        );
    }
    let mut runnable = Vec::new();
    for command in &commands {
        if NOT_RUN.iter().any(|(skipped, _)| command.contains(skipped)) {
            continue;
        }
        match fleet_arguments(command) {
            Some(arguments) => runnable.push(arguments.to_string()),
            None => panic!("README.md shows {command:?}: run it here or name it in NOT_RUN"),
        }
    }
    assert!(runnable.len() >= 10, "{runnable:?}");

    let cwd = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(root().join("profiles"), cwd.path().join("profiles"))
        .expect("profiles/ beside the results");
    let server = Served::start(&[]);
    let deadline = Instant::now() + Duration::from_secs(90);
    // The quickstart first and alone: its thresholds are on latency.
    let (first, rest): (Vec<_>, Vec<_>) = runnable.iter().partition(|a| *a == "run");
    assert_eq!(first.len(), 1, "the quickstart: {runnable:?}");
    let (code, stdout, stderr) = finish(start("run", &server.addr, cwd.path()), deadline);
    assert_eq!(code, Some(0), "mcp-fleet run\n{stdout}\n{stderr}");
    let printed: Vec<String> = stdout.lines().map(skeleton).collect();
    for line in sample_output() {
        assert!(
            printed.contains(&line),
            "README.md's sample line {line:?} is not printed now:\n{stdout}"
        );
    }
    // The others at once: each ends by its own budget (10 s at most).
    let children: Vec<_> = rest
        .iter()
        .map(|a| (a.to_string(), start(a, &server.addr, cwd.path())))
        .collect();
    let mut failed = Vec::new();
    for (arguments, child) in children {
        let (code, stdout, stderr) = finish(child, deadline);
        if code != Some(0) {
            failed.push(format!(
                "mcp-fleet {arguments}: exit {code:?}\n{stdout}\n{stderr}"
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn readme_commands_are_cut_as_a_shell_would() {
    assert_eq!(
        without_comment("mcp-fleet run --stdio \"a # b\"  # a comment"),
        "mcp-fleet run --stdio \"a # b\"  "
    );
    assert_eq!(fleet_arguments("cargo run --release -- run"), Some("run"));
    assert_eq!(fleet_arguments("mkdir -p ~/.zfunc"), None);
    assert_eq!(
        skeleton("sessions: 319 started,  0 failed"),
        "sessions: # started, # failed"
    );
}
