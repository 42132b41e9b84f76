//! The load told back to people, in the words the run banner, `validate` and
//! `summary.json`'s `run.load.description` use: "closed model, 8 clients", "open model,
//! 500/s, at most 10000 in flight", "arrivals at set times, 5 sessions from 0s to 400ms".

use crate::plan::load::{Curve, Load, LoadModel};
use std::time::Duration;

impl Load {
    pub fn describe(&self) -> String {
        let model = self.describe_model();
        match self.iteration_rate {
            Some(r) => format!("{model}; long-lived sessions {r} iterations/s in all"),
            None => model,
        }
    }

    fn describe_model(&self) -> String {
        match &self.model {
            LoadModel::Closed { clients } if clients.stages.is_empty() => {
                format!("closed model, {} clients", clients.start)
            }
            LoadModel::Closed { clients } => {
                format!("closed model, stages {}", stages(clients, ""))
            }
            LoadModel::Open {
                rate,
                max_in_flight,
            } => {
                let shape = if rate.stages.iter().all(|s| s.target == rate.start) {
                    format!("{}/s", rate.start)
                } else {
                    format!("stages {}", stages(rate, "/s"))
                };
                format!("open model, {shape}, at most {max_in_flight} in flight")
            }
            LoadModel::Arrivals {
                arrivals,
                max_in_flight,
            } => {
                let last = arrivals.last().map_or(Duration::ZERO, |a| a.at);
                let mut text = format!(
                    "arrivals at set times, {} sessions from 0s to {}, at most {max_in_flight} in flight",
                    arrivals.len(),
                    humantime::format_duration(last)
                );
                // A duration shorter than the list leaves its later arrivals out: say so.
                let before = |d: Duration| arrivals.iter().filter(|a| a.at <= d).count();
                if let Some(n) = self.duration.map(before).filter(|&n| n < arrivals.len()) {
                    text.push_str(&format!(" ({n} before the deadline)"));
                }
                text
            }
        }
    }
}

fn stages(c: &Curve, unit: &str) -> String {
    c.stages
        .iter()
        .map(|s| {
            format!(
                "{}{unit}:{}",
                s.target,
                humantime::format_duration(s.duration)
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}
