//! `run --dashboard 127.0.0.1:PORT`: the run's report page, live. `GET /` is the page
//! `report.html` would be if the run stopped now (its charts, tiles and soak verdicts),
//! with a small script that follows `GET /events` (server-sent events): every interval
//! the figures so far are rendered as a checkpoint renders them and the page's `<main>`
//! and chart data are swapped in place; when the run ends, the final event carries the
//! `report.html` the run wrote, so the page becomes it. Loopback only: the page shows
//! the target (its secrets already redacted) and nothing authenticates it.

use super::{facts_so_far, histograms, Moment, Run, Worker};
use crate::instruments::Instruments;
use crate::metrics::{LiveCounters, Snapshots};
use crate::report;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use serde::Serialize;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The shortest refresh: the page renders the whole report each time.
const MIN_EVERY: Duration = Duration::from_secs(1);
/// How long the end waits for open pages to receive the final event.
const FINAL_WAIT: Duration = Duration::from_secs(2);

/// Why the page cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    #[error("--dashboard {0}: not a loopback address\nfix: use 127.0.0.1:PORT or [::1]:PORT (put a proxy in front to expose it)")]
    NotLoopback(SocketAddr),
    #[error("--dashboard {addr}: cannot listen: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Bind `--dashboard` (loopback only), before the run makes anything.
pub async fn bind(addr: SocketAddr) -> Result<tokio::net::TcpListener, DashboardError> {
    if !addr.ip().is_loopback() {
        return Err(DashboardError::NotLoopback(addr));
    }
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| DashboardError::Bind { addr, source })
}

/// One state of the page, as an event carries it.
#[derive(Debug, Clone, Default, Serialize)]
struct Update {
    /// The inner HTML of `<main>`.
    main: String,
    /// The chart data (JSON text of `#chart-data`).
    data: String,
    /// One line on how the run goes.
    status: String,
    /// The run ended: this is its `report.html`; no more events.
    #[serde(rename = "final")]
    last: bool,
}

#[derive(Clone)]
struct Shared {
    updates: watch::Receiver<Arc<Update>>,
    /// Event streams open now.
    streams: Arc<AtomicUsize>,
}

/// The running page.
pub struct Dashboard {
    updates: watch::Sender<Arc<Update>>,
    streams: Arc<AtomicUsize>,
    refresh: CancellationToken,
    refresher: JoinHandle<()>,
    server: CancellationToken,
    /// Where it is, for the test's and the person's sake.
    pub addr: SocketAddr,
}

impl Dashboard {
    /// Serve the page on `listener` and refresh it every interval (at least a second)
    /// from the figures the instruments collect.
    pub async fn start(
        listener: tokio::net::TcpListener,
        run: Arc<Run>,
        instruments: &Instruments,
        quiet: bool,
    ) -> std::io::Result<Dashboard> {
        let addr = listener.local_addr()?;
        // Until the first render (a moment after the start): a page that says so.
        let (tx, rx) = watch::channel(Arc::new(Update {
            main:
                "<p class=note>The run is starting: its figures come with the first interval.</p>"
                    .into(),
            data: "{}".into(),
            status: "starting".into(),
            last: false,
        }));
        let streams = Arc::new(AtomicUsize::new(0));
        let shared = Shared {
            updates: rx,
            streams: streams.clone(),
        };
        let app = axum::Router::new()
            .route("/", get(page))
            .route("/events", get(events))
            .with_state(shared);
        let server = CancellationToken::new();
        let stop = server.clone();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await;
        });
        let every = run.plan.interval.max(MIN_EVERY);
        let refresh = CancellationToken::new();
        let refresher = tokio::spawn(refresh_every(
            run,
            every,
            instruments.snapshots.clone(),
            instruments.live.clone(),
            instruments.started().1,
            tx.clone(),
            refresh.clone(),
        ));
        if !quiet {
            crate::console::errln(format_args!("live dashboard: http://{addr}/"));
        }
        Ok(Dashboard {
            updates: tx,
            streams,
            refresh,
            refresher,
            server,
            addr,
        })
    }

    /// The run ended: its `report.html` in `dir` becomes the page (the final event);
    /// open pages get a moment to receive it, then the server stops.
    pub async fn finish(self, dir: &Path) {
        self.refresh.cancel();
        let _ = self.refresher.await;
        let written = std::fs::read_to_string(dir.join(report::html::FILE_NAME)).ok();
        if let Some((main, data)) = written.as_deref().and_then(report::html::parts) {
            let status = format!(
                "finished: this is the run's report.html ({})",
                dir.display()
            );
            let _ = self.updates.send(Arc::new(Update {
                main,
                data,
                status,
                last: true,
            }));
            let deadline = tokio::time::Instant::now() + FINAL_WAIT;
            while self.streams.load(Ordering::Relaxed) > 0 && tokio::time::Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        self.server.cancel();
    }
}

/// The page: the latest state with the script that follows the events.
async fn page(State(s): State<Shared>) -> impl IntoResponse {
    let u = s.updates.borrow().clone();
    Html(report::html::live_page(&u.main, &u.data, &u.status))
}

/// The events: the current state at once, then every new one; the stream ends after the
/// final one.
async fn events(State(s): State<Shared>) -> impl IntoResponse {
    let streams = s.streams.clone();
    streams.fetch_add(1, Ordering::Relaxed);
    let guard = StreamGuard(streams);
    let rx = s.updates.clone();
    let stream = futures::stream::unfold(
        (rx, true, false, guard),
        |(mut rx, first, done, guard)| async move {
            if done {
                return None;
            }
            if !first && rx.changed().await.is_err() {
                return None;
            }
            let u = rx.borrow_and_update().clone();
            let text = serde_json::to_string(&*u).unwrap_or_default();
            let event = Event::default().event("update").data(text);
            Some((
                Ok::<_, std::convert::Infallible>(event),
                (rx, false, u.last, guard),
            ))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// Counts an event stream as open while it lives.
struct StreamGuard(Arc<AtomicUsize>);

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn refresh_every(
    run: Arc<Run>,
    every: Duration,
    snapshots: Snapshots,
    live: Arc<LiveCounters>,
    started: tokio::time::Instant,
    updates: watch::Sender<Arc<Update>>,
    done: CancellationToken,
) {
    // Rendering is CPU work: on a thread of its own, as checkpoints.
    let Ok(worker) = Worker::start("mcp-fleet-dashboard") else {
        return;
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = done.cancelled() => break,
            _ = tick.tick() => {}
        }
        let Some(stats) = snapshots.take().await else {
            break;
        };
        let elapsed = started.elapsed();
        let in_flight = live.in_flight.load(Ordering::Relaxed);
        let warning = live.push_warning();
        let run = run.clone();
        let rendered = worker
            .run(move || {
                let facts = facts_so_far(&run, &stats, &Moment::checkpoint(elapsed));
                let summary = report::assemble::summary(&run.plan, &stats, &facts);
                let html = report::html::render(&report::html::ReportInput {
                    summary: &summary,
                    timeline: &stats.timeline,
                    histograms: histograms(&stats),
                    profile_toml: Some(run.plan.profile_toml()),
                });
                let s = &summary.sessions;
                let mut status = format!(
                    "live · {:.0} s · {} sessions ended ({} failed, {} unreachable) · {} in flight",
                    elapsed.as_secs_f64(),
                    s.completed + s.failed + s.unreachable + s.interrupted,
                    s.failed,
                    s.unreachable,
                    in_flight
                );
                if let Some(w) = warning {
                    status.push_str(" · ");
                    status.push_str(&w);
                }
                report::html::parts(&html).map(|(main, data)| Update {
                    main,
                    data,
                    status,
                    last: false,
                })
            })
            .await;
        match rendered {
            Some(Some(update)) => drop(updates.send(Arc::new(update))),
            Some(None) => {}
            None => break,
        }
    }
}
