//! `subscriptions/listen` (2026-07-28): the [`Hub`] every open listen of the server joins,
//! and the changes it fans out to them. A change is stamped with its number and the time
//! it happened (`_meta` `dev.mcp-fleet/change` / `changedAt`), so the fleet measures
//! server-to-listener delay per listener and counts the listeners a change never reached.
//!
//! Each listen has a bounded queue: a listener that stops reading is ended when its queue
//! fills (its changes are level triggers, and a reopened listen re-fetches), never let
//! grow without bound. The server holds at most `max_listens` listens at once (further
//! ones are refused, -32603, before the acknowledgement).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::protocol::meta::{
    META, META_CHANGE, META_CHANGED_AT, META_CHANGE_SERVER, META_SUBSCRIPTION_ID,
};
use crate::protocol::methods as m;

/// Changes a listener may have waiting before it is ended as not reading.
pub const QUEUE: usize = 256;
/// Listens one stdio or WebSocket connection may hold at once.
pub const PER_CONNECTION: usize = 16;

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Tools,
    Prompts,
    Resources,
    /// One resource's content (`notifications/resources/updated`).
    Updated(Arc<str>),
}

impl Kind {
    pub fn from_list(list: &str) -> Option<Kind> {
        match list {
            "tools" => Some(Kind::Tools),
            "prompts" => Some(Kind::Prompts),
            "resources" => Some(Kind::Resources),
            _ => None,
        }
    }

    pub fn method(&self) -> &'static str {
        match self {
            Kind::Tools => m::TOOLS_LIST_CHANGED,
            Kind::Prompts => m::PROMPTS_LIST_CHANGED,
            Kind::Resources => m::RESOURCES_LIST_CHANGED,
            Kind::Updated(_) => m::RESOURCES_UPDATED,
        }
    }
}

/// One change, as the hub hands it to each listener.
#[derive(Debug, Clone)]
pub struct Change {
    pub kind: Kind,
    pub seq: u64,
    /// Microseconds since the Unix epoch.
    pub at_us: u64,
}

/// What a listen asks for (`params.notifications`), and what the server honours of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub tools: bool,
    pub prompts: bool,
    pub resources: bool,
    pub uris: Vec<String>,
}

impl Filter {
    /// `params.notifications` of a listen request; `Err` says what is wrong with it.
    pub fn from_params(params: &Value) -> Result<Filter, String> {
        let Some(n) = params.get("notifications") else {
            return Err("subscriptions/listen needs params.notifications (an object)".into());
        };
        let Some(n) = n.as_object() else {
            return Err("params.notifications must be an object".into());
        };
        let flag = |k: &str| -> Result<bool, String> {
            match n.get(k) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(format!("params.notifications.{k} must be a boolean")),
            }
        };
        let uris = match n.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|u| {
                    u.as_str().map(String::from).ok_or_else(|| {
                        "params.notifications.resourceSubscriptions must hold strings".to_string()
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err("params.notifications.resourceSubscriptions must be an array".into())
            }
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
        })
    }

    pub fn wants(&self, kind: &Kind) -> bool {
        match kind {
            Kind::Tools => self.tools,
            Kind::Prompts => self.prompts,
            Kind::Resources => self.resources,
            Kind::Updated(uri) => self.uris.iter().any(|u| u.as_str() == &**uri),
        }
    }

    /// The filter as the acknowledgement states it.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "toolsListChanged": self.tools,
            "promptsListChanged": self.prompts,
            "resourcesListChanged": self.resources,
        });
        if !self.uris.is_empty() {
            v["resourceSubscriptions"] = json!(self.uris);
        }
        v
    }

    /// A list kind this filter did not ask for, if any (the `listen-unasked` fault).
    pub fn unasked(&self) -> Option<Kind> {
        [Kind::Prompts, Kind::Resources, Kind::Tools]
            .into_iter()
            .find(|k| !self.wants(k))
    }
}

/// Why a listen could not join.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full(pub usize);

struct Listener {
    filter: Filter,
    tx: mpsc::Sender<Change>,
}

/// Every open listen of the server, and the change counter.
pub struct Hub {
    listeners: Mutex<HashMap<u64, Listener>>,
    next_key: AtomicU64,
    seq: AtomicU64,
    /// This process's number in the stamps (`dev.mcp-fleet/server`).
    pub instance: u64,
    limit: usize,
    /// Listeners ended because their queue filled (for `/metrics` and tests).
    pub overflowed: AtomicU64,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("open", &self.open())
            .field("seq", &self.seq())
            .finish()
    }
}

/// A listen's place in the hub: its changes arrive on `changes`; dropping it leaves.
pub struct Membership {
    hub: Arc<Hub>,
    key: u64,
    pub changes: mpsc::Receiver<Change>,
}

impl Drop for Membership {
    fn drop(&mut self) {
        if let Ok(mut l) = self.hub.listeners.lock() {
            l.remove(&self.key);
        }
    }
}

impl Hub {
    pub fn new(limit: usize) -> Arc<Hub> {
        Arc::new(Hub {
            listeners: Mutex::new(HashMap::new()),
            next_key: AtomicU64::new(0),
            seq: AtomicU64::new(0),
            instance: rand::random::<u64>() >> 12,
            limit,
            overflowed: AtomicU64::new(0),
        })
    }

    /// Listens open now.
    pub fn open(&self) -> usize {
        self.listeners.lock().map_or(0, |l| l.len())
    }

    /// The number of the last change.
    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::Relaxed)
    }

    /// Join with `filter` (what the listen will be sent; the fault `listen-unasked`
    /// joins with everything).
    pub fn join(self: &Arc<Hub>, filter: Filter) -> Result<Membership, Full> {
        let (tx, changes) = mpsc::channel(QUEUE);
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let mut l = self.listeners.lock().map_err(|_| Full(self.limit))?;
        if l.len() >= self.limit {
            return Err(Full(self.limit));
        }
        l.insert(key, Listener { filter, tx });
        Ok(Membership {
            hub: self.clone(),
            key,
            changes,
        })
    }

    /// Something changed: stamp it and hand it to every listener that asked for it.
    /// Returns the change and how many listeners it was handed to.
    pub fn change(&self, kind: Kind) -> (Change, usize) {
        let mut l = match self.listeners.lock() {
            Ok(l) => l,
            Err(p) => p.into_inner(),
        };
        // Numbered under the lock, so every listener sees the numbers in order.
        let change = Change {
            kind,
            seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            at_us: now_us(),
        };
        let mut handed = 0;
        let mut full = Vec::new();
        for (key, listener) in l.iter() {
            if !listener.filter.wants(&change.kind) {
                continue;
            }
            match listener.tx.try_send(change.clone()) {
                Ok(()) => handed += 1,
                Err(mpsc::error::TrySendError::Full(_)) => full.push(*key),
                Err(mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
        for key in full {
            // Dropping the sender ends that listen once it has sent what it holds.
            l.remove(&key);
            self.overflowed.fetch_add(1, Ordering::Relaxed);
        }
        (change, handed)
    }

    /// `serve --change-every`: a change of the tool list every `every`, for as long as
    /// the hub lives.
    pub fn spawn_timer(self: &Arc<Hub>, every: Duration) {
        let hub: Weak<Hub> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(hub) = hub.upgrade() else { return };
                hub.change(Kind::Tools);
            }
        });
    }
}

pub use crate::protocol::meta::now_us;

/// `_meta` of a listen's messages: the subscription id (unless the `listen-no-id` fault
/// drops it), plus `extra`.
fn meta(id: Option<&Value>, extra: &[(&str, Value)]) -> Value {
    let mut meta = serde_json::Map::new();
    if let Some(id) = id {
        meta.insert(META_SUBSCRIPTION_ID.into(), id.clone());
    }
    for (k, v) in extra {
        meta.insert((*k).into(), v.clone());
    }
    Value::Object(meta)
}

/// The acknowledgement: the honoured filter, and the last change before this listen.
pub fn acknowledgement(id: Option<&Value>, honoured: &Filter, hub: &Hub) -> Vec<u8> {
    let stamp = [
        (META_CHANGE, json!(hub.seq())),
        (META_CHANGE_SERVER, json!(hub.instance)),
    ];
    let params = json!({
        "notifications": honoured.to_json(),
        META: meta(id, &stamp),
    });
    crate::protocol::jsonrpc::encode_notification(m::SUBSCRIPTIONS_ACKNOWLEDGED, Some(&params))
}

/// A change notification of a listen.
pub fn notification(id: Option<&Value>, change: &Change, hub: &Hub) -> Vec<u8> {
    let stamp = [
        (META_CHANGE, json!(change.seq)),
        (META_CHANGED_AT, json!(change.at_us)),
        (META_CHANGE_SERVER, json!(hub.instance)),
    ];
    let mut params = json!({ META: meta(id, &stamp) });
    if let Kind::Updated(uri) = &change.kind {
        params["uri"] = json!(&**uri);
    }
    crate::protocol::jsonrpc::encode_notification(change.kind.method(), Some(&params))
}

/// The final response of a listen the server ends: `resultType: "complete"`.
pub fn complete(id: &Value) -> Value {
    json!({"resultType": "complete", META: {META_SUBSCRIPTION_ID: id}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_change_reaches_the_listeners_that_asked_in_order_and_a_full_queue_ends_one() {
        let hub = Hub::new(3);
        let tools = Filter {
            tools: true,
            ..Filter::default()
        };
        let prompts = Filter {
            prompts: true,
            ..Filter::default()
        };
        let mut a = hub.join(tools.clone()).expect("room");
        let mut b = hub.join(prompts).expect("room");
        let c = hub.join(tools.clone()).expect("room");
        assert_eq!(hub.join(tools.clone()).err(), Some(Full(3)));
        let (first, handed) = hub.change(Kind::Tools);
        assert_eq!((first.seq, handed), (1, 2));
        hub.change(Kind::Prompts);
        assert_eq!(a.changes.recv().await.map(|c| c.seq), Some(1));
        assert_eq!(b.changes.recv().await.map(|c| c.seq), Some(2));
        assert!(a.changes.try_recv().is_err(), "a did not ask for prompts");
        drop(c);
        assert_eq!(hub.open(), 2);
        // `a` stops reading: its queue fills, and the change after that ends it.
        for _ in 0..QUEUE {
            hub.change(Kind::Tools);
        }
        assert_eq!(hub.open(), 2);
        hub.change(Kind::Tools);
        assert_eq!(hub.open(), 1);
        assert_eq!(hub.overflowed.load(Ordering::Relaxed), 1);
        let mut n = 0;
        while a.changes.recv().await.is_some() {
            n += 1;
        }
        assert_eq!(n, QUEUE, "what it held is still delivered, then it ends");
    }

    #[test]
    fn a_filter_is_read_from_params_and_refused_when_malformed() {
        let f = Filter::from_params(&json!({"notifications": {"toolsListChanged": true,
            "resourceSubscriptions": ["fleet://resources/1"]}}))
        .expect("valid");
        assert!(f.tools && !f.prompts && f.wants(&Kind::Updated("fleet://resources/1".into())));
        assert!(!f.wants(&Kind::Updated("fleet://resources/2".into())));
        assert_eq!(f.unasked(), Some(Kind::Prompts));
        assert!(Filter::from_params(&json!({})).is_err());
        assert!(Filter::from_params(&json!({"notifications": {"toolsListChanged": 1}})).is_err());
        assert!(
            Filter::from_params(&json!({"notifications": {"resourceSubscriptions": [1]}})).is_err()
        );
    }
}
