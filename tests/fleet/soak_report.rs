//! The report's soak section in a real browser: headless Chromium loads `report.html`
//! offline and the soak charts have data when the summary has server series; a summary
//! without them has no soak section. Skipped (with a note) where Chromium is missing.

use crate::support::{builtin_http, FleetRun};
use mcp_fleet::metrics::{Series, SeriesUnit};
use mcp_fleet::report;
use mcp_fleet::server::ServerOptions;
use mcp_fleet::summary::{soak, Summary};
use std::path::Path;
use std::process::Command;

pub(crate) fn chromium() -> Option<String> {
    let path = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    Path::new(&path).is_file().then_some(path)
}

/// Headless Chromium, offline and quiet, with its own profile folder and a window of
/// `size` (`W,H`); the caller adds what to do (`--dump-dom`, `--screenshot=…`) and the page.
pub(crate) fn headless(chromium: &str, profile: &Path, size: &str) -> Command {
    let mut c = Command::new(chromium);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=2000",
    ])
    .arg(format!("--window-size={size}"))
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The page's DOM after its script ran.
pub(crate) fn dom(chromium: &str, page: &Path) -> String {
    let profile = tempfile::tempdir().expect("tempdir");
    let o = headless(chromium, profile.path(), "1400,2600")
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn series(name: &str, unit: SeriesUnit, f: impl Fn(f64) -> f64) -> Series {
    let mut s = Series::new(name, unit);
    for k in 0..120 {
        let t = f64::from(k);
        s.push(t, f(t));
    }
    s
}

fn render(summary: &Summary, dir: &Path, name: &str) -> std::path::PathBuf {
    let page = dir.join(name);
    let timeline = report::csv::read(&dir.join(report::csv::FILE_NAME)).expect("intervals");
    let html = report::html::render(&report::html::ReportInput {
        summary,
        timeline: &timeline,
        histograms: Default::default(),
        profile_toml: None,
    });
    std::fs::write(&page, html).expect("write");
    page
}

#[tokio::test]
async fn the_soak_section_draws_the_server_series_and_is_absent_without_them() {
    let server = builtin_http(ServerOptions::default()).await;
    let run = FleetRun::default()
        .profile(&format!(
            "[target]\nurl = \"{}\"\n[load]\nclients = 2\nsessions = 20\n",
            server.url()
        ))
        .run()
        .await;
    let dir = run.dir.path();
    let plain = render(&run.summary, dir, "plain.html");
    let soaked = soaked(&run.summary);
    let page = render(&soaked, dir, "soak.html");
    let text = |p: &Path| std::fs::read_to_string(p).expect("page");
    // A short run that watched nothing has no soak section (a generator notice, if
    // any, is a section of its own).
    assert!(!text(&plain).contains("id=soak"));
    assert!(text(&page).contains("<section id=soak>"));
    server.shutdown().await;
    let Some(chromium) = chromium() else {
        eprintln!("browser check skipped: no Chromium (apt-get install chromium, or set CHROMIUM)");
        return;
    };
    let html = dom(&chromium, &plain);
    assert!(
        html.contains("data-chart=\"latency\""),
        "the page drew: {html:.300}"
    );
    assert!(
        !html.contains("id=\"soak\""),
        "no soak section without series"
    );

    let html = dom(&chromium, &page);
    assert!(html.contains("id=\"soak\""), "a soak section");
    for name in [
        "server.rss",
        "server.cpu",
        "server.fds",
        "scrape.mcp_active_sessions",
        "generator.lag",
    ] {
        let at = html
            .find(&format!("data-series=\"{name}\""))
            .unwrap_or_else(|| panic!("a chart of {name}"));
        let tag = &html[at..at + html[at..].find('>').unwrap_or(0)];
        let points: u64 = tag
            .split("data-points=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(points >= 120, "{name} drawn with its points: {tag}");
    }
    assert!(html.contains("RSS +343 MiB/h"), "the slope's text");
    assert!(html.contains("+72.0 KiB"), "the figure per session");
    assert!(html.contains("grows to the end"), "the test that decided");
    assert!(html.contains("The generator was the bottleneck"));
}

/// `summary` with server and generator series and soak verdicts, as the watcher and
/// the verdicts would fill them.
fn soaked(summary: &Summary) -> Summary {
    let mut summary = summary.clone();
    summary.resources = vec![
        series("server.rss", SeriesUnit::Bytes, |t| 5e7 + t * 1e5),
        series("server.cpu", SeriesUnit::Cores, |t| {
            0.2 + (t / 10.0).sin() / 10.0
        }),
        series("server.fds", SeriesUnit::Count, |t| {
            40.0 + (t / 30.0).floor()
        }),
        series("scrape.mcp_active_sessions", SeriesUnit::Count, |_| 2.0),
        series("generator.cpu_share", SeriesUnit::Count, |_| 0.3),
        series("generator.lag", SeriesUnit::Seconds, |_| 0.002),
    ];
    summary.soak.slopes.push(soak::Slope {
        series: "server.rss".into(),
        unit: SeriesUnit::Bytes,
        per_s: 1e5,
        ci95_per_s: [9e4, 1.1e5],
        r2: 0.98,
        points: 120,
        from_s: 0.0,
        to_s: 119.0,
        text: "RSS +343 MiB/h (R² 0.98)".into(),
        per: vec![soak::PerCount {
            per: "session".into(),
            value: 72.0 * 1024.0,
            ci95: [70.0 * 1024.0, 74.0 * 1024.0],
            r2: 0.98,
            events: 5000,
        }],
        trend: Some(soak::Trend::Leak),
        decided_by: "grows to the end: +72.0 KiB per session".into(),
        levels_off_at_s: None,
        limit: None,
        at_limit_from_s: None,
        needs_s: None,
    });
    // As a run long enough for verdicts.
    summary.soak.too_short = None;
    summary.soak.generator.bottleneck = true;
    summary.soak.generator.reasons = vec!["CPU share 0.97".into()];
    summary
}
