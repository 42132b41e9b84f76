//! MCP method and notification names, and which server capability a client method needs.
//! Kept as constants so the hot path compares `&'static str`s and typos fail to compile;
//! both the client side and the reference server name methods only through these.

// Client → server requests.
pub const INITIALIZE: &str = "initialize";
/// The 2026-07-28 era's stateless replacement of the handshake.
pub const SERVER_DISCOVER: &str = "server/discover";
pub const PING: &str = "ping";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_CALL: &str = "tools/call";
pub const RESOURCES_LIST: &str = "resources/list";
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
pub const RESOURCES_READ: &str = "resources/read";
pub const PROMPTS_LIST: &str = "prompts/list";
pub const PROMPTS_GET: &str = "prompts/get";
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// 2026-07-28: a long-lived stream of change notifications (replaces the GET stream and
/// `resources/subscribe`).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
// Tasks (2025-11-25 only).
pub const TASKS_GET: &str = "tasks/get";
pub const TASKS_RESULT: &str = "tasks/result";
pub const TASKS_CANCEL: &str = "tasks/cancel";
pub const TASKS_LIST: &str = "tasks/list";

// Server → client requests (legacy era; the modern era asks for the same inside results).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
pub const ELICITATION_CREATE: &str = "elicitation/create";
pub const ROOTS_LIST: &str = "roots/list";

// Notifications, either way.
pub const INITIALIZED: &str = "notifications/initialized";
pub const CANCELLED: &str = "notifications/cancelled";
pub const PROGRESS: &str = "notifications/progress";
pub const LOG_MESSAGE: &str = "notifications/message";
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
pub const TASKS_STATUS: &str = "notifications/tasks/status";
pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// 2026-07-28: the first message of a listen, naming the filter the server honours.
pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Whether `method` is a client → server request of some MCP version (tasks included).
pub fn is_client_request(method: &str) -> bool {
    matches!(
        method,
        INITIALIZE
            | SERVER_DISCOVER
            | PING
            | TOOLS_LIST
            | TOOLS_CALL
            | RESOURCES_LIST
            | RESOURCES_TEMPLATES_LIST
            | RESOURCES_READ
            | PROMPTS_LIST
            | PROMPTS_GET
            | LOGGING_SET_LEVEL
            | COMPLETION_COMPLETE
            | SUBSCRIPTIONS_LISTEN
            | "resources/subscribe"
            | "resources/unsubscribe"
    ) || method.starts_with("tasks/")
}

/// Server capability (`ServerCapabilities` key) a client method requires, if any.
pub fn required_server_capability(method: &str) -> Option<&'static str> {
    match method {
        TOOLS_LIST | TOOLS_CALL => Some("tools"),
        RESOURCES_LIST | RESOURCES_TEMPLATES_LIST | RESOURCES_READ => Some("resources"),
        PROMPTS_LIST | PROMPTS_GET => Some("prompts"),
        _ => None,
    }
}

/// For a paginated list method, the result key that holds the items.
pub fn list_items_key(method: &str) -> Option<&'static str> {
    match method {
        TOOLS_LIST => Some("tools"),
        RESOURCES_LIST => Some("resources"),
        RESOURCES_TEMPLATES_LIST => Some("resourceTemplates"),
        PROMPTS_LIST => Some("prompts"),
        _ => None,
    }
}
