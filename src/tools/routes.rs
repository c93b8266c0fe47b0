//! The invocation pipeline behind `GET`/`POST /tools/{slug}` and `POST /ai/invoke`.
//!
//! [`prepare`] checks status and input and gates payment; [`complete`] runs the handler and,
//! only when it succeeded, settles the payment and issues the receipt. The split lets
//! `/ai/invoke` answer 402 as plain HTTP before it starts streaming.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::{receipt_echo, record, static_json};
use crate::app::{App, AppState};
use crate::catalog::{CatalogError, CompiledEndpoint, HandlerType, Owner, Status};
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::JsonBody;
use crate::http::rate_limit;
use crate::payments::{self, Authorized, Charge, Offer, ResourceInfo};
use crate::receipts::Receipt;
use crate::runtime::{HandlerOutput, JsOutcome};

pub const RECEIPT_ID_HEADER: HeaderName = HeaderName::from_static("x-receipt-id");

/// One call as the pipeline sees it, whatever route it came through.
pub struct Call {
    pub method: Method,
    pub input: Value,
    pub request_id: String,
    pub headers: HeaderMap,
}

impl Call {
    pub fn new(method: Method, input: Value, headers: HeaderMap) -> Self {
        let request_id = headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        Self {
            method,
            input,
            request_id,
            headers,
        }
    }
}

/// A finished call: the handler's status and result, the receipt when one was issued, and the
/// headers (the handler's, and those reporting settlement).
pub struct Outcome {
    pub status: StatusCode,
    pub result: Value,
    pub receipt: Option<Receipt>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Outcome {
    fn headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        let mut headers = self.headers.clone();
        if let Some(id) = self
            .receipt
            .as_ref()
            .and_then(|r| HeaderValue::from_str(&r.receipt_id).ok())
        {
            headers.push((RECEIPT_ID_HEADER, id));
        }
        headers
    }

    /// `/tools/{slug}`: the result itself; an object result also carries its `receipt`.
    fn into_tool_response(self) -> Response {
        let headers = self.headers();
        let mut result = self.result;
        if let (Some(object), Some(receipt)) = (result.as_object_mut(), &self.receipt) {
            object.insert(
                "receipt".into(),
                serde_json::to_value(receipt).unwrap_or(Value::Null),
            );
        }
        let mut response = (self.status, Json(result)).into_response();
        response.headers_mut().extend(headers);
        response
    }

    /// `/ai/invoke`: `{ok, result, receipt}`, with the handler's status (`ok` is whether it is
    /// a success).
    pub fn into_invoke_response(self) -> Response {
        let headers = self.headers();
        let body =
            json!({"ok": self.status.is_success(), "result": self.result, "receipt": self.receipt});
        let mut response = (self.status, Json(body)).into_response();
        response.headers_mut().extend(headers);
        response
    }
}

/// Invoke with the query string as input (`?url=…`); values are typed by the input schema.
#[utoipa::path(get, path = "/tools/{slug}", tag = "tools",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The endpoint's result, shaped by its outputSchema; an object result carries `receipt` when one was issued", body = Object),
        (status = 400, description = "Malformed payment header", body = ErrorBody),
        (status = 402, description = "Payment required or refused: PAYMENT-REQUIRED header (x402 v2) and the x402 v1 body", body = Object),
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
    let pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let input = crate::catalog::input_from_query(&compiled.endpoint.input_schema, pairs);
    invoke(&app, &compiled, Call::new(Method::GET, input, headers)).await
}

/// Invoke with a JSON body matching the endpoint's inputSchema.
#[utoipa::path(post, path = "/tools/{slug}", tag = "tools",
    params(("slug" = String, Path, description = "Endpoint slug")),
    request_body(content = Object, description = "A JSON body matching the endpoint's inputSchema"),
    responses(
        (status = 200, description = "The endpoint's result, shaped by its outputSchema; an object result carries `receipt` when one was issued", body = Object),
        (status = 400, description = "Malformed JSON or payment header", body = ErrorBody),
        (status = 402, description = "Payment required or refused: PAYMENT-REQUIRED header (x402 v2) and the x402 v1 body", body = Object),
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
    invoke(&app, &compiled, Call::new(Method::POST, input, headers)).await
}

/// The answer of `/tools/{slug}` to one call: [`prepare`], then [`complete`]. MCP `tools/call`
/// runs this too, so both transports answer alike.
pub async fn invoke(app: &App, compiled: &CompiledEndpoint, call: Call) -> ApiResult<Response> {
    let authorized = prepare(app, compiled, &call).await?;
    Ok(complete(app, compiled, &call, authorized)
        .await?
        .into_tool_response())
}

/// What calling this endpoint costs, as an x402 offer.
pub fn charge_for(app: &App, compiled: &CompiledEndpoint) -> Charge {
    let endpoint = &compiled.endpoint;
    let resource = ResourceInfo {
        url: app.urls.tool(&endpoint.slug),
        description: endpoint.title.clone(),
        mime_type: "application/json".into(),
    };
    Charge {
        offer: Offer::new(
            &app.config.payment,
            &app.payments.pay_to,
            resource,
            endpoint.price_usd,
        ),
        purpose: "invocation",
        endpoint_slug: Some(endpoint.slug.clone()),
        seller: match &endpoint.owner {
            Owner::Builder(id) => Some(id.clone()),
            Owner::System | Owner::Admin => None,
        },
    }
}

/// Status, input validation, then payment. Endpoints held for or refused by content-safety
/// review are not found, as in the catalog.
pub async fn prepare(app: &App, compiled: &CompiledEndpoint, call: &Call) -> ApiResult<Authorized> {
    let endpoint = &compiled.endpoint;
    if !endpoint.is_listed() {
        return Err(CatalogError::NotFound(endpoint.slug.clone()).into());
    }
    if endpoint.status == Status::Paused {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::EndpointPaused,
            format!("endpoint {:?} is paused by its owner", endpoint.slug),
        ));
    }
    if !endpoint.is_paid() {
        // A free call stores a log entry (and, for receipt-echo, a receipt) for nobody in
        // particular: limited per client. A paid one is limited by its payment.
        rate_limit::anonymous_write()?;
    }
    let violations = compiled.input_violations_async(&call.input).await;
    if !violations.is_empty() {
        return Err(ApiError::unprocessable(
            ErrorCode::InputInvalid,
            format!(
                "input does not match the inputSchema of {:?}",
                endpoint.slug
            ),
        )
        .with_details(json!({ "violations": violations })));
    }
    payments::gate(app, charge_for(app, compiled), &call.headers).await
}

/// Runs the handler; settles and issues the receipt only when it succeeded (a 2xx result).
/// On failure (an error, or a handler's own non-2xx answer) the payment is released unspent
/// before the answer leaves.
pub async fn complete(
    app: &App,
    compiled: &CompiledEndpoint,
    call: &Call,
    authorized: Authorized,
) -> ApiResult<Outcome> {
    let endpoint = &compiled.endpoint;
    let started = std::time::Instant::now();
    let outcome = run_handler(app, compiled, call, authorized.summary()).await;
    let status = outcome
        .result
        .as_ref()
        .map_or_else(|e| e.status, |o| o.status);
    let ran = record::Ran {
        request_id: &call.request_id,
        status,
        elapsed: started.elapsed(),
        secrets: &outcome.secrets,
    };
    record::invocation(app, endpoint, ran, outcome.lines).await;
    let output = match outcome.result {
        Ok(output) => output,
        Err(e) => {
            authorized.release().await;
            return Err(e);
        }
    };
    let wants_receipt = endpoint.is_paid() || endpoint.handler_type == HandlerType::ReceiptEcho;
    if !wants_receipt || !output.status.is_success() {
        authorized.release().await;
        return Ok(Outcome {
            status: output.status,
            result: output.body,
            receipt: None,
            headers: output.headers,
        });
    }
    let settled = authorized.settle(app, &call.input, &output.body).await?;
    record::payment_settled(app, endpoint, &settled.receipt).await;
    let mut headers = output.headers;
    headers.extend(settled.headers);
    Ok(Outcome {
        status: output.status,
        result: output.body,
        receipt: Some(settled.receipt),
        headers,
    })
}

/// Runs the endpoint's handler; JS handlers also report the lines they logged.
async fn run_handler(
    app: &App,
    compiled: &CompiledEndpoint,
    call: &Call,
    payment: Value,
) -> JsOutcome {
    if compiled.endpoint.handler_type == HandlerType::JsRequestResponse {
        let slug = &compiled.endpoint.slug;
        return app
            .runtime
            .run(compiled, call, payment, || async {
                crate::secrets::decrypted(app.store.as_ref(), &app.secrets, slug)
                    .await
                    .map_err(ApiError::from)
            })
            .await;
    }
    JsOutcome {
        result: run_builtin(app, compiled, call).await,
        lines: Vec::new(),
        secrets: Vec::new(),
    }
}

async fn run_builtin(
    app: &App,
    compiled: &CompiledEndpoint,
    call: &Call,
) -> ApiResult<HandlerOutput> {
    let endpoint = &compiled.endpoint;
    let body = match endpoint.handler_type {
        HandlerType::StaticJson => static_json::respond(endpoint),
        HandlerType::ReceiptEcho => {
            let echo = receipt_echo::EchoRequest {
                method: call.method.as_str(),
                input: &call.input,
                request_id: &call.request_id,
            };
            json!({"ok": true, "echo": receipt_echo::summarize(endpoint, &echo)})
        }
        HandlerType::X402ReadinessCheck => {
            let url = call
                .input
                .get("url")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let report = crate::readiness::check(&app.outbound, url).await?;
            serde_json::to_value(report).map_err(ApiError::internal)?
        }
        HandlerType::ConversionQuote => {
            // The demo endpoint and `POST /ai/conversion/quote` share one planner and table, so
            // the same input is quoted the same cost on both.
            let field = |name: &str| {
                call.input
                    .get(name)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            };
            let request = crate::quotes::conversion::ConversionInput {
                service_id: field("serviceId"),
                start_network: field("startNetwork"),
                start_asset: field("startAsset"),
                amount: None,
            };
            crate::quotes::conversion::quote(
                &app.catalog,
                &app.config.payment,
                &app.config.conversion,
                None,
                &request,
            )?
        }
        HandlerType::JsRequestResponse => {
            return Err(ApiError::internal(
                "JS handlers run in the sandbox, not here",
            ));
        }
    };
    Ok(HandlerOutput::ok(body))
}
