//! Fuzz target: an HTTP/1.1 response to our POST (status line, headers, body), read by
//! our own HTTP/1.1 connection (`src/transport/http/h1.rs`) under the limits a session
//! uses. No panic; a body is read no further than the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LIMIT: usize = 16 * 1024;

fuzz_target!(|data: &[u8]| {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, mut server) = tokio::io::duplex(64 * 1024);
        let exchange = mcp_fleet::transport::http::exchange_over(client, b"{}", LIMIT);
        let answer = async {
            let mut sink = [0u8; 1024];
            let _ = server.read(&mut sink).await;
            let _ = server.write_all(data).await;
            drop(server);
        };
        let (result, ()) = tokio::join!(exchange, answer);
        if let Ok((_, read)) = result {
            assert!(read <= 2 * LIMIT, "read {read} bytes, far past the limit");
        }
    });
});
