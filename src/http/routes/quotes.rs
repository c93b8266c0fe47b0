//! `POST /ai/quote`, `POST /ai/conversion/quote`, `POST /x402/quote`: the quote use cases of
//! `crate::quotes`, over HTTP.

use axum::extract::State;
use axum::Json;

use crate::app::AppState;
use crate::builders::Caller;
use crate::error::{ApiResult, ErrorBody};
use crate::http::extract::JsonBody;
use crate::quotes::conversion::{self, ConversionRequest};
use crate::quotes::external::{self, ExternalQuote, ExternalQuoteRequest};
use crate::quotes::hosted::{self, QuoteRequest};

/// All-in quote for a hosted endpoint: price, fees, total, expiry, `quoteId`, the exact x402
/// requirements and the handoff (URL, method, headers).
#[utoipa::path(post, path = "/ai/quote", tag = "quotes", request_body = QuoteRequest,
    responses(
        (status = 200, description = "Quote", body = hosted::HostedQuote),
        (status = 401, description = "A credential sent but not valid", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 429, description = "`rate_limited`: too many anonymous writes from this client", body = ErrorBody),
    ))]
pub async fn quote(
    State(app): State<AppState>,
    caller: Option<Caller>,
    JsonBody(request): JsonBody<QuoteRequest>,
) -> ApiResult<Json<hosted::HostedQuote>> {
    let quote = hosted::quote(&app.quote_parts(), caller.as_ref(), request).await?;
    Ok(Json(quote))
}

/// Route steps from the caller's asset toward the settlement asset, estimated cost and the
/// wallet or exchange handoff, priced from the configured table (with its as-of time).
#[utoipa::path(post, path = "/ai/conversion/quote", tag = "quotes", request_body = ConversionRequest,
    responses(
        (status = 200, description = "Conversion route", body = conversion::ConversionQuote),
        (status = 401, description = "A credential sent but not valid", body = ErrorBody),
        (status = 404, description = "No such service", body = ErrorBody),
        (status = 429, description = "`rate_limited`: too many anonymous writes from this client", body = ErrorBody),
        (status = 422, description = "`unknown_network` or `unknown_asset`", body = ErrorBody),
    ))]
pub async fn conversion_quote(
    State(app): State<AppState>,
    caller: Option<Caller>,
    JsonBody(request): JsonBody<ConversionRequest>,
) -> ApiResult<Json<conversion::ConversionQuote>> {
    let quote = conversion::requested(&app.quote_parts(), caller.as_ref(), &request)?;
    Ok(Json(quote))
}

/// Calls an external x402 seller (SSRF-guarded), normalizes its 402 (v1 body or v2 header) to
/// one requirement shape with its USD value, plus the conversion handoff.
#[utoipa::path(post, path = "/x402/quote", tag = "quotes", request_body = ExternalQuoteRequest,
    responses(
        (status = 200, description = "Normalized requirements", body = ExternalQuote),
        (status = 403, description = "`ssrf_refused`: the URL resolves to an internal address", body = ErrorBody),
        (status = 422, description = "Invalid URL or method, `not_payment_required`, unknown network or asset", body = ErrorBody),
        (status = 429, description = "`rate_limited`: too many anonymous writes from this client", body = ErrorBody),
        (status = 502, description = "The seller could not be reached or its 402 is unreadable", body = ErrorBody),
    ))]
pub async fn external_quote(
    State(app): State<AppState>,
    JsonBody(request): JsonBody<ExternalQuoteRequest>,
) -> ApiResult<Json<ExternalQuote>> {
    let quote = external::quote(&app.quote_parts(), request).await?;
    Ok(Json(quote))
}
