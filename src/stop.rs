//! Why a run stopped, and the signals that stop it. SIGINT, SIGTERM and SIGHUP all mean
//! "stop now, keep what was measured": arrivals stop, running sessions get the plan's
//! grace to finish, and a second signal abandons them at once. The results are written
//! either way; the exit code tells an interrupted run from a completed one (and a run
//! the fleet stopped because the target stayed unreachable).

use crate::client::StopSignals;
use crate::fleet::FleetEnd;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// A signal that stopped the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    Interrupt,
    Terminate,
    Hangup,
}

impl StopSignal {
    /// The conventional exit code of a program stopped by this signal (128 + number).
    pub fn exit_code(self) -> u8 {
        match self {
            StopSignal::Interrupt => 130,
            StopSignal::Terminate => 143,
            StopSignal::Hangup => 129,
        }
    }

    fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
            StopSignal::Hangup => "SIGHUP",
        }
    }
}

/// Why the run ended; `name()` is `run.stopped_by` in `summary.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The session budget (`--sessions`) was used up.
    Sessions,
    /// The deadline passed (`--duration`, or the end of the load's stages, which the plan
    /// turns into the run's duration).
    Duration,
    /// The target stayed unreachable for `--abort-on-unreachable`.
    Unreachable,
    /// A signal stopped the run.
    Signal(StopSignal),
    /// The live figures lost an `abort_on_fail` threshold.
    Threshold,
}

impl StopReason {
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Sessions => "sessions",
            StopReason::Duration => "duration",
            StopReason::Unreachable => "unreachable",
            StopReason::Threshold => "threshold",
            StopReason::Signal(StopSignal::Interrupt) => "interrupted",
            StopReason::Signal(StopSignal::Terminate) => "terminated",
            StopReason::Signal(StopSignal::Hangup) => "hangup",
        }
    }

    /// The reason [`StopReason::name`] names.
    pub fn from_name(name: &str) -> Option<StopReason> {
        [
            StopReason::Sessions,
            StopReason::Duration,
            StopReason::Unreachable,
            StopReason::Signal(StopSignal::Interrupt),
            StopReason::Signal(StopSignal::Terminate),
            StopReason::Signal(StopSignal::Hangup),
        ]
        .into_iter()
        .find(|r| r.name() == name)
    }

    /// A signal outranks how the fleet ended: the run was cut short.
    pub fn of(signal: Option<StopSignal>, fleet: FleetEnd) -> StopReason {
        match (signal, fleet) {
            (Some(s), _) => StopReason::Signal(s),
            (None, FleetEnd::Budget) => StopReason::Sessions,
            (None, FleetEnd::Deadline) => StopReason::Duration,
            (None, FleetEnd::Unreachable) => StopReason::Unreachable,
        }
    }

    /// The exit code when the run did not end as planned, whatever the thresholds say:
    /// 128 + N after signal N; 2 when the target stayed unreachable (a dead target is a
    /// run that could not be done, not a benchmark). `None`: the thresholds decide.
    pub fn exit_code(self) -> Option<u8> {
        match self {
            StopReason::Sessions | StopReason::Duration => None,
            StopReason::Unreachable => Some(2),
            // Lost is lost, whatever the whole run's figures say at the end.
            StopReason::Threshold => Some(1),
            StopReason::Signal(s) => Some(s.exit_code()),
        }
    }
}

/// Watches for SIGINT, SIGTERM and SIGHUP while the run goes on.
#[derive(Debug, Clone, Default)]
pub struct SignalWatch {
    received: Arc<OnceLock<StopSignal>>,
}

impl SignalWatch {
    /// Install the handlers: the first signal drains (no new sessions) and aborts what
    /// still runs after `grace`; a second one aborts at once. `quiet` keeps stderr clean.
    pub fn start(stop: StopSignals, grace: Duration, quiet: bool) -> std::io::Result<Self> {
        let mut listeners = Listeners {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        };
        let watch = SignalWatch::default();
        let received = watch.received.clone();
        tokio::spawn(async move {
            let first = listeners.next().await;
            let _ = received.set(first);
            if !quiet {
                crate::console::errln(format_args!(
                    "\n{} received: no new sessions; running ones get {} to finish (signal again to stop now)",
                    first.name(),
                    humantime::format_duration(grace)
                ));
            }
            stop.drain.cancel();
            tokio::select! {
                () = tokio::time::sleep(grace) => {}
                _ = listeners.next() => {}
            }
            stop.abort.cancel();
        });
        Ok(watch)
    }

    /// The first signal received, if any.
    pub fn received(&self) -> Option<StopSignal> {
        self.received.get().copied()
    }
}

struct Listeners {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Listeners {
    async fn next(&mut self) -> StopSignal {
        tokio::select! {
            _ = self.int.recv() => StopSignal::Interrupt,
            _ = self.term.recv() => StopSignal::Terminate,
            _ = self.hup.recv() => StopSignal::Hangup,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_outranks_how_the_fleet_ended() {
        let r = StopReason::of(Some(StopSignal::Terminate), FleetEnd::Budget);
        assert_eq!(r.name(), "terminated");
        assert_eq!(StopReason::of(None, FleetEnd::Deadline).name(), "duration");
        assert_eq!(StopReason::of(None, FleetEnd::Budget).name(), "sessions");
        assert_eq!(StopSignal::Interrupt.exit_code(), 130);
        assert_eq!(StopSignal::Terminate.exit_code(), 143);
    }

    #[test]
    fn a_target_that_stayed_unreachable_stops_the_run_with_exit_2() {
        let r = StopReason::of(None, FleetEnd::Unreachable);
        assert_eq!((r.name(), r.exit_code()), ("unreachable", Some(2)));
        let signal = StopReason::of(Some(StopSignal::Interrupt), FleetEnd::Unreachable);
        assert_eq!(signal.exit_code(), Some(130), "a signal still outranks it");
        assert_eq!(StopReason::Duration.exit_code(), None);
    }
}
