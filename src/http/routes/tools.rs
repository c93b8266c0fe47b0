//! `GET`/`POST /tools/{slug}`: a call of one endpoint, its input from the query string or the
//! JSON body, answered with the result itself (see [`tool_response`]). With `X-Toolhost-Test: 1`
//! the owner or the admin makes a test call (see [`marked`]).

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use crate::app::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::http::auth::TestRequest;
use crate::http::extract::{ClientAddr, JsonBody};
use crate::pipeline::{self, Call, Outcome, TEST_HEADER};

/// Invoke with the query string as input (`?url=…`); values are typed by the input schema.
#[utoipa::path(get, path = "/tools/{slug}", tag = "tools",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The endpoint's result, shaped by its outputSchema; an object result carries `receipt` when one was issued", body = Object),
        (status = 400, description = "Malformed payment header", body = ErrorBody),
        (status = 402, description = "Payment required or refused: PAYMENT-REQUIRED header (x402 v2) and the x402 v1 body", body = crate::x402::requirements::PaymentRequiredBody),
        (status = 403, description = "`test_call_not_allowed`: X-Toolhost-Test from someone other than the owner or the admin", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 422, description = "Input violates inputSchema; details list each violation with its JSON pointer", body = ErrorBody),
        (status = 503, description = "Endpoint paused (`endpoint_paused`), awaiting a capability grant (`awaiting_grant`) or its runtime unavailable", body = ErrorBody),
    ))]
pub async fn invoke_get(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    RawQuery(query): RawQuery,
    test: TestRequest,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let compiled = app.catalog.require(&slug)?;
    let pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let input = crate::catalog::input_from_query(&compiled.endpoint.input_schema.value(), pairs);
    let mut call = Call::new(Method::GET, input, headers);
    call.client = client;
    call.test = test.check(&compiled.endpoint)?;
    let compiled = pipeline::route(&test.serving(&app, compiled).await?, &call);
    let answer = pipeline::call(&app, &compiled, &call).await;
    Ok(marked(call.test, answer.map(tool_response)))
}

/// Invoke with a JSON body matching the endpoint's inputSchema.
#[utoipa::path(post, path = "/tools/{slug}", tag = "tools",
    params(("slug" = String, Path, description = "Endpoint slug")),
    request_body(content = Object, description = "A JSON body matching the endpoint's inputSchema"),
    responses(
        (status = 200, description = "The endpoint's result, shaped by its outputSchema; an object result carries `receipt` when one was issued", body = Object),
        (status = 400, description = "Malformed JSON or payment header", body = ErrorBody),
        (status = 402, description = "Payment required or refused: PAYMENT-REQUIRED header (x402 v2) and the x402 v1 body", body = crate::x402::requirements::PaymentRequiredBody),
        (status = 403, description = "`test_call_not_allowed`: X-Toolhost-Test from someone other than the owner or the admin", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 413, description = "Body too large", body = ErrorBody),
        (status = 415, description = "Body is not JSON", body = ErrorBody),
        (status = 422, description = "Input violates inputSchema; details list each violation with its JSON pointer", body = ErrorBody),
        (status = 503, description = "Endpoint paused (`endpoint_paused`), awaiting a capability grant (`awaiting_grant`) or its runtime unavailable", body = ErrorBody),
    ))]
pub async fn invoke_post(
    State(app): State<AppState>,
    Path(slug): Path<String>,
    test: TestRequest,
    ClientAddr(client): ClientAddr,
    headers: HeaderMap,
    JsonBody(input): JsonBody<Value>,
) -> ApiResult<Response> {
    let compiled = app.catalog.require(&slug)?;
    let mut call = Call::new(Method::POST, input, headers);
    call.client = client;
    call.test = test.check(&compiled.endpoint)?;
    let compiled = pipeline::route(&test.serving(&app, compiled).await?, &call);
    let answer = pipeline::call(&app, &compiled, &call).await;
    Ok(marked(call.test, answer.map(tool_response)))
}

/// The answer of a test call, a refusal or failure included, carries `X-Toolhost-Test: 1`, so
/// whoever reads it knows nobody paid; a live call's answer passes through.
pub fn marked(test: bool, answer: ApiResult<Response>) -> Response {
    let mut response = answer.unwrap_or_else(IntoResponse::into_response);
    if test {
        response
            .headers_mut()
            .insert(TEST_HEADER, HeaderValue::from_static("1"));
    }
    response
}

/// `/tools/{slug}`: the result itself; an object result also carries its `receipt`.
pub fn tool_response(mut outcome: Outcome) -> Response {
    let headers = outcome.headers();
    let mut response = match outcome.answer_text() {
        Some(text) => (
            outcome.status,
            [(header::CONTENT_TYPE, "application/json")],
            text,
        )
            .into_response(),
        None => (outcome.status, Json(outcome.answer_body())).into_response(),
    };
    response.headers_mut().extend(headers);
    response
}
