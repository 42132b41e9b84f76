//! `--push prometheus-rw=URL` into a real Prometheus (Debian's, with its remote-write
//! receiver and native histograms on), and the shipped Grafana dashboard proved without
//! Grafana: every panel's query is run against what the run pushed, and each must return
//! the run's figures — whole-run counts equal to `summary.json` (to `merge`'s for a
//! sharded run), percentiles within a native bucket, time series present with the run's
//! label values. A receiver that is down or never answers changes no figure of the run.
//!
//! Without a `prometheus` binary (PATH or `MCP_FLEET_PROMETHEUS`) the Prometheus checks
//! say they were skipped, unless `MCP_FLEET_REQUIRE_PROMETHEUS` is set, as `.ci/run`
//! does (it installs the package): then a missing binary fails them. The OTLP checks
//! need a Prometheus 3 (its OTLP receiver), which `.ci/run` builds from the Go module
//! proxy (`scripts/prometheus3.sh`) and names in `MCP_FLEET_PROMETHEUS3`.

use crate::support::{builtin_http, check_schema, fleet_command, write_profile};
use mcp_fleet::server::ServerOptions;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// Two personas of different eras over two transports, a tool that does not exist (so
/// failures have a kind), a closed fleet of a known number of sessions.
const PROFILE: &str = r#"
name = "pushed"
[load]
clients = 6
sessions = 120
[[persona]]
name = "legacy-http"
transport = "http"
protocol_version = "2025-03-26"
scenarios = ["work"]
[[persona]]
name = "modern-stdio"
transport = "stdio"
protocol_version = "2026-07-28"
scenarios = ["work"]
[[scenario]]
name = "work"
steps = [
  { op = "tools/list" },
  { op = "tools/call", tool = "echo", arguments = { message = "hi" } },
  { op = "tools/call", tool = "no-such-tool", arguments = {} },
]
"#;

/// A Prometheus of its own: a fresh database in a temporary folder, on a loopback port
/// the OS chose, stopped when dropped.
struct Prometheus {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Which Prometheus a check needs.
#[derive(Clone, Copy, PartialEq)]
enum Release {
    /// Any with a remote-write receiver and native histograms (Debian's 2.42 on).
    Any,
    /// 3.x: the OTLP receiver.
    Three,
}

fn prometheus_binary(release: Release) -> Option<PathBuf> {
    if release == Release::Three {
        return std::env::var_os("MCP_FLEET_PROMETHEUS3").map(PathBuf::from);
    }
    if let Some(p) = std::env::var_os("MCP_FLEET_PROMETHEUS") {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join("prometheus"))
        .find(|p| p.is_file())
}

impl Prometheus {
    /// Started and ready, or `None` (skipped) when there is no binary and none is
    /// required.
    fn start(release: Release) -> Option<Prometheus> {
        let Some(bin) = prometheus_binary(release) else {
            assert!(
                std::env::var_os("MCP_FLEET_REQUIRE_PROMETHEUS").is_none(),
                "MCP_FLEET_REQUIRE_PROMETHEUS is set but no prometheus binary was found"
            );
            eprintln!(
                "skipped: no prometheus binary (apt-get install prometheus; \
                 MCP_FLEET_PROMETHEUS3=$(bash scripts/prometheus3.sh) for OTLP)"
            );
            return None;
        };
        // 2.x needs native histograms switched on; in 3.x the flag is a no-op.
        let receivers: &[&str] = match release {
            Release::Any => &["--enable-feature=native-histograms"],
            Release::Three => &["--web.enable-otlp-receiver"],
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(&config, "global:\n  scrape_interval: 1m\n").expect("config");
        let mut child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg("--web.listen-address=127.0.0.1:0")
            .args(["--web.enable-remote-write-receiver"])
            .args(receivers)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("prometheus starts");
        // The port the OS chose, from its log line `msg="Listening on" address=…:PORT`;
        // the rest of the log is drained so that it never blocks on a full pipe.
        let stderr = child.stderr.take().expect("piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in
                std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok)
            {
                if line.contains("Listening on") {
                    let port = line
                        .rsplit(':')
                        .next()
                        .and_then(|p| p.trim().parse::<u16>().ok());
                    let _ = tx.send(port);
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(30))
            .ok()
            .flatten()
            .expect("prometheus says where it listens");
        let p = Prometheus {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while get(port, "/-/ready").is_none_or(|(status, _)| status != 200) {
            assert!(Instant::now() < deadline, "prometheus never got ready");
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(p)
    }

    fn write_url(&self) -> String {
        format!("prometheus-rw=http://127.0.0.1:{}/api/v1/write", self.port)
    }

    fn otlp_url(&self) -> String {
        format!("otlp=http://127.0.0.1:{}/api/v1/otlp/v1/metrics", self.port)
    }

    /// The series of `expr`: an instant query at `at`, or a range query over
    /// `range` (start, end) at a 1 s step. Each series as its labels and values.
    fn query(&self, expr: &str, instant: bool, range: (f64, f64)) -> Vec<(Labels, Vec<f64>)> {
        let q: String = url::form_urlencoded::byte_serialize(expr.as_bytes()).collect();
        let path = if instant {
            format!("/api/v1/query?query={q}&time={:.3}", range.1)
        } else {
            format!(
                "/api/v1/query_range?query={q}&start={:.3}&end={:.3}&step=1",
                range.0, range.1
            )
        };
        let (status, body) = get(self.port, &path).expect("prometheus answers");
        let json: Value = serde_json::from_str(&body).expect("JSON");
        assert_eq!(status, 200, "{expr}: {body}");
        json["data"]["result"]
            .as_array()
            .expect("a result list")
            .iter()
            .map(|s| {
                let labels: Labels = s["metric"]
                    .as_object()
                    .expect("labels")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect();
                let points: Vec<&Value> = match (&s["value"], s["values"].as_array()) {
                    (Value::Array(_), _) => vec![&s["value"]],
                    (_, Some(values)) => values.iter().collect(),
                    _ => Vec::new(),
                };
                let values = points
                    .iter()
                    .map(|p| {
                        p[1].as_str()
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(f64::NAN)
                    })
                    .collect();
                (labels, values)
            })
            .collect()
    }
}

type Labels = BTreeMap<String, String>;

/// One HTTP/1.0 GET on loopback (the answer is read to the close): status and body.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n")?.1.to_string();
    Some((status, body))
}

fn now_s() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

/// `mcp-fleet run ARGS…` to the end (bounded); its stdout and stderr.
fn fleet(args: &[&str]) -> (bool, String) {
    let mut child = fleet_command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp-fleet starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mcp-fleet {args:?} did not finish in 2 minutes");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().expect("output");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

fn summary(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("JSON")
}

/// Every panel query of the shipped dashboard for `run`, checked against `summary`
/// (a run's or a merge's) by the dashboard's own checker; its report.
fn check_dashboard(prom: &Prometheus, run: &str, summary: &Path, since: f64) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/check_panels.py");
    let o = Command::new("python3")
        .arg(script)
        .args(["--prometheus", &format!("http://127.0.0.1:{}", prom.port)])
        .args(["--run", run, "--summary"])
        .arg(summary)
        .args(["--since", &format!("{since:.3}")])
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    text
}

#[test]
fn every_dashboard_panel_query_returns_the_runs_figures() {
    if let Some(prom) = Prometheus::start(Release::Any) {
        mixed_run_checks_out(&prom, &prom.write_url(), "prometheus-rw");
    }
}

#[test]
fn otlp_pushed_figures_read_the_same_through_every_panel() {
    if let Some(prom) = Prometheus::start(Release::Three) {
        mixed_run_checks_out(&prom, &prom.otlp_url(), "otlp");
    }
}

/// The mixed profile pushed by `push` into `prom`: delivered whole, and every panel of
/// the dashboard reads the run's figures.
fn mixed_run_checks_out(prom: &Prometheus, push: &str, kind: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(dir.path(), PROFILE);
    let out = dir.path().join("out");
    let since = now_s() - 5.0;
    let (ok, text) = fleet(&[
        "run",
        profile.to_str().expect("utf-8"),
        "--quiet",
        "--seed",
        "5",
        // Long enough (~4 s) for the rate panels to have points.
        "--think",
        "200ms",
        "--push",
        push,
        "--push-every",
        "1s",
        "--run-label",
        "mixed-run",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    // The unknown tool fails its calls, over the error-rate threshold of none: exit 0.
    assert!(ok, "{text}");
    let s = summary(&out);
    check_schema(&s);
    let o = &s["outputs"][0];
    assert_eq!(o["kind"], kind);
    assert_eq!(o["final_delivered"], true, "{o}");
    assert_eq!(
        (o["failed"].as_u64(), o["dropped"].as_u64()),
        (Some(0), Some(0)),
        "{o}"
    );
    assert!(
        s["failures"]["unknown_tool"].as_u64() > Some(0),
        "failures have a kind"
    );
    assert_eq!(
        s["eras"].as_object().map(|e| e.len()),
        Some(2),
        "both eras ran"
    );
    let report = check_dashboard(prom, "mixed-run", &out.join("summary.json"), since);
    assert!(report.contains("27 panel queries, 0 problems"), "{report}");
}

#[test]
fn a_three_shard_run_adds_up_in_prometheus_to_what_merge_says() {
    let Some(prom) = Prometheus::start(Release::Any) else {
        return;
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let server = rt.block_on(builtin_http(ServerOptions::default()));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let since = now_s() - 5.0;
    let (ok, text) = fleet(&[
        "run",
        "--quiet",
        "--target",
        &server.url(),
        "--processes",
        "3",
        "--rate",
        "60/s",
        "--sessions",
        "90",
        "--seed",
        "7",
        // The server lives in this test's process: watch it, for the resource panels.
        "--server-pid",
        &std::process::id().to_string(),
        "--push",
        &prom.write_url(),
        "--push-every",
        "1s",
        "--run-label",
        "three-shards",
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(ok, "{text}");
    let merged = summary(&out);
    assert_eq!(merged["run"]["shards"], 3);
    for i in 0..3 {
        let shard = summary(&out.join(format!("shard-{i}")));
        assert_eq!(shard["outputs"][0]["final_delivered"], true, "shard {i}");
    }
    // Every series of the three shards is there, each under its own shard label.
    let shards: BTreeSet<String> = prom
        .query(
            "count by (shard) (mcp_fleet_sessions_started_total{run=\"three-shards\"})",
            true,
            (since, now_s()),
        )
        .into_iter()
        .filter_map(|(l, _)| l.get("shard").cloned())
        .collect();
    assert_eq!(shards.len(), 3, "{shards:?}");
    check_dashboard(&prom, "three-shards", &out.join("summary.json"), since);
    rt.block_on(server.shutdown());
}

/// The figures a receiver could disturb: sessions, and each phase's and persona's counts.
fn counts(s: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for k in [
        "started",
        "completed",
        "failed",
        "interrupted",
        "unreachable",
    ] {
        out.insert(
            format!("sessions.{k}"),
            s["sessions"][k].as_u64().unwrap_or(0),
        );
    }
    for (section, field) in [
        ("phases", "count"),
        ("phases", "errors"),
        ("personas", "sessions"),
    ] {
        for (name, e) in s[section].as_object().expect("section") {
            out.insert(
                format!("{section}.{name}.{field}"),
                e[field].as_u64().unwrap_or(0),
            );
        }
    }
    out
}

#[test]
fn a_receiver_that_is_down_or_never_answers_changes_no_figure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = write_profile(dir.path(), PROFILE);
    // Down: a port held by a socket that does not listen (every connect refused, and no
    // other process can take the port meanwhile). Slow: a listener that accepts and never
    // answers.
    let held = tokio::net::TcpSocket::new_v4().expect("a socket");
    held.bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind");
    let down = held.local_addr().expect("addr");
    let slow = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    let slow_addr = slow.local_addr().expect("addr");
    let run = |name: &str, push: Option<String>| -> (Value, String, Duration) {
        let out = dir.path().join(name);
        // One client: the personas are drawn in one order, the same in every run.
        let mut args: Vec<String> = [
            "run",
            profile.to_str().expect("utf-8"),
            "--seed",
            "5",
            "--clients",
            "1",
        ]
        .map(String::from)
        .to_vec();
        args.extend(["--out".into(), out.display().to_string()]);
        if let Some(p) = push {
            args.extend(["--push".into(), p, "--push-every".into(), "1s".into()]);
        }
        let started = Instant::now();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, text) = fleet(&args);
        assert!(ok, "{name}: {text}");
        (summary(&out), text, started.elapsed())
    };
    let (plain, _, _) = run("plain", None);
    let (down_run, down_text, _) = run(
        "down",
        Some(format!(
            "prometheus-rw=http://user:s3cret@{down}/api/v1/write?token=s3cret"
        )),
    );
    let (slow_run, slow_text, slow_took) = run(
        "slow",
        Some(format!("prometheus-rw=http://{slow_addr}/api/v1/write")),
    );
    drop(slow);
    assert_eq!(counts(&down_run), counts(&plain), "a receiver that is down");
    assert_eq!(
        counts(&slow_run),
        counts(&plain),
        "a receiver that never answers"
    );
    for (name, s, text) in [
        ("down", &down_run, &down_text),
        ("slow", &slow_run, &slow_text),
    ] {
        let o = &s["outputs"][0];
        assert_eq!(o["final_delivered"], false, "{name}: {o}");
        assert!(
            o["last_error"].as_str().is_some_and(|e| !e.is_empty()),
            "{name}: {o}"
        );
        assert!(
            text.contains("warning: push prometheus-rw"),
            "{name}: {text}"
        );
        assert_eq!(s["sessions"]["failed"], 0, "{name}");
    }
    assert!(down_run["outputs"][0]["failed"].as_u64() > Some(0));
    // No secret of the URL in any output or file of the run.
    assert!(!down_text.contains("s3cret"), "{down_text}");
    for entry in std::fs::read_dir(dir.path().join("down")).expect("folder") {
        let path = entry.expect("entry").path();
        if let Ok(text) = std::fs::read_to_string(&path) {
            assert!(
                !text.contains("s3cret"),
                "{} holds the secret",
                path.display()
            );
        }
    }
    // The end waits for the final push a few seconds at most.
    assert!(slow_took < Duration::from_secs(60), "{slow_took:?}");
}
