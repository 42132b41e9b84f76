//! Measurement vocabulary: phases, outcomes and samples, and the collector that turns a
//! stream of samples into histograms; the fleet's live counters and traffic records.
//! Sessions only ever create small `Copy` samples.

pub mod client_fault;
mod collector;
mod counter;
mod event;
pub mod extensions;
mod histogram;
pub mod interval;
mod live;
pub mod native;
mod phase;
pub mod push;
mod recorder;
pub mod requests;
pub mod resources;
mod slowest;
mod stats;
pub mod traffic;

pub use client_fault::{ClientFault, FaultEra, Verdict};
pub use collector::Collector;
pub use counter::{Counter, CounterTable};
pub use event::{Event, LeftOut, SessionOutcome};
pub use extensions::{ExtensionVerdict, Extensions};
pub use histogram::LATENCY_BOUND_US;
pub use interval::{IntervalRow, IntervalSink, LiveFigures, DEFAULT_INTERVAL};
pub use live::{LiveCounters, RunningTotals};
pub use phase::Phase;
pub use recorder::{Recorder, Snapshots};
pub use resources::{Series, SeriesUnit};
pub use slowest::{Slow, Slowest, SLOWEST_KEPT};
pub use stats::{
    CheckCounts, FaultCounts, FindingCount, PhaseStats, PhaseTable, SessionCounts, Stats,
    ToolCounts,
};

use crate::protocol::{Era, VersionId};
use tokio::time::Instant;

/// Index of a persona in the plan (interned at plan time).
pub type PersonaId = u16;
/// Index of a tool name in the plan's tool table (interned at plan time).
pub type ToolId = u16;
/// A conformance check by its place in conformance's table. The collector counts
/// findings without knowing what they mean; their code, severity and fix are
/// `conformance::Check`'s, read by the reports.
pub type CheckId = u8;
/// A step check (`checks = [...]` of a step) by its interned name (`Plan::checks`).
pub type StepCheckId = u16;

/// Why a phase failed. Each kind has one stable name used in every report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// No answer within the request timeout.
    Timeout,
    /// The server answered with a JSON-RPC error of this code.
    RpcError(i64),
    /// An HTTP response with an unexpected status.
    HttpStatus(u16),
    /// The connection or process ended while we waited.
    TransportClosed,
    /// TCP/TLS connection could not be established.
    ConnectFailed,
    /// The server process could not be started.
    SpawnFailed,
    /// The server sent something that is not valid JSON-RPC / MCP framing.
    ProtocolViolation,
    /// The server's result lacks required fields or has wrong types.
    InvalidResult,
    /// The server answered a protocol version the persona does not accept.
    VersionRejected,
    /// HTTP 404 on a live session: the server forgot the session.
    SessionExpired,
    /// Local I/O error while writing to the transport.
    Io,
    /// The server sent a message (body, SSE event, line, WebSocket message or header
    /// block) larger than `--max-message-size`; the session ends rather than buffer it.
    MessageTooLarge,
    /// A `${…}` of the call had no value (nothing captured, a `unique` pool used up,
    /// discovery listed nothing): the call was not sent.
    NoValue,
    /// A task ended `failed` (or was cancelled by the server): a failure of the `task`
    /// phase, the session goes on.
    TaskFailed,
    /// A `tools/call` of a tool that the session's complete `tools/list` did not have
    /// was refused with a JSON-RPC error: most likely a wrong name in the profile.
    UnknownTool,
    /// A step check with `fail_session = true` did not hold on the step's result: the
    /// step fails and the session ends, failed.
    CheckFailed,
}

impl FailureKind {
    /// The stable name used in summaries (`rpc_error:-32601`, `http_status:500`, …).
    pub fn name(self) -> String {
        match self {
            FailureKind::Timeout => "timeout".into(),
            FailureKind::RpcError(code) => format!("rpc_error:{code}"),
            FailureKind::HttpStatus(status) => format!("http_status:{status}"),
            FailureKind::TransportClosed => "transport_closed".into(),
            FailureKind::ConnectFailed => "connect_failed".into(),
            FailureKind::SpawnFailed => "spawn_failed".into(),
            FailureKind::ProtocolViolation => "protocol_violation".into(),
            FailureKind::InvalidResult => "invalid_result".into(),
            FailureKind::VersionRejected => "version_rejected".into(),
            FailureKind::SessionExpired => "session_expired".into(),
            FailureKind::Io => "io_error".into(),
            FailureKind::MessageTooLarge => "message_too_large".into(),
            FailureKind::NoValue => "no_value".into(),
            FailureKind::TaskFailed => "task_failed".into(),
            FailureKind::UnknownTool => "unknown_tool".into(),
            FailureKind::CheckFailed => "check_failed".into(),
        }
    }

    /// The kind [`FailureKind::name`] names; `None` for any other text.
    pub fn from_name(name: &str) -> Option<FailureKind> {
        if let Some(code) = name.strip_prefix("rpc_error:") {
            return code.parse().ok().map(FailureKind::RpcError);
        }
        if let Some(status) = name.strip_prefix("http_status:") {
            return status.parse().ok().map(FailureKind::HttpStatus);
        }
        [
            FailureKind::Timeout,
            FailureKind::TransportClosed,
            FailureKind::ConnectFailed,
            FailureKind::SpawnFailed,
            FailureKind::ProtocolViolation,
            FailureKind::InvalidResult,
            FailureKind::VersionRejected,
            FailureKind::SessionExpired,
            FailureKind::Io,
            FailureKind::MessageTooLarge,
            FailureKind::NoValue,
            FailureKind::TaskFailed,
            FailureKind::UnknownTool,
            FailureKind::CheckFailed,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// Whether the failure ends (and fails) the session whatever the scenario's
    /// `on_error` says, in every phase. The server answered a JSON-RPC error (or, for
    /// `no_value` and `task_failed`, nothing went wrong on the wire): the scenario's
    /// `on_error` decides. Anything else — a transport failure, an HTTP error status, a
    /// timeout, an answer that breaks the protocol or lacks what the result must hold —
    /// means the connection or the server cannot be trusted for the next step.
    pub fn ends_session(self) -> bool {
        !matches!(
            self,
            FailureKind::RpcError(_)
                | FailureKind::UnknownTool
                | FailureKind::NoValue
                | FailureKind::TaskFailed
        )
    }
}

/// How a timed phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A `tools/call` that succeeded as RPC but returned `isError: true`.
    ToolError,
    Failed(FailureKind),
}

/// Whose a sample is: the persona, and the era and version its session speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The session's number in the run (from 1, unique within a run or shard:
    /// [`Recorder::next_session`]); 0 for samples of no session (the fleet's).
    pub session: u64,
    pub persona: PersonaId,
    pub era: Era,
    pub version: VersionId,
}

impl Origin {
    /// The fleet's own samples (scheduler lag): no persona is chosen yet, and
    /// `PersonaId::MAX` is in no breakdown.
    pub const FLEET: Origin = Origin {
        session: 0,
        persona: PersonaId::MAX,
        era: Era::Legacy,
        version: VersionId::OTHER,
    };
}

/// The instants of one timed phase: when it was meant to start, when it started, when
/// it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub intended: Instant,
    pub started: Instant,
    pub finished: Instant,
}

impl Span {
    /// A phase with no schedule of its own (it was meant to start when it started) that
    /// finishes now.
    pub fn since(started: Instant) -> Span {
        Span {
            intended: started,
            started,
            finished: Instant::now(),
        }
    }
}

/// One timed phase. `intended` is when the schedule wanted it to start; in a closed
/// model it equals `started`, in an open model the gap is scheduler lag. Made by
/// [`Sample::new`] only: every phase sample of a run is born there.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub phase: Phase,
    /// The session's number ([`Origin::session`]; 0: the fleet's).
    pub session: u64,
    pub persona: PersonaId,
    /// The era the session speaks (for `auto` personas: the probe's verdict).
    pub era: Era,
    /// The protocol version the session speaks (offered until negotiated).
    pub version: VersionId,
    /// The tool of a `tools/call`; for a `request` sample, its step's interned phase
    /// name (`Plan::requests`): one small id either way keeps the sample `Copy`.
    pub tool: Option<ToolId>,
    pub intended: Instant,
    pub started: Instant,
    pub finished: Instant,
    pub outcome: Outcome,
}

impl Sample {
    /// The one way to make a sample: `phase` of `origin`'s session (for `tools/call`:
    /// of `tool`), timed over `span`, ending in `outcome`.
    pub fn new(
        phase: Phase,
        origin: Origin,
        tool: Option<ToolId>,
        span: Span,
        outcome: Outcome,
    ) -> Sample {
        Sample {
            phase,
            session: origin.session,
            persona: origin.persona,
            era: origin.era,
            version: origin.version,
            tool,
            intended: span.intended,
            started: span.started,
            finished: span.finished,
            outcome,
        }
    }
}
