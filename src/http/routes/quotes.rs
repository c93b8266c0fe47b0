//! `POST /ai/quote`, `POST /ai/conversion/quote`, `POST /x402/quote`.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::builders::Caller;
use crate::catalog::CatalogError;
use crate::endpoints;
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::JsonBody;
use crate::money::Usd;
use crate::net::OutboundRequest;
use crate::payments::bazaar::Transport;
use crate::quotes::{conversion, external, hosted};
use crate::rate_limit;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuoteRequest {
    slug: String,
    /// The input the call will carry; echoed in the handoff.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    input: Option<Value>,
}

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
    rate_limit::anonymous_write()?;
    let compiled = app.catalog.require(&request.slug)?;
    if !endpoints::visible(&compiled.endpoint, caller.as_ref()) {
        return Err(CatalogError::NotFound(request.slug).into());
    }
    let input = request.input.unwrap_or_else(|| {
        compiled
            .endpoint
            .example_input
            .as_ref()
            .map_or_else(|| json!({}), |e| e.value())
    });
    let charge = app.charge_for(&compiled.endpoint, Transport::Http);
    let quote = hosted::create(
        app.store.as_ref(),
        &app.urls,
        app.config.quote_ttl,
        &compiled,
        charge,
        input,
    )
    .await?;
    Ok(Json(quote))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversionRequest {
    /// Endpoint slug or id.
    service_id: String,
    /// CAIP-2 id (`eip155:1`) or x402 v1 name (`ethereum`).
    start_network: String,
    /// Asset symbol, e.g. `ETH` or `USDC`.
    start_asset: String,
    /// USD to arrive with; defaults to the service's price.
    #[serde(default)]
    #[schema(schema_with = crate::money::optional_usd_schema)]
    amount: Option<Usd>,
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
    rate_limit::anonymous_write()?;
    let input = conversion::ConversionInput {
        service_id: &request.service_id,
        start_network: &request.start_network,
        start_asset: &request.start_asset,
        amount: request.amount,
    };
    Ok(Json(conversion::quote(
        &app.catalog,
        &app.config.payment,
        &app.config.conversion,
        caller.as_ref(),
        &input,
    )?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExternalQuoteRequest {
    /// The seller's paid URL.
    url: String,
    /// `GET` (default) or `POST`.
    #[serde(default)]
    method: Option<String>,
    /// JSON body for a POST.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    body: Option<Value>,
    /// With `startAsset`: also plan the conversion toward the seller's asset.
    #[serde(default)]
    start_network: Option<String>,
    #[serde(default)]
    start_asset: Option<String>,
}

/// The answer of `POST /x402/quote`.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExternalQuote {
    /// Always true.
    ok: bool,
    url: String,
    /// Where the request ended after redirects.
    final_url: String,
    /// The first requirement priced in USD (else the first).
    requirement: external::NormalizedRequirement,
    accepts: Vec<external::NormalizedRequirement>,
    conversion: ExternalConversion,
}

/// The route from the caller's asset (with `startNetwork` and `startAsset`), or how to ask for
/// it.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalConversion {
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<conversion::Plan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'static str>,
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
    // Each one makes an outbound request for an anonymous caller.
    rate_limit::anonymous_write()?;
    let outbound = match request
        .method
        .as_deref()
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        None | Some("GET") => OutboundRequest::get(request.url.clone()),
        Some("POST") => OutboundRequest::post_json(
            request.url.clone(),
            request.body.unwrap_or_else(|| json!({})),
        ),
        Some(other) => {
            return Err(ApiError::unprocessable(
                ErrorCode::InvalidMethod,
                format!("method {other:?} is not supported; use GET or POST"),
            ))
        }
    };
    let response = app.outbound.fetch(outbound).await?;
    let accepts = external::parse(&response)?;
    let selected = accepts
        .iter()
        .find(|a| a.usd.is_some())
        .unwrap_or(&accepts[0])
        .clone();
    let conversion = match (&request.start_network, &request.start_asset, selected.usd) {
        (Some(network), Some(asset), Some(usd)) => ExternalConversion {
            plan: Some(conversion::plan(
                &app.config.conversion,
                network,
                asset,
                &selected.network,
                usd,
            )?),
            note: None,
            url: None,
            method: None,
        },
        _ => ExternalConversion {
            plan: None,
            note: Some(
                "send startNetwork and startAsset to plan the route from your asset to the seller's",
            ),
            url: Some(app.urls.at("/x402/quote")),
            method: Some("POST"),
        },
    };
    Ok(Json(ExternalQuote {
        ok: true,
        url: request.url,
        final_url: response.final_url,
        requirement: selected,
        accepts,
        conversion,
    }))
}
