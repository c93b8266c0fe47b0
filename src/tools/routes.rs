//! The invocation pipeline behind `GET` and `POST /tools/{slug}`.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::{receipt_echo, record, static_json};
use crate::app::AppState;
use crate::catalog::{CatalogError, CompiledEndpoint, HandlerType, Status};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::JsonBody;
use crate::logs::LogLine;
use crate::runtime::HandlerOutput;

/// One call as the pipeline sees it, whatever route it came through.
pub struct Call {
    pub method: Method,
    pub input: Value,
    pub request_id: String,
    /// The caller's headers: payment proofs and credentials travel here. MCP calls put the
    /// payment from `_meta` into the same headers, so both transports share one payment path.
    pub headers: HeaderMap,
}

fn request_id(headers: &HeaderMap) -> String {
    headers
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

/// Invoke with the query string as input (`?url=…`); values are typed by the input schema.
#[utoipa::path(get, path = "/tools/{slug}", tag = "tools",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The endpoint's result, shaped by its outputSchema", body = Object),
        (status = 402, description = "Payment required", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 422, description = "Input violates inputSchema; details list each violation with its JSON pointer", body = ErrorBody),
        (status = 503, description = "Endpoint paused or its runtime unavailable", body = ErrorBody),
    ))]
pub async fn invoke_get(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let compiled = app.catalog.require(&slug)?;
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .into_owned()
        .collect();
    let input = crate::catalog::input_from_query(&compiled.endpoint.input_schema, pairs);
    let call = Call {
        method: Method::GET,
        input,
        request_id: request_id(&headers),
        headers,
    };
    invoke(&app, &compiled, call).await
}

/// Invoke with a JSON body matching the endpoint's inputSchema.
#[utoipa::path(post, path = "/tools/{slug}", tag = "tools",
    params(("slug" = String, Path, description = "Endpoint slug")),
    request_body(content = Object, description = "A JSON body matching the endpoint's inputSchema"),
    responses(
        (status = 200, description = "The endpoint's result, shaped by its outputSchema", body = Object),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 402, description = "Payment required", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
        (status = 422, description = "Input violates inputSchema; details list each violation with its JSON pointer", body = ErrorBody),
        (status = 503, description = "Endpoint paused or its runtime unavailable", body = ErrorBody),
    ))]
pub async fn invoke_post(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    headers: HeaderMap,
    JsonBody(input): JsonBody<Value>,
) -> ApiResult<Response> {
    let compiled = app.catalog.require(&slug)?;
    let call = Call {
        method: Method::POST,
        input,
        request_id: request_id(&headers),
        headers,
    };
    invoke(&app, &compiled, call).await
}

/// Status, input validation, price, then the handler. Endpoints held for or refused by
/// content-safety review are not found, as in the catalog.
pub async fn invoke(app: &AppState, compiled: &CompiledEndpoint, call: Call) -> ApiResult<Response> {
    let endpoint = &compiled.endpoint;
    if !endpoint.is_listed() {
        return Err(CatalogError::NotFound(endpoint.slug.clone()).into());
    }
    if endpoint.status == Status::Paused {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "endpoint_paused",
            format!("endpoint {:?} is paused by its owner", endpoint.slug),
        ));
    }
    let violations = compiled.input_violations(&call.input);
    if !violations.is_empty() {
        return Err(ApiError::unprocessable(
            "input_invalid",
            format!("input does not match the inputSchema of {:?}", endpoint.slug),
        )
        .with_details(json!({ "violations": violations })));
    }
    if endpoint.is_paid() {
        return Err(ApiError::new(
            StatusCode::PAYMENT_REQUIRED,
            "payment_required",
            format!(
                "{:?} costs {} USD per successful call; x402 payment is not yet accepted by this server",
                endpoint.slug, endpoint.price_usd
            ),
        ));
    }
    let started = std::time::Instant::now();
    let (result, lines) = run_handler(app, compiled, &call).await;
    let status = result.as_ref().map_or_else(|e| e.status, |o| o.status);
    record::invocation(app, endpoint, &call.request_id, status, started.elapsed(), lines);
    let output = result?;
    let mut response = (output.status, Json(output.body)).into_response();
    response.headers_mut().extend(output.headers);
    Ok(response)
}

/// Runs the endpoint's handler; JS handlers also return the lines they logged.
async fn run_handler(app: &AppState, compiled: &CompiledEndpoint, call: &Call) -> (ApiResult<HandlerOutput>, Vec<LogLine>) {
    if compiled.endpoint.handler_type == HandlerType::JsRequestResponse {
        let env = match crate::secrets::decrypted_env(app, &compiled.endpoint.slug) {
            Ok(env) => env,
            Err(e) => return (Err(e.into()), Vec::new()),
        };
        return app.runtime.run(compiled, call, env).await;
    }
    (run_builtin(app, compiled, call).await, Vec::new())
}

async fn run_builtin(app: &AppState, compiled: &CompiledEndpoint, call: &Call) -> ApiResult<HandlerOutput> {
    let endpoint = &compiled.endpoint;
    let body = match endpoint.handler_type {
        HandlerType::StaticJson => static_json::respond(endpoint),
        HandlerType::ReceiptEcho => {
            let echo = receipt_echo::EchoRequest {
                method: call.method.as_str(),
                input: &call.input,
                request_id: &call.request_id,
            };
            json!({
                "ok": true,
                "echo": receipt_echo::summarize(endpoint, &echo),
                "receipt": receipt_echo::free_receipt(endpoint, &echo),
            })
        }
        HandlerType::X402ReadinessCheck => {
            let url = call.input.get("url").and_then(Value::as_str).unwrap_or_default();
            let report = crate::readiness::check(&app.outbound, url).await?;
            serde_json::to_value(report).map_err(ApiError::internal)?
        }
        HandlerType::JsRequestResponse => return Err(ApiError::internal("JS handlers run in the sandbox, not here")),
    };
    Ok(HandlerOutput::ok(body))
}
