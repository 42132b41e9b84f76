//! What the run's traffic did to its long-lived sessions, over time: fires the `[load]
//! events` reconnect storms at their times, and follows the live long-lived sessions
//! (sampled every [`TICK`]) through storms and unreachable spells, to tell how many came
//! back and how long that took. The records (`metrics::traffic`) land in [`LiveCounters`]
//! as they change, so the live view shows them and nothing is lost when the fleet stops
//! this task.

use crate::client::StopSignals;
use crate::metrics::traffic::{OutageRecord, StormRecord};
use crate::metrics::LiveCounters;
use crate::plan::LoadEvent;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How often the live count is read: the resolution of every recovery time.
pub const TICK: Duration = Duration::from_millis(50);

/// Long-lived sessions lost (the live count fell) and not back yet: maybe the start of
/// an outage, whose `from` it then is.
#[derive(Debug, Clone, Copy)]
struct Loss {
    at: Duration,
    before: u64,
}

/// Run until the fleet drains (the caller aborts it when the load ends).
/// Storm times count from `start`, the fleet's (shared) start.
pub(super) async fn follow(
    start: Instant,
    events: Vec<LoadEvent>,
    live: Arc<LiveCounters>,
    stop: StopSignals,
) {
    let storm = &stop.storm;
    let mut events = events.into_iter().peekable();
    let mut last = storm.live();
    let mut established = storm.established_total();
    let mut loss: Option<Loss> = None;
    let mut ticks = tokio::time::interval(TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            () = stop.drain.cancelled() => return,
        }
        let now = start.elapsed();
        let count = storm.live();
        let mut log = live.traffic_mut();
        while let Some(e) = events.next_if(|e| e.at <= now) {
            if let crate::plan::Storm::ListChanged { count } = e.storm {
                // Made by the listening sessions; nothing is dropped.
                stop.changes.request(u64::from(count));
                continue;
            }
            let dropped = storm.fire();
            log.storms.push(StormRecord {
                at: now,
                kind: e.storm.name(),
                dropped,
                recovered: 0,
                recovery: None,
            });
            loss = None;
        }
        let fresh = storm.fresh();
        let storming = log.storms.last_mut().filter(|s| s.recovery.is_none());
        if let Some(s) = storming {
            s.recovered = s.recovered.max(fresh.min(s.dropped));
            if fresh >= s.dropped {
                s.recovery = Some(now - s.at);
            }
        } else if let Some(s) = log.storms.last_mut() {
            s.recovered = s.recovered.max(fresh.min(s.dropped));
        }
        let storming = log.storms.last().is_some_and(|s| s.recovery.is_none());
        // A loss starts when the count falls, and is over once it is back.
        match loss {
            Some(l) if count >= l.before => loss = None,
            None if count < last && !storming => {
                loss = Some(Loss {
                    at: now.saturating_sub(TICK),
                    before: last,
                })
            }
            _ => {}
        }
        let total = storm.established_total();
        if total > established {
            live.reached();
            established = total;
        }
        let spell = live
            .unreachable_since()
            .map(|since| since.saturating_duration_since(start));
        let open = log.outages.last_mut().filter(|o| o.to.is_none());
        match (open, spell) {
            (None, Some(since)) => {
                let (from, before) = match loss {
                    Some(l) => (l.at.min(since), l.before),
                    None => (since, last.max(count)),
                };
                log.outages.push(OutageRecord {
                    from,
                    to: None,
                    recovery: None,
                    sessions_before: before,
                });
            }
            (Some(o), None) => o.to = Some(now),
            _ => {}
        }
        if let Some(o) = log.outages.last_mut() {
            if let (Some(to), None) = (o.to, o.recovery) {
                if count >= o.sessions_before && o.sessions_before > 0 {
                    o.recovery = Some(now - to);
                    loss = None;
                }
            }
        }
        last = count;
    }
}
