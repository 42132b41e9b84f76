//! mcp-fleet: a fleet of mock MCP clients that load-tests MCP servers.
pub mod metrics;
pub mod protocol;
pub mod server;
