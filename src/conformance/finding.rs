//! The closed set of conformance findings: one table with each check's stable code,
//! severity, one-line fix and the spec section it rests on. Reports, `--strict` and
//! `inspect` all read this table; nothing else names a finding.

use crate::metrics::CheckId;
use serde::{Deserialize, Serialize};

/// How bad a finding is. `--strict` fails a run on any `Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The spec says MUST: clients will break.
    Error,
    /// The spec says SHOULD, or clients commonly trip on it.
    Warning,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One thing a server can get wrong that a client can see. At most 64 (sessions keep a
/// bit per check to send each example once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    JsonrpcNotJson,
    JsonrpcBatch,
    JsonrpcNotObject,
    JsonrpcWrongVersion,
    JsonrpcResultAndError,
    JsonrpcBadMethod,
    JsonrpcBadId,
    JsonrpcBadError,
    JsonrpcUnknownId,
    JsonrpcResponseToNotification,
    HandshakeVersionMissing,
    HandshakeCapabilitiesNotObject,
    HandshakeServerInfoInvalid,
    DiscoverInvalidResult,
    VersionUnknown,
    VersionErrorInsteadOfOffer,
    VersionEchoedUnsupported,
    VersionHeaderRejected,
    VersionUnsupportedWithoutList,
    CapabilityDeclaredButMissing,
    CapabilityUndeclaredButWorks,
    CapabilityUndeclaredWrongError,
    CapabilityListChangedNotHonoured,
    LifecycleEarlyMessage,
    ToolsChangedSilently,
    ToolsInputSchemaNotObject,
    ToolsDuplicateName,
    ToolsStructuredContentMismatch,
    PaginationLoop,
    PaginationEmptyCursor,
    HttpInvalidSessionId,
    SseInvalidEvent,
    HttpPostStatusNot202,
    CapabilityChangedBetweenSessions,
    // Robustness: how the server took a buggy client's fault (`faults = [...]`). The
    // example names the fault.
    RobustnessWrongError,
    RobustnessCrashed,
    RobustnessHung,
    RobustnessAccepted,
    // Authorization (HTTP).
    Auth401WithoutChallenge,
    AuthResourceMetadataMissing,
    AuthMetadataMalformed,
    AuthWrongAudienceAccepted,
    // Tasks (2025-11-25).
    TasksStuckWorking,
    TasksStatusOutOfOrder,
    TasksResultBeforeCompletion,
    // Lists (after the others: a check's id is its place in the table).
    ListInvalidResult,
    // `subscriptions/listen` (2026-07-28).
    ListenNotAcknowledgedFirst,
    ListenMissingSubscriptionId,
    ListenNotificationOffListen,
    ListenUnrequestedNotification,
    ListenEndedWithoutNotice,
    // Extensions (SEP-2133).
    ExtensionUsedUndeclared,
}

/// A check's row in the table.
#[derive(Debug, Clone, Copy)]
pub struct CheckInfo {
    pub code: &'static str,
    pub severity: Severity,
    /// What is wrong and how to fix it, in one line.
    pub message: &'static str,
    /// Where the spec says so (section of the 2025-11-25 spec unless named).
    pub spec: &'static str,
}

const BASIC: &str = "basic#messages";
const LIFECYCLE: &str = "basic/lifecycle#initialization";
const NEGOTIATION: &str = "basic/lifecycle#version-negotiation";

impl Check {
    pub const ALL: [Check; 52] = [
        Check::JsonrpcNotJson,
        Check::JsonrpcBatch,
        Check::JsonrpcNotObject,
        Check::JsonrpcWrongVersion,
        Check::JsonrpcResultAndError,
        Check::JsonrpcBadMethod,
        Check::JsonrpcBadId,
        Check::JsonrpcBadError,
        Check::JsonrpcUnknownId,
        Check::JsonrpcResponseToNotification,
        Check::HandshakeVersionMissing,
        Check::HandshakeCapabilitiesNotObject,
        Check::HandshakeServerInfoInvalid,
        Check::DiscoverInvalidResult,
        Check::VersionUnknown,
        Check::VersionErrorInsteadOfOffer,
        Check::VersionEchoedUnsupported,
        Check::VersionHeaderRejected,
        Check::VersionUnsupportedWithoutList,
        Check::CapabilityDeclaredButMissing,
        Check::CapabilityUndeclaredButWorks,
        Check::CapabilityUndeclaredWrongError,
        Check::CapabilityListChangedNotHonoured,
        Check::LifecycleEarlyMessage,
        Check::ToolsChangedSilently,
        Check::ToolsInputSchemaNotObject,
        Check::ToolsDuplicateName,
        Check::ToolsStructuredContentMismatch,
        Check::PaginationLoop,
        Check::PaginationEmptyCursor,
        Check::HttpInvalidSessionId,
        Check::SseInvalidEvent,
        Check::HttpPostStatusNot202,
        Check::CapabilityChangedBetweenSessions,
        Check::RobustnessWrongError,
        Check::RobustnessCrashed,
        Check::RobustnessHung,
        Check::RobustnessAccepted,
        Check::Auth401WithoutChallenge,
        Check::AuthResourceMetadataMissing,
        Check::AuthMetadataMalformed,
        Check::AuthWrongAudienceAccepted,
        Check::TasksStuckWorking,
        Check::TasksStatusOutOfOrder,
        Check::TasksResultBeforeCompletion,
        Check::ListInvalidResult,
        Check::ListenNotAcknowledgedFirst,
        Check::ListenMissingSubscriptionId,
        Check::ListenNotificationOffListen,
        Check::ListenUnrequestedNotification,
        Check::ListenEndedWithoutNotice,
        Check::ExtensionUsedUndeclared,
    ];

    /// The check's id in the collector (its place in [`Check::ALL`]).
    pub fn id(self) -> CheckId {
        self as CheckId
    }

    pub fn from_id(id: CheckId) -> Option<Check> {
        Check::ALL.get(usize::from(id)).copied()
    }

    /// The bit a session uses to remember it already sent this check's example.
    pub fn bit(self) -> u64 {
        1u64 << (self as u32)
    }

    pub fn code(self) -> &'static str {
        self.info().code
    }

    pub fn from_code(code: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The table.
    pub fn info(self) -> CheckInfo {
        use Severity::{Error, Warning};
        let (code, severity, message, spec) = match self {
            Check::JsonrpcNotJson => ("jsonrpc.not-json", Error,
                "a message is not JSON; write only JSON-RPC messages to the channel (logs go to stderr)",
                BASIC),
            Check::JsonrpcBatch => ("jsonrpc.batch", Error,
                "a JSON-RPC batch (array) was sent; send one message at a time (batches exist only in 2025-03-26)",
                BASIC),
            Check::JsonrpcNotObject => ("jsonrpc.not-object", Error,
                "a message is JSON but not an object; every message is a JSON-RPC 2.0 object",
                BASIC),
            Check::JsonrpcWrongVersion => ("jsonrpc.wrong-version", Error,
                "`jsonrpc` is missing or not \"2.0\"; set \"jsonrpc\": \"2.0\" on every message",
                BASIC),
            Check::JsonrpcResultAndError => ("jsonrpc.result-and-error", Error,
                "a response has both `result` and `error`, or neither; send exactly one",
                "basic#responses"),
            Check::JsonrpcBadMethod => ("jsonrpc.bad-method", Error,
                "`method` is not a string", BASIC),
            Check::JsonrpcBadId => ("jsonrpc.bad-id", Error,
                "`id` is not a string or an integer; echo the request's id unchanged",
                "basic#requests"),
            Check::JsonrpcBadError => ("jsonrpc.bad-error", Error,
                "`error` is not an object with an integer `code` and a `message`",
                "basic#responses"),
            Check::JsonrpcUnknownId => ("jsonrpc.unknown-id", Error,
                "a response carries an id the client never sent; echo the request's id exactly",
                "basic#responses"),
            Check::JsonrpcResponseToNotification => ("jsonrpc.response-to-notification", Error,
                "the server answered something that had no id (a notification); notifications get no response",
                "basic#notifications"),
            Check::HandshakeVersionMissing => ("handshake.version-missing", Error,
                "the initialize result has no string `protocolVersion`; always answer the version you will speak",
                LIFECYCLE),
            Check::HandshakeCapabilitiesNotObject => ("handshake.capabilities-not-object", Error,
                "`capabilities` in the initialize result is missing or not an object; send {} when you declare nothing",
                LIFECYCLE),
            Check::HandshakeServerInfoInvalid => ("handshake.server-info-invalid", Error,
                "`serverInfo` is missing or lacks string `name` and `version`",
                LIFECYCLE),
            Check::DiscoverInvalidResult => ("discover.invalid-result", Error,
                "the server/discover result lacks an object `capabilities` or an array `supportedVersions`",
                "2026-07-28 server/discover"),
            Check::VersionUnknown => ("version.unknown", Error,
                "the server answered a protocol version that no MCP revision has; answer one you implement",
                NEGOTIATION),
            Check::VersionErrorInsteadOfOffer => ("version.error-instead-of-offer", Warning,
                "initialize with a version the server does not speak got an error; answer a result with your own latest version instead",
                NEGOTIATION),
            Check::VersionEchoedUnsupported => ("version.echoed-unsupported", Error,
                "the server echoed a protocol version it cannot speak (one that does not exist); echo only versions you implement, else counter-offer",
                NEGOTIATION),
            Check::VersionHeaderRejected => ("version.header-rejected", Error,
                "an HTTP request with the negotiated MCP-Protocol-Version header was refused; accept the version you negotiated",
                "basic/transports#protocol-version-header"),
            Check::VersionUnsupportedWithoutList => ("version.unsupported-without-list", Error,
                "-32022 without a usable `data.supported` list; list the versions you speak so clients can retry",
                "2026-07-28 version negotiation"),
            Check::CapabilityDeclaredButMissing => ("capability.declared-but-missing", Error,
                "a method of a declared capability answered -32601; implement it or do not declare the capability",
                "basic/lifecycle#capability-negotiation"),
            Check::CapabilityUndeclaredButWorks => ("capability.undeclared-but-works", Warning,
                "a list method works but its capability is not declared (tools registered without \"tools\": {} in the capabilities); clients then never call it (ChatGPT shows \"No tools available\"): declare the capability",
                "basic/lifecycle#capability-negotiation"),
            Check::CapabilityUndeclaredWrongError => ("capability.undeclared-wrong-error", Warning,
                "a method of an undeclared capability answered an error other than -32601 (method not found)",
                "basic/lifecycle#capability-negotiation"),
            Check::CapabilityListChangedNotHonoured => ("capability.list-changed-not-honoured", Error,
                "tools.listChanged is declared but the tool list changed without notifications/tools/list_changed",
                "server/tools#list-changed-notification"),
            Check::LifecycleEarlyMessage => ("lifecycle.early-message", Warning,
                "the server sent a request or notification (other than ping or logging) before notifications/initialized",
                "basic/lifecycle#initialization"),
            Check::ToolsChangedSilently => ("tools.changed-silently", Warning,
                "the tool list or a tool's schema changed between listings with no listChanged capability or notification; keep tools stable or declare and send list_changed",
                "server/tools#list-changed-notification"),
            Check::ToolsInputSchemaNotObject => ("tools.input-schema-not-object", Error,
                "a tool's `inputSchema` is missing or not a JSON Schema with \"type\": \"object\"",
                "server/tools#tool"),
            Check::ToolsDuplicateName => ("tools.duplicate-name", Error,
                "two tools share a name; tool names must be unique within a server",
                "server/tools#tool"),
            Check::ToolsStructuredContentMismatch => ("tools.structured-content-mismatch", Error,
                "a tool with an `outputSchema` returned `structuredContent` that is missing or does not match it",
                "server/tools#output-schema"),
            Check::PaginationLoop => ("pagination.loop", Error,
                "a list returned a cursor it had already returned; cursors must move forward and end",
                "server/utilities/pagination"),
            Check::PaginationEmptyCursor => ("pagination.empty-cursor", Warning,
                "a list returned an empty `nextCursor`; omit `nextCursor` on the last page",
                "server/utilities/pagination"),
            Check::HttpInvalidSessionId => ("http.invalid-session-id", Error,
                "Mcp-Session-Id contains characters outside visible ASCII (0x21-0x7E)",
                "basic/transports#session-management"),
            Check::SseInvalidEvent => ("sse.invalid-event", Error,
                "an SSE `message` event's data is not a JSON-RPC message",
                "basic/transports#streamable-http"),
            Check::HttpPostStatusNot202 => ("http.post-status-not-202", Warning,
                "a POSTed notification or response got an HTTP status other than 202 Accepted; accept them with 202 and no body",
                "basic/transports#sending-messages-to-the-server"),
            Check::CapabilityChangedBetweenSessions => ("capability.changed-between-sessions", Warning,
                "the same client (persona, version, capabilities) was told different server capabilities in two sessions; declare the same capabilities every time (clients cache them)",
                "basic/lifecycle#capability-negotiation"),
            Check::RobustnessWrongError => ("robustness.wrong-error", Warning,
                "a buggy client's request was refused with the wrong error code or HTTP status; answer malformed messages with -32700/-32600, unknown methods with -32601, bad params with -32602",
                "basic#responses"),
            Check::RobustnessCrashed => ("robustness.crashed", Error,
                "a buggy client's message made the server drop the connection or stop serving; refuse the message with an error and keep serving",
                BASIC),
            Check::RobustnessHung => ("robustness.hung", Error,
                "a buggy client's message got no answer within the timeout; answer every request, with an error if it is invalid, and time out your own requests to the client",
                "basic/lifecycle#timeouts"),
            Check::RobustnessAccepted => ("robustness.accepted-invalid", Warning,
                "the server went along with a message it should have refused (no jsonrpc, wrong types, arguments that break the inputSchema); validate requests and refuse invalid ones",
                BASIC),
            Check::Auth401WithoutChallenge => ("auth.401-without-www-authenticate", Error,
                "a 401 came without a WWW-Authenticate: Bearer header naming resource_metadata; clients cannot find the authorization server",
                "basic/authorization#authorization-server-location"),
            Check::AuthResourceMetadataMissing => ("auth.resource-metadata-missing", Error,
                "the protected resource metadata (/.well-known/oauth-protected-resource) is not served; serve it (RFC 9728) with authorization_servers",
                "basic/authorization#protected-resource-metadata-discovery-requirements"),
            Check::AuthMetadataMalformed => ("auth.metadata-malformed", Error,
                "the protected resource or authorization server metadata is not valid JSON with the required fields (resource, authorization_servers; issuer, token_endpoint)",
                "basic/authorization#authorization-server-metadata-discovery"),
            Check::AuthWrongAudienceAccepted => ("auth.wrong-audience-accepted", Error,
                "a token issued for another resource (wrong audience) was accepted; validate that tokens were issued for this server",
                "basic/authorization#token-audience-binding-and-validation"),
            Check::TasksStuckWorking => ("tasks.stuck-working", Error,
                "a task stayed `working` past its ttl; finish, fail or expire tasks within the ttl you granted",
                "basic/utilities/tasks"),
            Check::TasksStatusOutOfOrder => ("tasks.status-out-of-order", Error,
                "a task's status went back from a terminal status (completed, failed, cancelled) or notifications/tasks/status arrived out of order",
                "basic/utilities/tasks#task-status-lifecycle"),
            Check::TasksResultBeforeCompletion => ("tasks.result-before-completion", Error,
                "tasks/result returned a result while tasks/get still said the task was working; return the result only once the task is terminal",
                "basic/utilities/tasks#retrieving-task-results"),
            Check::ListInvalidResult => ("list.invalid-result", Error,
                "a list result is not an object holding an array of objects with their required fields (tools: name, inputSchema; resources: uri, name; resource templates: uriTemplate, name; prompts: name), or its nextCursor is not a string; clients cannot use the list",
                "server/tools#listing-tools"),
            Check::ListenNotAcknowledgedFirst => ("listen.not-acknowledged-first", Error,
                "a subscriptions/listen stream did not start with notifications/subscriptions/acknowledged; send the acknowledgement (the honoured filter) first",
                "2026-07-28 basic/subscriptions"),
            Check::ListenMissingSubscriptionId => ("listen.missing-subscription-id", Error,
                "a message of a subscriptions/listen stream lacks _meta[\"io.modelcontextprotocol/subscriptionId\"] (the listen request's id), or a change notification came with no listen to belong to; stamp every listen message with it",
                "2026-07-28 basic/subscriptions"),
            Check::ListenNotificationOffListen => ("listen.notification-off-listen", Error,
                "a list-changed or resource-updated notification came on the stream of another request; in 2026-07-28 they travel only on subscriptions/listen streams",
                "2026-07-28 basic/subscriptions"),
            Check::ListenUnrequestedNotification => ("listen.unrequested-notification", Error,
                "a subscriptions/listen stream carried a notification its filter did not ask for; send only what the acknowledged filter names",
                "2026-07-28 basic/subscriptions"),
            Check::ListenEndedWithoutNotice => ("listen.ended-without-notice", Warning,
                "the server ended a subscriptions/listen stream without a final complete response or notifications/cancelled; end listens gracefully so clients can tell an end from a failure",
                "2026-07-28 basic/subscriptions"),
            Check::ExtensionUsedUndeclared => ("extension.used-undeclared", Error,
                "the server used a protocol extension (e.g. resultType \"task\" of io.modelcontextprotocol/tasks) with a client that did not declare it; use an extension only when both sides declared it",
                "2026-07-28 extensions (SEP-2133)"),
        };
        CheckInfo {
            code,
            severity,
            message,
            spec,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for c in Check::ALL {
            assert!(seen.insert(c.code()), "{} twice", c.code());
            assert_eq!(Check::from_code(c.code()), Some(c));
            assert!(c.code().contains('.'));
            assert!((c as u32) < 64);
        }
    }

    #[test]
    fn ids_round_trip() {
        // The collector counts findings by id; the report must get the same check back.
        for c in Check::ALL {
            assert_eq!(Check::from_id(c.id()), Some(c));
        }
        assert_eq!(Check::from_id(Check::ALL.len() as CheckId), None);
    }
}
