//! MCP method names, and which server capability a client method needs. Kept as
//! constants so the hot path compares `&'static str`s and typos fail to compile.

pub const INITIALIZE: &str = "initialize";
pub const INITIALIZED: &str = "notifications/initialized";
pub const PING: &str = "ping";
pub const TOOLS_LIST: &str = "tools/list";
pub const TOOLS_CALL: &str = "tools/call";
pub const RESOURCES_LIST: &str = "resources/list";
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
pub const RESOURCES_READ: &str = "resources/read";
pub const PROMPTS_LIST: &str = "prompts/list";
pub const PROMPTS_GET: &str = "prompts/get";
pub const CANCELLED: &str = "notifications/cancelled";
pub const PROGRESS: &str = "notifications/progress";
pub const LOG_MESSAGE: &str = "notifications/message";

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
