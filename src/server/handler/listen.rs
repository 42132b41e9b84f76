//! `subscriptions/listen` served: acknowledge the honoured filter first, then forward the
//! hub's changes on the request's own stream (the SSE response over HTTP, the
//! connection's output on stdio and ws) until the client goes (closes the stream, or
//! `notifications/cancelled` on stdio/ws), the server ends it (`--listen-lifetime`,
//! with a final `complete` response), or the listener stops reading (its queue fills).
//! The `listen-*` faults make the mistakes the fleet's findings must see.

use serde_json::Value;

use super::reply::{encode, invalid_params, rpc_error, EncodedReply, Reply};
use super::{Handler, Notifier, Session};
use crate::protocol::jsonrpc::codes;
use crate::protocol::methods as m;
use crate::protocol::RequestId;
use crate::server::listen::{self, Filter};
use crate::server::Fault;

/// How a listen ended, for the reply: `None` sends nothing (the client went, or the
/// `listen-no-end` fault cuts the stream).
pub(super) type Ended<'a> = Option<Result<Reply<'a>, crate::protocol::RpcError>>;

impl Handler {
    /// A `subscriptions/listen`: checked like any modern request, then held open.
    pub(super) async fn serve_listen(
        &self,
        session: &Session,
        id: RequestId,
        params: Option<Value>,
        notifier: &Notifier,
    ) -> Option<EncodedReply> {
        let params = params.unwrap_or(Value::Null);
        let outcome = match self.modern_check(m::SUBSCRIPTIONS_LISTEN, &params) {
            Err(e) => Err(e),
            Ok(_) => self.listen(session, &id, &params, notifier).await?,
        };
        let error = outcome.as_ref().err().map(|e| e.code);
        Some(EncodedReply {
            bytes: encode(&id, outcome),
            error,
        })
    }

    async fn listen(
        &self,
        session: &Session,
        id: &RequestId,
        params: &Value,
        notifier: &Notifier,
    ) -> Ended<'_> {
        let asked = match Filter::from_params(params) {
            Ok(f) => f,
            Err(why) => return Some(Err(invalid_params(why))),
        };
        let Some(mut entry) = session.open_listen(id) else {
            return Some(Err(rpc_error(
                codes::INTERNAL_ERROR,
                format!(
                    "Subscription limit reached: at most {} listens per connection",
                    listen::PER_CONNECTION
                ),
            )));
        };
        // Everything asked is honoured: every list can change here, and every resource
        // URI is accepted (only the `notify_list_changed` tool updates one).
        let honoured = asked;
        let unasked = self.faults.has(Fault::ListenUnasked);
        let lossy = self.faults.has(Fault::ListenLossy);
        let joined = if self.faults.has(Fault::ListenOnRequestStream) {
            // Changes go to the request streams instead (see `operations.rs`).
            self.hub.join(Filter::default())
        } else {
            self.hub.join(honoured.clone())
        };
        let mut member = match joined {
            Ok(m) => m,
            Err(listen::Full(n)) => {
                return Some(Err(rpc_error(
                    codes::INTERNAL_ERROR,
                    format!("Subscription limit reached: this server holds at most {n} listens"),
                )))
            }
        };
        let sub_id = match id {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(s.as_str()),
        };
        let stamp = (!self.faults.has(Fault::ListenNoId)).then_some(&sub_id);
        if !self.faults.has(Fault::ListenNoAck) {
            notifier.send(listen::acknowledgement(stamp, &honoured, &self.hub));
        }
        let lifetime = self.listen_lifetime;
        let ends = async {
            match lifetime {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(ends);
        loop {
            tokio::select! {
                change = member.changes.recv() => match change {
                    Some(change) if lossy && change.seq % 2 == 0 => {}
                    Some(change) => {
                        notifier.send(listen::notification(stamp, &change, &self.hub));
                        if unasked {
                            if let Some(kind) = honoured.unasked() {
                                let extra = listen::Change { kind, ..change };
                                notifier.send(listen::notification(stamp, &extra, &self.hub));
                            }
                        }
                    }
                    // Its queue filled: ended as not reading (it re-listens and re-fetches).
                    None => break,
                },
                () = notifier.closed() => return None,
                _ = &mut entry.cancelled => return None,
                () = &mut ends => break,
            }
        }
        if self.faults.has(Fault::ListenNoEnd) {
            return None;
        }
        if self.listen_end_cancelled {
            let params =
                serde_json::json!({"requestId": sub_id, "reason": "the listen's lifetime is over"});
            notifier.send(crate::protocol::jsonrpc::encode_notification(
                m::CANCELLED,
                Some(&params),
            ));
            return None;
        }
        Some(Ok(Reply::Value(listen::complete(&sub_id))))
    }
}
