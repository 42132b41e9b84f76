//! Which recorded session an HTTP exchange belongs to. HTTP has no session of its own,
//! so the proxy follows what the protocol uses: the `Mcp-Session-Id` the server hands
//! out (Streamable HTTP, legacy era), the endpoint URI of a legacy HTTP+SSE stream, and
//! for the stateless modern era (and servers that hand out no session id) the client
//! itself: its address and identity. A session ends at a DELETE, at its SSE stream's
//! end, or when its client has held no connection for [`IDLE_CLOSE`] (some HTTP clients
//! close their connection after each answer and open the next for the next request).
//! A dual-era client's `server/discover` probe and the `initialize` it falls back to
//! are one session.

use crate::trace::{ClosedBy, TraceWriter, Transport};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// How long a session whose client holds no connection and no stream stays open: a next
/// request within it continues the session.
pub const IDLE_CLOSE: Duration = Duration::from_secs(2);

/// A live session's hold on the proxy.
#[derive(Debug, Default)]
struct Live {
    /// Client connections that carried its exchanges and are still open.
    connections: HashSet<u64>,
    /// Response streams of it still running (the GET stream, an SSE stream, a POST's).
    streams: u32,
    /// Keys under which it is found, removed at its close.
    keys: Vec<Key>,
    /// Bumped by every exchange: an idle close checks nothing came since.
    activity: u64,
    /// Its client has sent nothing but `server/discover` (an era probe) yet.
    probe_only: bool,
    /// The client's address, and its `clientInfo` as it sent it (a probe's `_meta`).
    ip: Option<IpAddr>,
    client: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// `Mcp-Session-Id`.
    Header(String),
    /// Legacy HTTP+SSE: the endpoint's path and query.
    Endpoint(String),
    /// A client without a session id: its address and identity…
    Client(IpAddr, String),
    /// …and the connections its session uses.
    Connection(u64),
}

#[derive(Debug, Default)]
struct State {
    keys: HashMap<Key, u64>,
    live: HashMap<u64, Live>,
    closed: u64,
}

/// The sessions of one recording.
#[derive(Debug, Clone)]
pub struct Sessions {
    state: Arc<Mutex<State>>,
    pub trace: Arc<TraceWriter>,
    /// Told whenever a session closes (`--sessions N` waits on it).
    pub closed: Arc<Notify>,
}

impl Sessions {
    pub fn new(trace: Arc<TraceWriter>) -> Sessions {
        Sessions {
            state: Arc::default(),
            trace,
            closed: Arc::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere cannot leave the map half-changed in a way that matters here.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sessions closed so far.
    pub fn closed_count(&self) -> u64 {
        self.state().closed
    }

    /// A new session, first seen on `connection`.
    pub fn open(&self, transport: Transport, connection: u64) -> u64 {
        let id = self.trace.open(transport);
        let mut live = Live::default();
        live.connections.insert(connection);
        self.state().live.insert(id, live);
        id
    }

    fn find(&self, key: &Key, connection: u64) -> Option<u64> {
        let mut st = self.state();
        let id = *st.keys.get(key)?;
        let live = st.live.get_mut(&id)?;
        live.connections.insert(connection);
        live.activity += 1;
        Some(id)
    }

    fn remember(&self, id: u64, key: Key) {
        let mut st = self.state();
        if let Some(live) = st.live.get_mut(&id) {
            live.keys.push(key.clone());
            st.keys.insert(key, id);
        }
    }

    pub fn by_header(&self, sid: &str, connection: u64) -> Option<u64> {
        self.find(&Key::Header(sid.to_string()), connection)
    }

    pub fn remember_header(&self, id: u64, sid: &str) {
        self.remember(id, Key::Header(sid.to_string()));
    }

    pub fn by_endpoint(&self, endpoint: &str, connection: u64) -> Option<u64> {
        self.find(&Key::Endpoint(endpoint.to_string()), connection)
    }

    pub fn remember_endpoint(&self, id: u64, endpoint: &str) {
        self.remember(id, Key::Endpoint(endpoint.to_string()));
    }

    /// The session of a client that names no session (the modern era, or a server that
    /// hands out no session id): the session its connection already carries, else the
    /// one its address and identity last opened — when `join_busy`, or when that one has
    /// no connection left (a client that came back within [`IDLE_CLOSE`]) — else a new
    /// one. A `server/discover` (`discovers`) begins a client's life: it joins only a
    /// session that has done nothing but discover. So two modern clients of one identity
    /// at once are two sessions (each discovers first), and a client's held listen or
    /// parallel calls on other connections are its session's — the latest one of that
    /// identity from that address, which two such clients at once may confuse.
    pub fn by_client(
        &self,
        ip: IpAddr,
        identity: &str,
        connection: u64,
        join_busy: bool,
        discovers: bool,
    ) -> u64 {
        let key = Key::Client(ip, identity.to_string());
        let candidate = {
            let st = self.state();
            let usable = |id: &u64, idle_only: bool| {
                st.live.get(id).is_some_and(|l| {
                    (!idle_only || join_busy || l.connections.is_empty())
                        && (!discovers || l.probe_only || l.activity == 0)
                })
            };
            st.keys
                .get(&Key::Connection(connection))
                .copied()
                .filter(|id| usable(id, false))
                .map(|id| (id, Key::Connection(connection)))
                .or_else(|| {
                    let id = st.keys.get(&key).copied().filter(|id| usable(id, true))?;
                    Some((id, key.clone()))
                })
        };
        let id = match candidate.and_then(|(id, k)| self.find(&k, connection).filter(|f| *f == id))
        {
            Some(id) => id,
            None => {
                let id = self.open(Transport::Http, connection);
                self.remember(id, key);
                id
            }
        };
        self.remember(id, Key::Connection(connection));
        id
    }

    /// Find `id` later by the client's address and identity.
    pub fn remember_client(&self, id: u64, ip: IpAddr, identity: &str, connection: u64) {
        self.remember(id, Key::Client(ip, identity.to_string()));
        self.remember(id, Key::Connection(connection));
    }

    /// A response stream of `id` begins; [`Sessions::stream_ended`] ends it.
    pub fn stream_began(&self, id: u64) {
        if let Some(live) = self.state().live.get_mut(&id) {
            live.streams += 1;
            live.activity += 1;
        }
    }

    pub fn stream_ended(&self, id: u64) {
        let idle = {
            let mut st = self.state();
            match st.live.get_mut(&id) {
                Some(live) => {
                    live.streams = live.streams.saturating_sub(1);
                    (live.streams == 0 && live.connections.is_empty()).then_some(live.activity)
                }
                None => None,
            }
        };
        if let Some(activity) = idle {
            self.close_when_idle(id, activity);
        }
    }

    /// A client connection closed: sessions left with no connection and no stream end
    /// after [`IDLE_CLOSE`] unless their client comes back.
    pub fn connection_closed(&self, connection: u64) {
        let idle: Vec<(u64, u64)> = {
            let mut st = self.state();
            st.live
                .iter_mut()
                .filter_map(|(id, live)| {
                    let held = live.connections.remove(&connection);
                    (held && live.connections.is_empty() && live.streams == 0)
                        .then_some((*id, live.activity))
                })
                .collect()
        };
        for (id, activity) in idle {
            self.close_when_idle(id, activity);
        }
    }

    fn close_when_idle(&self, id: u64, activity: u64) {
        let sessions = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(IDLE_CLOSE).await;
            let still_idle = sessions.state().live.get(&id).is_some_and(|l| {
                l.activity == activity && l.connections.is_empty() && l.streams == 0
            });
            if still_idle {
                sessions.close(
                    id,
                    ClosedBy::Client,
                    Some(format!("no connection for {} s", IDLE_CLOSE.as_secs())),
                );
            }
        });
    }

    /// The session of the client at `ip` with this `clientInfo` that has only probed
    /// (`server/discover`) so far, to take the `initialize` it falls back to.
    pub fn probing(&self, ip: IpAddr, client: &str, connection: u64) -> Option<u64> {
        let mut st = self.state();
        let id = st
            .live
            .iter()
            .filter(|(_, l)| {
                l.probe_only && l.ip == Some(ip) && l.client.as_deref() == Some(client)
            })
            .map(|(id, _)| *id)
            .max()?;
        let live = st.live.get_mut(&id)?;
        live.probe_only = false;
        live.connections.insert(connection);
        live.activity += 1;
        Some(id)
    }

    /// What `id`'s client sent (its method and `clientInfo`): whether it is still only
    /// probing.
    pub fn sent(&self, id: u64, method: Option<&str>, client: Option<String>, ip: IpAddr) {
        if let Some(live) = self.state().live.get_mut(&id) {
            live.probe_only =
                method == Some("server/discover") && (live.probe_only || live.activity <= 1);
            live.ip.get_or_insert(ip);
            if live.client.is_none() {
                live.client = client;
            }
        }
    }

    /// End `id` (once; later calls do nothing).
    pub fn close(&self, id: u64, by: ClosedBy, reason: Option<String>) {
        {
            let mut st = self.state();
            let Some(live) = st.live.remove(&id) else {
                return;
            };
            for k in live.keys {
                // A key another session has taken since stays that one's.
                if st.keys.get(&k) == Some(&id) {
                    st.keys.remove(&k);
                }
            }
            st.closed += 1;
        }
        self.trace.close(id, by, reason);
        self.closed.notify_waiters();
    }
}
