//! The closed set of client-side faults a buggy persona commits (`faults = [...]`), what
//! a correct server does about each, and the verdicts a fault can earn. Plan, client,
//! collector and reports all name faults through this table.

/// One mistake a buggy client makes. Each session of a persona with `faults` commits at
/// most one, drawn by its share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClientFault {
    /// `initialize` without `"jsonrpc": "2.0"`.
    NoJsonrpc,
    /// The first request is `"method": "init"` instead of `initialize`.
    WrongMethod,
    /// `initialize` with `"capabilities": true`.
    CapabilitiesNotObject,
    /// `initialize` without `clientInfo`.
    NoClientInfo,
    /// `initialize` offering a `protocolVersion` nobody knows.
    UnknownVersion,
    /// `initialize` without `protocolVersion`.
    NoVersion,
    /// A request of a capability the server did not declare (e.g. `completion/complete`
    /// without `completions`).
    UndeclaredCapability,
    /// A request after `initialize` but before `notifications/initialized`.
    BeforeInitialized,
    /// Never sends `notifications/initialized`, and goes on with requests.
    NeverInitialized,
    /// `tools/call` with arguments that break the tool's `inputSchema`.
    InvalidArguments,
    /// `tools/call` of a tool the server does not have.
    UnknownTool,
    /// A request far larger than any real one (several MiB).
    Oversized,
    /// A message that is not JSON.
    InvalidJson,
    /// A second request with the id of one still in flight.
    DuplicateId,
    /// The connection dropped while a request is in flight.
    Vanish,
    /// The server's stream (SSE or WebSocket) read very slowly.
    SlowReader,
    /// The server's sampling / elicitation / roots requests never answered.
    IgnoreServerRequests,
    /// Modern era: a request without `_meta`.
    NoMeta,
    /// Modern era, HTTP: an `MCP-Protocol-Version` header that disagrees with `_meta`.
    HeaderMismatch,
}

/// When a fault applies: which era's handshake it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultEra {
    Any,
    /// Only sessions that use the `initialize` handshake.
    Legacy,
    /// Only sessions of the stateless 2026-07-28 era.
    Modern,
}

impl ClientFault {
    pub const ALL: [ClientFault; 19] = [
        ClientFault::NoJsonrpc,
        ClientFault::WrongMethod,
        ClientFault::CapabilitiesNotObject,
        ClientFault::NoClientInfo,
        ClientFault::UnknownVersion,
        ClientFault::NoVersion,
        ClientFault::UndeclaredCapability,
        ClientFault::BeforeInitialized,
        ClientFault::NeverInitialized,
        ClientFault::InvalidArguments,
        ClientFault::UnknownTool,
        ClientFault::Oversized,
        ClientFault::InvalidJson,
        ClientFault::DuplicateId,
        ClientFault::Vanish,
        ClientFault::SlowReader,
        ClientFault::IgnoreServerRequests,
        ClientFault::NoMeta,
        ClientFault::HeaderMismatch,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable name in profiles (`faults = [{ fault = "invalid-json" }]`), summaries
    /// and `inspect --client-fault`.
    pub fn name(self) -> &'static str {
        match self {
            ClientFault::NoJsonrpc => "no-jsonrpc",
            ClientFault::WrongMethod => "wrong-method",
            ClientFault::CapabilitiesNotObject => "capabilities-not-object",
            ClientFault::NoClientInfo => "no-client-info",
            ClientFault::UnknownVersion => "unknown-version",
            ClientFault::NoVersion => "no-version",
            ClientFault::UndeclaredCapability => "undeclared-capability",
            ClientFault::BeforeInitialized => "before-initialized",
            ClientFault::NeverInitialized => "never-initialized",
            ClientFault::InvalidArguments => "invalid-arguments",
            ClientFault::UnknownTool => "unknown-tool",
            ClientFault::Oversized => "oversized",
            ClientFault::InvalidJson => "invalid-json",
            ClientFault::DuplicateId => "duplicate-id",
            ClientFault::Vanish => "vanish",
            ClientFault::SlowReader => "slow-reader",
            ClientFault::IgnoreServerRequests => "ignore-server-requests",
            ClientFault::NoMeta => "no-meta",
            ClientFault::HeaderMismatch => "header-mismatch",
        }
    }

    pub fn from_name(name: &str) -> Option<ClientFault> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The handshake era the fault needs.
    pub fn era(self) -> FaultEra {
        match self {
            ClientFault::NoJsonrpc
            | ClientFault::WrongMethod
            | ClientFault::CapabilitiesNotObject
            | ClientFault::NoClientInfo
            | ClientFault::UnknownVersion
            | ClientFault::NoVersion
            | ClientFault::BeforeInitialized
            | ClientFault::NeverInitialized => FaultEra::Legacy,
            ClientFault::NoMeta | ClientFault::HeaderMismatch => FaultEra::Modern,
            _ => FaultEra::Any,
        }
    }

    /// What the client does wrong, in a few words (reports, `validate`, `inspect`).
    pub fn describe(self) -> &'static str {
        match self {
            ClientFault::NoJsonrpc => "initialize without \"jsonrpc\": \"2.0\"",
            ClientFault::WrongMethod => "\"method\": \"init\" instead of initialize",
            ClientFault::CapabilitiesNotObject => "initialize with \"capabilities\": true",
            ClientFault::NoClientInfo => "initialize without clientInfo",
            ClientFault::UnknownVersion => "initialize offering an unknown protocolVersion",
            ClientFault::NoVersion => "initialize without protocolVersion",
            ClientFault::UndeclaredCapability => {
                "a request of a capability the server did not declare"
            }
            ClientFault::BeforeInitialized => "a request before notifications/initialized",
            ClientFault::NeverInitialized => "never sends notifications/initialized",
            ClientFault::InvalidArguments => "tools/call arguments that break the inputSchema",
            ClientFault::UnknownTool => "tools/call of a tool the server does not have",
            ClientFault::Oversized => "a request of several MiB",
            ClientFault::InvalidJson => "a message that is not JSON",
            ClientFault::DuplicateId => "a request id reused while in flight",
            ClientFault::Vanish => "the connection dropped before the answer",
            ClientFault::SlowReader => "the server's stream read very slowly",
            ClientFault::IgnoreServerRequests => {
                "sampling, elicitation and roots requests never answered"
            }
            ClientFault::NoMeta => "a modern request without _meta",
            ClientFault::HeaderMismatch => "MCP-Protocol-Version header disagreeing with _meta",
        }
    }

    /// What a correct server does, in a few words (the "expected" column).
    pub fn expected(self) -> &'static str {
        match self {
            ClientFault::NoJsonrpc => "-32600 Invalid Request (or HTTP 400)",
            ClientFault::WrongMethod => "-32601 Method not found (or -32600)",
            ClientFault::CapabilitiesNotObject | ClientFault::NoClientInfo => {
                "-32602 Invalid params (or -32600)"
            }
            ClientFault::UnknownVersion => "a result offering a version it supports",
            ClientFault::NoVersion => "-32602 Invalid params (or -32600)",
            ClientFault::UndeclaredCapability => "-32601 Method not found",
            ClientFault::BeforeInitialized | ClientFault::NeverInitialized => {
                "an answer or an error, and no harm to the session"
            }
            ClientFault::InvalidArguments => "-32602 or a result with isError: true",
            ClientFault::UnknownTool => "-32602 Invalid params (or isError: true)",
            ClientFault::Oversized => "an error (JSON-RPC, HTTP 413/400) or a closed connection",
            ClientFault::InvalidJson => "-32700 Parse error (or HTTP 400)",
            ClientFault::DuplicateId => "an answer to each request or an error, never a hang",
            ClientFault::Vanish | ClientFault::SlowReader => "other sessions served as before",
            ClientFault::IgnoreServerRequests => "the tool call ends (result or error)",
            ClientFault::NoMeta => "-32602 Invalid params (or -32600 from a server of both eras)",
            ClientFault::HeaderMismatch => "-32020 HeaderMismatch (HTTP 400)",
        }
    }
}

/// How a server took a client's fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verdict {
    /// What a correct server does.
    Handled,
    /// It refused, but not as the spec says (another error code or status).
    WrongError,
    /// The connection or the server process went away (or the server stopped serving).
    Crashed,
    /// No answer within the request timeout.
    Hung,
    /// It went along with what it should have refused.
    Accepted,
}

impl Verdict {
    pub const ALL: [Verdict; 5] = [
        Verdict::Handled,
        Verdict::WrongError,
        Verdict::Crashed,
        Verdict::Hung,
        Verdict::Accepted,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable name in summaries.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Handled => "handled",
            Verdict::WrongError => "wrong_error",
            Verdict::Crashed => "crashed",
            Verdict::Hung => "hung",
            Verdict::Accepted => "accepted",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_indices_are_dense() {
        for (i, f) in ClientFault::ALL.into_iter().enumerate() {
            assert_eq!(f.index(), i);
            assert_eq!(ClientFault::from_name(f.name()), Some(f));
        }
        for (i, v) in Verdict::ALL.into_iter().enumerate() {
            assert_eq!(v.index(), i);
        }
    }
}
