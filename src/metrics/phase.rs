//! The closed set of phases. An enum indexes arrays directly: no string hashing on the
//! hot path, and every report uses the same stable names.

/// A named, timed unit of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    Connect,
    /// Authenticated personas: getting an access token (the client-credentials grant,
    /// or a refresh before it expires).
    Token,
    /// Authenticated personas: the discovery a session's first 401 starts
    /// (`WWW-Authenticate` → protected resource metadata → authorization server metadata).
    Auth,
    /// `auto` personas: the `server/discover` probe that decides the era.
    Probe,
    /// Modern era: `server/discover` (the handshake of 2026-07-28).
    Discover,
    Initialize,
    Initialized,
    /// A new `initialize` + `initialized` after the server forgot the session (404).
    Reinitialize,
    ToolsList,
    ResourcesList,
    ResourcesTemplatesList,
    PromptsList,
    ToolsCall,
    /// A task-augmented `tools/call`: from the task's creation to its terminal status.
    Task,
    /// One `tasks/get` poll of a task's status.
    TasksGet,
    /// `tasks/result`: the underlying result of a task.
    TasksResult,
    /// `tasks/cancel` of a task the persona gives up on.
    TasksCancel,
    ResourcesRead,
    PromptsGet,
    Ping,
    /// A `request` step: any JSON-RPC method the profile names (`completion/complete`,
    /// `logging/setLevel`, a server's own). This row adds every such step up, so the
    /// breakdowns (persona, era, transport, intervals) need no open set of phases; each
    /// step's own figures are kept under its phase name beside it (`Stats::requests`).
    Request,
    /// `subscriptions/listen` (2026-07-28): from sending the listen to its
    /// acknowledgement (the stream itself stays open and is not timed).
    Listen,
    /// A change's way from the server to one listener: receipt − the change's time as
    /// the server stamped it (`_meta` `dev.mcp-fleet/changedAt`, `mcp-fleet serve`); one
    /// sample per listener per change.
    FanOut,
    /// Time the fleet spent answering a server request (sampling, elicitation, roots,
    /// ping), so client-side time is told apart from server latency.
    Answer,
    Close,
    /// The whole session, connect to close.
    Session,
    /// Open model: how late a session started against its schedule (actual − intended).
    Lag,
}

impl Phase {
    pub const ALL: [Phase; 27] = [
        Phase::Connect,
        Phase::Token,
        Phase::Auth,
        Phase::Probe,
        Phase::Discover,
        Phase::Initialize,
        Phase::Initialized,
        Phase::Reinitialize,
        Phase::ToolsList,
        Phase::ResourcesList,
        Phase::ResourcesTemplatesList,
        Phase::PromptsList,
        Phase::ToolsCall,
        Phase::Task,
        Phase::TasksGet,
        Phase::TasksResult,
        Phase::TasksCancel,
        Phase::ResourcesRead,
        Phase::PromptsGet,
        Phase::Ping,
        Phase::Request,
        Phase::Listen,
        Phase::FanOut,
        Phase::Answer,
        Phase::Close,
        Phase::Session,
        Phase::Lag,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable name used in reports, thresholds and `summary.json`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Connect => "connect",
            Phase::Token => "token",
            Phase::Auth => "auth",
            Phase::Probe => "probe",
            Phase::Discover => "discover",
            Phase::Initialize => "initialize",
            Phase::Initialized => "initialized",
            Phase::Reinitialize => "reinitialize",
            Phase::ToolsList => "tools/list",
            Phase::ResourcesList => "resources/list",
            Phase::ResourcesTemplatesList => "resources/templates/list",
            Phase::PromptsList => "prompts/list",
            Phase::ToolsCall => "tools/call",
            Phase::Task => "task",
            Phase::TasksGet => "tasks/get",
            Phase::TasksResult => "tasks/result",
            Phase::TasksCancel => "tasks/cancel",
            Phase::ResourcesRead => "resources/read",
            Phase::PromptsGet => "prompts/get",
            Phase::Ping => "ping",
            Phase::Request => "request",
            Phase::Listen => "subscriptions/listen",
            Phase::FanOut => "fanout",
            Phase::Answer => "answer",
            Phase::Close => "close",
            Phase::Session => "session",
            Phase::Lag => "lag",
        }
    }

    pub fn from_name(name: &str) -> Option<Phase> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_indices_are_dense() {
        for (i, p) in Phase::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(Phase::from_name(p.name()), Some(p));
        }
        assert_eq!(Phase::from_name("tools/list"), Some(Phase::ToolsList));
        assert_eq!(Phase::from_name("nope"), None);
    }
}
