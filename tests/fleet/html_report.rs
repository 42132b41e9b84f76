//! `report.html` of a real open-model run in a real browser: headless Chromium draws
//! every chart with data (each canvas's `data-points`), a focused chart shows its exact
//! values, and the screenshot is not blank. Skipped (with a note) where Chromium is
//! missing; the page's text is checked either way.

use crate::soak_report::{chromium, dom, headless};
use crate::support::{builtin_http, FleetRun};
use mcp_fleet::cli::RunArgs;
use mcp_fleet::server::ServerOptions;
use std::collections::BTreeMap;
use std::path::Path;

/// Each drawn canvas's `data-chart` (and phase) with its `data-points`.
fn drawn(html: &str) -> BTreeMap<String, u64> {
    html.split("<canvas")
        .skip(1)
        .filter_map(|rest| {
            let tag = &rest[..rest.find('>')?];
            let attr = |name: &str| {
                tag.split(&format!("{name}=\""))
                    .nth(1)
                    .and_then(|r| r.split('"').next())
            };
            let key = match attr("data-phase") {
                Some(p) => format!("{}:{p}", attr("data-chart")?),
                None => attr("data-chart")?.to_string(),
            };
            Some((
                key,
                attr("data-points")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0),
            ))
        })
        .collect()
}

/// A screenshot of the page, decoded: (width, height, RGBA bytes).
fn screenshot(chromium: &str, page: &Path, dir: &Path) -> (u32, u32, Vec<u8>) {
    let profile = tempfile::tempdir().expect("tempdir");
    let png = dir.join("shot.png");
    let o = headless(chromium, profile.path(), "1400,1600")
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    let file = std::fs::File::open(&png).unwrap_or_else(|e| {
        panic!(
            "no screenshot ({e}): {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[tokio::test]
async fn the_report_of_an_open_run_draws_every_chart_in_a_browser() {
    let server = builtin_http(ServerOptions::default()).await;
    let url = server.url();
    let mut args = RunArgs::default();
    args.overrides.interval = Some("250ms".into());
    let run = FleetRun::new(args)
        .profile(&format!(
            "[target]\nurl = \"{}\"\n[load]\nrate = \"40/s\"\nduration = \"2s\"\n",
            url
        ))
        .run()
        .await;
    server.shutdown().await;
    let page = run.dir.path().join("report.html");
    let text = std::fs::read_to_string(&page).expect("report.html");
    // The profile keeps the default name: the page is titled by its target.
    assert!(text.contains(&format!("<title>mcp-fleet · {url}</title>")));
    assert!(
        text.contains("id=response"),
        "open model: response beside service time"
    );
    assert!(
        text.contains("\"in_flight\":{\"t\":["),
        "sessions in flight recorded"
    );
    let Some(chromium) = chromium() else {
        eprintln!("browser check skipped: no Chromium (apt-get install chromium, or set CHROMIUM)");
        return;
    };
    let html = dom(&chromium, &page);
    let charts = drawn(&html);
    for kind in [
        "latency:initialize",
        "latency:session",
        "sessions",
        "in-flight",
        // Small multiples: one chart per phase.
        "throughput:initialize",
        "throughput:tools/list",
        "errors",
        "histogram:session",
        "distribution",
    ] {
        let points = charts.get(kind).copied();
        assert!(
            points.is_some_and(|n| n > 0),
            "{kind} drawn with data: {points:?} of {charts:?}"
        );
    }
    // Focused, the first latency chart shows the exact values of an interval.
    let focused = dom(
        &chromium,
        Path::new(&format!("{}#focus=latency", page.display())),
    );
    let tip = focused
        .split("class=\"tip\"")
        .nth(1)
        .and_then(|r| r.split("</div>").next())
        .unwrap_or_default();
    assert!(
        tip.contains("interval ") && tip.contains("p95: "),
        "tooltip: {tip:.300}"
    );

    let (w, h, rgba) = screenshot(&chromium, &page, run.dir.path());
    assert!(w >= 1000 && h >= 1000, "{w}×{h}");
    let colours: std::collections::BTreeSet<&[u8]> = rgba.chunks(4).collect();
    assert!(
        colours.len() > 50,
        "a blank page: {} colours",
        colours.len()
    );
}
