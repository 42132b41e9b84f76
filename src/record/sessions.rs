//! Which recorded session an HTTP exchange belongs to. HTTP has no session of its own,
//! so the proxy follows what the protocol uses: the `Mcp-Session-Id` the server hands
//! out (Streamable HTTP, legacy era), the endpoint URI of a legacy HTTP+SSE stream, and
//! for the stateless modern era (and servers that hand out no session id) the client
//! itself: its address and identity. A session ends at a DELETE, at its SSE stream's
//! end, or when the last of its client's connections closes.

use crate::trace::{ClosedBy, TraceWriter, Transport};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// A live session's hold on the proxy.
#[derive(Debug, Default)]
struct Live {
    /// Client connections that carried its exchanges and are still open.
    connections: HashSet<u64>,
    /// Response streams of it still running (the GET stream, an SSE stream, a POST's).
    streams: u32,
    /// Keys under which it is found, removed at its close.
    keys: Vec<Key>,
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
        st.live.get_mut(&id)?.connections.insert(connection);
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
    /// no connection left (a client that reconnected) — else a new one. So two clients
    /// of one identity at once are two sessions, and a modern client that calls in
    /// parallel over several connections shows as several.
    pub fn by_client(&self, ip: IpAddr, identity: &str, connection: u64, join_busy: bool) -> u64 {
        if let Some(id) = self.find(&Key::Connection(connection), connection) {
            return id;
        }
        let key = Key::Client(ip, identity.to_string());
        let joinable = {
            let st = self.state();
            st.keys.get(&key).copied().filter(|id| {
                st.live
                    .get(id)
                    .is_some_and(|l| join_busy || l.connections.is_empty())
            })
        };
        let id = match joinable.and_then(|id| self.find(&key, connection).filter(|f| *f == id)) {
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
        }
    }

    pub fn stream_ended(&self, id: u64) {
        let idle = {
            let mut st = self.state();
            match st.live.get_mut(&id) {
                Some(live) => {
                    live.streams = live.streams.saturating_sub(1);
                    live.streams == 0 && live.connections.is_empty()
                }
                None => false,
            }
        };
        if idle {
            self.close(id, ClosedBy::Client, Some("its connections closed".into()));
        }
    }

    /// A client connection closed: sessions left with no connection and no stream end.
    pub fn connection_closed(&self, connection: u64) {
        let idle: Vec<u64> = {
            let mut st = self.state();
            st.live
                .iter_mut()
                .filter_map(|(id, live)| {
                    let held = live.connections.remove(&connection);
                    (held && live.connections.is_empty() && live.streams == 0).then_some(*id)
                })
                .collect()
        };
        for id in idle {
            self.close(id, ClosedBy::Client, Some("its connections closed".into()));
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
