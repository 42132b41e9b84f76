//! The numbered changes of `mcp-fleet serve` that the run's listeners have seen, for
//! the changes a listener was owed and never got.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use tokio::time::Instant;

/// Changes the fleet remembers having seen, for the listeners that close later.
const LOG_KEPT: usize = 4096;

/// The numbered changes (`mcp-fleet serve`) the run's listeners have seen, by server
/// process, and when one first did: a listener that closes is owed every change of its
/// server that others had a request timeout before.
#[derive(Debug, Default)]
pub struct ChangeLog {
    servers: Mutex<HashMap<u64, Seen>>,
}

#[derive(Debug, Default)]
struct Seen {
    latest: u64,
    first: VecDeque<(u64, Instant)>,
}

impl ChangeLog {
    pub(super) fn saw(&self, server: u64, seq: u64) {
        let mut servers = match self.servers.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let seen = servers.entry(server).or_default();
        if seq > seen.latest {
            seen.latest = seq;
            seen.first.push_back((seq, Instant::now()));
            if seen.first.len() > LOG_KEPT {
                seen.first.pop_front();
            }
        }
    }

    /// Changes of `server` numbered above `after` that a listener had by `by`.
    pub(super) fn owed(&self, server: u64, after: u64, by: Instant) -> u64 {
        let servers = match self.servers.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        servers.get(&server).map_or(0, |seen| {
            seen.first
                .iter()
                .filter(|(n, t)| *n > after && *t <= by)
                .count() as u64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_closing_listener_is_owed_what_others_had_a_timeout_ago() {
        let log = ChangeLog::default();
        log.saw(7, 1);
        log.saw(7, 2);
        log.saw(7, 2);
        log.saw(8, 5);
        let later = Instant::now() + Duration::from_secs(1);
        assert_eq!(log.owed(7, 0, later), 2);
        assert_eq!(log.owed(7, 1, later), 1);
        assert_eq!(log.owed(7, 2, later), 0);
        // Another server's numbers are its own.
        assert_eq!(log.owed(8, 2, later), 1);
        assert_eq!(log.owed(9, 0, later), 0);
        // Seen only now: not owed to one judged as of a moment ago.
        let before = Instant::now().checked_sub(Duration::from_secs(1));
        if let Some(before) = before {
            assert_eq!(log.owed(7, 0, before), 0);
        }
    }
}
