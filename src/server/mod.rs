//! The built-in reference MCP server (the default target).
