//! What sessions report to the collector: [`Event`]s, and how a session ended.

use super::{
    CheckId, Counter, FailureKind, Outcome, PersonaId, Phase, Sample, StepCheckId, ToolId,
};

/// What sessions report.
#[derive(Debug)]
pub enum Event {
    Sample(Sample),
    SessionStarted {
        persona: PersonaId,
    },
    SessionEnded {
        /// The session's number ([`super::Origin::session`]).
        session: u64,
        persona: PersonaId,
        outcome: SessionOutcome,
    },
    /// Session `session` carries W3C trace context with this trace id (persona
    /// `trace = true`): the requests file names it on the session's records.
    SessionTraced {
        session: u64,
        trace: u128,
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
    /// The text of a `tools/call` result with `isError: true`, or of an RPC error of a
    /// tool call (`-32602 Invalid params: …`), kept for the report (the first few per
    /// tool).
    ToolError {
        tool: ToolId,
        text: String,
    },
    /// A `tools/call` whose arguments were (partly) generated from the `inputSchema`,
    /// and how it ended; sent beside its sample, which counts it as any call.
    Generated {
        tool: ToolId,
        outcome: Outcome,
    },
    /// A call of `tool` the session did not make, and why (once per step and session).
    LeftOut {
        tool: ToolId,
        reason: LeftOut,
    },
    /// A step check evaluated on a result: passed, or failed and (the session's first
    /// failure of this check) why.
    StepCheck {
        check: StepCheckId,
        passed: bool,
        why: Option<String>,
    },
    /// A server→client request or notification, by method.
    ServerMessage {
        method: String,
    },
    /// Something worth counting that has no latency (a re-initialization, an era
    /// verdict, a list refetch, an input round …).
    Count {
        counter: Counter,
        n: u64,
    },
    /// A traced request's latency (send → answer) with its trace and span ids, for the
    /// slowest requests per phase (persona `trace = true`).
    Traced {
        phase: Phase,
        latency_us: u64,
        trace: u128,
        span: u64,
    },
    /// A session's verdict on a protocol extension.
    Extension {
        id: String,
        verdict: super::ExtensionVerdict,
    },
    /// A message from the server that is not valid JSON-RPC.
    Malformed {
        persona: PersonaId,
        text: String,
    },
    /// A conformance problem of the server. Sessions send the example only the first
    /// time they see a check, so a chatty fault costs no allocation per message.
    Finding {
        check: CheckId,
        example: Option<String>,
    },
    /// A session committed a client-side fault, and how the server took it; `detail`
    /// says what was seen (kept for the first few of each fault and verdict).
    ClientFault {
        persona: PersonaId,
        fault: super::ClientFault,
        verdict: super::Verdict,
        detail: Option<String>,
    },
}

/// Why a tool was not called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeftOut {
    /// Annotated `destructiveHint: true` (not `readOnlyHint`), and its arguments would
    /// be generated; `[arguments] allow_destructive` is false.
    Destructive,
}

impl LeftOut {
    /// Every reason, in order.
    pub const ALL: [LeftOut; 1] = [LeftOut::Destructive];

    /// The stable name in summaries.
    pub fn name(self) -> &'static str {
        match self {
            LeftOut::Destructive => "destructive",
        }
    }
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionOutcome {
    Completed,
    /// It reached the server and failed in some phase.
    Failed,
    Interrupted,
    /// It never reached the server: the connect phase failed (connection refused, no
    /// route, TLS refused, a stdio program that cannot be spawned). Counted apart, so a
    /// dead target's instant failures do not pass for sessions per second.
    Unreachable,
}
