//! What an exchange's answer means: a refusal's status or JSON-RPC error, a body over
//! the message limit, an answer that does not come within the request timeout; and one
//! exchange read as a session reads it, for the fuzz target.

use super::h1;
use crate::metrics::FailureKind;
use crate::transport::{auth, with_body, TransportError};
use http::header::{HeaderValue, HOST};
use http::{Method, StatusCode};
use std::time::Duration;

/// One POST of `body` over `io` and its answer read as a session reads it (the head
/// within the limits `limit` sets, the body up to `limit`): the status and the body's
/// length. For the fuzz target (`fuzz/fuzz_targets/http_response.rs`).
#[doc(hidden)]
pub async fn exchange_over(
    io: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    body: &[u8],
    limit: usize,
) -> Result<(u16, usize), TransportError> {
    let host = HeaderValue::from_static("fuzz");
    let request = h1::encode_request(&Method::POST, "/mcp", &[(&HOST, &host)], body);
    let max_head = crate::transport::response_head_limit(limit);
    let (head, mut body) = h1::Conn::over(io).exchange(&request, max_head).await?;
    let mut read = 0;
    while let Some(piece) = body.frame().await {
        read += piece?.len();
        if read > limit {
            break;
        }
    }
    Ok((head.status.as_u16(), read))
}

/// `exchange` within the request timeout, else a `timeout` failure naming `what`. A
/// combinator, not an `async fn`: an `async fn` would hold `exchange` twice, as its
/// argument and inside the timeout (BENCHMARKS, issue 15: future sizes).
pub(super) fn within<'a, T: 'a>(
    limit: Duration,
    what: &'a str,
    exchange: impl std::future::Future<Output = Result<T, TransportError>> + 'a,
) -> impl std::future::Future<Output = Result<T, TransportError>> + 'a {
    use futures::FutureExt;
    tokio::time::timeout(limit, exchange).map(move |r| {
        r.unwrap_or_else(|_| {
            Err(TransportError::new(
                FailureKind::Timeout,
                format!(
                    "{what} was not answered within {}",
                    humantime::format_duration(limit)
                ),
            ))
        })
    })
}

/// What a non-2xx answer means. A 404 on a live session is the server forgetting it; a
/// body that is a JSON-RPC error is that error (the 2026-07-28 era answers -32020…-32022
/// with 400, and its `data` matters for version negotiation); anything else is the status.
pub(super) fn status_error(
    status: StatusCode,
    had_session: bool,
    challenge: Option<&str>,
    body: &[u8],
) -> TransportError {
    if status == StatusCode::NOT_FOUND && had_session {
        return TransportError::new(
            FailureKind::SessionExpired,
            with_body("404 on a live session".into(), body),
        );
    }
    if let Ok(crate::protocol::Incoming::Response {
        outcome: Err(e), ..
    }) = crate::protocol::Incoming::parse(body)
    {
        let mut err = TransportError::new(
            FailureKind::RpcError(e.code),
            format!("HTTP {status}: {} ({})", e.message, e.code),
        );
        err.data = e.data;
        return err;
    }
    TransportError::new(
        FailureKind::HttpStatus(status.as_u16()),
        with_body(
            auth::with_challenge(format!("HTTP {status}"), challenge),
            body,
        ),
    )
}

/// A body over the limit fails the exchange; a broken one leaves only the status to go by.
pub(super) fn too_large_or_default(
    body: Result<Vec<u8>, TransportError>,
) -> Result<Vec<u8>, TransportError> {
    match body {
        Err(e) if e.kind == FailureKind::MessageTooLarge => Err(e),
        other => Ok(other.unwrap_or_default()),
    }
}
