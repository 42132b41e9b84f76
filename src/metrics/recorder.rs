//! The sending side of the collector: a [`Recorder`] per virtual client, and
//! [`Snapshots`] for checkpoints. Both are channel senders: nothing on the hot path waits
//! for a lock.

use super::event::Event;
use super::push::PushFigures;
use super::stats::Stats;
use super::{Counter, Sample};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

/// The sending side, one per virtual client. Cloning is cheap.
#[derive(Debug, Clone)]
pub struct Recorder {
    tx: mpsc::UnboundedSender<Event>,
    /// The last session number handed out, shared by every clone.
    sessions: Arc<AtomicU64>,
}

impl Recorder {
    pub(super) fn new(tx: mpsc::UnboundedSender<Event>) -> Recorder {
        Recorder {
            tx,
            sessions: Arc::default(),
        }
    }

    /// A number for a session that starts: 1, 2, … in the order sessions start, unique
    /// within the run (or shard) whichever clone asks.
    pub fn next_session(&self) -> u64 {
        self.sessions.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn send(&self, event: Event) {
        // The collector outlives every recorder; a send error only happens at teardown.
        let _ = self.tx.send(event);
    }

    pub fn sample(&self, sample: Sample) {
        self.send(Event::Sample(sample));
    }

    pub fn count(&self, counter: Counter) {
        self.count_n(counter, 1);
    }

    pub fn count_n(&self, counter: Counter, n: u64) {
        if n > 0 {
            self.send(Event::Count { counter, n });
        }
    }
}

/// What a running collector is asked for besides samples.
#[derive(Debug)]
pub(super) enum Ask {
    /// The figures so far (a checkpoint).
    Stats(oneshot::Sender<Stats>),
    /// The figures so far as a push output sends them.
    Push(oneshot::Sender<PushFigures>),
}

/// Asks a running collector for the figures so far (a checkpoint, a push), without
/// stopping it and without a lock on the hot path: the request is a message like any
/// sample.
#[derive(Debug, Clone)]
pub struct Snapshots {
    tx: mpsc::UnboundedSender<Ask>,
}

impl Snapshots {
    pub(super) fn new(tx: mpsc::UnboundedSender<Ask>) -> Snapshots {
        Snapshots { tx }
    }

    /// The figures so far, with the finished intervals' rows as the timeline; `None`
    /// once the collector has finished.
    pub async fn take(&self) -> Option<Stats> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(Ask::Stats(reply)).ok()?;
        answer.await.ok()
    }

    /// The figures so far, cut and converted for a push output (cheap: the session
    /// cells' histograms as native ones, no copy of the rest); `None` once the
    /// collector has finished.
    pub async fn push_figures(&self) -> Option<PushFigures> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(Ask::Push(reply)).ok()?;
        answer.await.ok()
    }
}
