//! One JS invocation: build the code and `req`, run it in the pool, map the outcome.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use time::OffsetDateTime;

use super::host::StoreHost;
use super::slots::{slot, slot_base};
use super::typescript::{self, SourceMap, TranspileError};
use crate::catalog::{CompiledEndpoint, Endpoint, Owner, Registry};
use crate::config::RuntimeConfig;
use crate::error::{ApiError, ErrorCode};
use crate::logs::{LogLevel, LogLine};
use crate::net::OutboundClient;
use crate::store::Store;

/// What a handler produced: status, JSON body and the safe headers it chose.
#[derive(Debug)]
pub struct HandlerOutput {
    pub status: StatusCode,
    pub body: Value,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// What the call reported it cost (`ctx.charge`, or a native handler's units).
    pub usage: Option<sandbox::Usage>,
    /// The JSON text `body` was parsed from, as a JavaScript handler's isolate wrote it.
    pub text: Option<String>,
}

impl HandlerOutput {
    pub fn ok(body: Value) -> Self {
        Self {
            status: StatusCode::OK,
            body,
            headers: Vec::new(),
            usage: None,
            text: None,
        }
    }
}

/// Request headers a handler may see. Credentials, cookies and payment proofs never reach it.
const VISIBLE_HEADERS: [&str; 5] = [
    "accept",
    "accept-language",
    "content-type",
    "user-agent",
    "x-request-id",
];

pub struct EndpointRuntime {
    pool: sandbox::Sandbox,
    reject_invalid_output: bool,
    /// Each endpoint's code per generation: decrypting secrets (and copying source and env) on
    /// every call would put a store scan and AES on the hot path. Every change to code, env,
    /// secrets, capabilities or limits bumps the generation.
    builds: Mutex<HashMap<String, Arc<Build>>>,
}

/// What one generation of an endpoint runs with.
struct Build {
    /// The endpoint, generation and revision it was built from (`code.version` names them).
    endpoint_id: String,
    generation: u64,
    revision: u64,
    /// Source, capabilities, limits and `ctx.env` (the plain env with the decrypted secrets on
    /// top); its version names the endpoint generation.
    code: sandbox::EndpointCode,
    /// Secret values, redacted from stored logs.
    secrets: Vec<String>,
    /// For a TypeScript source: from the JS the sandbox runs back to the TypeScript.
    map: Option<SourceMap>,
}

/// What a handler is told of the call it serves (its `req`).
pub struct HandlerRequest<'a> {
    pub method: &'a axum::http::Method,
    pub input: &'a Value,
    /// The caller's headers; only an allow-list reaches the handler.
    pub headers: &'a HeaderMap,
    pub request_id: &'a str,
    /// The tool's public URL (`req.url`, and the URL of a Workers-style handler's `Request`).
    pub url: &'a str,
}

/// A JS call's outcome, with what the invocation record needs whatever happened.
pub struct JsOutcome {
    pub result: Result<HandlerOutput, ApiError>,
    pub lines: Vec<LogLine>,
    pub secrets: Vec<String>,
    /// Where a handler's error arose in its source, for the owner's logs and events.
    pub trace: Option<sandbox::SourceTrace>,
}

impl EndpointRuntime {
    pub fn new(
        config: &RuntimeConfig,
        store: Arc<dyn Store>,
        outbound: OutboundClient,
        catalog: Arc<Registry>,
    ) -> Self {
        let host = StoreHost::new(store, outbound, config.quotas.clone(), catalog);
        Self {
            pool: sandbox::Sandbox::new(
                config.pool.clone(),
                Arc::new(host),
                config.isolation.clone(),
            ),
            reject_invalid_output: config.reject_invalid_output,
            builds: Mutex::default(),
        }
    }

    /// The endpoint's code for its current generation, loading secrets only when it changed.
    async fn build<F>(
        &self,
        compiled: &CompiledEndpoint,
        load_secrets: impl FnOnce() -> F,
    ) -> Result<Arc<Build>, ApiError>
    where
        F: std::future::Future<Output = Result<BTreeMap<String, String>, ApiError>>,
    {
        let endpoint = &compiled.endpoint;
        let slot = slot(compiled);
        if let Some(cached) = self.builds().get(&slot).filter(|r| {
            r.generation == endpoint.generation
                && r.revision == endpoint.serving_revision
                && r.endpoint_id == endpoint.id
        }) {
            return Ok(cached.clone());
        }
        let Some(source) = endpoint.source.clone() else {
            return Err(ApiError::internal(format!(
                "JS endpoint {} has no source",
                endpoint.slug
            )));
        };
        // Published TypeScript passed the same transpiler at publish (`check`).
        let module = typescript::module(endpoint.source_language, source, endpoint.owner_builder())
            .await
            .map_err(|e| match e {
                TranspileError::Source { message, .. } => {
                    sandbox_error(sandbox::SandboxError::CompileError(message))
                }
                TranspileError::Failed(message) => ApiError::internal(message),
            })?;
        let secrets = load_secrets().await?;
        let mut env = endpoint.env.clone();
        env.extend(secrets.clone());
        let loaded = Arc::new(Build {
            endpoint_id: endpoint.id.clone(),
            generation: endpoint.generation,
            revision: endpoint.serving_revision,
            code: endpoint_code(endpoint, &slot, module.js, env),
            secrets: secrets.into_values().collect(),
            map: module.map,
        });
        // Two calls that both missed build the same generation; either may stay.
        self.builds().insert(slot, loaded.clone());
        Ok(loaded)
    }

    fn builds(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Build>>> {
        self.builds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops what the runtime holds for a deleted endpoint: its calls in progress (stopped,
    /// see `sandbox::Sandbox::stop`), its isolates and its cached builds (with the
    /// decrypted secrets), those of the revisions it tried included.
    pub fn forget(&self, slug: &str) {
        for slot in self.take_slots(slug) {
            self.pool.stop(&slot);
        }
    }

    /// Drops an endpoint's cached builds and isolates after it changed elsewhere (another
    /// node sharing the store): the next call builds the new generation; calls in progress
    /// finish on the old.
    pub fn reload(&self, slug: &str) {
        for slot in self.take_slots(slug) {
            self.pool.retire(&slot);
        }
    }

    /// Forgets the builds of `slug` and its trial revisions; answers their sandbox slots (the
    /// endpoint's own always among them).
    fn take_slots(&self, slug: &str) -> Vec<String> {
        let mut builds = self.builds();
        let mut slots: Vec<String> = builds
            .keys()
            .filter(|key| slot_base(key) == slug)
            .cloned()
            .collect();
        for slot in &slots {
            builds.remove(slot);
        }
        if !slots.iter().any(|s| s == slug) {
            slots.push(slug.to_owned());
        }
        slots
    }

    pub fn pool(&self) -> &sandbox::Sandbox {
        &self.pool
    }

    /// Runs the endpoint's handler for one call; `payment` becomes `req.payment`; `load_secrets`
    /// decrypts the endpoint's secrets when its generation is new. The handler's log lines come
    /// back whatever the outcome.
    pub async fn run<F>(
        &self,
        compiled: &CompiledEndpoint,
        call: HandlerRequest<'_>,
        payment: Value,
        load_secrets: impl FnOnce() -> F,
    ) -> JsOutcome
    where
        F: std::future::Future<Output = Result<BTreeMap<String, String>, ApiError>>,
    {
        let failed = |e: ApiError| JsOutcome {
            result: Err(e),
            lines: Vec::new(),
            secrets: Vec::new(),
            trace: None,
        };
        let build = match self.build(compiled, load_secrets).await {
            Ok(build) => build,
            Err(e) => return failed(e),
        };
        let request = match request_object(&compiled.endpoint.slug, &call, &payment) {
            Ok(request) => request,
            Err(e) => return failed(e),
        };
        let invocation = sandbox::Invocation {
            request,
            request_id: call.request_id.to_string(),
            load_only: false,
        };
        let report = self.pool.invoke(&build.code, invocation).await;
        let lines = log_lines(report.logs, report.duration);
        let result = match report.result {
            Ok(response) => self.check_output(compiled, response).await,
            Err(e) => {
                // A handler may throw what it holds; its secrets stay out of the answer.
                let mut error = sandbox_error(e);
                error.message = crate::logs::redact(&error.message, &build.secrets);
                Err(error)
            }
        };
        JsOutcome {
            result,
            lines,
            secrets: build.secrets.clone(),
            trace: match &build.map {
                Some(map) => report.trace.map(|t| map.trace(t)),
                None => report.trace,
            },
        }
    }

    async fn check_output(
        &self,
        compiled: &CompiledEndpoint,
        response: sandbox::HandlerResponse,
    ) -> Result<HandlerOutput, ApiError> {
        let endpoint = &compiled.endpoint;
        let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::OK);
        if status.is_success() {
            let violations = compiled.output_violations_async(&response.body).await;
            if !violations.is_empty() {
                tracing::warn!(endpoint = %endpoint.slug, ?violations, "handler result breaks its outputSchema");
                if self.reject_invalid_output {
                    return Err(ApiError::new(
                        StatusCode::BAD_GATEWAY,
                        ErrorCode::OutputInvalid,
                        "the handler's result does not match its outputSchema",
                    )
                    .with_details(json!({ "violations": violations })));
                }
            }
        }
        let headers = response
            .headers
            .into_iter()
            .filter_map(|(n, v)| {
                Some((
                    HeaderName::try_from(n).ok()?,
                    HeaderValue::try_from(v).ok()?,
                ))
            })
            .collect();
        Ok(HandlerOutput {
            status,
            body: response.body,
            headers,
            usage: response.usage,
            text: response.text,
        })
    }
}

/// What the sandbox runs for `endpoint`'s current generation in `slot`, with `source` and
/// `env`.
pub(super) fn endpoint_code(
    endpoint: &Endpoint,
    slot: &str,
    source: String,
    env: BTreeMap<String, String>,
) -> sandbox::EndpointCode {
    sandbox::EndpointCode {
        id: endpoint.id.clone(),
        slug: slot.to_owned(),
        version: format!(
            "{}-g{}-r{}",
            endpoint.id, endpoint.generation, endpoint.serving_revision
        ),
        source,
        capabilities: endpoint.capabilities(),
        env,
        limits: endpoint.limits.map(|l| sandbox::Limits {
            heap_bytes: l.memory_mb as usize * 1024 * 1024,
            timeout: std::time::Duration::from_millis(u64::from(l.timeout_ms)),
        }),
        // Builders' isolates count against their quotas; the operator's do not.
        owner: match &endpoint.owner {
            Owner::Builder(id) => Some(id.clone()),
            Owner::System | Owner::Admin => None,
        },
    }
}

/// A report's console lines as log lines, timed from when the invocation started (`duration`
/// before now).
pub(super) fn log_lines(
    logs: Vec<sandbox::ConsoleLine>,
    duration: std::time::Duration,
) -> Vec<LogLine> {
    let started = OffsetDateTime::now_utc() - duration;
    logs.into_iter()
        .map(|line| LogLine {
            level: match line.level {
                sandbox::ConsoleLevel::Info => LogLevel::Info,
                sandbox::ConsoleLevel::Warn => LogLevel::Warn,
                sandbox::ConsoleLevel::Error => LogLevel::Error,
            },
            message: line.message,
            at: started + std::time::Duration::from_millis(line.at_ms),
        })
        .collect()
}

/// The handler's `req` for a call of the endpoint `slug`, as the JSON text the sandbox hands
/// the isolate: written once, here, straight from the call (no `Value` is built for it).
pub(super) fn request_object(
    slug: &str,
    call: &HandlerRequest<'_>,
    payment: &Value,
) -> Result<Box<RawValue>, ApiError> {
    /// `req`'s members, in the order a handler sees them.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Req<'a> {
        input: &'a Value,
        method: &'a str,
        /// The input again for a GET, else `{}`.
        query: Query<'a>,
        headers: VisibleHeaders<'a>,
        endpoint: EndpointName<'a>,
        url: &'a str,
        request_id: &'a str,
        payment: &'a Value,
    }
    #[derive(Serialize)]
    #[serde(untagged)]
    enum Query<'a> {
        Input(&'a Value),
        Empty {},
    }
    #[derive(Serialize)]
    struct EndpointName<'a> {
        slug: &'a str,
    }
    let get = *call.method == axum::http::Method::GET;
    serde_json::value::to_raw_value(&Req {
        input: call.input,
        method: call.method.as_str(),
        query: if get {
            Query::Input(call.input)
        } else {
            Query::Empty {}
        },
        headers: VisibleHeaders(call.headers),
        endpoint: EndpointName { slug },
        url: call.url,
        request_id: call.request_id,
        payment,
    })
    .map_err(ApiError::internal)
}

/// The caller's headers a handler sees ([`VISIBLE_HEADERS`]), as a JSON object.
struct VisibleHeaders<'a>(&'a HeaderMap);

impl Serialize for VisibleHeaders<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(VISIBLE_HEADERS.iter().filter_map(|name| {
            let value = self.0.get(*name)?.to_str().ok()?;
            Some((*name, value))
        }))
    }
}

/// Sandbox failures as HTTP errors: the handler is the upstream, so its faults are 5xx, with
/// the message only (the sandbox already strips host internals). The exception is a handler
/// refusing the caller's request (it threw a `status` in 400..=499): that status, with
/// `handler_refused` and the thrown message (the reason phrase when it is empty).
pub(super) fn sandbox_error(e: sandbox::SandboxError) -> ApiError {
    use sandbox::SandboxError as E;
    let (status, code) = match &e {
        E::HandlerRefused { status, message } => {
            let status = StatusCode::from_u16(*status)
                .ok()
                .filter(StatusCode::is_client_error)
                .unwrap_or(StatusCode::BAD_REQUEST);
            let message = match message.as_str() {
                "" => status.canonical_reason().unwrap_or("refused").to_owned(),
                _ => message.clone(),
            };
            return ApiError::new(status, ErrorCode::HandlerRefused, message);
        }
        E::Timeout => (StatusCode::GATEWAY_TIMEOUT, ErrorCode::Timeout),
        E::Stopped => (StatusCode::NOT_FOUND, ErrorCode::EndpointNotFound),
        E::Overloaded {
            retry_after_secs, ..
        } => {
            return ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::Overloaded,
                e.to_string(),
            )
            .with_retry_after(*retry_after_secs)
        }
        E::Internal(_) => return ApiError::internal(e),
        E::ResourceLimit(_) => (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::ResourceLimit),
        E::HandlerError(_) => (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::HandlerError),
        E::InvalidResponse(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InvalidHandlerResponse,
        ),
        E::CapabilityDenied(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::CapabilityDenied,
        ),
        E::CompileError(_) => (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::CompileError),
    };
    ApiError::new(status, code, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `req` as it was built before it was written straight to text: a handler sees the same
    /// members, in the same order, for a GET (the input again as `query`) and a POST.
    #[test]
    fn the_request_text_is_the_req_object() {
        let mut headers = HeaderMap::new();
        headers.insert("user-agent", HeaderValue::from_static("agent/1.0"));
        headers.insert("authorization", HeaderValue::from_static("Bearer secret"));
        headers.insert("accept", HeaderValue::from_static("application/json"));
        let input = json!({ "text": "a \"quoted\" word", "n": [1, 2.5] });
        for method in [axum::http::Method::GET, axum::http::Method::POST] {
            let call = HandlerRequest {
                method: &method,
                input: &input,
                headers: &headers,
                request_id: "req-1",
                url: "https://tools.example/tools/words",
            };
            let payment = json!({ "paid": "1000" });
            let expected = json!({
                "input": input,
                "method": method.as_str(),
                "query": if method == axum::http::Method::GET { input.clone() } else { json!({}) },
                "headers": { "accept": "application/json", "user-agent": "agent/1.0" },
                "endpoint": { "slug": "words" },
                "url": call.url,
                "requestId": "req-1",
                "payment": payment,
            });
            let text = request_object("words", &call, &payment).unwrap();
            assert_eq!(text.get(), expected.to_string(), "{method}");
        }
    }
}
