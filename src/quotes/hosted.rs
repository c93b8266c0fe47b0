//! `POST /ai/quote`: an all-in quote for a hosted endpoint.
//!
//! The caller pays exactly the endpoint's price: the platform fee comes out of the builder's
//! revenue, and EIP-3009 settlement costs the payer no gas, so both fees are listed at zero and
//! `total` equals the price. The quote repeats the exact x402 requirements a paid call will be
//! asked for, and `/ai/invoke` with its `quoteId` refuses to charge anything else.

use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::builders::Caller;
use crate::catalog::{CatalogError, CompiledEndpoint, Endpoint};
use crate::endpoints;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::money::Usd;
use crate::payments::bazaar::Transport;
use crate::payments::Charge;
use crate::store::{QuoteRow, Store, StoreError, StoreResult};
use crate::urls::Urls;
use crate::x402::requirements::{PaymentRequired, RequirementsV1};

/// What `POST /ai/quote` (and the MCP tool `quote`) is asked.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuoteRequest {
    slug: String,
    /// The input the call will carry; echoed in the handoff.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    input: Option<Value>,
}

/// An all-in quote for the endpoint `request.slug`, as `caller` may see it, stored for
/// `/ai/invoke` to honour. Without an input, the handoff shows the endpoint's example input.
pub async fn quote(
    parts: &super::Parts<'_>,
    caller: Option<&Caller>,
    request: QuoteRequest,
) -> ApiResult<HostedQuote> {
    crate::rate_limit::anonymous_write()?;
    let compiled = parts.catalog.require(&request.slug)?;
    if !endpoints::visible(&compiled.endpoint, caller) {
        return Err(CatalogError::NotFound(request.slug).into());
    }
    let input = request.input.unwrap_or_else(|| {
        compiled
            .endpoint
            .example_input
            .as_ref()
            .map_or_else(|| json!({}), |e| e.value())
    });
    // The offer a paid call over HTTP will be asked to meet.
    let charge = (parts.payments).charge_for(
        &parts.config.payment,
        parts.urls,
        &compiled.endpoint,
        Transport::Http,
    );
    create(
        parts.store,
        parts.urls,
        parts.config.quote_ttl,
        &compiled,
        charge,
        input,
    )
    .await
}

/// A stored quote.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quote {
    pub quote_id: String,
    pub slug: String,
    pub price_usd: Usd,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// The answer of `POST /ai/quote`.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostedQuote {
    /// Always true.
    ok: bool,
    /// Send it to `/ai/invoke` as `quoteId` to be charged exactly this.
    quote_id: String,
    slug: String,
    #[schema(
        pattern = "^(free_public_utility|fixed_price_success_receipt|metered_success_receipt)$"
    )]
    pricing_mode: &'static str,
    /// The price; for a metered endpoint the most the call can cost (what the payer signs).
    #[schema(value_type = f64, minimum = 0)]
    price_usd: Usd,
    /// How a metered price charges: the call is charged what it reports, at least
    /// `minimumUsd`, at most `priceUsd`. Absent on fixed and free prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    metering: Option<crate::catalog::Metering>,
    fees: [Fee; 2],
    #[schema(value_type = f64, minimum = 0)]
    total_usd: Usd,
    #[schema(schema_with = crate::money::units_schema)]
    total_units: String,
    /// Always `USD`.
    currency: &'static str,
    #[schema(format = DateTime)]
    expires_at: String,
    /// The x402 v2 requirements a paid call is asked for; `null` for a free endpoint.
    #[schema(required = true)]
    payment_requirements: Option<PaymentRequired>,
    /// The same in the x402 v1 shape; empty for a free endpoint.
    x402_v1_accepts: Vec<RequirementsV1>,
    handoff: Handoff,
}

/// A fee the caller does not pay on top of the price (listed for clarity).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Fee {
    #[schema(pattern = "^(platform|network_gas)$")]
    name: &'static str,
    /// Always 0.
    usd: u8,
    note: &'static str,
}

/// How to make the quoted call.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Handoff {
    url: String,
    /// Always `POST`.
    method: &'static str,
    /// Header name to value (a placeholder where the caller fills in a payment).
    #[schema(value_type = std::collections::BTreeMap<String, String>)]
    headers: Value,
    /// Headers that can replace the payment header (x402 v1, a developer credit).
    #[schema(value_type = std::collections::BTreeMap<String, String>)]
    alternative_headers: Value,
    /// The call's body: the input.
    body: Value,
    invoke: InvokeHandoff,
}

/// The same call through `POST /ai/invoke`, bound to the quote.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InvokeHandoff {
    url: String,
    /// Always `POST`.
    method: &'static str,
    /// `{slug, input, quoteId}`.
    #[schema(value_type = Object)]
    body: Value,
}

/// Issues and stores a quote for `compiled`; `input` only shapes the handoff example.
async fn create(
    store: &dyn Store,
    urls: &Urls,
    ttl: std::time::Duration,
    compiled: &CompiledEndpoint,
    charge: Charge,
    input: Value,
) -> ApiResult<HostedQuote> {
    let endpoint = &compiled.endpoint;
    let ttl = time::Duration::try_from(ttl).unwrap_or(time::Duration::minutes(5));
    let quote = Quote {
        quote_id: format!("qt_{}", uuid::Uuid::now_v7().simple()),
        slug: endpoint.slug.clone(),
        price_usd: endpoint.price_usd,
        expires_at: OffsetDateTime::now_utc() + ttl,
    };
    let row = QuoteRow {
        id: quote.quote_id.clone(),
        expires_at_ms: u64::try_from(quote.expires_at.unix_timestamp_nanos() / 1_000_000)
            .unwrap_or(0),
        entry: serde_json::to_vec(&quote).map_err(|e| StoreError::Corrupt(e.to_string()))?,
    };
    store.save_quote(&row).await?;
    let offer = charge.offer;
    let paid = endpoint.is_paid();
    let mut headers = json!({"Content-Type": "application/json"});
    if paid {
        headers["PAYMENT-SIGNATURE"] =
            json!("<base64 of the x402 v2 payment payload for paymentRequirements.accepts[i]>");
    }
    Ok(HostedQuote {
        ok: true,
        quote_id: quote.quote_id.clone(),
        slug: endpoint.slug.clone(),
        pricing_mode: endpoint.pricing_mode().as_str(),
        price_usd: endpoint.price_usd,
        metering: endpoint.metering.clone(),
        fees: [
            Fee {
                name: "platform",
                usd: 0,
                note: "included in the price; deducted from the builder's revenue",
            },
            Fee {
                name: "network_gas",
                usd: 0,
                note: "EIP-3009 transferWithAuthorization is submitted by the facilitator",
            },
        ],
        total_usd: endpoint.price_usd,
        total_units: endpoint.price_usd.units().to_string(),
        currency: "USD",
        expires_at: crate::timestamp::rfc3339(quote.expires_at),
        payment_requirements: paid.then(|| offer.v2("")),
        x402_v1_accepts: if paid { offer.v1_accepts() } else { vec![] },
        handoff: Handoff {
            url: urls.tool(&endpoint.slug),
            method: "POST",
            headers,
            alternative_headers: if paid {
                json!({"X-PAYMENT": "<base64 of the x402 v1 payment payload>", "X-Developer-Credit": "<developer credit token>"})
            } else {
                json!({})
            },
            body: input.clone(),
            invoke: InvokeHandoff {
                url: urls.at("/ai/invoke"),
                method: "POST",
                body: json!({"slug": endpoint.slug, "input": input, "quoteId": quote.quote_id}),
            },
        },
    })
}

/// Checks that `quote_id` still holds for a call to `endpoint`.
pub async fn honor(store: &dyn Store, quote_id: &str, endpoint: &Endpoint) -> ApiResult<()> {
    let entry = store.quote(quote_id).await?.ok_or_else(|| {
        ApiError::not_found(ErrorCode::QuoteNotFound, format!("no quote {quote_id:?}"))
    })?;
    let quote: Quote =
        serde_json::from_slice(&entry).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    if quote.expires_at <= OffsetDateTime::now_utc() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::QuoteExpired,
            "the quote has expired; ask for a new one",
        ));
    }
    if quote.slug != endpoint.slug || quote.price_usd != endpoint.price_usd {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            ErrorCode::QuoteMismatch,
            "the quote is for another endpoint or price; ask for a new one",
        ));
    }
    Ok(())
}

/// Deletes quotes that expired before `cutoff`; returns how many. At most 40 sweeps of 256 per
/// call (each engine says which go first: see `toolhost_store::quotes`).
pub async fn sweep_expired(store: &dyn Store, cutoff: OffsetDateTime) -> StoreResult<usize> {
    const PAGE: usize = 256;
    let before_ms = u64::try_from(cutoff.unix_timestamp_nanos() / 1_000_000).unwrap_or(0);
    let mut deleted = 0;
    for _ in 0..40 {
        let swept = store.sweep_quotes(before_ms, PAGE).await?;
        deleted += swept as usize;
        if swept < PAGE as u64 {
            break;
        }
    }
    Ok(deleted)
}
