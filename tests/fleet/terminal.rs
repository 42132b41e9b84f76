//! What a user sees in the terminal: the compact summary and `--verbose`, "–" for phases
//! without a successful sample, the open model's labels and response time, colour only
//! where asked (`--color`, `NO_COLOR`, a terminal), and the live view's progress bar on a
//! terminal. Real runs of the binary; a pseudo-terminal from `script` (util-linux) where
//! a terminal is needed.

use crate::support::{fleet_command, fleet_program, Served};
use std::path::Path;
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A short version-mix run (every breakdown has something in it), into `dir`.
fn version_mix(dir: &Path) -> Output {
    let o = fleet_command()
        .args([
            "run",
            "profiles/version-mix.toml",
            "--sessions",
            "60",
            "--out",
        ])
        .arg(dir)
        .output()
        .expect("runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

#[test]
fn the_default_summary_is_compact_and_verbose_has_the_breakdowns() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("vm");
    let compact = stdout(&version_mix(&dir));
    assert!(
        compact.lines().count() < 40,
        "{} lines:\n{compact}",
        compact.lines().count()
    );
    assert!(!compact.contains("\nby persona\n"), "{compact}");
    assert!(compact.contains("not shown: by persona"), "{compact}");
    assert!(
        !compact.contains('\x1b'),
        "no colour into a pipe: {compact}"
    );
    let head = compact
        .lines()
        .find(|l| l.trim_start().starts_with("phase "))
        .unwrap_or_else(|| panic!("no table: {compact}"));
    assert!(head.contains(" p90       p95       p99 "), "{head}");

    let file = std::fs::read_to_string(dir.join("summary.txt")).expect("summary.txt");
    assert!(
        file.contains("\nby persona\n") && file.contains("\nby protocol version\n"),
        "{file}"
    );
    assert!(
        !file.contains('\x1b') && !file.contains("not shown:"),
        "{file}"
    );

    let verbose = fleet_command()
        .arg("report")
        .arg(&dir)
        .arg("--verbose")
        .output()
        .expect("report");
    let verbose = stdout(&verbose);
    assert!(verbose.contains("\nby persona\n"), "{verbose}");
    assert!(
        verbose.lines().count() > compact.lines().count() + 20,
        "{verbose}"
    );

    let always = fleet_command()
        .arg("report")
        .arg(&dir)
        .args(["--color", "always"])
        .output()
        .expect("report");
    assert!(
        stdout(&always).contains("\x1b["),
        "--color always: {}",
        stdout(&always)
    );
    let never = fleet_command()
        .arg("report")
        .arg(&dir)
        .args(["--color", "never"])
        .output()
        .expect("report");
    assert!(!stdout(&never).contains('\x1b'));

    // On a terminal: colour by default, none with NO_COLOR or --color never.
    if let Some(tty) = on_a_terminal(&format!("report {}", dir.display()), &[]) {
        assert!(tty.contains("\x1b[") && tty.contains("mcp-fleet"), "{tty}");
        let no_color = on_a_terminal(&format!("report {}", dir.display()), &[("NO_COLOR", "1")])
            .unwrap_or_default();
        assert!(
            no_color.contains("mcp-fleet") && !no_color.contains("\x1b["),
            "{no_color}"
        );
    }
}

#[test]
fn an_all_failed_phase_shows_dashes_and_an_open_model_no_clients() {
    let server = Served::start(&[]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let wrong = format!("http://{}/wrong", server.addr);
    let o = fleet_command()
        .args(["run", "--target", &wrong, "--sessions", "10", "--out"])
        .arg(tmp.path().join("wrong"))
        .output()
        .expect("runs");
    let text = stdout(&o);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("initialize "))
        .unwrap_or_else(|| panic!("no initialize row: {text}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], cells[2], "every sample failed: {row}");
    assert_eq!(&cells[5..], &["–"; 7], "{row}");

    let o = fleet_command()
        .args([
            "run",
            "--target",
            &server.url(),
            "--rate",
            "20/s",
            "--duration",
            "2s",
            "--out",
        ])
        .arg(tmp.path().join("open"))
        .output()
        .expect("runs");
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(!text.contains("clients"), "{text}");
    assert!(text.contains("open model, 20/s, at most"), "{text}");
    assert!(
        text.contains("response time (from the intended start, includes queueing)"),
        "{text}"
    );
}

#[test]
fn on_a_terminal_the_live_view_is_a_progress_bar_cleared_before_the_summary() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("bar");
    let cmd = format!("run --sessions 40 --duration 8s --out {}", dir.display());
    let Some(tty) = on_a_terminal(&cmd, &[]) else {
        return;
    };
    assert!(tty.contains("% · ETA "), "a bar with its ETA: {tty:?}");
    assert!(tty.contains("closed model, 8 clients · "), "{tty:?}");
    let summary = tty
        .find("\x1b[1mmcp-fleet\x1b[0m")
        .unwrap_or_else(|| panic!("{tty:?}"));
    assert!(
        !tty[summary..].contains("ETA "),
        "the bar is gone before the summary"
    );
    assert!(
        tty[summary..].contains("\x1b[32m✓\x1b[0m") || tty[summary..].contains("\x1b[1m\x1b[31m✗"),
        "a green ✓ or a red ✗: {tty:?}"
    );
}

/// Run `mcp-fleet ARGS` on a pseudo-terminal (`script`), with `env`; what it wrote, or
/// `None` (said on stderr) where `script` is missing.
fn on_a_terminal(args: &str, env: &[(&str, &str)]) -> Option<String> {
    let log = tempfile::NamedTempFile::new().expect("log");
    let command = format!("{} {args}", fleet_program());
    let mut script = std::process::Command::new("script");
    script
        .args(["-qfec", &command])
        .arg(log.path())
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    for (k, v) in env {
        script.env(k, v);
    }
    // Its exit code is the program's: a threshold that fails on a busy machine is not
    // what these checks are about.
    match script.status() {
        Ok(_) => Some(std::fs::read_to_string(log.path()).expect("log")),
        Err(e) => {
            eprintln!("no `script` to make a terminal ({e}): the terminal checks are skipped");
            None
        }
    }
}

/// `--histogram`: a latency histogram per phase after the summary; none without it.
#[test]
fn histogram_per_phase_on_request_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = crate::support::write_profile(
        dir.path(),
        "[load]\nclients = 2\nsessions = 10\n[[scenario]]\nname = \"s\"\nsteps = [{ op = \"tools/list\" }]\n",
    );
    let stdio = crate::support::builtin_stdio(&[]);
    let run = |histogram: bool, out: &str| {
        let mut cmd = crate::support::fleet_command();
        cmd.arg("run")
            .arg(&profile)
            .args(["--stdio", &stdio, "--color", "never"]);
        cmd.arg("--out").arg(dir.path().join(out));
        if histogram {
            cmd.arg("--histogram");
        }
        let done = cmd.output().expect("runs");
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        String::from_utf8_lossy(&done.stdout).into_owned()
    };
    let shown = run(true, "with");
    for phase in ["initialize", "tools/list", "session"] {
        assert!(
            shown.contains(&format!(
                "latency histogram: {phase} (service time, 10 samples)"
            )),
            "{shown}"
        );
    }
    assert!(shown.contains("] ■"), "{shown}");
    assert!(!run(false, "without").contains("latency histogram"));
    // `report DIR --histogram` draws the same from the folder afterwards; `report DIR`
    // alone does not.
    let report = |histogram: bool| {
        let mut cmd = crate::support::fleet_command();
        cmd.arg("report").arg(dir.path().join("without"));
        cmd.args(["--color", "never"]);
        if histogram {
            cmd.arg("--histogram");
        }
        let done = cmd.output().expect("runs");
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        String::from_utf8_lossy(&done.stdout).into_owned()
    };
    let later = report(true);
    for phase in ["initialize", "tools/list", "session"] {
        assert!(
            later.contains(&format!(
                "latency histogram: {phase} (service time, 10 samples)"
            )),
            "{later}"
        );
    }
    assert!(!report(false).contains("latency histogram"));
}
