//! Our HTTP/1.1 client connection for Streamable HTTP: one exchange at a time, the
//! request's head and body written with one write, the response head parsed with
//! `httparse` (the parser hyper itself uses), the body read straight off the socket
//! (`Content-Length`, chunked, or until the server closes). The connection's buffer and
//! the body framing are `crate::http1`'s, shared with the reference server.
//!
//! Why not hyper's client connection, as before: it costs ~29 KiB per connection
//! whatever it is told (a request channel, an 8 KiB read buffer, an 8 KiB write buffer)
//! and a driver task, and a Streamable HTTP session holds two connections for its whole
//! life (the GET stream and an idle one for its POSTs): 58 KiB of a 55 KiB-per-session
//! figure (results/BENCHMARKS.md, issue 12). Here a waiting connection holds its socket
//! and nothing else: the read buffer exists only while bytes are in it.

pub(crate) use crate::http1::Conn;
use crate::http1::{content_length_of, tokens_of, Decoder, Framing};
use crate::metrics::FailureKind;
use crate::transport::TransportError;
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use tokio::net::TcpStream;

/// Most header fields a response head may have (hyper's limit too).
const MAX_HEADERS: usize = 100;

/// The client's side of a connection: TLS, and the exchange.
impl Conn {
    /// A connection over TLS (`https://`).
    pub fn tls(stream: tokio_rustls::client::TlsStream<TcpStream>) -> Conn {
        Conn::over(stream)
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
        let body = Body {
            conn: Some(self),
            decoder: Decoder::new(head.framing),
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
            if !self.buffered().is_empty() {
                if let Some((head, len)) = parse_head(self.buffered(), max_head)? {
                    self.consume(len);
                    // Interim answers (100 Continue, 103 Early Hints) precede the real
                    // one.
                    if head.status.is_informational()
                        && head.status != StatusCode::SWITCHING_PROTOCOLS
                    {
                        continue;
                    }
                    return Ok(head);
                }
            }
            match self.fill().await {
                Ok(0) if self.buffered().is_empty() => {
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
    // Framing and persistence from the fields as parsed: a scan of a few fields costs
    // less than three look-ups in the map.
    let fields = resp.headers;
    let values = |name: &'static str| {
        fields
            .iter()
            .filter(move |f| f.name.eq_ignore_ascii_case(name))
            .map(|f| f.value)
    };
    let framing = framing(
        status,
        values("transfer-encoding"),
        values("content-length"),
    )
    .map_err(bad)?;
    let connection = tokens_of(values("connection"));
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

fn framing<'a>(
    status: StatusCode,
    transfer_encoding: impl Iterator<Item = &'a [u8]>,
    content_length: impl Iterator<Item = &'a [u8]>,
) -> Result<Framing, String> {
    if status.is_informational()
        || status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
    {
        return Ok(Framing::Empty);
    }
    let codings = tokens_of(transfer_encoding);
    if !codings.is_empty() {
        // Chunked last: the body is chunked (other codings beneath it are the
        // server's business, we pass the bytes on); otherwise it runs to the close.
        return Ok(if codings.last().map(String::as_str) == Some("chunked") {
            Framing::Chunked
        } else {
            Framing::Close
        });
    }
    Ok(content_length_of(content_length)?.map_or(Framing::Close, Framing::Length))
}

/// A response body being read. Its connection goes back to the session's pool with
/// [`Body::take_reusable`] once the body is read to its end; dropped before, the connection
/// is closed (an unread body makes it unusable).
pub(crate) struct Body {
    conn: Option<Conn>,
    decoder: Decoder,
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
        let next = match self.conn.as_mut() {
            Some(conn) => self.decoder.next(conn).await,
            None if self.decoder.is_done() => Ok(None),
            None => Err("the connection is gone".into()),
        };
        match next {
            Ok(Some(bytes)) => Some(Ok(bytes)),
            Ok(None) => None,
            Err(detail) => {
                self.decoder.fail();
                self.conn = None;
                Some(Err(TransportError::new(
                    FailureKind::TransportClosed,
                    format!("reading a body: {detail}"),
                )))
            }
        }
    }

    /// The body was read to its end: its connection can carry the next exchange.
    /// Returns it when it can.
    pub fn take_reusable(&mut self) -> Option<Conn> {
        if !self.decoder.is_done() || !self.keep_alive {
            return None;
        }
        let conn = self.conn.take()?;
        conn.buffered().is_empty().then_some(conn)
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
        out.extend_from_slice(b"content-length: ");
        out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests;
