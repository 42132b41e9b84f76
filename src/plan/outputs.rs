//! `[outputs]` + `--push`/`--push-every`/`--run-label` → [`Outputs`]: the databases a run
//! pushes its figures to while it goes. Only the shape is checked here; a receiver that
//! is down is the run's to report, never a reason not to run.

use super::error::PlanError;
use super::quantity::parse_duration;
use super::secrets::{expand, refuse_masked, url_is_masked};
use crate::profile::OutputsSection;
use crate::redact;
use std::time::Duration;
use url::Url;

/// How often figures are pushed unless `push_every` says.
pub const DEFAULT_PUSH_EVERY: Duration = Duration::from_secs(5);

/// The wire a push speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushKind {
    /// Prometheus remote write 1.0 (protobuf, snappy) with native histograms.
    PrometheusRw,
    /// OTLP metrics over HTTP/protobuf, latencies as exponential histograms.
    Otlp,
}

impl PushKind {
    pub fn name(self) -> &'static str {
        match self {
            PushKind::PrometheusRw => "prometheus-rw",
            PushKind::Otlp => "otlp",
        }
    }
}

/// One receiver.
#[derive(Debug, Clone, PartialEq)]
pub struct PushTarget {
    pub kind: PushKind,
    /// Secrets expanded: render it with `redact`.
    pub url: Url,
}

/// `[outputs]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    pub push: Vec<PushTarget>,
    pub every: Duration,
    /// The `run` label, when given; otherwise the run names itself at its start.
    pub run_label: Option<String>,
    /// `run --requests FILE`: every phase sample written there (`.zst`: compressed).
    pub requests: Option<std::path::PathBuf>,
}

impl Default for Outputs {
    fn default() -> Self {
        Outputs {
            push: Vec::new(),
            every: DEFAULT_PUSH_EVERY,
            run_label: None,
            requests: None,
        }
    }
}

impl Outputs {
    pub fn from_section(o: &OutputsSection, origin: &str) -> Result<Outputs, PlanError> {
        let push = o
            .push
            .iter()
            .map(|entry| target(entry, origin))
            .collect::<Result<Vec<_>, _>>()?;
        let every = match &o.push_every {
            Some(text) => parse_duration(text, "outputs.push_every", origin)?,
            None => DEFAULT_PUSH_EVERY,
        };
        if every < Duration::from_secs(1) {
            return Err(PlanError::new(
                origin,
                "outputs.push_every",
                format!("{every:?} is shorter than a second"),
                "push every 1s or more, e.g. 5s",
            ));
        }
        let run_label = match &o.run_label {
            Some(l) if !label_ok(l) => {
                return Err(PlanError::new(
                    origin,
                    "outputs.run_label",
                    format!("{l:?} is not a run label"),
                    "use 1 to 128 letters, digits, '-', '_', '.' or ':'",
                ))
            }
            other => other.clone(),
        };
        Ok(Outputs {
            push,
            every,
            run_label,
            requests: None,
        })
    }
}

fn label_ok(l: &str) -> bool {
    (1..=128).contains(&l.len())
        && l.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

fn target(entry: &str, origin: &str) -> Result<PushTarget, PlanError> {
    let key = "outputs.push";
    let (kind, raw) = entry.split_once('=').ok_or_else(|| {
        PlanError::new(
            origin,
            key,
            format!("{:?} names no receiver", redact::url(entry)),
            "write KIND=URL, e.g. prometheus-rw=http://127.0.0.1:9090/api/v1/write",
        )
    })?;
    let kind = match kind.trim() {
        "prometheus-rw" => PushKind::PrometheusRw,
        "otlp" => PushKind::Otlp,
        other => {
            return Err(PlanError::new(
                origin,
                key,
                format!("{other:?} is not a push kind"),
                "use prometheus-rw=URL (Prometheus remote write) or otlp=URL (OTLP/HTTP, e.g. http://127.0.0.1:4318/v1/metrics)",
            ))
        }
    };
    let text = expand(raw.trim(), key, origin)?;
    let url = Url::parse(&text).map_err(|e| {
        PlanError::new(
            origin,
            key,
            format!("{:?} is not a URL ({e})", redact::url(&text)),
            "use e.g. http://127.0.0.1:9090/api/v1/write",
        )
    })?;
    refuse_masked(url_is_masked(&url), key, origin)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(PlanError::new(
            origin,
            key,
            format!("scheme {:?} cannot receive a push", url.scheme()),
            "use an http:// or https:// URL",
        ));
    }
    Ok(PushTarget { kind, url })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(push: &[&str]) -> OutputsSection {
        OutputsSection {
            push: push.iter().map(|s| s.to_string()).collect(),
            ..OutputsSection::default()
        }
    }

    #[test]
    fn a_push_resolves_and_bad_entries_name_their_key_without_secrets() {
        let o = Outputs::from_section(
            &section(&["prometheus-rw=https://u:pw@example.com/api/v1/write"]),
            "p.toml",
        )
        .expect("valid");
        assert_eq!(o.push[0].kind, PushKind::PrometheusRw);
        assert_eq!(o.push[0].url.password(), Some("pw"), "kept to send");
        let otlp = Outputs::from_section(&section(&["otlp=http://127.0.0.1:4318/v1/metrics"]), "p")
            .expect("valid");
        assert_eq!(otlp.push[0].kind, PushKind::Otlp);
        assert_eq!(o.every, DEFAULT_PUSH_EVERY);
        for (bad, says) in [
            ("http://x/api/v1/write", "names no receiver"),
            ("graphite=http://x", "is not a push kind"),
            ("prometheus-rw=ftp://u:pw@x/", "cannot receive a push"),
            ("prometheus-rw=not a url pw", "is not a URL"),
        ] {
            let e = Outputs::from_section(&section(&[bad]), "p.toml")
                .expect_err(bad)
                .to_string();
            assert!(e.contains("outputs.push") && e.contains(says), "{bad}: {e}");
            assert!(!e.contains("pw@"), "no password shown: {e}");
        }
        let short = OutputsSection {
            push_every: Some("200ms".into()),
            ..OutputsSection::default()
        };
        assert!(Outputs::from_section(&short, "p").is_err());
        let label = OutputsSection {
            run_label: Some("a b".into()),
            ..OutputsSection::default()
        };
        assert!(Outputs::from_section(&label, "p").is_err());
    }
}
