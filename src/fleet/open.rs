//! The open loop: sessions started at their intended times, whatever the server's
//! speed. One loop for every schedule of arrivals — a rate curve's (`fleet::schedule`)
//! and the plan's list of set arrivals alike — so sharding, the in-flight cap, drops,
//! lag and the deadline rules are the same for both.

use super::{client_seed, Shared};
use crate::client::{ClientMemory, Work};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Start session k at `offsets`' k-th offset from the start (arrival k: its seed, and
/// its [`ClientMemory`] index, by which the work knows a set arrival's persona); never
/// wait for the server. `offsets` are in time order. An arrival that cannot reach the
/// target is counted as unreachable, never retried: the schedule, not the failures,
/// decides how many connections are tried. Under a shard, only our arrivals
/// (k mod N = I), each at its own time and with its own seed, and our share of the
/// in-flight cap. An arrival whose time came before the deadline is started even when
/// the loop gets to it after the deadline (a busy generator is late; its lag is
/// recorded): the schedule, which the plan bounds by the deadline, is the run's,
/// whatever the timing. Any other drain (Ctrl-C, the budget, giving up) stops it.
pub(super) async fn open<W: Work>(
    offsets: impl Iterator<Item = Duration>,
    max_in_flight: u32,
    s: &Shared<W>,
) {
    let start = s.start;
    let cap = usize::try_from(s.shard.share(u64::from(max_in_flight)).max(1)).unwrap_or(1);
    let mut tasks = JoinSet::new();
    for (k, offset) in offsets.enumerate() {
        let k = k as u64;
        if !s.shard.owns(k) {
            continue;
        }
        if s.budget.exhausted() {
            break;
        }
        let intended = start + offset;
        if s.deadline_drained.load(Ordering::Acquire) && intended > Instant::now() {
            break; // after the deadline
        }
        let stopped = || {
            s.stop.abort.is_cancelled()
                || (s.stop.drain.is_cancelled() && !s.deadline_drained.load(Ordering::Acquire))
        };
        tokio::select! {
            biased;
            () = tokio::time::sleep_until(intended) => {}
            () = s.stop.drain.cancelled(), if !s.deadline_drained.load(Ordering::Acquire) => {}
        }
        if stopped() || Instant::now() < intended || !s.budget.claim() {
            break;
        }
        s.work.started_late(intended, Instant::now());
        while tasks.try_join_next().is_some() {}
        if tasks.len() >= cap {
            s.live.dropped.fetch_add(1, Ordering::Relaxed);
            s.work.dropped();
            continue;
        }
        let (work, live, stop) = (s.work.clone(), s.live.clone(), s.stop.clone());
        let mut rng = SmallRng::seed_from_u64(client_seed(s.seed, k));
        tasks.spawn(async move {
            live.session_started();
            let mut memory = ClientMemory::new(k);
            let outcome = work.session(intended, &mut rng, &mut memory, &stop).await;
            live.in_flight.fetch_sub(1, Ordering::Relaxed);
            live.session_ended(outcome);
        });
    }
    while tasks.join_next().await.is_some() {}
}
