//! The four ways to reach a server, as a word: profiles, personas, metrics and reports
//! name a transport without needing the code that speaks it (that is `transport`).

/// The four ways to reach a server. A closed set: reports break results down by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransportKind {
    Stdio,
    StreamableHttp,
    /// Legacy HTTP+SSE (2024-11-05).
    Sse,
    WebSocket,
}

impl TransportKind {
    pub const ALL: [TransportKind; 4] = [
        TransportKind::Stdio,
        TransportKind::StreamableHttp,
        TransportKind::Sse,
        TransportKind::WebSocket,
    ];

    /// The stable name used in profiles (`transport = "…"`), on the command line and in
    /// reports.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::StreamableHttp => "http",
            TransportKind::Sse => "sse",
            TransportKind::WebSocket => "ws",
        }
    }

    pub fn from_name(name: &str) -> Option<TransportKind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}
