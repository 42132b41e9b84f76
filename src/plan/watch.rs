//! `[watch]` + `--server-pid`/`--server-cgroup`/`--server-metrics` → [`Watch`]: which of
//! the server's resources the run samples. Only the shape is checked here; whether the
//! processes and the cgroup exist is checked when the run starts (they may be started
//! between `validate` and `run`).

use super::error::PlanError;
use super::secrets::{expand, refuse_masked, url_is_masked};
use crate::profile::WatchSection;
use crate::redact;
use std::path::PathBuf;
use url::Url;

/// What to watch besides the generator itself (and the stdio children, always watched).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Watch {
    /// Processes of the server; their figures are summed.
    pub server_pids: Vec<u32>,
    /// A cgroup v2 folder holding the server.
    pub server_cgroup: Option<PathBuf>,
    /// The server's Prometheus text endpoint (secrets expanded: render with `redact`).
    pub server_metrics: Option<Url>,
    /// Extra scraped metric names, kept as `scrape.NAME`.
    pub series: Vec<String>,
}

impl Watch {
    pub fn from_section(w: &WatchSection, origin: &str) -> Result<Watch, PlanError> {
        if let Some(&pid) = w.server_pid.iter().find(|&&p| p == 0) {
            return Err(PlanError::new(
                origin,
                "watch.server_pid",
                format!("{pid} is not a process id"),
                "give the server's pid, e.g. --server-pid $(pgrep -f my-server)",
            ));
        }
        let mut server_pids = w.server_pid.clone();
        server_pids.sort_unstable();
        server_pids.dedup();
        let server_cgroup = match &w.server_cgroup {
            Some(p) if p.trim().is_empty() => {
                return Err(PlanError::new(
                    origin,
                    "watch.server_cgroup",
                    "is empty",
                    "give a cgroup v2 folder, e.g. /sys/fs/cgroup/system.slice/my.service",
                ))
            }
            Some(p) => Some(PathBuf::from(p.trim())),
            None => None,
        };
        let server_metrics = match &w.server_metrics {
            Some(raw) => Some(metrics_url(
                &expand(raw, "watch.server_metrics", origin)?,
                origin,
            )?),
            None => None,
        };
        for name in &w.series {
            let valid = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == ':')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
            if !valid {
                return Err(PlanError::new(
                    origin,
                    "watch.series",
                    format!("{name:?} is not a Prometheus metric name"),
                    "use letters, digits, '_' and ':', e.g. \"mcp_active_sessions\"",
                ));
            }
        }
        if !w.series.is_empty() && server_metrics.is_none() {
            return Err(PlanError::new(
                origin,
                "watch.series",
                "names metrics but there is no endpoint to scrape them from",
                "set watch.server_metrics (or --server-metrics URL)",
            ));
        }
        Ok(Watch {
            server_pids,
            server_cgroup,
            server_metrics,
            series: w.series.clone(),
        })
    }

    /// Whether anything beyond the generator and stdio children is watched.
    pub fn is_empty(&self) -> bool {
        self.server_pids.is_empty() && self.server_cgroup.is_none() && self.server_metrics.is_none()
    }

    /// One line for the plan's banner; `None` when nothing is asked.
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.server_pids.is_empty() {
            let pids: Vec<String> = self.server_pids.iter().map(u32::to_string).collect();
            parts.push(format!("pid {}", pids.join(",")));
        }
        if let Some(c) = &self.server_cgroup {
            parts.push(format!("cgroup {}", c.display()));
        }
        if let Some(u) = &self.server_metrics {
            parts.push(format!("metrics {}", redact::url(u)));
        }
        if !self.series.is_empty() {
            parts.push(format!("series {}", self.series.join(",")));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

fn metrics_url(text: &str, origin: &str) -> Result<Url, PlanError> {
    let key = "watch.server_metrics";
    let url = Url::parse(text).map_err(|e| {
        PlanError::new(
            origin,
            key,
            format!("{:?} is not a URL ({e})", redact::url(text)),
            "use e.g. http://127.0.0.1:9090/metrics",
        )
    })?;
    refuse_masked(url_is_masked(&url), key, origin)?;
    match url.scheme() {
        "http" => Ok(url),
        other => Err(PlanError::new(
            origin,
            key,
            format!("scheme {other:?} cannot be scraped"),
            "use an http:// URL (put the endpoint on a loopback or private address)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_section_resolves_and_bad_values_name_their_key() {
        let w = Watch::from_section(
            &WatchSection {
                server_pid: vec![7, 3, 7],
                server_cgroup: Some("/sys/fs/cgroup/x".into()),
                server_metrics: Some("http://u:secret@127.0.0.1:9/metrics".into()),
                series: vec!["mcp_active_sessions".into()],
            },
            "p.toml",
        )
        .expect("resolves");
        assert_eq!(w.server_pids, vec![3, 7]);
        let text = w.describe().unwrap_or_default();
        assert!(
            text.contains("pid 3,7") && !text.contains("secret"),
            "{text}"
        );
        let bad = |s: WatchSection| {
            Watch::from_section(&s, "p.toml")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let e = bad(WatchSection {
            server_metrics: Some("ftp://x/metrics".into()),
            ..Default::default()
        });
        assert!(e.contains("watch.server_metrics"), "{e}");
        let e = bad(WatchSection {
            series: vec!["not a name".into()],
            server_metrics: Some("http://x/metrics".into()),
            ..Default::default()
        });
        assert!(e.contains("watch.series"), "{e}");
        let e = bad(WatchSection {
            series: vec!["x".into()],
            ..Default::default()
        });
        assert!(e.contains("server_metrics"), "{e}");
    }
}
