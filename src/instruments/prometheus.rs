//! `--metrics-listen 127.0.0.1:PORT`: the live figures as a Prometheus text endpoint
//! (`GET /metrics`), so a Grafana dashboard can follow a soak run. Loopback only: the
//! figures describe the target and nothing authenticates the scrape.

use crate::metrics::LiveCounters;
use crate::metrics::{LiveFigures, Phase};
use crate::watch::Latest;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use std::fmt::Write;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Why the endpoint cannot start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("--metrics-listen {0}: not a loopback address\nfix: use 127.0.0.1:PORT or [::1]:PORT (put a proxy in front to expose it)")]
    NotLoopback(SocketAddr),
    #[error("--metrics-listen {addr}: cannot listen: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

#[derive(Clone)]
struct Sources {
    figures: watch::Receiver<Arc<LiveFigures>>,
    live: Arc<LiveCounters>,
    resources: watch::Receiver<Arc<Latest>>,
}

/// The watcher's series shown as gauges: (series, metric, help).
pub(crate) const RESOURCE_GAUGES: &[(&str, &str, &str)] = &[
    (
        "server.rss",
        "mcp_fleet_server_rss_bytes",
        "Resident memory of the watched server processes (sum).",
    ),
    (
        "server.cpu",
        "mcp_fleet_server_cpu_cores",
        "CPU of the watched server, in cores (CPU seconds per second).",
    ),
    (
        "server.fds",
        "mcp_fleet_server_fds",
        "Open file descriptors of the watched server processes (sum).",
    ),
    (
        "server.threads",
        "mcp_fleet_server_threads",
        "Threads of the watched server processes (sum).",
    ),
    (
        "server.processes",
        "mcp_fleet_server_processes",
        "Watched server processes alive.",
    ),
    (
        "generator.rss",
        "mcp_fleet_generator_rss_bytes",
        "Resident memory of mcp-fleet itself.",
    ),
    (
        "generator.cpu",
        "mcp_fleet_generator_cpu_cores",
        "CPU of mcp-fleet itself, in cores.",
    ),
    (
        "generator.cpu_share",
        "mcp_fleet_generator_cpu_share",
        "CPU of mcp-fleet as a share (0..1) of the cores it may use.",
    ),
    (
        "generator.lag",
        "mcp_fleet_generator_lag_seconds",
        "Worst scheduler lag of mcp-fleet's runtime in the last interval.",
    ),
];

/// The exposition lines of the watcher's latest values (empty before the first sample).
pub fn render_resources(r: &Latest) -> String {
    let mut families: Vec<Family> = RESOURCE_GAUGES
        .iter()
        .filter_map(|&(series, name, help)| {
            r.get(series)
                .map(|v| Family::one(name, "gauge", help, v.to_string()))
        })
        .collect();
    let scraped: Vec<(String, String)> = r
        .values
        .iter()
        .filter(|(n, _, _)| n.starts_with("scrape.") && n != "scrape.failures")
        .map(|(n, _, v)| (format!("{{series=\"{n}\"}}"), v.to_string()))
        .collect();
    if !scraped.is_empty() {
        families.push(Family {
            name: "mcp_fleet_scraped",
            kind: "gauge",
            help: "The latest value scraped from the server's /metrics, by series.",
            samples: scraped,
        });
    }
    if let Some(n) = r.get("scrape.failures") {
        families.push(Family::one(
            "mcp_fleet_scrape_failures_total",
            "counter",
            "Scrapes of the server's /metrics that failed.",
            n.to_string(),
        ));
    }
    write_families(families)
}

fn write_families(families: Vec<Family>) -> String {
    let mut out = String::new();
    for Family {
        name,
        kind,
        help,
        samples,
    } in families
    {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    }
    out
}

/// One metric family: its HELP and TYPE lines come right before its samples, as the text
/// format requires.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    /// (labels, value) pairs; labels are empty or `{…}`.
    samples: Vec<(String, String)>,
}

impl Family {
    fn one(name: &'static str, kind: &'static str, help: &'static str, value: String) -> Family {
        let samples = vec![(String::new(), value)];
        Family {
            name,
            kind,
            help,
            samples,
        }
    }
}

/// What the fleet knows right now, beside the last interval's figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Now {
    pub in_flight: u64,
    /// How long the latest sessions have all failed to connect (zero while they reach
    /// the server).
    pub unreachable_for: std::time::Duration,
}

impl Now {
    fn of(live: &LiveCounters) -> Now {
        Now {
            in_flight: live.in_flight.load(Ordering::Relaxed),
            unreachable_for: live
                .unreachable_since()
                .map(|since| since.elapsed())
                .unwrap_or_default(),
        }
    }
}

/// The exposition text for one snapshot.
pub fn render(f: &LiveFigures, now: Now) -> String {
    let mut out = String::new();
    for family in session_families(f, now)
        .into_iter()
        .chain(phase_families(f))
    {
        let Family {
            name,
            kind,
            help,
            samples,
        } = family;
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    }
    out
}

/// The run as a whole: elapsed time and sessions.
fn session_families(f: &LiveFigures, now: Now) -> Vec<Family> {
    vec![
        Family::one(
            "mcp_fleet_elapsed_seconds",
            "gauge",
            "Time since the run started.",
            format!("{:.3}", f.elapsed.as_secs_f64()),
        ),
        Family::one(
            "mcp_fleet_sessions_started_total",
            "counter",
            "Sessions started.",
            f.sessions_started.to_string(),
        ),
        Family::one(
            "mcp_fleet_sessions_ended_total",
            "counter",
            "Sessions ended (completed, failed, interrupted or unreachable).",
            f.sessions_ended.to_string(),
        ),
        Family::one(
            "mcp_fleet_sessions_unreachable_total",
            "counter",
            "Sessions that never reached the server (their connect failed).",
            f.sessions_unreachable.to_string(),
        ),
        Family::one(
            "mcp_fleet_sessions_in_flight",
            "gauge",
            "Sessions running now.",
            now.in_flight.to_string(),
        ),
        Family::one(
            "mcp_fleet_target_unreachable_seconds",
            "gauge",
            "How long the latest sessions have all failed to connect (0 while they reach the server).",
            format!("{:.3}", now.unreachable_for.as_secs_f64()),
        ),
    ]
}

/// Per phase: samples and errors so far, the last interval's latency; failures by kind.
fn phase_families(f: &LiveFigures) -> Vec<Family> {
    let active: Vec<(Phase, u64, u64)> = Phase::ALL
        .into_iter()
        .filter_map(|p| f.totals.get(p.index()).map(|&(n, e)| (p, n, e)))
        .filter(|&(_, n, _)| n > 0)
        .collect();
    let label = |p: Phase| format!("{{phase=\"{}\"}}", p.name());
    let mut latency = Vec::new();
    for r in f.last.iter().filter(|r| r.count > r.errors) {
        for (q, us) in [
            ("0.5", r.p50_us),
            ("0.9", r.p90_us),
            ("0.95", r.p95_us),
            ("0.99", r.p99_us),
            ("1", r.max_us),
        ] {
            latency.push((
                format!("{{phase=\"{}\",quantile=\"{q}\"}}", r.phase.name()),
                format!("{:.6}", us as f64 / 1e6),
            ));
        }
    }
    vec![
        Family {
            name: "mcp_fleet_phase_samples_total",
            kind: "counter",
            help: "Timed samples per phase (successful and failed).",
            samples: active
                .iter()
                .map(|&(p, n, _)| (label(p), n.to_string()))
                .collect(),
        },
        Family {
            name: "mcp_fleet_phase_errors_total",
            kind: "counter",
            help: "Failed samples per phase.",
            samples: active
                .iter()
                .map(|&(p, _, e)| (label(p), e.to_string()))
                .collect(),
        },
        Family {
            name: "mcp_fleet_phase_latency_seconds",
            kind: "gauge",
            help: "Service time of the last interval's successful samples, by quantile (1 = max).",
            samples: latency,
        },
        // Kind names are `[a-z_:0-9-]`: nothing to escape.
        Family {
            name: "mcp_fleet_failures_total",
            kind: "counter",
            help: "Failures by kind.",
            samples: f
                .failures
                .iter()
                .map(|(k, n)| (format!("{{kind=\"{k}\"}}"), n.to_string()))
                .collect(),
        },
    ]
}

async fn metrics(State(s): State<Sources>) -> impl IntoResponse {
    let figures = s.figures.borrow().clone();
    let mut body = render(&figures, Now::of(&s.live));
    body.push_str(&render_resources(&s.resources.borrow().clone()));
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
}

/// Serve `/metrics` on `addr` until `done`; returns the bound address.
/// Bind `--metrics-listen` (loopback only): first of all, so that a busy port stops the
/// run before it has written anything.
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, MetricsError> {
    if !addr.ip().is_loopback() {
        return Err(MetricsError::NotLoopback(addr));
    }
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| MetricsError::Bind { addr, source })
}

pub async fn serve(
    listener: tokio::net::TcpListener,
    figures: watch::Receiver<Arc<LiveFigures>>,
    live: Arc<LiveCounters>,
    resources: watch::Receiver<Arc<Latest>>,
    done: CancellationToken,
) -> Result<SocketAddr, MetricsError> {
    let bound = listener.local_addr().map_err(|source| MetricsError::Bind {
        addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        source,
    })?;
    let app = axum::Router::new()
        .route("/metrics", get(metrics))
        .with_state(Sources {
            figures,
            live,
            resources,
        });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { done.cancelled().await })
            .await;
    });
    Ok(bound)
}

#[cfg(test)]
mod tests;
