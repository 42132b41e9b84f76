//! The outages and reconnect storms the fleet followed (`metrics::traffic`), in the form
//! `summary.soak` reports them, and as the live view's one-line notes.

use crate::metrics::traffic::TrafficLog;
use crate::summary::soak::{Outage, Storm};
use std::time::Duration;

/// `summary.soak.outages` and `summary.soak.storms`; `end` is the run's length (an outage
/// still going on lasts until then).
pub fn outages_and_storms(log: &TrafficLog, end: Duration) -> (Vec<Outage>, Vec<Storm>) {
    let s = |d: Duration| round_ms(d.as_secs_f64());
    let outages = log
        .outages
        .iter()
        .map(|o| Outage {
            from_s: s(o.from),
            to_s: o.to.map(s),
            downtime_s: s(o.to.unwrap_or(end).saturating_sub(o.from)),
            recovery_s: o.recovery.map(s),
            sessions_before: o.sessions_before,
        })
        .collect();
    let storms = log
        .storms
        .iter()
        .map(|t| Storm {
            at_s: s(t.at),
            kind: t.kind.to_string(),
            dropped: t.dropped,
            recovered: t.recovered,
            recovery_s: t.recovery.map(s),
        })
        .collect();
    (outages, storms)
}

/// Seconds to the millisecond: the follower samples every 50 ms, finer is noise.
fn round_ms(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The live view's notes: the latest storm, and the latest outage once it is over (the
/// view says TARGET UNREACHABLE while one goes on).
pub fn live_notes(log: &TrafficLog) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(t) = log.storms.last() {
        let back = match t.recovery {
            Some(r) => format!(" after {:.1} s", r.as_secs_f64()),
            None => String::new(),
        };
        notes.push(format!(
            "storm at {}: {}/{} back{back}",
            clock(t.at),
            t.recovered,
            t.dropped
        ));
    }
    if let Some(o) = log.outages.last() {
        if let Some(to) = o.to {
            let back = match o.recovery {
                Some(r) => format!(", sessions back after {:.1} s", r.as_secs_f64()),
                None => format!(", sessions not back yet (were {})", o.sessions_before),
            };
            notes.push(format!(
                "target was down {} for {:.1} s{back}",
                clock(o.from),
                to.saturating_sub(o.from).as_secs_f64()
            ));
        }
    }
    notes
}

/// `10m`, `1m30s`, `2.5s`: when, from the start.
fn clock(d: Duration) -> String {
    if d.as_secs() >= 60 {
        humantime::format_duration(Duration::from_secs(d.as_secs())).to_string()
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::traffic::{OutageRecord, StormRecord};

    #[test]
    fn records_become_summary_entries_and_live_notes() {
        let ms = Duration::from_millis;
        let log = TrafficLog {
            storms: vec![StormRecord {
                at: Duration::from_secs(600),
                kind: "reconnect",
                dropped: 2000,
                recovered: 1998,
                recovery: None,
            }],
            outages: vec![
                OutageRecord {
                    from: ms(1500),
                    to: Some(ms(2600)),
                    recovery: Some(ms(400)),
                    sessions_before: 10,
                },
                OutageRecord {
                    from: ms(5000),
                    to: None,
                    recovery: None,
                    sessions_before: 10,
                },
            ],
        };
        let (outages, storms) = outages_and_storms(&log, ms(8000));
        assert_eq!(outages[0].downtime_s, 1.1);
        assert_eq!(outages[0].recovery_s, Some(0.4));
        assert_eq!((outages[1].to_s, outages[1].downtime_s), (None, 3.0));
        assert_eq!(
            (storms[0].at_s, storms[0].kind.as_str()),
            (600.0, "reconnect")
        );
        assert_eq!(storms[0].recovery_s, None);
        let notes = live_notes(&log);
        assert_eq!(
            notes,
            ["storm at 10m: 1998/2000 back"],
            "the outage goes on"
        );
    }
}
