//! Ops: the only way from a handler's JS to the host. One `extension!` per area, each paired
//! with its glue file beside it here (`10_kv.js` with `kv.rs`; numbered in load order); every op that reaches the host checks the endpoint's
//! capability first, in Rust. `crypto`'s ops reach nothing outside the isolate and are every
//! handler's, like `Math.random`.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use deno_core::futures::FutureExt;
use deno_core::OpState;
use deno_error::{AdditionalProperties, JsErrorClass, PropertyValue};

use crate::{
    Capabilities, EndpointCode, FetchLimits, Host, HostAnswer, HostError, HostFuture, HostOp,
    StorageLimits,
};

pub(crate) mod bootstrap;
pub(crate) mod crypto;
pub(crate) mod fetch;
pub(crate) mod files;
pub(crate) mod http;
pub(crate) mod kv;
pub(crate) mod log;
pub(crate) mod web;

/// Embeds a glue file of this directory as `ext:toolhost/<file>`, so the binary does not read
/// it from disk at run time.
macro_rules! glue_js {
    ($file:literal) => {
        deno_core::ExtensionFileSource::new(
            concat!("ext:toolhost/", $file),
            deno_core::ascii_str_include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/ops/", $file)),
        )
    };
}
pub(crate) use glue_js;

/// All extensions of a handler isolate, in dependency order. `blob_bytes`: how many bytes its
/// Blobs may hold (kept outside the JS heap, so on top of the heap limit).
pub(crate) fn extensions(blob_bytes: usize) -> Vec<deno_core::Extension> {
    let mut extensions = Vec::from(web::extensions(blob_bytes));
    extensions.extend([
        kv::toolhost_kv::init(),
        files::toolhost_files::init(),
        http::toolhost_http::init(),
        fetch::toolhost_fetch::init(),
        log::toolhost_log::init(),
        crypto::toolhost_crypto::init(),
        bootstrap::toolhost_bootstrap::init(),
    ]);
    extensions
}

/// The endpoint an isolate belongs to; put in its `OpState` when the isolate is created and
/// never changed (a new endpoint version gets a new isolate).
pub(crate) struct EndpointState {
    /// The code the server gave: the identity every host call carries.
    pub(crate) code: Arc<EndpointCode>,
    pub(crate) host: Arc<dyn Host>,
    pub(crate) storage: StorageLimits,
    pub(crate) max_http_timeout: Duration,
    pub(crate) fetch: FetchLimits,
    /// The call running now ([`crate::NO_CALL`] while the module loads or between calls):
    /// every host operation carries it, and the server refuses those of a call that ended.
    pub(crate) call: std::cell::Cell<u64>,
}

/// A capability as ops name it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Capability {
    Kv,
    Files,
    HttpGetJson,
    Fetch,
    Logs,
}

impl Capability {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Capability::Kv => "kv",
            Capability::Files => "files",
            Capability::HttpGetJson => "httpGetJson",
            Capability::Fetch => "fetch",
            Capability::Logs => "logs",
        }
    }

    pub(crate) fn granted(self, caps: &Capabilities) -> bool {
        match self {
            Capability::Kv => caps.kv,
            Capability::Files => caps.files,
            Capability::HttpGetJson => caps.http_get_json,
            Capability::Fetch => caps.fetch,
            Capability::Logs => caps.logs,
        }
    }
}

/// Refuses unless `capability` is granted to the isolate's endpoint.
pub(crate) fn check_capability(
    state: &OpState,
    capability: Capability,
) -> Result<&EndpointState, OpError> {
    let endpoint = state
        .try_borrow::<EndpointState>()
        .ok_or_else(|| OpError::Internal("isolate has no endpoint".to_owned()))?;
    if capability.granted(&endpoint.code.capabilities) {
        Ok(endpoint)
    } else {
        Err(OpError::CapabilityDenied(capability.name()))
    }
}

/// What a host-calling op needs once its capability and arguments are checked; cloned out so
/// the `OpState` borrow ends before the op awaits.
pub(crate) struct HostCall {
    pub(crate) host: Arc<dyn Host>,
    pub(crate) code: Arc<EndpointCode>,
    pub(crate) call: u64,
    pub(crate) storage: StorageLimits,
}

impl HostCall {
    pub(crate) fn new(state: &OpState, capability: Capability) -> Result<HostCall, OpError> {
        let endpoint = check_capability(state, capability)?;
        Ok(HostCall::of(endpoint))
    }

    pub(crate) fn of(endpoint: &EndpointState) -> HostCall {
        HostCall {
            host: endpoint.host.clone(),
            code: endpoint.code.clone(),
            call: endpoint.call.get(),
            storage: endpoint.storage,
        }
    }

    /// Runs `op` on the host and takes its answer with `pick` (the variant the op answers).
    pub(crate) async fn run<T>(
        &self,
        op: HostOp,
        pick: fn(HostAnswer) -> Option<T>,
    ) -> Result<T, OpError> {
        let answer = host_result(|| self.host.call(&self.code, self.call, op)).await?;
        pick(answer).ok_or_else(|| OpError::Internal("the host answered another operation".into()))
    }

    /// Sends `op` without waiting for its answer: for [`HostOp::FetchCancel`], which takes
    /// effect when called.
    pub(crate) fn send(&self, op: HostOp) {
        if std::panic::catch_unwind(AssertUnwindSafe(|| {
            drop(self.host.call(&self.code, self.call, op));
        }))
        .is_err()
        {
            tracing::error!("a host call panicked");
        }
    }
}

/// The `pick` of [`HostCall::run`] for the ops that answer nothing but success.
pub(crate) fn done(answer: HostAnswer) -> Option<()> {
    matches!(answer, HostAnswer::Done).then_some(())
}

/// The `pick` of [`HostCall::run`] for an op that answers `HostAnswer::$variant(value)`.
macro_rules! answer {
    ($variant:ident) => {
        |answer| match answer {
            $crate::HostAnswer::$variant(value) => Some(value),
            _ => None,
        }
    };
}
pub(crate) use answer;

/// Makes and awaits a host call. A panic in the server's code (making the future or polling it)
/// becomes an `Internal` error for this call instead of taking the isolate thread, and the
/// invocations queued on it, down.
pub(crate) async fn host_result<T>(call: impl FnOnce() -> HostFuture<T>) -> Result<T, OpError> {
    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(call)) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(panic) => Err(panic),
    };
    match outcome {
        Ok(result) => Ok(result?),
        Err(_) => {
            tracing::error!("a host call panicked");
            Err(OpError::Internal("the host failed".to_owned()))
        }
    }
}

/// The current invocation, as ops see it: when it started and when it must end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InvocationClock {
    pub(crate) started: Instant,
    pub(crate) deadline: Instant,
}

/// An op failure as a JS error: the class is `Error` or `TypeError`, and a string `code`
/// property lets handlers branch (`capability_denied`, `invalid_argument`, `too_large`, or the
/// host's own code such as `quota_exceeded`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpError {
    #[error("the `{0}` capability is not granted to this endpoint")]
    CapabilityDenied(&'static str),
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    TooLarge(String),
    #[error("{}", .0.message)]
    Host(#[from] HostError),
    #[error("{0}")]
    Internal(String),
}

/// How a refusal the server makes reaches the worker: the same code and message the worker's
/// own check would have given.
impl From<OpError> for HostError {
    fn from(err: OpError) -> HostError {
        HostError::new(err.code(), err.to_string())
    }
}

impl OpError {
    fn code(&self) -> Cow<'static, str> {
        match self {
            OpError::CapabilityDenied(_) => "capability_denied".into(),
            OpError::InvalidArgument(_) => "invalid_argument".into(),
            OpError::TooLarge(_) => "too_large".into(),
            OpError::Host(err) => err.code.clone().into(),
            OpError::Internal(_) => "sandbox_internal".into(),
        }
    }
}

impl JsErrorClass for OpError {
    fn get_class(&self) -> Cow<'static, str> {
        match self {
            OpError::InvalidArgument(_) => "TypeError".into(),
            _ => "Error".into(),
        }
    }

    fn get_message(&self) -> Cow<'static, str> {
        self.to_string().into()
    }

    fn get_additional_properties(&self) -> AdditionalProperties {
        Box::new(std::iter::once((
            Cow::Borrowed("code"),
            PropertyValue::String(self.code()),
        )))
    }

    fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_errors_carry_a_code() {
        let err = OpError::CapabilityDenied("kv");
        assert_eq!(err.get_class(), "Error");
        assert!(err.get_message().contains("`kv`"));
        let props: Vec<_> = err.get_additional_properties().collect();
        assert_eq!(props[0].0, "code");
        assert_eq!(props[0].1.to_string(), "capability_denied");
        let err = OpError::from(HostError::new("quota_exceeded", "full"));
        assert_eq!(err.code(), "quota_exceeded");
        assert_eq!(err.get_message(), "full");
    }
}
