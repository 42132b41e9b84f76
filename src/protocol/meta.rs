//! `_meta` keys: the member every request and result may carry, and the keys the
//! 2026-07-28 era puts in it (a stateless request names its version, capabilities and
//! client in `params._meta`; results name the server there).

/// The member that holds the metadata, in `params` and in results.
pub const META: &str = "_meta";
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// On every message of a `subscriptions/listen` stream: the listen request's id.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The reference server's stamp on a change notification: when the change happened, in
/// microseconds since the Unix epoch (the fleet's `fanout` phase is receipt − this).
pub const META_CHANGED_AT: &str = "dev.mcp-fleet/changedAt";
/// The reference server's change counter: on a change notification its number, on a
/// listen's acknowledgement the number of the last change before it (so a listener
/// knows which changes it is owed and counts the ones that never came).
pub const META_CHANGE: &str = "dev.mcp-fleet/change";
/// Beside [`META_CHANGE`]: which server process numbered the change (a random number
/// per process), since every stdio session, and every process behind one port, counts
/// its own changes.
pub const META_CHANGE_SERVER: &str = "dev.mcp-fleet/server";
/// The token a request offers so that the server can send `notifications/progress`.
pub const PROGRESS_TOKEN: &str = "progressToken";

/// Now, in microseconds since the Unix epoch: the clock of [`META_CHANGED_AT`] stamps
/// (server and fleet on one machine read the same one).
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}
