//! The wire vocabulary: JSON-RPC 2.0 messages and error codes, MCP method names, `_meta`
//! keys, HTTP header names and the protocol-version table. Everything above the
//! transports speaks these words, client and reference server alike; nothing here does I/O.

pub mod headers;
pub mod jsonrpc;
pub mod meta;
pub mod methods;
pub mod task;
pub mod transport_kind;
pub mod version;

pub use jsonrpc::{Incoming, RawResult, RequestId, RpcError};
pub use transport_kind::TransportKind;
pub use version::{Era, ProtocolVersion, VersionId};
