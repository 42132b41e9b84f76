//! Our HTTP/1.1 client connection for Streamable HTTP: one exchange at a time, the
//! request's head and body written with one write, the response head parsed with
//! `httparse` (the parser hyper itself uses), the body read straight off the socket
//! (`Content-Length`, chunked, or until the server closes).
//!
//! Why not hyper's client connection, as before: it costs ~29 KiB per connection
//! whatever it is told (a request channel, an 8 KiB read buffer, an 8 KiB write buffer)
//! and a driver task, and a Streamable HTTP session holds two connections for its whole
//! life (the GET stream and an idle one for its POSTs): 58 KiB of a 55 KiB-per-session
//! figure (results/BENCHMARKS.md, issue 12). Here a waiting connection holds its socket
//! and nothing else: the read buffer exists only while bytes are in it.

use crate::metrics::FailureKind;
use crate::transport::TransportError;
use bytes::{Buf, Bytes, BytesMut};
use futures::FutureExt;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use std::io::{self, Write};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 8192;

thread_local! {
    /// Where plain sockets are read into, one per runtime thread.
    static SCRATCH: std::cell::RefCell<Box<[u8]>> =
        std::cell::RefCell::new(vec![0; READ_CHUNK].into_boxed_slice());
}
/// Most header fields a response head may have (hyper's limit too).
const MAX_HEADERS: usize = 100;
/// Longest chunk-size or trailer line we hold.
const MAX_CHUNK_LINE: usize = 4096;

/// Any other byte stream a connection can run over.
trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

enum Io {
    /// Waited on for readiness before a read buffer exists.
    Plain(TcpStream),
    /// TLS (`https://`), or an in-memory stream (the fuzz target).
    Stream(Box<dyn Stream>),
}

/// One HTTP/1.1 connection between exchanges, or lent to one.
pub(crate) struct Conn {
    io: Io,
    /// Bytes read and not yet consumed; empty (no allocation) between exchanges.
    buf: BytesMut,
}

impl Conn {
    pub fn plain(tcp: TcpStream) -> Conn {
        Conn {
            io: Io::Plain(tcp),
            buf: BytesMut::new(),
        }
    }

    pub fn tls(stream: tokio_rustls::client::TlsStream<TcpStream>) -> Conn {
        Conn::over(stream)
    }

    /// A connection over any byte stream.
    pub fn over(
        stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    ) -> Conn {
        Conn {
            io: Io::Stream(Box::new(stream)),
            buf: BytesMut::new(),
        }
    }

    /// Read what the socket has into the buffer; 0 at the end of the stream. A plain
    /// socket is waited on before anything is allocated, so a connection that waits
    /// (the held GET stream) holds no buffer.
    async fn fill(&mut self) -> io::Result<usize> {
        match &mut self.io {
            Io::Plain(tcp) => {
                // Read into the thread's scratch buffer and keep only what came: a
                // 300-byte answer costs a 300-byte allocation, not a READ_CHUNK one, and
                // nothing is allocated while the socket has nothing. Through
                // `poll_read`, so that a short read clears the socket's readiness (the
                // next look at an idle connection then needs no system call).
                let buf = &mut self.buf;
                std::future::poll_fn(|cx| {
                    SCRATCH.with(|scratch| {
                        let mut scratch = scratch.borrow_mut();
                        let mut read = tokio::io::ReadBuf::new(&mut scratch[..]);
                        match std::pin::Pin::new(&mut *tcp).poll_read(cx, &mut read) {
                            std::task::Poll::Ready(Ok(())) => {
                                buf.extend_from_slice(read.filled());
                                std::task::Poll::Ready(Ok(read.filled().len()))
                            }
                            std::task::Poll::Ready(Err(e)) => std::task::Poll::Ready(Err(e)),
                            std::task::Poll::Pending => std::task::Poll::Pending,
                        }
                    })
                })
                .await
            }
            Io::Stream(stream) => {
                self.buf.reserve(READ_CHUNK);
                stream.read_buf(&mut self.buf).await
            }
        }
    }

    /// Give the buffer's memory back once it holds nothing.
    fn shrink(&mut self) {
        if self.buf.is_empty() && self.buf.capacity() > 0 {
            self.buf = BytesMut::new();
        }
    }

    /// Whether an idle connection can carry another exchange: nothing unasked-for
    /// arrived and the server has not closed it. Looks without waiting.
    pub fn is_reusable(&mut self) -> bool {
        if !self.buf.is_empty() {
            return false;
        }
        let quiet = self.fill().now_or_never().is_none();
        self.shrink();
        quiet && self.buf.is_empty()
    }

    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.io {
            Io::Plain(tcp) => tcp.write_all(bytes).await,
            Io::Stream(stream) => {
                stream.write_all(bytes).await?;
                stream.flush().await
            }
        }
    }

    /// Send one request (head and body in `request`) and read the response head. A
    /// head larger than `max_head` is `message_too_large`.
    pub async fn exchange(
        mut self,
        request: &[u8],
        max_head: usize,
    ) -> Result<(Head, Body), TransportError> {
        self.write_all(request).await.map_err(|e| {
            TransportError::new(
                FailureKind::TransportClosed,
                format!("sending the request: {e}"),
            )
        })?;
        let head = self.read_head(max_head).await?;
        let state = match head.framing {
            Framing::Empty => BodyState::Done,
            Framing::Length(n) => BodyState::Length(n),
            Framing::Chunked => BodyState::ChunkSize,
            Framing::Close => BodyState::Close,
        };
        let body = Body {
            conn: Some(self),
            state,
            declared: match head.framing {
                Framing::Length(n) => Some(n),
                Framing::Empty => Some(0),
                _ => None,
            },
            keep_alive: head.keep_alive && head.framing != Framing::Close,
        };
        Ok((head, body))
    }

    async fn read_head(&mut self, max_head: usize) -> Result<Head, TransportError> {
        loop {
            if !self.buf.is_empty() {
                if let Some((head, len)) = parse_head(&self.buf, max_head)? {
                    self.buf.advance(len);
                    // Interim answers (100 Continue, 103 Early Hints) precede the real
                    // one.
                    if head.status.is_informational()
                        && head.status != StatusCode::SWITCHING_PROTOCOLS
                    {
                        continue;
                    }
                    self.shrink();
                    return Ok(head);
                }
            }
            match self.fill().await {
                Ok(0) if self.buf.is_empty() => {
                    return Err(TransportError::new(
                        FailureKind::TransportClosed,
                        "the server closed the connection before answering",
                    ))
                }
                Ok(0) => {
                    return Err(TransportError::new(
                        FailureKind::TransportClosed,
                        "the server closed the connection in the middle of the response head",
                    ))
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(TransportError::new(
                        FailureKind::TransportClosed,
                        format!("reading the response: {e}"),
                    ))
                }
            }
        }
    }
}

/// How the body of a response is delimited (RFC 9112, 6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Empty,
    Length(u64),
    Chunked,
    Close,
}

/// A response's status line and header fields.
#[derive(Debug)]
pub(crate) struct Head {
    pub status: StatusCode,
    pub headers: HeaderMap,
    framing: Framing,
    keep_alive: bool,
}

/// The head at the start of `buf` and its length, `None` when more bytes are needed.
fn parse_head(buf: &[u8], max_head: usize) -> Result<Option<(Head, usize)>, TransportError> {
    let bad = |what: String| {
        TransportError::new(
            FailureKind::TransportClosed,
            format!("the server's answer is not HTTP/1.1: {what}"),
        )
    };
    let too_large = |what: &str| {
        TransportError::new(
            FailureKind::MessageTooLarge,
            format!("the response head is too large: {what}"),
        )
    };
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut fields);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > max_head => {
            return Err(too_large(&format!("more than {max_head} bytes")))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(too_large(&format!("more than {MAX_HEADERS} header fields")))
        }
        Err(e) => return Err(bad(e.to_string())),
    };
    if len > max_head {
        return Err(too_large(&format!("more than {max_head} bytes")));
    }
    let code = resp.code.unwrap_or(0);
    let status = StatusCode::from_u16(code).map_err(|_| bad(format!("status {code}")))?;
    let http11 = resp.version == Some(1);
    let mut headers = HeaderMap::with_capacity(resp.headers.len());
    for f in resp.headers.iter() {
        let name = HeaderName::from_bytes(f.name.as_bytes())
            .map_err(|_| bad(format!("header name {:?}", f.name)))?;
        let value = HeaderValue::from_bytes(f.value)
            .map_err(|_| bad(format!("the value of {:?}", f.name)))?;
        headers.append(name, value);
    }
    let framing = framing(status, &headers).map_err(bad)?;
    let connection = tokens(&headers, http::header::CONNECTION);
    let keep_alive = if http11 {
        !connection.iter().any(|t| t == "close")
    } else {
        connection.iter().any(|t| t == "keep-alive")
    };
    Ok(Some((
        Head {
            status,
            headers,
            framing,
            keep_alive,
        },
        len,
    )))
}

/// The comma-separated tokens of every field `name`, lower-cased.
fn tokens(headers: &HeaderMap, name: HeaderName) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

fn framing(status: StatusCode, headers: &HeaderMap) -> Result<Framing, String> {
    if status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        return Ok(Framing::Empty);
    }
    let codings = tokens(headers, http::header::TRANSFER_ENCODING);
    if !codings.is_empty() {
        // Chunked last: the body is chunked (other codings beneath it are the
        // server's business, we pass the bytes on); otherwise it runs to the close.
        return Ok(if codings.last().map(String::as_str) == Some("chunked") {
            Framing::Chunked
        } else {
            Framing::Close
        });
    }
    let mut length: Option<u64> = None;
    for v in headers.get_all(http::header::CONTENT_LENGTH) {
        for part in v.to_str().unwrap_or("x").split(',') {
            let part = part.trim();
            let n = part
                .parse::<u64>()
                .ok()
                .filter(|_| part.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| format!("Content-Length {part:?}"))?;
            if length.is_some_and(|l| l != n) {
                return Err("two different Content-Length values".into());
            }
            length = Some(n);
        }
    }
    Ok(length.map_or(Framing::Close, Framing::Length))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyState {
    /// Bytes left of a `Content-Length` body.
    Length(u64),
    /// The next thing is a chunk-size line.
    ChunkSize,
    /// Bytes left of the current chunk.
    ChunkData(u64),
    /// The CRLF that ends a chunk's data.
    ChunkEnd,
    /// Trailer lines up to an empty line.
    Trailers,
    /// Until the server closes.
    Close,
    Done,
    /// Broke: the connection cannot be used again.
    Failed,
}

/// A response body being read. Its connection goes back to the session's pool with
/// [`Body::release`] once the body is read to its end; dropped before, the connection
/// is closed (an unread body makes it unusable).
pub(crate) struct Body {
    conn: Option<Conn>,
    state: BodyState,
    declared: Option<u64>,
    keep_alive: bool,
}

impl Body {
    /// The body's length when the head declared it.
    pub fn declared_len(&self) -> Option<u64> {
        self.declared
    }

    /// The next piece of the body, `None` at its end.
    pub async fn frame(&mut self) -> Option<Result<Bytes, TransportError>> {
        match self.next().await {
            Ok(Some(bytes)) => Some(Ok(bytes)),
            Ok(None) => None,
            Err(detail) => {
                self.state = BodyState::Failed;
                self.conn = None;
                Some(Err(TransportError::new(
                    FailureKind::TransportClosed,
                    format!("reading a body: {detail}"),
                )))
            }
        }
    }

    async fn next(&mut self) -> Result<Option<Bytes>, String> {
        loop {
            let Some(conn) = self.conn.as_mut() else {
                return match self.state {
                    BodyState::Done => Ok(None),
                    _ => Err("the connection is gone".into()),
                };
            };
            match self.state {
                BodyState::Done => return Ok(None),
                BodyState::Failed => return Err("the body already broke".into()),
                BodyState::Length(0) => self.state = BodyState::Done,
                BodyState::Length(left) | BodyState::ChunkData(left) => {
                    if conn.buf.is_empty() {
                        fill(conn, "the body ended early").await?;
                    }
                    let take = conn
                        .buf
                        .len()
                        .min(usize::try_from(left).unwrap_or(usize::MAX));
                    let bytes = conn.buf.split_to(take).freeze();
                    conn.shrink();
                    let left = left - take as u64;
                    self.state = match self.state {
                        BodyState::Length(_) => BodyState::Length(left),
                        _ if left == 0 => BodyState::ChunkEnd,
                        _ => BodyState::ChunkData(left),
                    };
                    return Ok(Some(bytes));
                }
                BodyState::Close => {
                    if conn.buf.is_empty() {
                        match conn.fill().await {
                            Ok(0) => {
                                self.state = BodyState::Done;
                                return Ok(None);
                            }
                            Ok(_) => {}
                            Err(e) => return Err(e.to_string()),
                        }
                    }
                    let bytes = conn.buf.split().freeze();
                    conn.shrink();
                    return Ok(Some(bytes));
                }
                BodyState::ChunkSize => {
                    let line = line(conn).await?;
                    let digits = line.split(';').next().unwrap_or("").trim();
                    let size = u64::from_str_radix(digits, 16)
                        .ok()
                        .filter(|_| !digits.is_empty() && digits.len() <= 16)
                        .ok_or_else(|| format!("a bad chunk size {digits:?}"))?;
                    self.state = if size == 0 {
                        BodyState::Trailers
                    } else {
                        BodyState::ChunkData(size)
                    };
                }
                BodyState::ChunkEnd => {
                    let line = line(conn).await?;
                    if !line.is_empty() {
                        return Err("a chunk longer than its size".into());
                    }
                    self.state = BodyState::ChunkSize;
                }
                BodyState::Trailers => {
                    if line(conn).await?.is_empty() {
                        self.state = BodyState::Done;
                        conn.shrink();
                    }
                }
            }
        }
    }

    /// The body was read to its end: its connection can carry the next exchange.
    /// Returns it when it can.
    pub fn take_reusable(&mut self) -> Option<Conn> {
        if self.state != BodyState::Done || !self.keep_alive {
            return None;
        }
        let conn = self.conn.take()?;
        conn.buf.is_empty().then_some(conn)
    }
}

/// More bytes, or the error `ended` when the stream is over.
async fn fill(conn: &mut Conn, ended: &str) -> Result<(), String> {
    match conn.fill().await {
        Ok(0) => Err(ended.to_string()),
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// One CRLF- (or LF-) ended line of the chunked coding, without its end.
async fn line(conn: &mut Conn) -> Result<String, String> {
    loop {
        if let Some(end) = conn.buf.iter().position(|&b| b == b'\n') {
            let raw = conn.buf.split_to(end + 1);
            // A held stream waits for its next chunk here: with nothing left, it holds
            // no buffer while it waits.
            conn.shrink();
            let text = std::str::from_utf8(&raw[..end])
                .map_err(|_| "a chunk line that is not text".to_string())?;
            return Ok(text.strip_suffix('\r').unwrap_or(text).to_string());
        }
        if conn.buf.len() > MAX_CHUNK_LINE {
            return Err("a chunk line that does not end".into());
        }
        fill(conn, "the chunked body ended early").await?;
    }
}

/// A request's bytes: the request line, the fields (one write of head and body).
pub(crate) fn encode_request(
    method: &http::Method,
    target: &str,
    headers: &[(&HeaderName, &HeaderValue)],
    body: &[u8],
) -> Vec<u8> {
    let fields: usize = headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    let mut out =
        Vec::with_capacity(method.as_str().len() + target.len() + fields + body.len() + 48);
    out.extend_from_slice(method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(target.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    for (k, v) in headers {
        out.extend_from_slice(k.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(v.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if !body.is_empty() || *method == http::Method::POST {
        // Writing to a Vec cannot fail.
        let _ = write!(out, "content-length: {}\r\n", body.len());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests;
