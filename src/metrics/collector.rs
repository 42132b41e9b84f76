//! The collector owns every histogram. Sessions send small `Copy` events over an
//! unbounded channel (no lock on the hot path); the collector task folds them into
//! [`Stats`] and hands the result back when every sender is gone.

use super::stats::Stats;
use super::{FailureKind, PersonaId, Phase, Sample};
use crate::transport::TransportKind;
use tokio::sync::mpsc;

/// How many example messages are kept per failure kind.
const EXAMPLES_PER_KIND: usize = 3;

/// What sessions report.
#[derive(Debug)]
pub enum Event {
    Sample(Sample),
    SessionStarted {
        persona: PersonaId,
    },
    SessionEnded {
        persona: PersonaId,
        outcome: SessionOutcome,
    },
    /// A scenario step skipped because the server did not declare its capability.
    Skipped {
        persona: PersonaId,
        phase: Phase,
    },
    /// A message that explains a failure (error text, stderr tail), kept for the report.
    Example {
        kind: FailureKind,
        text: String,
    },
    /// A server→client request or notification, by method.
    ServerMessage {
        method: String,
    },
    /// Something worth counting that has no latency (a re-initialization, an era
    /// verdict, a list refetch, an input round …), by stable name.
    Count {
        name: &'static str,
        n: u64,
    },
    /// A message from the server that is not valid JSON-RPC.
    Malformed {
        persona: PersonaId,
        text: String,
    },
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionOutcome {
    Completed,
    Failed,
    Interrupted,
}

/// The sending side, one per virtual client. Cloning is cheap.
#[derive(Debug, Clone)]
pub struct Recorder {
    tx: mpsc::UnboundedSender<Event>,
}

impl Recorder {
    pub fn send(&self, event: Event) {
        // The collector outlives every recorder; a send error only happens at teardown.
        let _ = self.tx.send(event);
    }

    pub fn sample(&self, sample: Sample) {
        self.send(Event::Sample(sample));
    }

    pub fn count(&self, name: &'static str) {
        self.count_n(name, 1);
    }

    pub fn count_n(&self, name: &'static str, n: u64) {
        if n > 0 {
            self.send(Event::Count { name, n });
        }
    }
}

/// The receiving side.
pub struct Collector {
    rx: mpsc::UnboundedReceiver<Event>,
    stats: Stats,
    /// Each persona's transport, for the by-transport breakdown.
    transports: Vec<TransportKind>,
}

impl Collector {
    /// `transports[i]` is persona i's transport.
    pub fn new(transports: Vec<TransportKind>, tools: usize) -> (Collector, Recorder) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Collector {
                rx,
                stats: Stats::new(transports.len(), tools),
                transports,
            },
            Recorder { tx },
        )
    }

    /// Fold events until every recorder is dropped.
    pub async fn run(mut self) -> Stats {
        let mut buf = Vec::with_capacity(256);
        while self.rx.recv_many(&mut buf, 256).await > 0 {
            for event in buf.drain(..) {
                self.apply(event);
            }
        }
        self.finish()
    }

    /// Fold the persona slices into the overall and per-transport ones.
    fn finish(mut self) -> Stats {
        let s = &mut self.stats;
        for (i, (table, _)) in s.personas.iter().enumerate() {
            s.phases.merge(table);
            let sampled = table.0.iter().any(|p| p.count() > 0);
            if let Some(&kind) = self.transports.get(i).filter(|_| sampled) {
                s.by_transport.entry(kind).or_default().merge_samples(table);
            }
        }
        self.stats
    }

    fn apply(&mut self, event: Event) {
        let s = &mut self.stats;
        match event {
            Event::Sample(sample) => {
                // The overall and per-transport slices are sums of persona slices (a
                // persona has one transport): they are merged once in `finish`, not
                // recorded again per sample.
                match s.personas.get_mut(usize::from(sample.persona)) {
                    Some((table, _)) => table.get_mut(sample.phase).record(&sample),
                    None => s.phases.get_mut(sample.phase).record(&sample),
                }
                if let Some(tool) = sample.tool.and_then(|t| s.tools.get_mut(usize::from(t))) {
                    tool.record(&sample);
                }
                s.by_era
                    .entry(sample.era)
                    .or_default()
                    .get_mut(sample.phase)
                    .record(&sample);
            }
            Event::SessionStarted { persona } => {
                s.sessions.started += 1;
                if let Some((_, c)) = s.personas.get_mut(usize::from(persona)) {
                    c.started += 1;
                }
            }
            Event::SessionEnded { persona, outcome } => {
                let bump = |c: &mut super::stats::SessionCounts| match outcome {
                    SessionOutcome::Completed => c.completed += 1,
                    SessionOutcome::Failed => c.failed += 1,
                    SessionOutcome::Interrupted => c.interrupted += 1,
                };
                bump(&mut s.sessions);
                if let Some((_, c)) = s.personas.get_mut(usize::from(persona)) {
                    bump(c);
                }
            }
            Event::Skipped { persona, phase } => match s.personas.get_mut(usize::from(persona)) {
                Some((table, _)) => table.get_mut(phase).skipped += 1,
                None => s.phases.get_mut(phase).skipped += 1,
            },
            Event::Example { kind, text } => {
                let list = s.examples.entry(kind).or_default();
                if list.len() < EXAMPLES_PER_KIND && !list.contains(&text) {
                    list.push(text);
                }
            }
            Event::ServerMessage { method } => {
                *s.server_messages.entry(method).or_insert(0) += 1;
            }
            Event::Count { name, n } => *s.counters.entry(name).or_insert(0) += n,
            Event::Malformed { persona: _, text } => {
                s.malformed += 1;
                let list = s
                    .examples
                    .entry(FailureKind::ProtocolViolation)
                    .or_default();
                if list.len() < EXAMPLES_PER_KIND && !list.contains(&text) {
                    list.push(text);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{FailureKind, Outcome};
    use crate::protocol::Era;
    use std::time::Duration;
    use tokio::time::Instant;

    #[tokio::test]
    async fn folds_samples_into_overall_persona_and_tool_slices() {
        let (collector, rec) =
            Collector::new(vec![TransportKind::Stdio, TransportKind::WebSocket], 1);
        let handle = tokio::spawn(collector.run());
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let s = |persona, tool, started, finished, outcome| Sample {
            phase: Phase::ToolsCall,
            persona,
            era: if persona == 1 {
                Era::Modern
            } else {
                Era::Legacy
            },
            tool,
            intended: t0,
            started,
            finished,
            outcome,
        };
        rec.sample(s(1, Some(0), ms(10), ms(30), Outcome::Ok));
        rec.sample(s(1, Some(0), t0, ms(5), Outcome::ToolError));
        rec.sample(s(0, None, t0, ms(1), Outcome::Failed(FailureKind::Timeout)));
        rec.count("reinitialized");
        rec.count("reinitialized");
        rec.send(Event::SessionStarted { persona: 1 });
        rec.send(Event::SessionEnded {
            persona: 1,
            outcome: SessionOutcome::Failed,
        });
        drop(rec);
        let stats = handle.await.expect("collector task");
        let call = stats.phases.get(Phase::ToolsCall);
        assert_eq!(
            (call.count(), call.ok, call.errors(), call.tool_errors),
            (3, 2, 1, 1)
        );
        // service = 20 ms for the first sample, response (from intended) = 30 ms.
        assert_eq!(call.service.max() / 1000, 20);
        assert_eq!(call.response.max() / 1000, 30);
        assert_eq!(stats.personas[1].0.get(Phase::ToolsCall).count(), 2);
        assert_eq!(stats.personas[0].0.get(Phase::ToolsCall).errors(), 1);
        assert_eq!(stats.tools[0].count(), 2);
        assert_eq!(stats.sessions.failed, 1);
        assert_eq!(stats.personas[1].1.started, 1);
        assert_eq!(stats.failures().get(&FailureKind::Timeout), Some(&1));
        assert_eq!(
            stats.by_transport[&TransportKind::WebSocket]
                .get(Phase::ToolsCall)
                .count(),
            2
        );
        assert_eq!(stats.by_era[&Era::Legacy].get(Phase::ToolsCall).errors(), 1);
        assert_eq!(stats.counters["reinitialized"], 2);
    }
}
