//! `run --dashboard 127.0.0.1:0`: the live report page. Its events follow the run (the
//! sessions ended grow from one to the next, the last is final and carries the
//! report.html the run wrote, chart data and all); headless Chromium loads the page
//! while the run goes, draws its charts, takes every update and ends on the run's
//! report; a non-loopback address is refused before the run starts.

use crate::soak_report::{chromium, headless};
use crate::support::fleet_command;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A run of about 6 s with the page on a port the OS picks; the child and the page's URL
/// (from the run's stderr).
fn start(out: &Path) -> (Child, String) {
    let mut child = fleet_command()
        .args(["run", "--duration", "6s", "--think", "20ms", "--seed", "3"])
        .args(["--dashboard", "127.0.0.1:0", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mcp-fleet starts");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("live dashboard: ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the run says where its page is");
    (child, url)
}

fn wait(mut child: Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "{status:?}");
            return;
        }
        assert!(Instant::now() < deadline, "the run did not end");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The events of `url`, read to the stream's end (the final event), as JSON.
fn events(url: &str) -> Vec<Value> {
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(addr).expect("the page listens");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    write!(s, "GET /events HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("request");
    let mut text = String::new();
    s.read_to_string(&mut text)
        .expect("the stream ends after the final event");
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).expect("an event is JSON"))
        .collect()
}

/// "… 123 sessions ended …" → 123.
fn ended(status: &str) -> u64 {
    status
        .split(" sessions ended")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {status:?}"))
}

#[test]
fn the_live_page_follows_the_run_and_ends_as_its_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let (child, url) = start(&out);
    let seen = events(&url);
    wait(child);
    assert!(seen.len() >= 4, "an update a second: {}", seen.len());
    let (first, last) = (&seen[1], &seen[seen.len() - 2]);
    let (a, b) = (
        ended(first["status"].as_str().expect("status")),
        ended(last["status"].as_str().expect("status")),
    );
    assert!(b > a, "the figures move: {a} then {b}");
    let fin = seen.last().expect("events");
    assert_eq!(fin["final"], true);
    assert!(seen[..seen.len() - 1].iter().all(|e| e["final"] == false));
    let report = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let (main, data) = mcp_fleet::report::html::parts(&report).expect("the report's parts");
    assert_eq!(fin["main"], main, "the final page is report.html's");
    assert_eq!(fin["data"], data, "with its chart data");
    assert!(
        seen.iter()
            .all(|e| e["data"].as_str().is_some_and(|d| d.starts_with('{'))),
        "every update has chart data"
    );
}

#[test]
fn chromium_draws_the_live_page_takes_its_updates_and_ends_on_the_report() {
    let Some(chromium) = chromium() else {
        eprintln!("browser check skipped: no Chromium (apt-get install chromium, or set CHROMIUM)");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let (child, url) = start(&out);
    // Virtual time does not run out while the event stream is open: the browser stays
    // on the page until the run's final event closes it, then dumps what it shows.
    let profile = tempfile::tempdir().expect("tempdir");
    let o = headless(&chromium, profile.path(), "1400,2600")
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium runs");
    wait(child);
    let dom = String::from_utf8_lossy(&o.stdout);
    let updates: u64 = dom
        .split("data-updates=\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no update taken: {}", &dom[..dom.len().min(2000)]));
    assert!(updates >= 3, "{updates} updates");
    assert!(dom.contains("data-final=\"true\""), "the final event came");
    assert!(dom.contains("finished: this is the run's report.html"));
    // Every chart of the final page drew points.
    let drawn: Vec<u64> = dom
        .split("data-points=\"")
        .skip(1)
        .filter_map(|t| t.split('"').next()?.parse().ok())
        .collect();
    assert!(
        drawn.len() >= 4 && drawn.iter().filter(|&&n| n > 0).count() >= 4,
        "{drawn:?}"
    );
    let report = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    let (_, data) = mcp_fleet::report::html::parts(&report).expect("parts");
    assert!(
        dom.contains(&data),
        "the page's chart data is report.html's"
    );
}

#[test]
fn a_dashboard_off_loopback_is_refused_before_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let o = fleet_command()
        .args(["run", "--quiet", "--dashboard", "0.0.0.0:0", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(!dir.path().join("out").exists(), "nothing written");
    // One page cannot be several processes' either.
    let o = fleet_command()
        .args([
            "run",
            "--quiet",
            "--processes",
            "2",
            "--dashboard",
            "127.0.0.1:0",
        ])
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--processes starts several") && err.contains("--push"),
        "{err}"
    );
}
