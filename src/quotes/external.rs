//! `POST /x402/quote`: call an external seller, read its 402 and normalize it.
//!
//! The seller's URL is caller input, so it is fetched through the SSRF-guarded
//! [`OutboundClient`](crate::net::OutboundClient). A v2 seller answers with the
//! `PAYMENT-REQUIRED` header, a v1 seller with the JSON body; both become one
//! requirement shape with CAIP-2 network, atomic amount and (for USDC) its USD value.

use axum::http::StatusCode;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::conversion::{caip2, is_usdc, v1_name};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::money::Usd;
use crate::net::{FetchedResponse, OutboundRequest};

/// One way to pay the seller, whichever version it spoke.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NormalizedRequirement {
    pub x402_version: u64,
    pub scheme: String,
    /// CAIP-2 when known, else as the seller named it.
    pub network: String,
    #[schema(required = true)]
    pub network_name: Option<String>,
    /// Atomic units of `asset`.
    pub amount: String,
    pub asset: String,
    /// `USDC` when the asset is that network's USDC.
    #[schema(required = true)]
    pub asset_symbol: Option<String>,
    /// The amount in USD when the asset is USDC (6 decimals, so units are micro-dollars).
    #[schema(value_type = Option<f64>, required = true, minimum = 0)]
    pub usd: Option<Usd>,
    pub pay_to: String,
    #[schema(required = true)]
    pub max_timeout_seconds: Option<u64>,
    #[schema(required = true)]
    pub resource: Option<String>,
    #[schema(required = true)]
    pub description: Option<String>,
    #[schema(required = true)]
    pub mime_type: Option<String>,
    /// The seller's scheme-specific data, as it sent it.
    pub extra: Value,
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

fn normalize(version: u64, accept: &Value, resource: &Value) -> Option<NormalizedRequirement> {
    let raw_network = text(accept, "network")?;
    let network = caip2(&raw_network).map_or(raw_network.clone(), str::to_string);
    let amount = text(accept, "amount").or_else(|| text(accept, "maxAmountRequired"))?;
    let asset = text(accept, "asset")?;
    let usdc = is_usdc(&network, &asset);
    let usd = if usdc {
        amount.parse::<u64>().ok().map(Usd::from_units)
    } else {
        None
    };
    Some(NormalizedRequirement {
        x402_version: version,
        scheme: text(accept, "scheme")?,
        network_name: v1_name(&network).map(str::to_string),
        network,
        amount,
        asset,
        asset_symbol: usdc.then(|| "USDC".to_string()),
        usd,
        pay_to: text(accept, "payTo")?,
        max_timeout_seconds: accept.get("maxTimeoutSeconds").and_then(Value::as_u64),
        resource: text(accept, "resource").or_else(|| text(resource, "url")),
        description: text(accept, "description").or_else(|| text(resource, "description")),
        mime_type: text(accept, "mimeType").or_else(|| text(resource, "mimeType")),
        extra: accept.get("extra").cloned().unwrap_or(Value::Null),
    })
}

fn not_x402(message: impl Into<String>) -> ApiError {
    ApiError::new(
        StatusCode::BAD_GATEWAY,
        ErrorCode::InvalidX402Answer,
        message,
    )
}

/// The seller's requirements from its 402 answer.
pub fn parse(response: &FetchedResponse) -> Result<Vec<NormalizedRequirement>, ApiError> {
    if response.status != 402 {
        return Err(ApiError::unprocessable(
            ErrorCode::NotPaymentRequired,
            format!(
                "the seller answered HTTP {}, not 402 Payment Required",
                response.status
            ),
        ));
    }
    let document: Value = match response
        .headers
        .get("payment-required")
        .and_then(|v| v.to_str().ok())
    {
        Some(header) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(header.trim())
                .map_err(|_| not_x402("the PAYMENT-REQUIRED header is not base64"))?;
            serde_json::from_slice(&bytes)
                .map_err(|_| not_x402("the PAYMENT-REQUIRED header is not base64 of JSON"))?
        }
        None => serde_json::from_slice(&response.body)
            .map_err(|_| not_x402("the 402 body is not JSON"))?,
    };
    let version = document
        .get("x402Version")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let resource = document.get("resource").cloned().unwrap_or(Value::Null);
    let accepts: Vec<NormalizedRequirement> = document
        .get("accepts")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|a| normalize(version, a, &resource))
                .collect()
        })
        .unwrap_or_default();
    if accepts.is_empty() {
        return Err(not_x402(
            "the 402 answer lists no payment requirement we can read",
        ));
    }
    Ok(accepts)
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
    requirement: NormalizedRequirement,
    accepts: Vec<NormalizedRequirement>,
    conversion: ExternalConversion,
}

/// The route from the caller's asset (with `startNetwork` and `startAsset`), or how to ask for
/// it.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalConversion {
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<super::conversion::Plan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'static str>,
}

/// Calls the external x402 seller at `request.url` (SSRF-guarded), normalizes its 402 (v1 body
/// or v2 header) to one requirement shape with its USD value, and plans the conversion from
/// the caller's asset when it is given (else says how to ask for it).
pub async fn quote(
    parts: &super::Parts<'_>,
    request: ExternalQuoteRequest,
) -> ApiResult<ExternalQuote> {
    // Each one makes an outbound request for an anonymous caller.
    crate::rate_limit::anonymous_write()?;
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
    let response = parts.outbound.fetch(outbound).await?;
    let accepts = parse(&response)?;
    let selected = accepts
        .iter()
        .find(|a| a.usd.is_some())
        .unwrap_or(&accepts[0])
        .clone();
    let conversion = match (&request.start_network, &request.start_asset, selected.usd) {
        (Some(network), Some(asset), Some(usd)) => ExternalConversion {
            plan: Some(super::conversion::plan(
                &parts.config.conversion,
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
            url: Some(parts.urls.at("/x402/quote")),
            method: Some("POST"),
        },
    };
    Ok(ExternalQuote {
        ok: true,
        url: request.url,
        final_url: response.final_url,
        requirement: selected,
        accepts,
        conversion,
    })
}
