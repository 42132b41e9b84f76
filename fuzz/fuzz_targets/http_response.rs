//! Fuzz target: an HTTP/1.1 response to our POST (status line, headers, body), read by
//! hyper on the connection settings both HTTP transports use. No panic; a body is read
//! no further than the limit.
#![no_main]

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const LIMIT: usize = 16 * 1024;

fuzz_target!(|data: &[u8]| {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, mut server) = tokio::io::duplex(64 * 1024);
        let Ok(mut sender) = mcp_fleet::transport::http::http1_handshake(client, LIMIT).await
        else {
            return;
        };
        let request = http::Request::post("/mcp")
            .header("host", "fuzz")
            .body(Full::new(Bytes::from_static(b"{}")))
            .expect("request");
        let response = sender.send_request(request);
        let answer = async {
            let mut sink = [0u8; 1024];
            let _ = server.read(&mut sink).await;
            let _ = server.write_all(data).await;
            drop(server);
        };
        let (response, ()) = tokio::join!(response, answer);
        let Ok(response) = response else {
            return;
        };
        let mut body = response.into_body();
        let mut read = 0usize;
        while let Some(Ok(frame)) = body.frame().await {
            read += frame.data_ref().map_or(0, Bytes::len);
            if read > LIMIT {
                break;
            }
        }
    });
});
