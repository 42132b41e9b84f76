//! The reference server's own `GET /metrics` (Prometheus text): its process as procfs
//! shows it (`process_resident_memory_bytes`, `process_open_fds`,
//! `process_cpu_seconds_total`, `process_threads`) and its sessions
//! (`mcp_active_sessions` over Streamable HTTP, legacy SSE and WebSocket, and
//! `mcp_sessions_total`), so a soak run can scrape it with `--server-metrics`. The
//! server stands apart from the pipeline, so this reads `/proc/self` itself.

use super::handler::Handler;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The path served.
pub const PATH: &str = "/metrics";

/// The server's sessions: open now, and opened since it started.
#[derive(Debug, Default)]
pub struct SessionGauge {
    active: AtomicU64,
    total: AtomicU64,
}

impl SessionGauge {
    pub fn opened(&self) {
        self.active.fetch_add(1, Ordering::Relaxed);
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    pub fn closed(&self) {
        // Never below zero, whatever the order of a racing open and close.
        let _ = self
            .active
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    pub fn active(&self) -> u64 {
        self.active.load(Ordering::Relaxed)
    }

    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
}

/// Closes its session in the gauge when dropped (a WebSocket connection's life).
pub struct OpenSession(Arc<Handler>);

impl OpenSession {
    pub fn new(handler: Arc<Handler>) -> OpenSession {
        handler.sessions.opened();
        OpenSession(handler)
    }
}

impl Drop for OpenSession {
    fn drop(&mut self) {
        self.0.sessions.closed();
    }
}

pub fn routes(handler: Arc<Handler>) -> Router {
    Router::new().route(PATH, get(metrics)).with_state(handler)
}

async fn metrics(State(handler): State<Arc<Handler>>) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        exposition(&handler.sessions),
    )
}

/// The text of one scrape.
pub fn exposition(sessions: &SessionGauge) -> String {
    let me = own_process();
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, value: Option<String>| {
        if let Some(v) = value {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}"
            );
        }
    };
    family(
        "process_resident_memory_bytes",
        "gauge",
        "Resident memory size in bytes.",
        me.rss_bytes.map(|b| b.to_string()),
    );
    family(
        "process_open_fds",
        "gauge",
        "Number of open file descriptors.",
        me.fds.map(|n| n.to_string()),
    );
    family(
        "process_cpu_seconds_total",
        "counter",
        "Total user and system CPU time spent in seconds.",
        me.cpu_seconds.map(|s| format!("{s:.3}")),
    );
    family(
        "process_threads",
        "gauge",
        "Number of OS threads in the process.",
        me.threads.map(|n| n.to_string()),
    );
    family(
        "mcp_active_sessions",
        "gauge",
        "MCP sessions open now (Streamable HTTP, legacy SSE, WebSocket).",
        Some(sessions.active().to_string()),
    );
    family(
        "mcp_sessions_total",
        "counter",
        "MCP sessions opened since the server started.",
        Some(sessions.total().to_string()),
    );
    out
}

/// What `/proc/self` says; each figure `None` where procfs is missing (not Linux).
#[derive(Debug, Default)]
struct OwnProcess {
    rss_bytes: Option<u64>,
    fds: Option<u64>,
    cpu_seconds: Option<f64>,
    threads: Option<u64>,
}

fn own_process() -> OwnProcess {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
    };
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name's closing parenthesis: utime and stime are the
    // 12th and 13th (proc(5) fields 14 and 15).
    let after = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    let cpu_seconds = ticks(11)
        .zip(ticks(12))
        .map(|(u, s)| (u + s) as f64 / clock_ticks());
    OwnProcess {
        rss_bytes: field("VmRSS:").map(|kb| kb * 1024),
        fds: std::fs::read_dir("/proc/self/fd")
            .ok()
            .map(|d| d.count() as u64),
        cpu_seconds,
        threads: field("Threads:"),
    }
}

fn clock_ticks() -> f64 {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as f64,
        _ => 100.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_has_the_process_and_session_families() {
        let g = SessionGauge::default();
        g.opened();
        g.opened();
        g.closed();
        g.closed();
        g.closed();
        let text = exposition(&g);
        assert!(text.contains("\nmcp_active_sessions 0\n"), "{text}");
        assert!(text.contains("\nmcp_sessions_total 2\n"), "{text}");
        for name in [
            "process_resident_memory_bytes",
            "process_open_fds",
            "process_cpu_seconds_total",
            "process_threads",
        ] {
            assert!(text.contains(&format!("# TYPE {name} ")), "{name}: {text}");
        }
    }
}
