//! Response writing: the head written by hand, a sized body in one write with it, any
//! other body chunked (close-delimited for an HTTP/1.0 client), each piece as soon as it
//! comes, the pieces that are ready gathered into one write; and a refusal's short answer.

use std::io::Write;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use futures::FutureExt;
use http::header::{CONNECTION, CONTENT_LENGTH, DATE, TRANSFER_ENCODING};
use http::{Response, StatusCode, Version};
use http_body_util::BodyExt;
use tokio::sync::watch;

use super::{peer_gone, stopped};
use crate::http1::{self as h1, Conn};

/// Bytes of ready pieces of a streamed body gathered into one write.
const COALESCE: usize = 64 * 1024;
/// How long a refused client's remaining bytes are read and dropped before closing.
const LINGER: Duration = Duration::from_secs(1);

/// Answer `status` with a short text and close. What the client is still sending is
/// read and dropped for a moment, so that closing with unread bytes (which resets the
/// connection) does not destroy the answer before the client reads it.
pub(super) async fn refuse(conn: &mut Conn, status: StatusCode) {
    let text = status.canonical_reason().unwrap_or("Bad Request");
    let mut out = Vec::with_capacity(192);
    let _ = write!(
        out,
        "HTTP/1.1 {} {text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n",
        status.as_str(),
        text.len(),
    );
    put_date(&mut out);
    let _ = write!(out, "\r\n{text}");
    if conn.write_all(&out).await.is_err() {
        return;
    }
    conn.shutdown().await;
    let drain = async {
        loop {
            conn.consume(conn.buffered().len());
            if !matches!(conn.fill().await, Ok(n) if n > 0) {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

/// What the response's framing depends on besides the response itself.
pub(super) struct Out {
    pub(super) version: Version,
    pub(super) is_head: bool,
    pub(super) keep_alive: bool,
}

/// How a response body goes on the wire.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framed {
    None,
    Length(u64),
    Chunked,
    /// To the end of the connection (an HTTP/1.0 client, length unknown).
    Close,
}

/// Write `response`; whether the connection can carry another request.
pub(super) async fn respond(
    conn: &mut Conn,
    response: Response<Body>,
    out: Out,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    let (parts, mut body) = response.into_parts();
    let status = parts.status;
    let mut keep_alive = out.keep_alive
        && !h1::tokens(&parts.headers, CONNECTION)
            .iter()
            .any(|t| t == "close");
    let sized = http_body::Body::size_hint(&body).exact();
    let framed = if out.is_head
        || status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        Framed::None
    } else if let Some(n) = sized {
        Framed::Length(n)
    } else if out.version == Version::HTTP_11 {
        Framed::Chunked
    } else {
        keep_alive = false;
        Framed::Close
    };

    let capacity = 256
        + usize::try_from(sized.unwrap_or(0))
            .unwrap_or(0)
            .min(COALESCE);
    let mut buf = Vec::with_capacity(capacity);
    let reason = status.canonical_reason().unwrap_or("");
    let _ = write!(buf, "HTTP/1.1 {} {reason}\r\n", status.as_str());
    for (name, value) in parts.headers.iter() {
        let ours = name == TRANSFER_ENCODING
            || name == CONNECTION
            || (name == CONTENT_LENGTH && !out.is_head);
        if !ours {
            buf.extend_from_slice(name.as_str().as_bytes());
            buf.extend_from_slice(b": ");
            buf.extend_from_slice(value.as_bytes());
            buf.extend_from_slice(b"\r\n");
        }
    }
    if !parts.headers.contains_key(DATE) {
        put_date(&mut buf);
    }
    match framed {
        Framed::Length(n) => {
            let _ = write!(buf, "content-length: {n}\r\n");
        }
        Framed::None if out.is_head && !parts.headers.contains_key(CONTENT_LENGTH) => {
            if let Some(n) = sized {
                let _ = write!(buf, "content-length: {n}\r\n");
            }
        }
        Framed::Chunked => buf.extend_from_slice(b"transfer-encoding: chunked\r\n"),
        _ => {}
    }
    if !keep_alive {
        buf.extend_from_slice(b"connection: close\r\n");
    }
    buf.extend_from_slice(b"\r\n");
    // A held stream should not keep the response's fields.
    drop(parts);

    match framed {
        Framed::None => conn.write_all(&buf).await.is_ok() && keep_alive,
        Framed::Length(n) => {
            // A sized body is ready (a JSON answer): head and body in one write.
            let start = buf.len();
            loop {
                match body.frame().await {
                    None => break,
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data() {
                            buf.extend_from_slice(&data);
                        }
                    }
                    Some(Err(_)) => return false,
                }
            }
            // A body that is not the length it announced cannot be framed.
            (buf.len() - start) as u64 == n && conn.write_all(&buf).await.is_ok() && keep_alive
        }
        Framed::Chunked | Framed::Close => {
            stream(conn, body, buf, framed == Framed::Chunked, stop).await && keep_alive
        }
    }
}

/// Write a body of unknown length after its head (`buf`), piece by piece as they come,
/// gathering the pieces that are ready into one write. The server stopping ends it.
async fn stream(
    conn: &mut Conn,
    mut body: Body,
    mut buf: Vec<u8>,
    chunked: bool,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    // A piece in hand (`Some`); the first look is taken with the head.
    let mut next = body.frame().now_or_never();
    loop {
        let (mut ended, mut failed) = (false, false);
        // Gather the pieces that are ready now into one write.
        while let Some(piece) = next.take() {
            match piece {
                None => ended = true,
                Some(Err(_)) => failed = true,
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        put_piece(&mut buf, &data, chunked);
                    }
                    if buf.len() < COALESCE {
                        next = body.frame().now_or_never();
                    }
                }
            }
        }
        if ended && chunked {
            buf.extend_from_slice(b"0\r\n\r\n");
        }
        if !buf.is_empty() {
            if conn.write_all(&buf).await.is_err() {
                return false;
            }
            // A held stream waits with no buffer.
            buf = Vec::new();
        }
        if ended {
            return chunked;
        }
        if failed {
            return false;
        }
        next = Some(tokio::select! {
            biased;
            piece = body.frame() => piece,
            () = peer_gone(conn) => return false,
            () = stopped(stop) => None,
        });
    }
}

/// One piece of a streamed body: a chunk, or the bytes as they are.
fn put_piece(buf: &mut Vec<u8>, data: &[u8], chunked: bool) {
    if data.is_empty() {
        return;
    }
    if chunked {
        let _ = write!(buf, "{:x}\r\n", data.len());
        buf.extend_from_slice(data);
        buf.extend_from_slice(b"\r\n");
    } else {
        buf.extend_from_slice(data);
    }
}

/// The `Date` field, its value formatted once a second per thread.
fn put_date(buf: &mut Vec<u8>) {
    thread_local! {
        static DATE: std::cell::RefCell<(u64, String)> =
            const { std::cell::RefCell::new((0, String::new())) };
    }
    let now = SystemTime::now();
    let secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    DATE.with(|cell| {
        let mut cell = cell.borrow_mut();
        if cell.0 != secs || cell.1.is_empty() {
            *cell = (secs, httpdate::fmt_http_date(now));
        }
        buf.extend_from_slice(b"date: ");
        buf.extend_from_slice(cell.1.as_bytes());
        buf.extend_from_slice(b"\r\n");
    });
}
