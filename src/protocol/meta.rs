//! `_meta` keys: the member every request and result may carry, and the keys the
//! 2026-07-28 era puts in it (a stateless request names its version, capabilities and
//! client in `params._meta`; results name the server there).

/// The member that holds the metadata, in `params` and in results.
pub const META: &str = "_meta";
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The token a request offers so that the server can send `notifications/progress`.
pub const PROGRESS_TOKEN: &str = "progressToken";
