//! Fuzz target: JSON-RPC classification of one message's bytes (a body, an SSE event's
//! data, a stdio line). No panic; a message that parses re-encodes and parses the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fleet::protocol::jsonrpc::{encode_notification, encode_response};
use mcp_fleet::protocol::Incoming;

fuzz_target!(|data: &[u8]| {
    let _ = mcp_fleet::transport::classify(data, mcp_fleet::transport::Carrier::StdioLine);
    let again = match Incoming::parse(data) {
        Ok(Incoming::Notification { method, params }) => {
            encode_notification(&method, params.as_ref())
        }
        Ok(Incoming::Response {
            id: Some(id),
            outcome,
        }) => encode_response(&id, outcome.as_ref()),
        _ => return,
    };
    assert!(Incoming::parse(&again).is_ok());
});
