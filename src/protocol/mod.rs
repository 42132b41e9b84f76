//! The wire vocabulary: JSON-RPC 2.0 messages, MCP method names and the protocol-version
//! table. Everything above the transports speaks these types; nothing here does I/O.

pub mod jsonrpc;
pub mod methods;
pub mod transport_kind;
pub mod version;

pub use jsonrpc::{Incoming, RequestId, RpcError};
pub use transport_kind::TransportKind;
pub use version::{Era, ProtocolVersion, VersionId};
