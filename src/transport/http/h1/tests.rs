use super::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// A server on loopback that reads one request head, then writes `pieces` one by one
/// (flushed apart, so the client sees them as separate reads) and keeps the socket open
/// until the client is done. Returns the request bytes it saw.
async fn serve(
    pieces: Vec<&'static [u8]>,
    close_after: bool,
) -> (Conn, tokio::task::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback test step");
    let addr = listener.local_addr().expect("loopback test step");
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.expect("loopback test step");
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tokio::io::AsyncReadExt::read(&mut s, &mut buf)
                .await
                .expect("loopback test step");
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        for p in pieces {
            s.write_all(p).await.expect("loopback test step");
            s.flush().await.expect("loopback test step");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        if !close_after {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        seen
    });
    let tcp = TcpStream::connect(addr).await.expect("loopback test step");
    (Conn::plain(tcp), server)
}

fn fields(h: &HeaderMap) -> Vec<(&http::HeaderName, &HeaderValue)> {
    h.iter().collect()
}

fn get() -> Vec<u8> {
    let mut h = HeaderMap::new();
    h.insert(http::header::HOST, HeaderValue::from_static("x"));
    encode_request(&http::Method::GET, "/mcp?a=1", &fields(&h), b"")
}

async fn read_all(body: &mut Body) -> Result<Vec<u8>, TransportError> {
    let mut out = Vec::new();
    while let Some(piece) = body.frame().await {
        out.extend_from_slice(&piece?);
    }
    Ok(out)
}

#[tokio::test]
async fn a_content_length_body_split_over_reads_is_read_whole_and_the_connection_kept() {
    let (conn, server) = serve(
        vec![
            b"HTTP/1.1 200 OK\r\nContent-Le",
            b"ngth: 11\r\n\r\nhello",
            b" world",
        ],
        false,
    )
    .await;
    let (head, mut body) = conn
        .exchange(&get(), 8192)
        .await
        .expect("loopback test step");
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(body.declared_len(), Some(11));
    assert_eq!(
        read_all(&mut body).await.expect("loopback test step"),
        b"hello world"
    );
    let mut conn = body.take_reusable().expect("keep-alive connection");
    assert!(
        conn.is_reusable(),
        "nothing arrived, the server did not close"
    );
    let seen = server.await.expect("loopback test step");
    assert!(
        seen.starts_with(b"GET /mcp?a=1 HTTP/1.1\r\nhost: x\r\n\r\n"),
        "{seen:?}"
    );
}

#[tokio::test]
async fn a_chunked_body_with_extensions_and_trailers_is_decoded() {
    let (conn, _server) = serve(
        vec![
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhel",
            b"lo\r\n",
            b"6\r\n world\r",
            b"\n0\r\nX-Trailer: t\r\n\r\n",
        ],
        false,
    )
    .await;
    let (_, mut body) = conn
        .exchange(&get(), 8192)
        .await
        .expect("loopback test step");
    assert_eq!(body.declared_len(), None);
    assert_eq!(
        read_all(&mut body).await.expect("loopback test step"),
        b"hello world"
    );
    assert!(body.take_reusable().is_some());
}

#[tokio::test]
async fn interim_answers_are_skipped_and_a_close_delimited_body_ends_at_the_close() {
    let (conn, _server) = serve(
        vec![
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nuntil",
            b" close",
        ],
        true,
    )
    .await;
    let (head, mut body) = conn
        .exchange(&get(), 8192)
        .await
        .expect("loopback test step");
    assert_eq!(head.status, StatusCode::OK);
    assert_eq!(
        read_all(&mut body).await.expect("loopback test step"),
        b"until close"
    );
    assert!(
        body.take_reusable().is_none(),
        "a close-delimited body uses up its connection"
    );
}

#[tokio::test]
async fn connection_close_and_http_1_0_are_not_reused() {
    for answer in [
        &b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"[..],
        &b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"[..],
    ] {
        let (conn, _server) = serve(vec![answer], false).await;
        let (_, mut body) = conn
            .exchange(&get(), 8192)
            .await
            .expect("loopback test step");
        assert!(read_all(&mut body)
            .await
            .expect("loopback test step")
            .is_empty());
        assert!(
            body.take_reusable().is_none(),
            "{:?}",
            String::from_utf8_lossy(answer)
        );
    }
}

#[tokio::test]
async fn a_server_that_closes_an_idle_connection_makes_it_unusable() {
    let (conn, server) = serve(vec![b"HTTP/1.1 204 No Content\r\n\r\n"], true).await;
    let (_, mut body) = conn
        .exchange(&get(), 8192)
        .await
        .expect("loopback test step");
    assert!(read_all(&mut body)
        .await
        .expect("loopback test step")
        .is_empty());
    let mut conn = body.take_reusable().expect("loopback test step");
    server.await.expect("loopback test step");
    // The close reaches the client's reactor a moment after the server's task ends.
    let mut closed = false;
    for _ in 0..100 {
        if !conn.is_reusable() {
            closed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(closed, "a closed connection was offered for reuse");
}

#[tokio::test]
async fn broken_answers_are_counted_failures_of_their_kind() {
    let cases: [(&'static [u8], FailureKind); 5] = [
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
            FailureKind::TransportClosed,
        ),
        (b"garbage, not http\r\n\r\n", FailureKind::TransportClosed),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
            FailureKind::TransportClosed,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            FailureKind::TransportClosed,
        ),
        (b"", FailureKind::TransportClosed),
    ];
    for (answer, kind) in cases {
        let (conn, _server) = serve(vec![answer], true).await;
        let got = match conn.exchange(&get(), 8192).await {
            Err(e) => e,
            Ok((_, mut body)) => read_all(&mut body).await.expect_err("a failure"),
        };
        assert_eq!(
            got.kind,
            kind,
            "{:?}: {}",
            String::from_utf8_lossy(answer),
            got.detail
        );
    }
}

#[tokio::test]
async fn a_head_over_the_limit_is_message_too_large() {
    let big: &'static [u8] = Box::leak(
        format!("HTTP/1.1 200 OK\r\nX-Big: {}\r\n\r\n", "a".repeat(10_000))
            .into_bytes()
            .into_boxed_slice(),
    );
    let (conn, _server) = serve(vec![big], false).await;
    let e = conn.exchange(&get(), 8192).await.err().expect("refused");
    assert_eq!(e.kind, FailureKind::MessageTooLarge, "{}", e.detail);
}

#[test]
fn a_post_carries_its_length_and_its_body_after_the_head() {
    let mut h = HeaderMap::new();
    h.insert(http::header::HOST, HeaderValue::from_static("h:1"));
    h.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let bytes = encode_request(&http::Method::POST, "/mcp", &fields(&h), b"{}");
    assert_eq!(
        bytes,
        b"POST /mcp HTTP/1.1\r\nhost: h:1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
    );
    let empty = encode_request(&http::Method::DELETE, "/mcp", &fields(&h), b"");
    assert!(!String::from_utf8_lossy(&empty).contains("content-length"));
}

#[test]
fn framing_follows_rfc_9112() {
    // Through `parse_head`, from the bytes: field names in any case, fields repeated.
    let framing = |status: StatusCode, pairs: &[(&str, &str)]| {
        let mut text = format!("HTTP/1.1 {}\r\n", status.as_u16());
        for (k, v) in pairs {
            text.push_str(&format!("{k}: {v}\r\n"));
        }
        text.push_str("\r\n");
        parse_head(text.as_bytes(), 8192)
            .map(|head| head.expect("a whole head").0.framing)
            .map_err(|e| e.detail)
    };
    let ok = StatusCode::OK;
    assert_eq!(
        framing(StatusCode::NO_CONTENT, &[("content-length", "5")]),
        Ok(Framing::Empty)
    );
    assert_eq!(framing(StatusCode::NOT_MODIFIED, &[]), Ok(Framing::Empty));
    assert_eq!(
        framing(
            ok,
            &[
                ("Transfer-Encoding", "gzip, Chunked"),
                ("content-length", "5")
            ]
        ),
        Ok(Framing::Chunked)
    );
    assert_eq!(
        framing(
            ok,
            &[
                ("transfer-encoding", "gzip"),
                ("TRANSFER-ENCODING", "chunked")
            ]
        ),
        Ok(Framing::Chunked)
    );
    assert_eq!(
        framing(ok, &[("transfer-encoding", "gzip")]),
        Ok(Framing::Close)
    );
    assert_eq!(
        framing(ok, &[("Content-Length", "7, 7")]),
        Ok(Framing::Length(7))
    );
    assert_eq!(
        framing(ok, &[("content-length", "7"), ("Content-length", "7")]),
        Ok(Framing::Length(7))
    );
    for bad in [
        vec![("content-length", "+7")],
        vec![("content-length", "7"), ("content-length", "8")],
        vec![("content-length", "7\u{e9}")],
    ] {
        let got = framing(ok, &bad);
        assert!(got.is_err(), "{bad:?}: {got:?}");
    }
    assert_eq!(framing(ok, &[]), Ok(Framing::Close));
}

#[test]
fn a_head_says_whether_its_connection_stays_open() {
    let keep = |head: &str| {
        parse_head(head.as_bytes(), 8192)
            .expect("a head")
            .expect("a whole head")
            .0
            .keep_alive
    };
    assert!(keep("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"));
    assert!(!keep(
        "HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\ncontent-length: 0\r\n\r\n"
    ));
    assert!(!keep("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n"));
    assert!(keep(
        "HTTP/1.0 200 OK\r\nCONNECTION: keep-alive\r\ncontent-length: 0\r\n\r\n"
    ));
}
