//! One JS invocation: build the code and `req`, run it in the pool, map the outcome.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::host::StoreHost;
use crate::catalog::CompiledEndpoint;
use crate::config::RuntimeConfig;
use crate::http::error::ApiError;
use crate::net::OutboundClient;
use crate::store::Store;
use crate::tools::routes::Call;

/// What a handler produced: status, JSON body and the safe headers it chose.
#[derive(Debug)]
pub struct HandlerOutput {
    pub status: StatusCode,
    pub body: Value,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl HandlerOutput {
    pub fn ok(body: Value) -> Self {
        Self {
            status: StatusCode::OK,
            body,
            headers: Vec::new(),
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

pub struct JsRuntime {
    pool: sandbox::Pool,
    reject_invalid_output: bool,
}

impl JsRuntime {
    pub fn new(config: &RuntimeConfig, store: Arc<dyn Store>, outbound: OutboundClient) -> Self {
        let host = StoreHost::new(store, outbound, config.quotas.clone(), Arc::new(|_| None));
        Self {
            pool: sandbox::Pool::new(config.pool.clone(), Arc::new(host)),
            reject_invalid_output: config.reject_invalid_output,
        }
    }

    pub fn pool(&self) -> &sandbox::Pool {
        &self.pool
    }

    /// Runs the endpoint's handler for one call. `env` is the endpoint's env with its decrypted
    /// secrets merged in.
    pub async fn run(
        &self,
        compiled: &CompiledEndpoint,
        call: &Call,
        env: BTreeMap<String, String>,
    ) -> Result<HandlerOutput, ApiError> {
        let endpoint = &compiled.endpoint;
        let source = endpoint.source.clone().ok_or_else(|| {
            ApiError::internal(format!("JS endpoint {} has no source", endpoint.slug))
        })?;
        let capabilities = endpoint.granted_capabilities;
        let code = sandbox::EndpointCode {
            slug: endpoint.slug.clone(),
            version: code_version(&source, &capabilities, &env),
            source,
            capabilities,
            env,
            limits: None,
        };
        let invocation = sandbox::Invocation {
            request: request_object(compiled, call),
            request_id: call.request_id.clone(),
        };
        let report = self.pool.invoke(&code, invocation).await;
        for line in &report.logs {
            tracing::debug!(endpoint = %endpoint.slug, request_id = %call.request_id, level = ?line.level, "{}", line.message);
        }
        let response = report.result.map_err(sandbox_error)?;
        let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::OK);
        if status.is_success() {
            let violations = compiled.output_violations(&response.body);
            if !violations.is_empty() {
                tracing::warn!(endpoint = %endpoint.slug, ?violations, "handler result breaks its outputSchema");
                if self.reject_invalid_output {
                    return Err(ApiError::new(
                        StatusCode::BAD_GATEWAY,
                        "output_invalid",
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
        })
    }
}

/// Identifies everything that shapes an isolate; a change starts fresh isolates.
fn code_version(
    source: &str,
    capabilities: &sandbox::Capabilities,
    env: &BTreeMap<String, String>,
) -> String {
    let mut hash = Sha256::new();
    hash.update(source.as_bytes());
    hash.update(serde_json::to_vec(capabilities).unwrap_or_default());
    hash.update(serde_json::to_vec(env).unwrap_or_default());
    hex::encode(&hash.finalize()[..12])
}

/// The handler's `req`.
fn request_object(compiled: &CompiledEndpoint, call: &Call) -> Value {
    json!({
        "input": call.input,
        "method": call.method.as_str(),
        "query": if call.method == axum::http::Method::GET { call.input.clone() } else { json!({}) },
        "headers": visible_headers(&call.headers),
        "endpoint": { "slug": compiled.endpoint.slug },
        "requestId": call.request_id,
        "payment": Value::Null,
    })
}

fn visible_headers(headers: &HeaderMap) -> Value {
    let map: serde_json::Map<String, Value> = VISIBLE_HEADERS
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name)?.to_str().ok()?;
            Some((name.to_string(), Value::from(value)))
        })
        .collect();
    Value::Object(map)
}

/// Sandbox failures as HTTP errors: the handler is the upstream, so its faults are 5xx, with
/// the message only (the sandbox already strips host internals).
fn sandbox_error(e: sandbox::SandboxError) -> ApiError {
    use sandbox::SandboxError as E;
    let status = match &e {
        E::Timeout => StatusCode::GATEWAY_TIMEOUT,
        E::Overloaded { .. } => StatusCode::TOO_MANY_REQUESTS,
        E::Internal(_) => return ApiError::internal(e),
        E::ResourceLimit(_) | E::HandlerError(_) | E::CapabilityDenied(_) | E::CompileError(_) => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
    };
    let retry_after = match &e {
        E::Overloaded { retry_after_secs } => Some(*retry_after_secs),
        _ => None,
    };
    let error = ApiError::new(status, e.code(), e.to_string());
    match retry_after {
        Some(seconds) => error.with_retry_after(seconds),
        None => error,
    }
}
