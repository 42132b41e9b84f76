//! The closed set of protocol faults the reference server can commit, and their names
//! on the command line (`serve --fault NAME`).

/// The faults, a closed set; each names the finding it provokes in its doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// `tools/list` answered with `"jsonrpc": "1.0"` (jsonrpc.wrong-version).
    WrongJsonrpc,
    /// `tools/list` answered with both `result` and `error` (jsonrpc.result-and-error).
    ResultAndError,
    /// `tools/list` answered under another id (jsonrpc.unknown-id).
    WrongId,
    /// Notifications get a response (jsonrpc.response-to-notification). Over Streamable
    /// HTTP a POSTed notification or response is answered 200 with a JSON-RPC body
    /// (also http.post-status-not-202).
    RespondToNotification,
    /// Streamable HTTP: a POSTed notification or response is answered 200 with no body
    /// instead of 202 (http.post-status-not-202).
    NotificationStatus200,
    /// Every other handshake result (initialize, server/discover) lacks `completions`
    /// (capability.changed-between-sessions; over HTTP, SSE and ws, where one server
    /// serves every session — a stdio server lives for one session).
    FlappingCapabilities,
    /// `capabilities: []` in the initialize result (handshake.capabilities-not-object).
    CapabilitiesNotObject,
    /// `serverInfo` without `version` (handshake.server-info-invalid).
    NoServerInfoVersion,
    /// The initialize result names version "2099-12-31" (version.unknown).
    UnknownVersion,
    /// Any requested version is echoed, even one that does not exist
    /// (version.echoed-unsupported).
    EchoVersion,
    /// An unsupported requested version gets -32602 instead of a counter-offer
    /// (version.error-instead-of-offer).
    VersionError,
    /// HTTP: a request carrying `MCP-Protocol-Version` is refused with 400
    /// (version.header-rejected).
    RejectVersionHeader,
    /// Every modern request gets -32022 without `data.supported`
    /// (version.unsupported-without-list).
    ModernNoSupported,
    /// `notifications/tools/list_changed` before the initialize reply
    /// (lifecycle.early-message; stdio, ws, sse).
    EarlyMessage,
    /// The first tool's `inputSchema` is `{"type":"string"}` (tools.input-schema-not-object).
    BadInputSchema,
    /// The first tool is listed twice (tools.duplicate-name).
    DuplicateTools,
    /// `tools/list` returns the same cursor again and again (pagination.loop).
    PaginationLoop,
    /// `tools/list` returns `"nextCursor": ""` (pagination.empty-cursor).
    EmptyCursor,
    /// `add` returns `structuredContent` whose `sum` is a string
    /// (tools.structured-content-mismatch).
    BadStructuredContent,
    /// HTTP: the session id contains spaces (http.invalid-session-id).
    BadSessionId,
    /// A request's stream carries an event that is not JSON before the answer
    /// (sse.invalid-event over HTTP with SSE responses and legacy SSE; jsonrpc.not-json
    /// over stdio and ws).
    SseGarbage,
    /// Every other `tools/list` changes `echo`'s schema, with no list_changed
    /// (capability.list-changed-not-honoured).
    ToolsDrift,
    /// `prompts` is not declared but works (capability.undeclared-but-works: a default
    /// run probes once per target; `--probe-undeclared` in every session).
    UndeclaredPrompts,
    /// `tools` is not declared but its methods work, the most common server mistake
    /// (capability.undeclared-but-works, found by a default run's probe).
    UndeclaredTools,
    /// `resources` is not declared and `resources/list` answers -32603
    /// (capability.undeclared-wrong-error, with `--probe-undeclared`).
    UndeclaredResourcesError,
    /// `prompts` is declared but its methods answer -32601
    /// (capability.declared-but-missing).
    MissingPrompts,
    /// Every session (each `initialize`, on every transport) keeps ~256 KiB of touched
    /// memory and one open file descriptor that are never released, even when the session
    /// is deleted or expires: the soak verdicts' `slope(server.rss)` and
    /// `slope(server.fds)` must see it.
    Leak,
    /// Goes along with a malformed `initialize` (capabilities not an object, no
    /// clientInfo, no protocolVersion) instead of refusing it (client fault verdict
    /// `accepted`).
    AcceptInvalid,
    /// -32603 where -32700, -32600, -32601 or -32602 belong (verdict `wrong_error`).
    WrongErrorCodes,
    /// A message that is not JSON ends the session: stdio exits, ws closes, HTTP answers
    /// 500 and then 503 to everything (verdict `crashed`).
    CrashOnInvalidJson,
    /// A `tools/call` of a tool it does not have is never answered (verdict `hung`).
    HangOnUnknownTool,
    /// Every `tools/call` is answered [`super::SLOW`] late: a slow server, for the
    /// latency thresholds (`abort_on_fail`) that must fire on one.
    Slow,
    /// `serve --auth`: a 401 without `WWW-Authenticate` (auth.401-without-www-authenticate).
    AuthNoChallenge,
    /// `serve --auth`: the protected resource and authorization server metadata answer
    /// 404 (auth.resource-metadata-missing).
    AuthNoMetadata,
    /// `serve --auth`: the protected resource metadata lacks `authorization_servers`
    /// (auth.metadata-malformed).
    AuthBadMetadata,
    /// `serve --auth`: tokens minted for another resource are accepted
    /// (auth.wrong-audience-accepted).
    AuthAnyAudience,
    /// A connection's first request fixes its era, as the spec lets a server of both
    /// eras do: after a modern first request (`server/discover`, `_meta`), `initialize`
    /// is refused with -32022 naming only 2026-07-28, and a modern-only server refuses
    /// every `initialize` so (stdio and ws; an HTTP request has no connection to lock).
    /// No finding: it is allowed, and `--era auto` must cope with it.
    EraLock,
    /// Tasks never leave `working` (tasks.stuck-working; implies `--tasks`).
    TaskStuck,
    /// A completed task reads `working` again after its first read
    /// (tasks.status-out-of-order; implies `--tasks`).
    TaskStatusRegress,
    /// `tasks/result` answers at once while `tasks/get` still says `working`
    /// (tasks.result-before-completion; implies `--tasks`).
    TaskEarlyResult,
    /// A `subscriptions/listen` the server ends (`--listen-lifetime`) is cut with no
    /// final `complete` response (listen.ended-without-notice; Streamable HTTP).
    ListenNoEnd,
    /// Changes are not sent on the listens but on the streams of `tools/call` answers
    /// (listen.notification-off-listen over Streamable HTTP; on stdio and ws, where every
    /// message shares one stream, listen.missing-subscription-id).
    ListenOnRequestStream,
    /// Listen messages lack `_meta` `io.modelcontextprotocol/subscriptionId`
    /// (listen.missing-subscription-id).
    ListenNoId,
    /// Every change also brings a list kind the listen did not ask for
    /// (listen.unrequested-notification).
    ListenUnasked,
    /// A listen gets no `notifications/subscriptions/acknowledged` first
    /// (listen.not-acknowledged-first).
    ListenNoAck,
    /// Every listen misses every other change (the fleet's `listen_changes_missed`).
    ListenLossy,
    /// A modern `tools/call` is answered `resultType: "task"` (the tasks extension) for
    /// a client that did not declare io.modelcontextprotocol/tasks
    /// (extension.used-undeclared).
    TaskUndeclared,
}

impl Fault {
    pub const ALL: [Fault; 47] = [
        Fault::WrongJsonrpc,
        Fault::ResultAndError,
        Fault::WrongId,
        Fault::RespondToNotification,
        Fault::NotificationStatus200,
        Fault::FlappingCapabilities,
        Fault::CapabilitiesNotObject,
        Fault::NoServerInfoVersion,
        Fault::UnknownVersion,
        Fault::EchoVersion,
        Fault::VersionError,
        Fault::RejectVersionHeader,
        Fault::ModernNoSupported,
        Fault::EarlyMessage,
        Fault::BadInputSchema,
        Fault::DuplicateTools,
        Fault::PaginationLoop,
        Fault::EmptyCursor,
        Fault::BadStructuredContent,
        Fault::BadSessionId,
        Fault::SseGarbage,
        Fault::ToolsDrift,
        Fault::UndeclaredPrompts,
        Fault::UndeclaredTools,
        Fault::UndeclaredResourcesError,
        Fault::MissingPrompts,
        Fault::Leak,
        Fault::AcceptInvalid,
        Fault::WrongErrorCodes,
        Fault::CrashOnInvalidJson,
        Fault::HangOnUnknownTool,
        Fault::Slow,
        Fault::AuthNoChallenge,
        Fault::AuthNoMetadata,
        Fault::AuthBadMetadata,
        Fault::AuthAnyAudience,
        Fault::EraLock,
        Fault::TaskStuck,
        Fault::TaskStatusRegress,
        Fault::TaskEarlyResult,
        Fault::ListenNoEnd,
        Fault::ListenOnRequestStream,
        Fault::ListenNoId,
        Fault::ListenUnasked,
        Fault::ListenNoAck,
        Fault::ListenLossy,
        Fault::TaskUndeclared,
    ];

    /// The name on the command line (`--fault wrong-jsonrpc`).
    pub fn name(self) -> &'static str {
        match self {
            Fault::WrongJsonrpc => "wrong-jsonrpc",
            Fault::ResultAndError => "result-and-error",
            Fault::WrongId => "wrong-id",
            Fault::RespondToNotification => "respond-to-notification",
            Fault::NotificationStatus200 => "notification-status-200",
            Fault::FlappingCapabilities => "flapping-capabilities",
            Fault::CapabilitiesNotObject => "capabilities-not-object",
            Fault::NoServerInfoVersion => "no-server-info-version",
            Fault::UnknownVersion => "unknown-version",
            Fault::EchoVersion => "echo-version",
            Fault::VersionError => "version-error",
            Fault::RejectVersionHeader => "reject-version-header",
            Fault::ModernNoSupported => "modern-no-supported",
            Fault::EarlyMessage => "early-message",
            Fault::BadInputSchema => "bad-input-schema",
            Fault::DuplicateTools => "duplicate-tools",
            Fault::PaginationLoop => "pagination-loop",
            Fault::EmptyCursor => "empty-cursor",
            Fault::BadStructuredContent => "bad-structured-content",
            Fault::BadSessionId => "bad-session-id",
            Fault::SseGarbage => "sse-garbage",
            Fault::ToolsDrift => "tools-drift",
            Fault::UndeclaredPrompts => "undeclared-prompts",
            Fault::UndeclaredTools => "undeclared-tools",
            Fault::UndeclaredResourcesError => "undeclared-resources-error",
            Fault::MissingPrompts => "missing-prompts",
            Fault::Leak => "leak",
            Fault::AcceptInvalid => "accept-invalid",
            Fault::WrongErrorCodes => "wrong-error-codes",
            Fault::CrashOnInvalidJson => "crash-on-invalid-json",
            Fault::HangOnUnknownTool => "hang-on-unknown-tool",
            Fault::Slow => "slow",
            Fault::AuthNoChallenge => "auth-no-challenge",
            Fault::AuthNoMetadata => "auth-no-metadata",
            Fault::AuthBadMetadata => "auth-bad-metadata",
            Fault::AuthAnyAudience => "auth-any-audience",
            Fault::EraLock => "era-lock",
            Fault::TaskStuck => "task-stuck",
            Fault::TaskStatusRegress => "task-status-regress",
            Fault::TaskEarlyResult => "task-early-result",
            Fault::ListenNoEnd => "listen-no-end",
            Fault::ListenOnRequestStream => "listen-on-request-stream",
            Fault::ListenNoId => "listen-no-id",
            Fault::ListenUnasked => "listen-unasked",
            Fault::ListenNoAck => "listen-no-ack",
            Fault::ListenLossy => "listen-lossy",
            Fault::TaskUndeclared => "task-undeclared",
        }
    }

    pub fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Every name, for error messages and `--help`.
    pub fn names() -> Vec<&'static str> {
        Fault::ALL.iter().map(|f| f.name()).collect()
    }
}
