//! What goes into an invocation ([`EndpointCode`], [`Invocation`]) and what comes out
//! ([`InvocationReport`]).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::{Capabilities, Limits, SandboxError, SourceTrace};

/// The deployable unit of an endpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EndpointCode {
    /// The endpoint's id: never reused (unlike a slug, which a deleted endpoint frees), so
    /// the host keeps the endpoint's data under it, and an old call of a deleted endpoint can
    /// never reach the data of the next endpoint with its slug.
    pub id: String,
    /// The endpoint's name in URLs; one slug never shares an isolate with another.
    pub slug: String,
    /// Changes whenever the id, source, capabilities, env or limits change; a new version
    /// replaces the endpoint's isolates.
    pub version: String,
    /// The ES module; its default export is the handler.
    pub source: String,
    /// What `ctx` may reach.
    pub capabilities: Capabilities,
    /// `ctx.env` (the server merges decrypted secrets in).
    pub env: BTreeMap<String, String>,
    /// Overrides of [`crate::PoolConfig::default_limits`].
    pub limits: Option<Limits>,
    /// Who the endpoint belongs to (a builder id): its isolates count against that owner's
    /// quotas ([`crate::PoolConfig::max_isolates_per_owner`], `max_heap_per_owner_bytes`).
    /// `None` (the operator's own endpoints) is bound by the pool-wide limits only.
    pub owner: Option<String>,
}

impl EndpointCode {
    /// Who the endpoint's calls count toward, for quotas, placement and shares of the
    /// server's work: its owner; the operator's endpoints (no owner) each count as a builder
    /// of their own.
    pub fn builder(&self) -> &str {
        self.owner.as_deref().unwrap_or(&self.slug)
    }
}

/// One call of a handler.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Invocation {
    /// The `req` object, built by the server, as JSON text: written once by the server, it
    /// crosses to a worker process as it is and is the text the isolate's `JSON.parse` reads
    /// (`serde_json::value::to_raw_value` makes one).
    pub request: Box<RawValue>,
    /// Correlates logs and reports.
    pub request_id: String,
    /// Only load the module and check that its default export is a function, as a cold start
    /// does, without calling it (the publish-time check): the report is a 204 with no body,
    /// or the error loading met. The isolate is not kept.
    #[serde(default)]
    pub load_only: bool,
}

/// A successful result.
///
/// A plain return value is the body of a 200 response. `ctx.respond(status, body, headers?)`
/// picks the status (an integer in `200..=599`: no 1xx, which would claim an upgrade or stall
/// the client) and headers from this allow-list:
///
/// - `cache-control`, `content-language`, `etag`, `last-modified`, `expires`;
/// - any `x-` name, except names that touch payment, authentication or session state
///   (containing `payment`, `auth`, `cookie`, `token`, `session`, `secret`, `signature`,
///   `csrf`, `api-key`, `apikey`), proxy identity (`forwarded`, `real-ip`), the server's own
///   headers (`x-request-id`, `x-receipt*`, `x-developer-credit`, `x-toolhost-*`), and those a
///   proxy or browser acts on (`x-accel-*`, `x-sendfile`, `x-lighttpd-*`, `x-litespeed-*`,
///   `x-original-url`, `x-rewrite-url`, `x-frame-options`, `x-content-type-options`, …).
///
/// Hop-by-hop and framing headers (`connection`, `transfer-encoding`, `upgrade`,
/// `content-length`), `host`, `server`, `set-cookie`, `location` and the rest are simply not on
/// the list.
///
/// Names are matched case-insensitively and returned lower-cased; a name is at most 64 bytes of
/// `[a-z0-9-]`, a value at most 1024 bytes of visible ASCII, space or tab; at most 16 headers.
/// Anything else fails the invocation with an `InvalidResponse` naming the header, so a builder sees
/// the mistake instead of a silently missing header.
///
/// `Body` is the parsed body as callers of the sandbox get it; inside the sandbox (and between a
/// worker process and the server) it is the body's JSON text, checked for size and syntax by the
/// isolate's side and parsed once, where the server takes the answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HandlerResponse<Body = serde_json::Value> {
    /// 200 for a plain return value, or the status given to `ctx.respond`.
    pub status: u16,
    /// The returned value (or `ctx.respond`'s body) as JSON.
    pub body: Body,
    /// Headers given to `ctx.respond`, lower-cased, from the allow-list above.
    pub headers: Vec<(String, String)>,
    /// What the call reported it cost with `ctx.charge`, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The JSON text `body` was parsed from, as the isolate wrote it (the parsed form only):
    /// an answer that adds nothing to it is that text, not `body` serialized again. Never
    /// sent between processes: there the body is this text.
    #[serde(skip)]
    pub text: Option<String>,
}

/// What a handler reported a call cost (`ctx.charge`, summed over the call): the server caps
/// and settles it when the endpoint is metered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Millionths of a US dollar (USDC atomic units); `None` when only units were reported
    /// (a native handler, priced by the endpoint's unit price).
    #[serde(default)]
    pub amount_units: Option<u64>,
    /// How many of the endpoint's metered unit the call used.
    #[serde(default)]
    pub units: f64,
    /// The handler's note, at most 200 characters.
    #[serde(default)]
    pub note: String,
}

impl Usage {
    /// The longest note kept (`ctx.charge` cuts it there).
    pub const MAX_NOTE_CHARS: usize = 200;

    /// What `ctx.charge` can report: a finite, non-negative count of units and a short note.
    fn is_sane(&self) -> bool {
        self.units.is_finite()
            && self.units >= 0.0
            && self.note.chars().count() <= Self::MAX_NOTE_CHARS
    }
}

/// Severity of a [`ConsoleLine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    /// `ctx.log(...)`, `ctx.log.info(...)`, `console.log(...)`.
    Info,
    /// `ctx.log.warn(...)`, `console.warn(...)`.
    Warn,
    /// `ctx.log.error(...)`, `console.error(...)`.
    Error,
}

/// One line logged by a handler.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleLine {
    /// Severity.
    pub level: ConsoleLevel,
    /// The arguments, formatted and joined by spaces.
    pub message: String,
    /// Milliseconds since the invocation started.
    pub at_ms: u64,
}

/// A handler's body as JSON text, as it leaves the isolate.
pub(crate) type RawBody = Box<RawValue>;

/// An [`InvocationReport`] as the isolate threads make it, with the body's JSON text.
pub(crate) type RawReport = InvocationReport<RawBody>;

impl HandlerResponse<RawBody> {
    /// The body parsed, as strictly as `serde_json` parses (its nesting limit included): the
    /// one parse of a handler's answer, where the server needs its value.
    pub(crate) fn parsed(self) -> Result<HandlerResponse, SandboxError> {
        let body = serde_json::from_str(self.body.get()).map_err(not_json)?;
        Ok(HandlerResponse {
            status: self.status,
            body,
            headers: self.headers,
            // Checked where the server takes it: a worker process is not trusted to have.
            usage: self.usage.filter(Usage::is_sane),
            text: Some(Box::<str>::from(self.body).into_string()),
        })
    }
}

/// A handler's answer whose text is not JSON.
pub(crate) fn not_json(err: serde_json::Error) -> SandboxError {
    SandboxError::Internal(format!("handler result is not JSON: {err}"))
}

/// Everything an invocation produced. `Body` as in [`HandlerResponse`].
#[derive(Debug, Serialize, Deserialize)]
pub struct InvocationReport<Body = serde_json::Value> {
    /// The response, or why there is none.
    pub result: Result<HandlerResponse<Body>, SandboxError>,
    /// Log lines, returned even when the invocation failed.
    pub logs: Vec<ConsoleLine>,
    /// Wall-clock time inside `Pool::invoke`, queueing and isolate start included.
    pub duration: Duration,
    /// Where the error arose in the handler's source, when it did there: for the endpoint's
    /// owner, never for callers.
    #[serde(default)]
    pub trace: Option<SourceTrace>,
}

impl RawReport {
    /// The report with its body parsed ([`HandlerResponse::parsed`]).
    pub(crate) fn parsed(self) -> InvocationReport {
        InvocationReport {
            result: self.result.and_then(HandlerResponse::parsed),
            logs: self.logs,
            duration: self.duration,
            trace: self.trace,
        }
    }
}
