//! Durations, rates and sizes as profiles and flags write them (`"250ms"`, `"500/s"`,
//! `"16MiB"`), read
//! into numbers with an error that names the key.

use super::error::PlanError;
use std::time::Duration;

/// `"250ms"`, `"10s"`, `"5m"` → a duration.
pub fn parse_duration(text: &str, key: &str, origin: &str) -> Result<Duration, PlanError> {
    humantime::parse_duration(text.trim()).map_err(|e| {
        PlanError::new(
            origin,
            key,
            format!("{text:?} is not a duration ({e})"),
            "write a number with a unit, e.g. \"250ms\", \"10s\", \"5m\"",
        )
    })
}

/// A size in bytes: `65536`, `512KiB`, `16MiB` (more than zero).
pub fn parse_size(text: &str, key: &str, origin: &str) -> Result<usize, PlanError> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let scale: usize = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1024,
        "MiB" => 1024 * 1024,
        "GiB" => 1024 * 1024 * 1024,
        _ => 0,
    };
    number
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            PlanError::new(
                origin,
                key,
                format!("{text:?} is not a size in bytes"),
                "write a positive number of bytes, optionally with KiB, MiB or GiB, e.g. \"16MiB\"",
            )
        })
}

/// `"500/s"`, `"30/m"`, `"0.5/s"` → sessions per second.
pub fn parse_rate(text: &str, key: &str, origin: &str) -> Result<f64, PlanError> {
    let bad = || {
        PlanError::new(
            origin,
            key,
            format!("{text:?} is not a rate"),
            "write a number per unit, e.g. \"500/s\", \"30/m\" or \"2/h\"",
        )
    };
    let (n, unit) = text.trim().split_once('/').ok_or_else(bad)?;
    let n: f64 = n.trim().parse().map_err(|_| bad())?;
    let per = match unit.trim() {
        "s" | "sec" | "second" => 1.0,
        "m" | "min" | "minute" => 60.0,
        "h" | "hour" => 3600.0,
        _ => return Err(bad()),
    };
    if !n.is_finite() || n < 0.0 {
        return Err(bad());
    }
    Ok(n / per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_bytes_with_binary_suffixes() {
        let bytes = |t| parse_size(t, "target.max_message_size", "cli").expect(t);
        assert_eq!(bytes("65536"), 65536);
        assert_eq!(bytes("512KiB"), 512 * 1024);
        assert_eq!(bytes(" 16MiB "), 16 * 1024 * 1024);
        for bad in ["0", "1MB", "x", "KiB", "-5"] {
            let e = parse_size(bad, "target.max_message_size", "cli").expect_err(bad);
            assert!(e.to_string().contains("target.max_message_size"), "{e}");
        }
    }

    #[test]
    fn rates_parse() {
        assert_eq!(parse_rate("500/s", "k", "o").expect("rate"), 500.0);
        assert_eq!(parse_rate("30/m", "k", "o").expect("rate"), 0.5);
        assert!(parse_rate("fast", "k", "o").is_err());
        assert!(parse_rate("5/week", "k", "o").is_err());
        assert!(parse_rate("-1/s", "k", "o").is_err());
    }

    #[test]
    fn durations_name_the_key() {
        assert_eq!(
            parse_duration(" 250ms ", "k", "o").expect("duration"),
            Duration::from_millis(250)
        );
        let e = parse_duration("soon", "load.duration", "p.toml").expect_err("bad");
        assert!(e
            .to_string()
            .starts_with("p.toml: `load.duration`: \"soon\""));
    }
}
