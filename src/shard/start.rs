//! `--start-at TIME`: one wall-clock moment every shard of a run starts at. A run parses
//! it first ([`StartAt::parse`], RFC 3339 or `+90s` from now), prepares everything, then
//! checks that it is not late ([`StartAt::ready`]: more than [`START_TOLERANCE`] after
//! TIME fails, rather than skewing the test) and waits; the schedule, the intervals and
//! the `lag` phase are anchored on TIME, and [`Start`] says how late the schedule really
//! began.

use super::Shard;
use std::time::{Duration, SystemTime};

/// How late after `--start-at` a shard may be ready and still start: later than this it
/// fails (exit 2) instead of starting behind the others.
pub const START_TOLERANCE: Duration = Duration::from_secs(1);

/// A parsed `--start-at`, with its text for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartAt {
    pub at: SystemTime,
    pub text: String,
    /// Given as `+DURATION`: a moment of this process's own, which no other shard shares.
    pub relative: bool,
}

/// When a run's schedule began: its anchor (`--start-at`, or when it was ready) and how
/// late the schedule really began after it (for the state file: the start skew).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub at: SystemTime,
    pub late: Duration,
}

impl Start {
    /// The start skew in µs (saturating).
    pub fn late_us(&self) -> u64 {
        u64::try_from(self.late.as_micros()).unwrap_or(u64::MAX)
    }
}

/// A `--start-at` that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StartError {
    #[error("--start-at {0:?} with --shard: a time relative to when each shard process starts is a different moment in every shard, and merge refuses shards that did not start together\nfix: give every shard one absolute time, e.g. --start-at \"$(date -u -d +60sec +%Y-%m-%dT%H:%M:%SZ)\" (or run --processes N, which picks one for its shards)")]
    RelativeSharded(String),
    #[error("--start-at {0:?}: not an RFC 3339 time nor +DURATION\nfix: e.g. --start-at 2026-12-02T10:00:00Z (UTC), 2026-12-02T11:00:00+01:00, or +90s (from now); give every shard the same time")]
    Syntax(String),
    #[error("{who} was ready {late:.1} s after --start-at {at} (more than the {tolerance} s allowed): it would start behind the other shards\nfix: give every shard the same --start-at, far enough ahead for all of them to be ready (e.g. a minute ahead)")]
    Late {
        who: String,
        late: f64,
        at: String,
        tolerance: u64,
    },
}

impl StartAt {
    /// RFC 3339 (`2026-12-02T10:00:00Z`, `…+01:00`, fractions of a second), or `+DURATION`
    /// from `now` (`+90s`, `+2m`).
    pub fn parse(text: &str, now: SystemTime) -> Result<StartAt, StartError> {
        let t = text.trim();
        let bad = || StartError::Syntax(text.to_string());
        let relative = t.starts_with('+');
        let at = if let Some(rel) = t.strip_prefix('+') {
            let d = humantime::parse_duration(rel.trim()).map_err(|_| bad())?;
            now.checked_add(d).ok_or_else(bad)?
        } else {
            parse_rfc3339(t).ok_or_else(bad)?
        };
        Ok(StartAt {
            at,
            text: t.to_string(),
            relative,
        })
    }

    /// Whether `shard`, ready at `now`, may still start: `Ok(wait)` until TIME (zero when
    /// TIME has passed within the tolerance), else [`StartError::Late`].
    pub fn ready(&self, shard: Shard, now: SystemTime) -> Result<Duration, StartError> {
        if self.relative && shard.is_sharded() {
            return Err(StartError::RelativeSharded(self.text.clone()));
        }
        match self.at.duration_since(now) {
            Ok(wait) => Ok(wait),
            Err(e) if e.duration() <= START_TOLERANCE => Ok(Duration::ZERO),
            Err(e) => Err(StartError::Late {
                who: if shard.is_sharded() {
                    format!("shard {shard}")
                } else {
                    "the run".to_string()
                },
                late: e.duration().as_secs_f64(),
                at: self.text.clone(),
                tolerance: START_TOLERANCE.as_secs(),
            }),
        }
    }
}

/// RFC 3339 with `Z`, a numeric offset (`+01:00`, `-0530`) or none (UTC).
fn parse_rfc3339(t: &str) -> Option<SystemTime> {
    // A numeric offset after the time: the last '+' or '-' past the date's dashes.
    let time_part = t.find(['T', 't', ' '])?;
    let (base, offset) = match t[time_part..].rfind(['+', '-']) {
        Some(i) => {
            let i = time_part + i;
            (&t[..i], Some(&t[i..]))
        }
        None => (t, None),
    };
    let base = humantime::parse_rfc3339_weak(base.trim_end_matches(['Z', 'z'])).ok()?;
    let Some(offset) = offset else {
        return Some(base);
    };
    let (sign, hm) = offset.split_at(1);
    let digits: String = hm.chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (h, m): (u64, u64) = (digits[..2].parse().ok()?, digits[2..].parse().ok()?);
    if h > 23 || m > 59 {
        return None;
    }
    let off = Duration::from_secs(h * 3600 + m * 60);
    // Local time = UTC + offset, so UTC = local − offset.
    if sign == "+" {
        base.checked_sub(off)
    } else {
        base.checked_add(off)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> SystemTime {
        humantime::parse_rfc3339(text).expect("a UTC time")
    }

    #[test]
    fn rfc3339_times_with_and_without_offsets() {
        let now = SystemTime::UNIX_EPOCH;
        let at = |t: &str| StartAt::parse(t, now).map(|s| s.at);
        let ten = utc("2026-12-02T10:00:00Z");
        assert_eq!(at("2026-12-02T10:00:00Z"), Ok(ten));
        assert_eq!(at(" 2026-12-02T10:00:00Z "), Ok(ten));
        assert_eq!(at("2026-12-02T10:00:00"), Ok(ten), "no offset: UTC");
        assert_eq!(at("2026-12-02T11:00:00+01:00"), Ok(ten));
        assert_eq!(at("2026-12-02T04:30:00-0530"), Ok(ten));
        assert_eq!(
            at("2026-12-02T10:00:00.250Z"),
            Ok(ten + Duration::from_millis(250))
        );
        for bad in [
            "",
            "tomorrow",
            "2026-12-02",
            "2026-13-02T10:00:00Z",
            "2026-12-02T10:00:00+1",
            "2026-12-02T10:00:00+25:00",
            "+",
            "+soon",
        ] {
            assert_eq!(at(bad), Err(StartError::Syntax(bad.into())), "{bad:?}");
        }
    }

    #[test]
    fn relative_times_count_from_now() {
        let now = utc("2026-12-02T10:00:00Z");
        let s = StartAt::parse("+90s", now).expect("parses");
        assert_eq!(s.at, now + Duration::from_secs(90));
        assert_eq!(s.text, "+90s");
        let s = StartAt::parse("+2m", now).expect("parses");
        assert_eq!(s.at, now + Duration::from_secs(120));
    }

    #[test]
    fn a_relative_time_is_refused_for_a_shard_and_kept_for_a_lone_run() {
        // Three shard processes given +3s each counted from their own start: three
        // moments, which merge then refused. An absolute time is the only shared one.
        let now = utc("2026-12-02T10:00:00Z");
        let s = StartAt::parse("+3s", now).expect("parses");
        let shard = Shard { index: 1, count: 3 };
        let refused = s.ready(shard, now).expect_err("refused");
        assert_eq!(refused, StartError::RelativeSharded("+3s".into()));
        assert!(refused.to_string().contains("\nfix: "), "{refused}");
        assert_eq!(s.ready(Shard::ONE, now), Ok(Duration::from_secs(3)));
        let absolute = StartAt::parse("2026-12-02T10:00:03Z", now).expect("parses");
        assert_eq!(absolute.ready(shard, now), Ok(Duration::from_secs(3)));
    }

    #[test]
    fn a_shard_ready_in_time_waits_and_a_late_one_fails() {
        let s = StartAt::parse("2026-12-02T10:00:00Z", SystemTime::UNIX_EPOCH).expect("ok");
        let shard = Shard { index: 2, count: 4 };
        let ms = |n: u64| Duration::from_millis(n);
        assert_eq!(s.ready(shard, s.at - ms(1_500)), Ok(ms(1_500)));
        assert_eq!(s.ready(shard, s.at), Ok(Duration::ZERO));
        assert_eq!(
            s.ready(shard, s.at + START_TOLERANCE),
            Ok(Duration::ZERO),
            "within the tolerance: start now, the lag shows it"
        );
        let late = s.ready(shard, s.at + ms(3_200)).expect_err("late");
        let text = late.to_string();
        assert!(
            text.starts_with(
                "shard 2/4 was ready 3.2 s after --start-at 2026-12-02T10:00:00Z (more than the 1 s allowed)"
            ),
            "{text}"
        );
        assert!(text.contains("\nfix: "), "{text}");
        // A time already past on the command line is the same error, for an unsharded run
        // too.
        let past = s.ready(Shard::ONE, s.at + ms(60_000)).expect_err("past");
        assert!(
            past.to_string()
                .starts_with("the run was ready 60.0 s after"),
            "{past}"
        );
    }

    #[test]
    fn the_skew_is_in_microseconds() {
        let s = Start {
            at: SystemTime::UNIX_EPOCH,
            late: Duration::from_nanos(2_345_678),
        };
        assert_eq!(s.late_us(), 2_345);
    }
}
