//! benches/sdk_matrix.py, the SDK matrix's generator (Python, stdlib only): its tables and
//! page from fixture rows (tests/data/sdk-matrix/), the comparison of two sittings in
//! both directions, and a row read from real results folders of the matrix's profiles.

use crate::support::{builtin_http, fleet_program};
use mcp_fleet::server::ServerOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> String {
    repo()
        .join("tests/data/sdk-matrix")
        .join(name)
        .display()
        .to_string()
}

fn generator(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(repo().join("benches/sdk_matrix.py"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("python3 runs benches/sdk_matrix.py")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The Markdown and the page of one sitting, with `--compare` when given.
fn report(rows: &str, compare: Option<&str>) -> (String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let md = dir.path().join("SDK-MATRIX.md");
    let page = dir.path().join("sdk-matrix.html");
    let rows = fixture(rows);
    let (md_s, page_s) = (md.display().to_string(), page.display().to_string());
    let mut args = vec!["report", rows.as_str(), "--md", &md_s, "--html", &page_s];
    let other = compare.map(fixture);
    if let Some(o) = other.as_deref() {
        args.extend(["--compare", o]);
    }
    let o = generator(&args);
    assert!(o.status.success(), "{}", text(&o));
    (
        std::fs::read_to_string(md).expect("md"),
        std::fs::read_to_string(page).expect("html"),
    )
}

#[test]
fn tables_and_page_show_every_cell_and_mark_lower_bounds() {
    let (md, page) = report("sitting-a.jsonl", None);
    for row in [
        "| x | Stack X | 1.0.0 | Streamable HTTP, sessions | 2025-11-25 | 1,000 (queueing) | 500 | 1.5 / 9.5 | 1.0 / 4.0 | 1.1 / 4.4 | 61.4 | +45.5 (leak) | 1 / 0: `lifecycle.example` |",
        "| v | Stack V | 1.0.0 | Streamable HTTP, stateless | 2025-11-25 | 1,100 (queueing) | 500 |",
        "| y | Stack Y | 1.0.0 | Streamable HTTP, sessions | 2025-11-25 | ≥ 5,000 (generator) |",
        "| z | Stack X | 1.0.0 | stdio, process | 2025-11-25 | n/a (a process per session) |",
    ] {
        assert!(md.contains(row), "{row}\n{md}");
    }
    assert!(md.contains("- z (60 s): `QUICK=1 ONLY='^z$' benches/sdk-matrix.sh`"));
    assert!(!md.contains("A second sitting"), "no comparison asked");
    // One bar per cell with a ceiling (x, v, y), the lower bound hatched once; a latency
    // chart per stack with ceiling steps (X, V, Y; z has none); nothing from the network.
    assert_eq!(page.matches("<title>Stack").count(), 3, "{page}");
    assert_eq!(page.matches("fill=\"url(#lb)\"").count(), 1);
    assert_eq!(page.matches("aria-label=\"Stack").count(), 3);
    assert!(page.contains("≥ 5,000 (generator)"));
    for remote in ["<script", "src=", "http://", "https://", "@import"] {
        assert!(!page.contains(remote), "{remote} in the page");
    }
}

#[test]
fn a_busy_machine_is_said_and_a_quiet_one_is_not() {
    // A high load alone is the sitting's own (a JVM's threads): shown, not judged.
    for quiet in ["sitting-a.jsonl", "sitting-b.jsonl"] {
        let (md, page) = report(quiet, None);
        assert!(
            md.contains("No ceiling search saw other work on the machine during this sitting"),
            "{md}"
        );
        assert!(
            !md.contains("Other work") && !page.contains("Other work"),
            "{md}"
        );
    }
    let (md, _) = report("sitting-a.jsonl", None);
    assert!(md.contains("(1-minute load average 3.10 to 3.10 on 2 cores, the sitting's own"));
    // A search that saw other work at a step (its generator woke late under CPU
    // pressure): named.
    let (md, page) = report("sitting-c.jsonl", None);
    assert!(
        md.contains("**Other work shared the machine** at some step")
            && md.contains("of the ceiling search of 1 cell (x;"),
        "{md}"
    );
    assert!(page.contains("Other work shared the machine"));
}

#[test]
fn two_sittings_agree_when_only_ties_swap() {
    // x and v swap places, 10 % apart: a tie; y stays first.
    let a = fixture("sitting-a.jsonl");
    let o = generator(&["compare", &a, &fixture("sitting-b.jsonl")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("1 pairs in the other order; none is apart by more than 15% in both sittings (ties within the noise): the order agrees."),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("By stack (each by its highest cell) the order agrees (swaps within 15%, ties): Stack Y > Stack V > Stack X."),
        "{}",
        text(&o)
    );
    let (md, _) = report("sitting-a.jsonl", Some("sitting-b.jsonl"));
    assert!(md.contains("## A second sitting"));
    assert!(md.contains("the order agrees"));
    // The same sitting twice: the same order, said as such.
    let o = generator(&["compare", &a, &a]);
    assert!(o.status.success());
    assert!(text(&o).contains("The order of the cells by ceiling is the same in both sittings."));
    assert!(text(&o).contains("By stack (each by its highest cell) the order is the same in both sittings: Stack Y > Stack V > Stack X."));
}

#[test]
fn two_sittings_disagree_when_a_ceiling_moves_past_others() {
    let o = generator(&[
        "compare",
        &fixture("sitting-a.jsonl"),
        &fixture("sitting-c.jsonl"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("the order disagrees on y vs v, y vs x.")
            && text(&o).contains("By stack (each by its highest cell) the order disagrees on Stack Y vs Stack V, Stack Y vs Stack X."),
        "{}",
        text(&o)
    );
}

fn fleet(args: Vec<String>) {
    let o = Command::new(fleet_program())
        .args(&args)
        .current_dir(repo())
        .output()
        .expect("mcp-fleet runs");
    assert!(o.status.success(), "{args:?}: {}", text(&o));
}

/// `run PROFILE --target URL … --out OUT` as owned arguments.
fn run_args(profile: &str, url: &str, extra: &[&str], out: &Path) -> Vec<String> {
    let mut a: Vec<String> = ["run", profile, "--target", url, "--quiet", "--seed", "1"]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect();
    a.extend(["--out".to_string(), out.display().to_string()]);
    a
}

/// The matrix's held and latency profiles against the built-in server, read back as a row.
#[tokio::test]
async fn a_row_reads_the_results_of_the_matrix_profiles() {
    let server = builtin_http(ServerOptions::default()).await;
    let url = format!("http://{}/mcp", server.addr);
    let cell = tempfile::tempdir().expect("tempdir");
    let held = run_args(
        "benches/sdk-matrix/held.toml",
        &url,
        &["--clients", "2", "--duration", "3s", "--keep-alive"],
        &cell.path().join("held"),
    );
    let latency = run_args(
        "benches/sdk-matrix/latency.toml",
        &url,
        &["--rate", "20/s", "--duration", "2s"],
        &cell.path().join("latency"),
    );
    tokio::task::spawn_blocking(move || {
        fleet(held);
        fleet(latency);
    })
    .await
    .expect("runs");
    let dir = cell.path().display().to_string();
    let o = generator(&["row", &dir, "cell=builtin-http", "mode=sessions"]);
    assert!(o.status.success(), "{}", text(&o));
    let row: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON line");
    assert_eq!(row["cell"], "builtin-http");
    assert!(
        row["held"]["calls_per_s"].as_f64().unwrap_or(0.0) > 0.0,
        "{row}"
    );
    assert_eq!(row["held"]["errors"], 0);
    assert_eq!(row["latency"]["handshake"], "initialize");
    for p in ["initialize", "tools/list", "tools/call"] {
        assert_eq!(row["latency"]["phases"][p]["errors"], 0, "{p}: {row}");
        assert!(
            row["latency"]["phases"][p]["count"].as_u64().unwrap_or(0) > 0,
            "{p}"
        );
    }
    // Measures that did not run are null, not made up.
    for m in ["ceiling", "conformance", "memory", "abandon"] {
        assert!(row[m].is_null(), "{m}: {row}");
    }
}

/// Rows of two sittings joined (cells added by a later sitting): the header names each
/// sitting with its commit and cells, not the first row's alone.
#[test]
fn joined_sittings_are_each_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let joined = dir.path().join("joined.jsonl");
    let a = std::fs::read_to_string(fixture("sitting-a.jsonl")).expect("a");
    let b = std::fs::read_to_string(fixture("sitting-b.jsonl")).expect("b");
    let one = b.lines().next().expect("a row of B");
    std::fs::write(&joined, format!("{a}{one}\n")).expect("write");
    let o = generator(&["report", &joined.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("Sittings `A` at `abc1234` (4 cells); `B` at `abc1234` (1 cell: x)"),
        "{md}"
    );
    let (single, _) = report("sitting-a.jsonl", None);
    assert!(single.contains("Sitting `A`, commit `abc1234`"), "{single}");
}

/// A lower bound establishes no "below": a generator-bound ceiling that fell under the
/// others in one sitting is not a disagreement; the same figure as a real ceiling is.
#[test]
fn a_lower_bound_below_the_others_is_no_disagreement() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = fixture("sitting-a.jsonl");
    let rows = |lower: bool| {
        let text = std::fs::read_to_string(&a).expect("a");
        let out: Vec<String> = text
            .lines()
            .map(|l| {
                let mut r: serde_json::Value = serde_json::from_str(l).expect("row");
                if r["cell"] == "y" {
                    r["ceiling"]["per_s"] = 600.into();
                    r["ceiling"]["lower_bound"] = lower.into();
                }
                r.to_string()
            })
            .collect();
        let path = dir.path().join(format!("d-{lower}.jsonl"));
        std::fs::write(&path, out.join("\n") + "\n").expect("write");
        path.display().to_string()
    };
    let agree = generator(&["compare", &a, &rows(true)]);
    assert!(agree.status.success(), "{}", text(&agree));
    assert!(
        text(&agree).contains("the order agrees"),
        "{}",
        text(&agree)
    );
    let disagree = generator(&["compare", &a, &rows(false)]);
    assert_eq!(disagree.status.code(), Some(1), "{}", text(&disagree));
    assert!(text(&disagree).contains("the order disagrees on y vs v, y vs x."));
}

/// `--latency-from`: the latency columns of another sitting, row by row, said in the
/// text; a cell the other sitting lacks keeps its own.
#[test]
fn ceiling_and_latency_columns_can_come_from_another_sitting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let other = dir.path().join("other.jsonl");
    let b = std::fs::read_to_string(fixture("sitting-b.jsonl")).expect("b");
    let rows: Vec<String> = b
        .lines()
        .map(|l| {
            let mut r: serde_json::Value = serde_json::from_str(l).expect("row");
            r["latency"]["phases"]["initialize"]["p50_ms"] = 7.25.into();
            r.to_string()
        })
        .collect();
    std::fs::write(&other, rows.join("\n") + "\n").expect("write");
    let a = fixture("sitting-a.jsonl");
    let o = generator(&["report", &a, "--search-from", &other.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("The ceiling column comes from sitting `B` at `abc1234` (3 cells: x, v, y).")
            && md.contains("The latency columns come from sitting `B` at `abc1234` (3 cells: x, v, y), 1 cell from their own sitting."),
        "{md}"
    );
    let x = md
        .lines()
        .find(|l| l.starts_with("| x |"))
        .expect("x's row");
    assert!(x.contains("7.2 / 9.5") || x.contains("7.3 / 9.5"), "{x}");
    assert!(x.contains("| 1,150 ("), "B's ceiling: {x}");
    let z = md
        .lines()
        .find(|l| l.starts_with("| z |"))
        .expect("z's row");
    assert!(z.contains("1.5 / 9.5"), "{z}");
}

/// Memory at 10,000 sessions: a stack whose sessions failed or were refused past 1 % did
/// not hold them, and its figure says so instead of a KiB that divides by sessions it never
/// held; one within 1 % keeps its figure.
#[test]
fn a_stack_that_did_not_hold_the_sessions_gets_no_figure_per_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows = dir.path().join("rows.jsonl");
    let a = std::fs::read_to_string(fixture("sitting-a.jsonl")).expect("a");
    let out: Vec<String> =
        a.lines()
            .map(|l| {
                let mut r: serde_json::Value = serde_json::from_str(l).expect("row");
                let (failed, unreachable) = match r["cell"].as_str() {
                    Some("x") => (400, 200),
                    Some("y") => (60, 0),
                    _ => return r.to_string(),
                };
                r["memory"].as_array_mut().expect("memory").push(serde_json::json!({
                "sessions": 10000, "held": 10000, "failed": failed, "unreachable": unreachable,
                "base_mib": 50, "peak_mib": 900, "per_session_kib": 33.3
            }));
                r.to_string()
            })
            .collect();
    std::fs::write(&rows, out.join("\n") + "\n").expect("write");
    let o = generator(&["report", &rows.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.contains("| x | 10,000 | 400 / 200 | not held (600 of 10,000 failed or refused) |"),
        "{md}"
    );
    assert!(md.contains("| y | 10,000 | 60 / 0 | 33.3 |"), "{md}");
}
