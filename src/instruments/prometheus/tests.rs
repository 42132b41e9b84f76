//! Tests of the `/metrics` endpoint: the exposition text and a real scrape on loopback.

use super::*;
use crate::metrics::IntervalRow;

#[test]
fn exposition_groups_each_family_under_its_type() {
    let mut f = LiveFigures {
        totals: vec![(0, 0); Phase::COUNT],
        sessions_started: 7,
        sessions_unreachable: 2,
        ..LiveFigures::default()
    };
    f.totals[Phase::ToolsCall.index()] = (40, 1);
    f.failures.insert("rpc_error:-32602".into(), 1);
    f.last.push(IntervalRow {
        start_s: 0.0,
        len_s: 1.0,
        phase: Phase::ToolsCall,
        count: 40,
        errors: 1,
        p50_us: 1_500,
        p90_us: 2_000,
        p95_us: 2_000,
        p99_us: 3_000,
        max_us: 4_000,
    });
    let now = Now {
        in_flight: 3,
        unreachable_for: std::time::Duration::from_millis(1500),
    };
    let text = render(&f, now);
    assert!(text.contains("mcp_fleet_sessions_in_flight 3\n"));
    assert!(text.contains("mcp_fleet_sessions_unreachable_total 2\n"));
    assert!(text.contains("mcp_fleet_target_unreachable_seconds 1.500\n"));
    assert!(text.contains("mcp_fleet_phase_samples_total{phase=\"tools/call\"} 40\n"));
    assert!(text.contains(
        "mcp_fleet_phase_latency_seconds{phase=\"tools/call\",quantile=\"0.99\"} 0.003000\n"
    ));
    assert!(text.contains(
        "mcp_fleet_phase_latency_seconds{phase=\"tools/call\",quantile=\"0.95\"} 0.002000\n"
    ));
    assert!(text.contains("mcp_fleet_failures_total{kind=\"rpc_error:-32602\"} 1\n"));
    // Every sample line follows its own family's TYPE line.
    let mut family = "";
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            family = rest.split(' ').next().unwrap_or_default();
        } else if !line.starts_with('#') {
            assert!(line.starts_with(family), "{line} outside {family}");
        }
    }
}

#[test]
fn watched_resources_are_gauges() {
    use crate::metrics::resources::SeriesUnit;
    let r = Latest {
        t_s: 1.0,
        values: vec![
            ("server.rss".into(), SeriesUnit::Bytes, 1048576.0),
            ("generator.cpu_share".into(), SeriesUnit::Count, 0.5),
            ("generator.lag".into(), SeriesUnit::Seconds, 0.003),
            ("scrape.mcp_active_sessions".into(), SeriesUnit::Count, 4.0),
            ("scrape.failures".into(), SeriesUnit::Count, 2.0),
        ],
        ..Latest::default()
    };
    let text = render_resources(&r);
    assert!(
        text.contains(
            "# TYPE mcp_fleet_server_rss_bytes gauge\nmcp_fleet_server_rss_bytes 1048576\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("mcp_fleet_generator_cpu_share 0.5\n"),
        "{text}"
    );
    assert!(
        text.contains("mcp_fleet_generator_lag_seconds 0.003\n"),
        "{text}"
    );
    assert!(
        text.contains("mcp_fleet_scraped{series=\"scrape.mcp_active_sessions\"} 4\n"),
        "{text}"
    );
    assert!(
        text.contains("mcp_fleet_scrape_failures_total 2\n"),
        "{text}"
    );
    assert_eq!(render_resources(&Latest::default()), "");
}

#[tokio::test]
async fn only_loopback_addresses_are_served() {
    let (_tx, rx) = watch::channel(Arc::new(LiveFigures::default()));
    let (_rtx, resources) = watch::channel(Arc::new(Latest::default()));
    let done = CancellationToken::new();
    let e = bind("0.0.0.0:0".parse().expect("addr"))
        .await
        .expect_err("not loopback");
    assert!(e.to_string().contains("fix: use 127.0.0.1:PORT"), "{e}");
    let listener = bind("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("binds");
    let bound = serve(listener, rx, Arc::default(), resources, done.clone())
        .await
        .expect("serves");
    let mut s = tokio::net::TcpStream::connect(bound)
        .await
        .expect("connects");
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("writes");
    let mut body = String::new();
    s.read_to_string(&mut body).await.expect("reads");
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    assert!(
        body.contains("mcp_fleet_sessions_started_total 0"),
        "{body}"
    );
    done.cancel();
}
