//! The events a run counts without timing them (`summary.json`'s `counters`): one closed
//! set with stable names, also listed in `summary/summary.schema.json` (a test keeps the
//! two equal). Interned like phases: the collector adds into an array indexed by the
//! counter, with no string hashing per event.

/// Something worth counting that has no latency. Names are part of the results contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Counter {
    /// Open model: an arrival beyond the in-flight cap, not started.
    Dropped,
    /// `auto` era: the probe's verdict was legacy (the handshake followed).
    EraLegacy,
    /// `auto` era: the probe's verdict was modern.
    EraModern,
    /// A modern server answered `server/discover` with -32601; the session went on.
    DiscoverUnsupported,
    /// A Streamable HTTP server forgot a live session (404); the client re-initialized.
    SessionExpired,
    /// The standalone GET stream was opened.
    GetStreamOpened,
    /// The server offers no standalone stream (405 to the GET).
    GetStreamNotOffered,
    /// The GET for the standalone stream failed otherwise (counted, not a failure).
    GetStreamRefused,
    /// The standalone GET stream dropped and was reopened.
    GetStreamReconnects,
    /// A request's SSE stream dropped and was resumed with `Last-Event-ID`.
    SseResumptions,
    /// TCP (or TLS) connections opened for Streamable HTTP.
    HttpConnections,
    /// A `list_changed` notification a persona that does not honour it let pass.
    ListChangedIgnored,
    /// A list fetched again after its `list_changed` notification.
    ListRefetch,
    /// A list page served from the response cache (modern `ttlMs`).
    CacheHit,
    /// `tools/list` fetched again after a -32020 on a tool call.
    ToolsRelisted,
    /// A modern `input_required` result fulfilled and retried.
    InputRounds,
    /// A tool's `x-mcp-header` annotation that names no valid header.
    InvalidXMcpHeader,
    /// A session that vanished at its end instead of closing (persona `abandon`).
    Abandoned,
    /// A long-lived session a reconnect storm dropped (`[load] events`).
    StormDropped,
    /// Access tokens got from a token endpoint (client-credentials grant).
    TokensMinted,
    /// Access tokens got again because the cached one was about to expire (or was
    /// refused with 401).
    TokensRefreshed,
    /// `notifications/tasks/status` received.
    TaskStatusNotifications,
    /// Tasks the persona cancelled (`[persona.tasks] cancel`).
    TasksCancelled,
    /// Sessions that committed a client fault (`faults = [...]`).
    ClientFaults,
    /// `subscriptions/listen` streams the server acknowledged (or that carried a message first).
    ListenOpened,
    /// Listens the server answered with an error (not reopened; not a session failure).
    ListenRefused,
    /// Listens the server ended cleanly (final `complete` response or `notifications/cancelled`); reopened.
    ListenEnded,
    /// Listens that broke without an end (a bare drop); reopened with backoff.
    ListenDropped,
    /// Listens sent again after one ended or dropped.
    ListenReopened,
    /// Change notifications received on listens.
    ListenNotifications,
    /// Changes a listener was owed and never got (numbered changes of the reference server: a gap, or one that reached other listeners a request timeout before this one closed).
    ListenChangesMissed,
    /// Changes a list-changed storm asked of the server, made (its `notify_list_changed`
    /// tool called by a listening session).
    ChangesTriggered,
}

impl Counter {
    /// Every counter, in the order of the enum (which is also its index).
    pub const ALL: [Counter; 32] = [
        Counter::Dropped,
        Counter::EraLegacy,
        Counter::EraModern,
        Counter::DiscoverUnsupported,
        Counter::SessionExpired,
        Counter::GetStreamOpened,
        Counter::GetStreamNotOffered,
        Counter::GetStreamRefused,
        Counter::GetStreamReconnects,
        Counter::SseResumptions,
        Counter::HttpConnections,
        Counter::ListChangedIgnored,
        Counter::ListRefetch,
        Counter::CacheHit,
        Counter::ToolsRelisted,
        Counter::InputRounds,
        Counter::InvalidXMcpHeader,
        Counter::Abandoned,
        Counter::StormDropped,
        Counter::TokensMinted,
        Counter::TokensRefreshed,
        Counter::TaskStatusNotifications,
        Counter::TasksCancelled,
        Counter::ClientFaults,
        Counter::ListenOpened,
        Counter::ListenRefused,
        Counter::ListenEnded,
        Counter::ListenDropped,
        Counter::ListenReopened,
        Counter::ListenNotifications,
        Counter::ListenChangesMissed,
        Counter::ChangesTriggered,
    ];

    /// The stable name used in `summary.json` and every report.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Dropped => "dropped",
            Counter::EraLegacy => "era_legacy",
            Counter::EraModern => "era_modern",
            Counter::DiscoverUnsupported => "discover_unsupported",
            Counter::SessionExpired => "session_expired",
            Counter::GetStreamOpened => "get_stream_opened",
            Counter::GetStreamNotOffered => "get_stream_not_offered",
            Counter::GetStreamRefused => "get_stream_refused",
            Counter::GetStreamReconnects => "get_stream_reconnects",
            Counter::SseResumptions => "sse_resumptions",
            Counter::HttpConnections => "http_connections",
            Counter::ListChangedIgnored => "list_changed_ignored",
            Counter::ListRefetch => "list_refetch",
            Counter::CacheHit => "cache_hit",
            Counter::ToolsRelisted => "tools_relisted",
            Counter::InputRounds => "input_rounds",
            Counter::InvalidXMcpHeader => "invalid_x_mcp_header",
            Counter::Abandoned => "abandoned",
            Counter::StormDropped => "storm_dropped",
            Counter::TokensMinted => "tokens_minted",
            Counter::TokensRefreshed => "tokens_refreshed",
            Counter::TaskStatusNotifications => "task_status_notifications",
            Counter::TasksCancelled => "tasks_cancelled",
            Counter::ClientFaults => "client_faults",
            Counter::ListenOpened => "listen_opened",
            Counter::ListenRefused => "listen_refused",
            Counter::ListenEnded => "listen_ended",
            Counter::ListenDropped => "listen_dropped",
            Counter::ListenReopened => "listen_reopened",
            Counter::ListenNotifications => "listen_notifications",
            Counter::ListenChangesMissed => "listen_changes_missed",
            Counter::ChangesTriggered => "changes_triggered",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One total per counter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CounterTable([u64; Counter::ALL.len()]);

impl CounterTable {
    pub fn add(&mut self, counter: Counter, n: u64) {
        if let Some(total) = self.0.get_mut(counter.index()) {
            *total += n;
        }
    }

    pub fn get(&self, counter: Counter) -> u64 {
        self.0.get(counter.index()).copied().unwrap_or(0)
    }

    /// The counters that happened at least once, with their totals; the reports omit
    /// the others.
    pub fn seen(&self) -> impl Iterator<Item = (Counter, u64)> + '_ {
        Counter::ALL
            .into_iter()
            .map(|c| (c, self.get(c)))
            .filter(|(_, n)| *n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn all_lists_every_counter_at_its_index_with_a_unique_name() {
        for (i, c) in Counter::ALL.into_iter().enumerate() {
            assert_eq!(c.index(), i, "{c:?}");
        }
        let names: HashSet<&str> = Counter::ALL.into_iter().map(Counter::name).collect();
        assert_eq!(names.len(), Counter::ALL.len());
    }

    #[test]
    fn the_table_adds_and_shows_only_what_happened() {
        let mut t = CounterTable::default();
        t.add(Counter::CacheHit, 2);
        t.add(Counter::CacheHit, 3);
        t.add(Counter::Dropped, 1);
        assert_eq!(t.get(Counter::CacheHit), 5);
        assert_eq!(t.get(Counter::EraModern), 0);
        let seen: Vec<(Counter, u64)> = t.seen().collect();
        assert_eq!(seen, [(Counter::Dropped, 1), (Counter::CacheHit, 5)]);
    }
}
