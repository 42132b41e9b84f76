//! DNS-rebinding defence shared by every HTTP endpoint of the reference server (`/mcp`,
//! `/ws`, `/sse`): a browser page from another host must not reach a local server.

/// Whether `origin` (an `Origin` header value) names this machine: `localhost`,
/// `127.0.0.1` or `[::1]`, any scheme and port. Exact names, not every loopback address:
/// the rule `/mcp` and `/ws` always applied (the `/sse` copy accepted all of 127/8).
pub(super) fn is_local_origin(origin: &str) -> bool {
    let Some((_, rest)) = origin.split_once("://") else {
        return false;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = if authority.starts_with('[') {
        authority.split(']').next().map(|h| format!("{h}]"))
    } else {
        authority.split(':').next().map(str::to_owned)
    };
    host.is_some_and(|h| {
        let h = h.to_ascii_lowercase();
        h == "localhost" || h == "127.0.0.1" || h == "[::1]"
    })
}
