//! The errors of an invocation ([`SandboxError`]) and of the server's storage ([`HostError`]).

/// An error from the [`crate::Host`]. Its `code` and `message` reach the handler as the `code`
/// and `message` of the rejected promise, so they must not carry server internals.
#[derive(Debug, Clone, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{code}: {message}")]
pub struct HostError {
    /// Stable machine-readable code, e.g. `quota_exceeded`, `ssrf_refused`, `not_found`.
    pub code: String,
    /// Human-readable text for the builder.
    pub message: String,
}

impl HostError {
    /// Builds a host error from a code and a message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        HostError {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// Why an invocation produced no response.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SandboxError {
    /// The invocation ran past its wall-clock budget, or its promise can never settle.
    #[error("the handler did not finish in time")]
    Timeout,
    /// The handler exceeded its heap or produced a result that is too large.
    #[error("resource limit exceeded: {0}")]
    ResourceLimit(String),
    /// The handler threw (or returned a response the sandbox refuses); the message is the
    /// thrown error's message only.
    #[error("handler error: {0}")]
    HandlerError(String),
    /// The handler refused the caller's request: it threw a value whose integer `status` is
    /// in `400..=499` (or a `Response` with such a status). The message is the thrown one (a
    /// thrown Response's body text, else its status text), possibly empty.
    #[error("{message}")]
    HandlerRefused {
        /// The thrown status, in `400..=499`.
        status: u16,
        /// What the caller is told.
        message: String,
    },
    /// The handler answered with a status or header the host refuses to send (see
    /// [`HandlerResponse`](crate::HandlerResponse)); the message names it.
    #[error("invalid handler response: {0}")]
    InvalidResponse(String),
    /// The handler let a `capability_denied` error escape.
    #[error("capability denied: {0}")]
    CapabilityDenied(String),
    /// A limit of the pool refused the call at once rather than queue it; `why` names it.
    #[error("overloaded ({why}), retry after {retry_after_secs} s")]
    Overloaded {
        /// Suggested `Retry-After`.
        retry_after_secs: u64,
        /// Which limit refused the call.
        why: Overload,
    },
    /// The module failed to parse, to evaluate, or has no default-exported function.
    #[error("compile error: {0}")]
    CompileError(String),
    /// A fault of the sandbox itself (an isolate thread died, the pool is shut down).
    #[error("sandbox internal error: {0}")]
    Internal(String),
    /// The endpoint was deleted while the call ran: the call was stopped there
    /// ([`crate::Sandbox::stop`]).
    #[error("the endpoint was deleted during the call")]
    Stopped,
}

/// Which of the pool's limits refused a call with [`SandboxError::Overloaded`]. Told to the
/// caller (and so to the builder): whether to retry soon, and whether it is this endpoint's
/// doing or the host's, depends on which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Overload {
    /// The endpoint has its most calls running or queued
    /// ([`crate::PoolConfig::max_concurrent_per_endpoint`]).
    EndpointBusy,
    /// The endpoint's builder has all the isolates, or all the heap, its quota allows, and
    /// none of them is idle.
    BuilderQuota,
    /// The pool's isolates or memory budget are taken, and none that may be evicted is idle.
    PoolFull,
    /// Too many isolate threads did not stop at their time limit; no isolate starts until
    /// one of them ends ([`crate::PoolConfig::max_abandoned_isolates`]).
    StuckIsolates,
    /// The isolate chosen for the call could not take it (its queue is full, or it ended).
    IsolateBusy,
    /// A call of a builder not yet known to the server was in progress past this call's
    /// answer deadline (a builder's calls go one at a time until one has ended within its
    /// limits).
    FirstCallRunning,
    /// The call's builder is heavy (`limits::cpu`), and the heavy builders of its worker owe
    /// their CPU budget more than half the call's time limit (`limits::throttle`).
    HeavyCpuBudget,
}

impl std::fmt::Display for Overload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Overload::EndpointBusy => "this endpoint has too many calls in flight",
            Overload::BuilderQuota => "this builder's isolates are all busy",
            Overload::PoolFull => "the sandbox's isolates are all busy",
            Overload::StuckIsolates => "too many isolates did not stop at their time limit",
            Overload::IsolateBusy => "no isolate could take the call",
            Overload::FirstCallRunning => {
                "this builder's first call on this server is still running"
            }
            Overload::HeavyCpuBudget => {
                "the CPU budget of builders running long bursts is spent for longer than half \
                 this call's time limit"
            }
        })
    }
}

impl SandboxError {
    /// Stable machine-readable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            SandboxError::Timeout => "timeout",
            SandboxError::ResourceLimit(_) => "resource_limit",
            SandboxError::HandlerError(_) => "handler_error",
            SandboxError::HandlerRefused { .. } => "handler_refused",
            SandboxError::InvalidResponse(_) => "invalid_handler_response",
            SandboxError::CapabilityDenied(_) => "capability_denied",
            SandboxError::Overloaded { .. } => "overloaded",
            SandboxError::CompileError(_) => "compile_error",
            SandboxError::Internal(_) => "sandbox_internal",
            SandboxError::Stopped => "endpoint_deleted",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable() {
        assert_eq!(SandboxError::Timeout.code(), "timeout");
        assert_eq!(
            SandboxError::Overloaded {
                retry_after_secs: 1,
                why: Overload::PoolFull,
            }
            .code(),
            "overloaded"
        );
        assert_eq!(
            SandboxError::Internal("x".into()).code(),
            "sandbox_internal"
        );
        assert_eq!(
            HostError::new("not_found", "nope").to_string(),
            "not_found: nope"
        );
    }
}
