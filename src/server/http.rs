//! The Streamable HTTP transport of the reference server, both shapes on one `/mcp`
//! endpoint: legacy sessions keyed by `Mcp-Session-Id` (SSE streams with event ids and
//! replay, the standalone GET stream, resumption with `Last-Event-ID`) and stateless
//! 2026-07-28 POSTs (routing headers checked against the body); JSON or SSE framing around
//! the transport-independent handler, plus the HTTP fault switches.
//!
//! Here: the server's lifetime, the router and the session map. `handlers` answers POST,
//! GET and DELETE of legacy sessions, `stateless` the 2026-07-28 POSTs, `stream` keeps
//! the SSE streams (event ids, replay, resumption, the drop fault), and `headers` holds
//! the header checks and response shapes they share.

mod handlers;
mod headers;
mod stateless;
mod stream;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use anyhow::Context;
use axum::routing::post;
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::handler::Handler;
use super::{Eras, ServerOptions};
use handlers::{delete_mcp, get_mcp, post_mcp};
use stream::HttpSession;

/// Bound on waiting for requests being answered (a long `sleep`) when shutting down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Shared by every connection: the handler, the live sessions and the fault switches.
struct AppState {
    handler: Arc<Handler>,
    sessions: RwLock<HashMap<String, Arc<HttpSession>>>,
    sse_responses: bool,
    eras: Eras,
    sse_drop_after: Option<usize>,
    expire_sessions_after: Option<u32>,
    /// The clock of `last_seen_ms`.
    started: std::time::Instant,
}

impl AppState {
    fn session(&self, id: &str) -> Option<Arc<HttpSession>> {
        // A poisoned lock only means another request panicked mid-insert; the map is
        // still usable.
        let map = self.sessions.read().unwrap_or_else(|e| e.into_inner());
        let session = map.get(id).cloned();
        if let Some(s) = &session {
            s.last_seen_ms.store(self.now_ms(), Ordering::Relaxed);
        }
        session
    }

    fn insert(&self, id: String, session: Arc<HttpSession>) {
        session.last_seen_ms.store(self.now_ms(), Ordering::Relaxed);
        let mut map = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        if map.insert(id, session).is_none() {
            self.handler.sessions.opened();
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Drop the sessions no request named for longer than `ttl`; how many went.
    fn sweep(&self, ttl: Duration) -> usize {
        let now = self.now_ms();
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
        let mut map = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        let before = map.len();
        map.retain(|_, s| now.saturating_sub(s.last_seen_ms.load(Ordering::Relaxed)) <= ttl_ms);
        let swept = before - map.len();
        for _ in 0..swept {
            self.handler.sessions.closed();
        }
        swept
    }

    fn remove(&self, id: &str) -> bool {
        let mut map = self.sessions.write().unwrap_or_else(|e| e.into_inner());
        let removed = map.remove(id).is_some();
        if removed {
            self.handler.sessions.closed();
        }
        removed
    }
}

/// A running HTTP server; dropping it or calling [`HttpServer::shutdown`] stops it.
pub struct HttpServer {
    pub addr: SocketAddr,
    /// Live Streamable HTTP sessions (for tests and the watcher's story of a leak).
    sessions: Arc<AtomicUsize>,
    /// Dropping the sender is the stop signal, so dropping the server stops it too.
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl HttpServer {
    /// Stop accepting, let open requests finish (bounded), then return.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        let mut task = self.task;
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }

    /// Streamable HTTP sessions in the session map right now.
    pub fn live_sessions(&self) -> usize {
        self.sessions.load(Ordering::Relaxed)
    }

    /// The MCP endpoint URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

/// Bind `addr` (port 0 picks a free port), serve in the background, return at once.
pub async fn spawn_http(addr: SocketAddr, opts: ServerOptions) -> anyhow::Result<HttpServer> {
    let listener = bind(addr, opts.reuse_port)?;
    let addr = listener.local_addr().context("reading the bound address")?;
    let (stop, stopped) = oneshot::channel::<()>();
    let (app, sessions) = router(&opts);
    let stop_signal = async move {
        let _ = stopped.await;
    };
    let task = tokio::spawn(super::connection::serve(
        listener,
        app,
        stop_signal,
        SHUTDOWN_GRACE,
    ));
    Ok(HttpServer {
        addr,
        sessions,
        stop,
        task,
    })
}

/// Bind `addr` and serve until Ctrl-C (then as [`HttpServer::shutdown`] does).
pub async fn serve_http(addr: SocketAddr, opts: ServerOptions) -> anyhow::Result<()> {
    let listener = bind(addr, opts.reuse_port)?;
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    super::connection::serve(listener, router(&opts).0, ctrl_c, SHUTDOWN_GRACE).await;
    Ok(())
}

fn bind(addr: SocketAddr, reuse_port: bool) -> anyhow::Result<TcpListener> {
    // A deep accept queue: at thousands of new sessions per second a 128-deep one
    // overflows, and every refused SYN comes back a second later, which would show up
    // as a one-second latency the server never caused.
    let socket = if addr.is_ipv6() {
        tokio::net::TcpSocket::new_v6()
    } else {
        tokio::net::TcpSocket::new_v4()
    }
    .with_context(|| format!("cannot create a socket for {addr}"))?;
    socket.set_reuseaddr(true)?;
    if reuse_port {
        socket
            .set_reuseport(true)
            .with_context(|| format!("cannot set SO_REUSEPORT on {addr}"))?;
    }
    socket.bind(addr).with_context(|| {
        if reuse_port {
            format!(
                "cannot bind the reference server to {addr}\n\
                 fix: every process sharing the port must be started with --reuse-port \
                 by the same user"
            )
        } else {
            format!(
                "cannot bind the reference server to {addr}\n\
                 fix: choose a free port (0: any), or start every server on this port \
                 with --reuse-port"
            )
        }
    })?;
    socket
        .listen(4096)
        .with_context(|| format!("cannot listen on {addr}"))
}

/// The router, and a live count of its Streamable HTTP sessions. Called inside the
/// runtime: it starts the `--session-ttl` sweep.
fn router(opts: &ServerOptions) -> (Router, Arc<AtomicUsize>) {
    let handler = Arc::new(Handler::new(opts));
    let state = Arc::new(AppState {
        handler: handler.clone(),
        sessions: RwLock::new(HashMap::new()),
        sse_responses: opts.sse_responses,
        eras: opts.eras,
        sse_drop_after: opts.sse_drop_after,
        expire_sessions_after: opts.expire_sessions_after,
        started: std::time::Instant::now(),
    });
    let live = Arc::new(AtomicUsize::new(0));
    tokio::spawn(sweep(
        Arc::downgrade(&state),
        opts.session_ttl,
        live.clone(),
    ));
    // Any other method gets axum's 405 with an `Allow` header.
    let mcp = Router::new()
        .route("/mcp", post(post_mcp).get(get_mcp).delete(delete_mcp))
        .with_state(state)
        .merge(super::ws::routes(handler.clone()))
        .merge(super::legacy_sse::routes(handler.clone()));
    let router = match &opts.auth {
        None => mcp,
        Some(auth) => {
            let auth = super::auth::AuthState::new(auth.clone(), &opts.faults);
            mcp.layer(axum::middleware::from_fn_with_state(
                auth.clone(),
                super::auth::require_bearer,
            ))
            .merge(super::auth::routes(auth))
        }
    }
    .merge(super::process_metrics::routes(handler));
    (router, live)
}

/// Until the server is gone: every quarter of the TTL (at most a second apart), drop
/// the sessions idle longer than it, and publish the live count. An expired session
/// answers 404 like an unknown one, and the client re-initializes.
async fn sweep(state: Weak<AppState>, ttl: Option<Duration>, live: Arc<AtomicUsize>) {
    let every = ttl
        .map_or(Duration::from_secs(1), |t| t / 4)
        .clamp(Duration::from_millis(50), Duration::from_secs(1));
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(state) = state.upgrade() else {
            return;
        };
        if let Some(ttl) = ttl.filter(|t| !t.is_zero()) {
            state.sweep(ttl);
        }
        let n = state
            .sessions
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .len();
        live.store(n, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests;
