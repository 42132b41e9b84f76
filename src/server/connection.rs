//! The reference server's HTTP/1.1 connections, our own as the client's are
//! (`transport/http/h1.rs`), and for the same reason: hyper's server connection keeps an
//! 8–16 KiB read buffer and an 8 KiB write buffer for its whole life, and a held
//! Streamable HTTP session keeps two connections open (its GET stream, and an idle one
//! for its POSTs): ~48 of the server's ~65 KiB per held session (results/BENCHMARKS.md,
//! issue 12). Here a waiting connection holds its socket and nothing else.
//!
//! One request at a time. The head is parsed with `httparse`, the body (Content-Length
//! or chunked, bounded) is read whole, the request goes to the axum router, and the
//! response is written: a sized body in one write with its head; any other chunked
//! (close-delimited for an HTTP/1.0 client), each piece as soon as it comes. While the
//! router works and while a response streams, the socket is watched: a client that goes
//! away ends its request (the handler's future is dropped), as hyper does. A request that
//! asks to upgrade (WebSocket) is handed, with the bytes read so far, to hyper's
//! connection, which the axum WebSocket extractor needs.

use std::future::Future;
use std::io::{self, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::Router;
use bytes::{Buf, Bytes, BytesMut};
use futures::FutureExt;
use http::header::{CONNECTION, CONTENT_LENGTH, DATE, EXPECT, TRANSFER_ENCODING, UPGRADE};
use http::{
    HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri, Version,
};
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tower_service::Service;

use crate::http1::{self as h1, Conn, Decoder, Framing};

/// Largest request head, and most header fields in one (hyper's field limit too).
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;
/// Largest request body read; the handlers' extractors refuse above 2 MB anyway (413).
const MAX_BODY: u64 = 16 * 1024 * 1024;
/// How long the rest of a started head, or a body, may take to arrive. An idle
/// connection (no byte of a next request yet) waits as long as its client likes.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes a client may send ahead (a pipelined request) while its request is answered;
/// beyond that the socket is no longer watched until the answer is written.
const READ_AHEAD: usize = 64 * 1024;
/// Bytes of ready pieces of a streamed body gathered into one write.
const COALESCE: usize = 64 * 1024;
/// How long a refused client's remaining bytes are read and dropped before closing.
const LINGER: Duration = Duration::from_secs(1);

/// Accept connections on `listener` and serve `app` on each until `stop` resolves. Then
/// the listener closes, idle connections close, streamed responses end, and requests
/// being answered have `grace` to finish before their connections are dropped.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    stop: impl Future<Output = ()>,
    grace: Duration,
) {
    let (stopping, stop_rx) = watch::channel(false);
    let mut conns = JoinSet::new();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            biased;
            () = &mut stop => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    // Small request/response exchanges must not wait on Nagle.
                    let _ = tcp.set_nodelay(true);
                    conns.spawn(connection(tcp, app.clone(), stop_rx.clone()));
                }
                Err(e) if is_connection_error(&e) => {}
                Err(e) => {
                    // Out of file descriptors, most likely: accepting again at once
                    // would spin. axum's serve waits a second too.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::select! {
                        () = &mut stop => break,
                        () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            },
        }
    }
    drop(listener);
    let _ = stopping.send(true);
    let drained = async { while conns.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(grace, drained).await;
    conns.shutdown().await;
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Resolves once the server is stopping (or gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// A request head as the connection needs it.
struct Head {
    method: Method,
    uri: Uri,
    version: Version,
    headers: HeaderMap,
    framing: Framing,
    keep_alive: bool,
    expect_continue: bool,
    upgrade: bool,
}

/// Why a request gets no normal answer: an error status to send before closing, or
/// nothing (the client is gone or too slow).
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    Answer(StatusCode),
    Gone,
}

/// One connection, request after request, until the client closes it, a request says
/// `Connection: close` or the server stops.
async fn connection(tcp: TcpStream, app: Router, mut stop: watch::Receiver<bool>) {
    let mut conn = Conn::plain(tcp);
    loop {
        let head = tokio::select! {
            biased;
            () = stopped(&mut stop) => return,
            head = read_head(&mut conn) => head,
        };
        let (head, len) = match head {
            Ok(Some(head)) => head,
            Ok(None) | Err(Refusal::Gone) => return,
            Err(Refusal::Answer(status)) => return refuse(&mut conn, status).await,
        };
        if head.upgrade {
            // hyper reads the head again from the bytes handed over.
            return Box::pin(upgrade(conn, app)).await;
        }
        conn.consume(len);
        // Boxed while it runs: its states (the router's future, a streamed body) are
        // large, and a connection waiting for its next request should not carry them.
        if !Box::pin(exchange(&mut conn, &app, head, &mut stop)).await {
            return;
        }
    }
}

/// Read the body of the request `head` begins, answer it, write the answer; whether
/// the connection can carry another request.
async fn exchange(
    conn: &mut Conn,
    app: &Router,
    head: Head,
    stop: &mut watch::Receiver<bool>,
) -> bool {
    // A small request's body came with its head: no timer for it.
    let arrived = match head.framing {
        Framing::Empty => true,
        Framing::Length(n) => conn.buffered().len() as u64 >= n,
        _ => false,
    };
    let body = if arrived {
        read_body(conn, &head).await
    } else {
        tokio::time::timeout(READ_TIMEOUT, read_body(conn, &head))
            .await
            .unwrap_or(Err(Refusal::Gone))
    };
    let body = match body {
        Ok(body) => body,
        Err(Refusal::Answer(status)) => {
            refuse(conn, status).await;
            return false;
        }
        Err(Refusal::Gone) => return false,
    };
    let mut out = Out {
        version: head.version,
        is_head: head.method == Method::HEAD,
        keep_alive: head.keep_alive,
    };
    let mut request = Request::new(Body::from(body));
    *request.method_mut() = head.method;
    *request.uri_mut() = head.uri;
    *request.version_mut() = head.version;
    *request.headers_mut() = head.headers;
    // The router is always ready (its `poll_ready` is `Ready`), so `call` directly.
    let mut router = app.clone();
    let answer = router.call(request);
    let response = tokio::select! {
        biased;
        response = answer => match response {
            Ok(response) => response,
            Err(never) => match never {},
        },
        () = peer_gone(conn) => return false,
    };
    out.keep_alive &= !*stop.borrow();
    respond(conn, response, out, stop).await
}

/// Answer `status` with a short text and close. What the client is still sending is
/// read and dropped for a moment, so that closing with unread bytes (which resets the
/// connection) does not destroy the answer before the client reads it.
async fn refuse(conn: &mut Conn, status: StatusCode) {
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

/// The next request head and its length, `None` when the client closed the connection
/// between requests. The head's bytes stay buffered (an upgrade hands them on).
async fn read_head(conn: &mut Conn) -> Result<Option<(Head, usize)>, Refusal> {
    let mut deadline = None;
    loop {
        if !conn.buffered().is_empty() {
            if let Some(head) = parse_head(conn.buffered())? {
                return Ok(Some(head));
            }
        }
        let more = if conn.buffered().is_empty() {
            conn.fill().await
        } else {
            let until = *deadline.get_or_insert_with(|| tokio::time::Instant::now() + READ_TIMEOUT);
            tokio::time::timeout_at(until, conn.fill())
                .await
                .map_err(|_| Refusal::Gone)?
        };
        match more {
            Ok(0) if conn.buffered().is_empty() => return Ok(None),
            Ok(0) | Err(_) => return Err(Refusal::Gone),
            Ok(_) => {}
        }
    }
}

/// The head at the start of `buf` and its length, `None` when more bytes are needed.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, Refusal> {
    let bad = Refusal::Answer(StatusCode::BAD_REQUEST);
    let too_large = Refusal::Answer(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut fields);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => return Err(too_large),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(too_large),
        Err(_) => return Err(bad),
    };
    if len > MAX_HEAD {
        return Err(too_large);
    }
    let method = Method::from_bytes(req.method.unwrap_or("").as_bytes()).map_err(|_| bad_req())?;
    let uri = Uri::try_from(req.path.unwrap_or("")).map_err(|_| bad_req())?;
    let version = match req.version {
        Some(1) => Version::HTTP_11,
        _ => Version::HTTP_10,
    };
    let mut headers = HeaderMap::with_capacity(req.headers.len());
    for f in req.headers.iter() {
        let name = HeaderName::from_bytes(f.name.as_bytes()).map_err(|_| bad_req())?;
        let value = HeaderValue::from_bytes(f.value).map_err(|_| bad_req())?;
        headers.append(name, value);
    }
    let upgrade = headers.contains_key(UPGRADE);
    let framing = if upgrade {
        Framing::Empty
    } else {
        request_framing(&headers)?
    };
    let connection = h1::tokens(&headers, CONNECTION);
    let keep_alive = if version == Version::HTTP_11 {
        !connection.iter().any(|t| t == "close")
    } else {
        connection.iter().any(|t| t == "keep-alive")
    };
    let expect_continue = headers
        .get(EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let head = Head {
        method,
        uri,
        version,
        headers,
        framing,
        keep_alive,
        expect_continue,
        upgrade,
    };
    Ok(Some((head, len)))
}

fn bad_req() -> Refusal {
    Refusal::Answer(StatusCode::BAD_REQUEST)
}

/// How a request's body is delimited (RFC 9112, 6.3): chunked, a length, or none.
fn request_framing(headers: &HeaderMap) -> Result<Framing, Refusal> {
    let codings = h1::tokens(headers, TRANSFER_ENCODING);
    if !codings.is_empty() {
        // A body whose end cannot be known, or two framings (a smuggling attempt):
        // RFC 9112 says 400 and close.
        if codings.last().map(String::as_str) != Some("chunked")
            || headers.contains_key(CONTENT_LENGTH)
        {
            return Err(bad_req());
        }
        return Ok(Framing::Chunked);
    }
    match h1::content_length(headers) {
        Ok(None | Some(0)) => Ok(Framing::Empty),
        Ok(Some(n)) if n > MAX_BODY => Err(Refusal::Answer(StatusCode::PAYLOAD_TOO_LARGE)),
        Ok(Some(n)) => Ok(Framing::Length(n)),
        Err(_) => Err(bad_req()),
    }
}

/// The whole request body.
async fn read_body(conn: &mut Conn, head: &Head) -> Result<Bytes, Refusal> {
    if head.framing == Framing::Empty {
        return Ok(Bytes::new());
    }
    if head.expect_continue {
        conn.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .await
            .map_err(|_| Refusal::Gone)?;
    }
    let mut decoder = Decoder::new(head.framing);
    let mut whole = BytesMut::new();
    let mut first = None;
    while let Some(piece) = decoder.next(conn).await.map_err(|_| bad_req())? {
        let total = whole.len() + first.as_ref().map_or(0, Bytes::len) + piece.len();
        if total as u64 > MAX_BODY {
            return Err(Refusal::Answer(StatusCode::PAYLOAD_TOO_LARGE));
        }
        // Usually the body is one piece, which is passed on without a copy.
        match first.take() {
            None if whole.is_empty() => first = Some(piece),
            Some(one) => {
                whole.extend_from_slice(&one);
                whole.extend_from_slice(&piece);
            }
            None => whole.extend_from_slice(&piece),
        }
    }
    Ok(first.unwrap_or_else(|| whole.freeze()))
}

/// Resolves when the client is gone (the end of its stream, or an error). Bytes it
/// sends meanwhile (a pipelined request) are kept for later, up to [`READ_AHEAD`].
async fn peer_gone(conn: &mut Conn) {
    loop {
        if conn.buffered().len() >= READ_AHEAD {
            return std::future::pending().await;
        }
        match conn.fill().await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// What the response's framing depends on besides the response itself.
struct Out {
    version: Version,
    is_head: bool,
    keep_alive: bool,
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
async fn respond(
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

/// Hand the connection, from the head of its upgrade request on, to hyper's server
/// connection: axum's WebSocket extractor needs hyper's upgrade machinery.
async fn upgrade(conn: Conn, app: Router) {
    let Some((tcp, read)) = conn.into_plain() else {
        return;
    };
    let io = hyper_util::rt::TokioIo::new(Rewind { read, io: tcp });
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let mut router = app.clone();
        router.call(req.map(Body::new))
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(io, service)
        .with_upgrades()
        .await;
}

/// A socket whose first bytes were already read: they are read again first.
struct Rewind {
    read: Bytes,
    io: TcpStream,
}

impl AsyncRead for Rewind {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.read.is_empty() {
            let n = this.read.len().min(buf.remaining());
            buf.put_slice(&this.read[..n]);
            this.read.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Rewind {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
