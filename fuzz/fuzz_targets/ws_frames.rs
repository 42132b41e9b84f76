//! Fuzz target: WebSocket frames from a server, read with the socket settings every
//! session uses. No panic, and no message handed out over the limit.
#![no_main]

use futures::StreamExt;
use libfuzzer_sys::fuzz_target;
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::tungstenite::protocol::Role;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

const LIMIT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, mut server) = tokio::io::duplex(data.len() + 64);
        let _ = server.write_all(data).await;
        drop(server);
        let config = mcp_fleet::transport::ws::socket_config(LIMIT);
        let mut ws = WebSocketStream::from_raw_socket(client, Role::Client, Some(config)).await;
        while let Some(Ok(message)) = ws.next().await {
            if let Message::Text(text) = &message {
                assert!(text.len() <= LIMIT);
                let _ = mcp_fleet::transport::classify(text.as_bytes(), mcp_fleet::transport::Carrier::WsText);
            }
        }
    });
});
