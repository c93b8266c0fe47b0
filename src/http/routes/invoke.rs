//! `POST /ai/invoke` `{slug, input, quoteId?}`: the same pipeline as `/tools/{slug}` with one
//! envelope, `{ok, result, receipt}`, and streaming.
//!
//! A long-running endpoint (its time limit, see [`time_limit`], over
//! `Config::long_running_after`) needs `Accept: text/event-stream`; otherwise the answer is 409
//! `streaming_required`. A streamed call
//! still gets 400/402/404/422 as plain HTTP (payment is gated before the stream starts), then
//! SSE events: `progress` (`{stage:"accepted"}`, `{stage:"running"}`), and finally `result`
//! (`{ok, result, receipt, paymentResponse}`, the latter the base64 settlement header value) or
//! `error` (the error body).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::{App, AppState};
use crate::catalog::{CompiledEndpoint, Endpoint, HandlerType};
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::auth::TestRequest;
use crate::http::extract::{ClientAddr, JsonBody};
use crate::http::routes::tools::marked;
use crate::pipeline::{complete, prepare, Call, Outcome};

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvokeRequest {
    slug: String,
    /// The endpoint's input (its inputSchema); `{}` when absent.
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    input: Value,
    /// A quote from `POST /ai/quote` to hold this call to.
    #[serde(default)]
    quote_id: Option<String>,
}

fn empty_object() -> Value {
    json!({})
}

/// The longest one call of `endpoint` may run: a JS handler's wall-clock limit (the admin's
/// `limits.timeoutMs`, else the sandbox default `--js-timeout-ms`); the readiness check's
/// outbound requests (GET, a POST probe, and for an MCP endpoint its handshake), which share a
/// deadline of twice the outbound timeout; the other built-ins answer without waiting on anything.
pub fn time_limit(app: &App, endpoint: &Endpoint) -> Duration {
    match endpoint.handler_type {
        HandlerType::X402ReadinessCheck => app.config.outbound.timeout * 2,
        HandlerType::JsRequestResponse => endpoint
            .limits
            .map(|l| Duration::from_millis(u64::from(l.timeout_ms)))
            .unwrap_or(app.config.runtime.pool.default_limits.timeout),
        HandlerType::ReceiptEcho | HandlerType::StaticJson | HandlerType::ConversionQuote => {
            Duration::ZERO
        }
    }
}

/// Long-running: the time limit is over `Config::long_running_after` (`--long-running-after-secs`),
/// so `/ai/invoke` streams the call instead of holding a plain response open that long.
pub fn is_long_running(app: &App, endpoint: &Endpoint) -> bool {
    time_limit(app, endpoint) > app.config.long_running_after
}

fn accepts_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| {
            accept
                .split(',')
                .any(|part| part.trim().starts_with("text/event-stream"))
        })
}

/// Invoke an endpoint by slug; `{ok, result, receipt}`, or SSE with `Accept: text/event-stream`.
#[utoipa::path(post, path = "/ai/invoke", tag = "tools",
    request_body = InvokeRequest,
    responses(
        (status = 200, description = "`{ok, result, receipt}`; or a text/event-stream of `progress` events and a final `result` (or `error`) event", body = Invoked),
        (status = 400, description = "Malformed JSON or payment header", body = ErrorBody),
        (status = 402, description = "Payment required or refused: PAYMENT-REQUIRED header (x402 v2) and the x402 v1 body", body = crate::x402::requirements::PaymentRequiredBody),
        (status = 403, description = "`test_call_not_allowed`: X-Toolhost-Test from someone other than the owner or the admin", body = ErrorBody),
        (status = 404, description = "No such endpoint or quote", body = ErrorBody),
        (status = 409, description = "`streaming_required`: long-running endpoint without Accept: text/event-stream; or `quote_expired` / `quote_mismatch`", body = ErrorBody),
        (status = 422, description = "Input violates inputSchema", body = ErrorBody),
        (status = 503, description = "Endpoint paused (`endpoint_paused`) or awaiting a capability grant (`awaiting_grant`)", body = ErrorBody),
    ))]
pub async fn invoke(
    State(app): State<AppState>,
    test: TestRequest,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    JsonBody(request): JsonBody<InvokeRequest>,
) -> ApiResult<Response> {
    let compiled = app.catalog.require(&request.slug)?;
    let is_test = test.check(&compiled.endpoint)?;
    let compiled = test.serving(&app, compiled).await?;
    let mut call = Call::new(Method::POST, request.input, headers);
    call.test = is_test;
    call.client = client;
    let compiled = crate::pipeline::route(&compiled, &call);
    Ok(marked(
        is_test,
        invoke_call(app, compiled, call, request.quote_id).await,
    ))
}

/// The call of [`invoke`] once the endpoint and whether it is a test call are known.
async fn invoke_call(
    app: AppState,
    compiled: Arc<CompiledEndpoint>,
    call: Call,
    quote_id: Option<String>,
) -> ApiResult<Response> {
    let streaming = accepts_event_stream(&call.headers);
    if !streaming && is_long_running(&app, &compiled.endpoint) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::StreamingRequired,
            format!(
                "{:?} is long-running (time limit {} ms, over {} ms); ask for Accept: text/event-stream",
                compiled.endpoint.slug,
                time_limit(&app, &compiled.endpoint).as_millis(),
                app.config.long_running_after.as_millis()
            ),
        ));
    }
    if let Some(quote_id) = &quote_id {
        crate::quotes::hosted::honor(app.store.as_ref(), quote_id, &compiled.endpoint).await?;
    }
    let authorized = prepare(&app, &compiled, &call).await?;
    if !streaming {
        return Ok(invoke_response(
            complete(&app, &compiled, &call, authorized).await?,
        ));
    }
    let (tx, rx) = futures::channel::mpsc::unbounded::<Event>();
    let event = |name: &str, data: Value| Event::default().event(name).data(data.to_string());
    let _ = tx.unbounded_send(event(
        "progress",
        json!({"stage": "accepted", "slug": compiled.endpoint.slug}),
    ));
    tokio::spawn(async move {
        let _ = tx.unbounded_send(event("progress", json!({"stage": "running"})));
        let last = match complete(&app, &compiled, &call, authorized).await {
            Ok(outcome) => event("result", result_event(outcome)),
            Err(error) => event(
                "error",
                serde_json::to_value(error.answer()).unwrap_or(Value::Null),
            ),
        };
        let _ = tx.unbounded_send(last);
    });
    Ok(Sse::new(rx.map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::default())
        .into_response())
}

fn result_event(outcome: Outcome) -> Value {
    let payment_response = outcome
        .headers
        .iter()
        .find(|(name, _)| name.as_str().ends_with("payment-response"))
        .and_then(|(_, value)| value.to_str().ok())
        .map(str::to_string);
    json!({"ok": outcome.status.is_success(), "result": outcome.result, "receipt": outcome.receipt, "receiptLog": outcome.receipt_log, "receiptSalt": outcome.receipt_salt, "paymentResponse": payment_response})
}

/// The JSON answer of `POST /ai/invoke`.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Invoked {
    /// Whether the handler answered a success.
    ok: bool,
    /// What the handler returned, shaped by the endpoint's outputSchema.
    result: Value,
    /// The call's receipt; `null` when none was issued (a free endpoint, a test call).
    #[schema(required = true)]
    receipt: Option<crate::receipts::Receipt>,
    /// Where the receipt is in the receipt log: its leaf index, the inclusion proof and the
    /// signed checkpoint of the tree it is in. Absent without a receipt, or when the log could
    /// not take it in time (ask `GET /ai/receipts/{receiptId}/inclusion` later).
    #[serde(skip_serializing_if = "Option::is_none")]
    receipt_log: Option<crate::receipts::log::Inclusion>,
    /// The salt of the receipt's digests (hex), for this caller alone: `requestSha256` is
    /// SHA-256 of its 16 bytes and the canonical JSON of the input (`resultSha256` likewise of
    /// the result). `null` without a receipt.
    #[schema(required = true)]
    receipt_salt: Option<String>,
}

/// `{ok, result, receipt}`, with the handler's status (`ok` is whether it is a success).
fn invoke_response(outcome: Outcome) -> Response {
    let headers = outcome.headers();
    let body = Invoked {
        ok: outcome.status.is_success(),
        result: outcome.result,
        receipt: outcome.receipt,
        receipt_log: outcome.receipt_log,
        receipt_salt: outcome.receipt_salt,
    };
    let mut response = (outcome.status, Json(body)).into_response();
    response.headers_mut().extend(headers);
    response
}
