//! Payment routes: developer credit administration and the facilitator's supported kinds.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::app::AppState;
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::auth::Admin;
use crate::http::extract::JsonBody;
use crate::money::Usd;
use crate::payments::credits;

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreditRequest {
    /// Amount in USD, up to 6 decimals, at most 9223372036854.775807 (larger: 422
    /// `invalid_amount`).
    #[schema(schema_with = crate::money::positive_usd_schema)]
    amount_usd: Usd,
    /// When the grant stops being spendable (RFC 3339).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<OffsetDateTime>,
    #[serde(default)]
    note: Option<String>,
}

/// A developer credit grant with its balance (never its token). Not closed to other
/// properties: [`IssuedCredit`] adds the token to it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreditView {
    credit_id: String,
    #[schema(value_type = f64, minimum = 0)]
    granted_usd: Usd,
    #[schema(value_type = f64, minimum = 0)]
    balance_usd: Usd,
    #[schema(schema_with = crate::money::units_schema)]
    balance_units: String,
    /// `null` when the grant does not expire.
    #[schema(required = true, format = DateTime)]
    expires_at: Option<String>,
    #[schema(format = DateTime)]
    created_at: String,
    #[schema(required = true)]
    note: Option<String>,
}

fn grant_view(grant: &credits::Grant, balance: Usd) -> CreditView {
    CreditView {
        credit_id: grant.credit_id.clone(),
        granted_usd: grant.granted_usd,
        balance_usd: balance,
        balance_units: balance.units().to_string(),
        expires_at: grant.expires_at.map(crate::timestamp::rfc3339),
        created_at: crate::timestamp::rfc3339(grant.created_at),
        note: grant.note.clone(),
    }
}

/// A new grant: its view and the token, shown this once.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IssuedCredit {
    #[serde(flatten)]
    grant: CreditView,
    /// Send it as `X-Developer-Credit`; only its hash is kept.
    token: String,
    /// Always `X-Developer-Credit`.
    header: &'static str,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreditIssued {
    /// Always true.
    ok: bool,
    credit: IssuedCredit,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Credits {
    /// Always true.
    ok: bool,
    credits: Vec<CreditView>,
}

/// Issue a developer credit grant. The token is in this answer only; send it as
/// `X-Developer-Credit`.
#[utoipa::path(post, path = "/ai/admin/credits", tag = "payments",
    request_body = CreditRequest,
    responses(
        (status = 200, description = "The grant and its one-time token", body = CreditIssued),
        (status = 401, description = "X-Admin-Token missing", body = ErrorBody),
        (status = 422, description = "Invalid amount or expiry", body = ErrorBody),
    ))]
pub async fn issue_credit(
    State(app): State<AppState>,
    _admin: Admin,
    JsonBody(request): JsonBody<CreditRequest>,
) -> ApiResult<Json<CreditIssued>> {
    if request.amount_usd.is_zero() {
        return Err(ApiError::unprocessable(
            ErrorCode::InvalidAmount,
            "amountUsd must be positive",
        ));
    }
    if request.amount_usd > credits::MAX_GRANT {
        return Err(ApiError::unprocessable(
            ErrorCode::InvalidAmount,
            format!("amountUsd must be at most {}", credits::MAX_GRANT),
        ));
    }
    if request
        .expires_at
        .is_some_and(|at| at <= OffsetDateTime::now_utc())
    {
        return Err(ApiError::unprocessable(
            ErrorCode::InvalidExpiry,
            "expiresAt must be in the future",
        ));
    }
    let (grant, token) = credits::issue(
        app.store.as_ref(),
        request.amount_usd,
        request.expires_at,
        request.note,
    )
    .await?;
    Ok(Json(CreditIssued {
        ok: true,
        credit: IssuedCredit {
            grant: grant_view(&grant, grant.granted_usd),
            token,
            header: "X-Developer-Credit",
        },
    }))
}

/// Every grant with its balance (never the tokens).
#[utoipa::path(get, path = "/ai/admin/credits", tag = "payments",
    responses((status = 200, description = "Grants", body = Credits), (status = 401, description = "X-Admin-Token missing", body = ErrorBody)))]
pub async fn list_credits(State(app): State<AppState>, _admin: Admin) -> ApiResult<Json<Credits>> {
    let credits = credits::list(app.store.as_ref())
        .await?
        .iter()
        .map(|(grant, balance)| grant_view(grant, *balance))
        .collect();
    Ok(Json(Credits { ok: true, credits }))
}

/// The x402 facilitator `/supported` answer. A remote facilitator's answer is passed through
/// as it comes, so this is the x402 shape written out for the document, not a type the server
/// serializes; the local facilitator builds the same shape (`x402::facilitator::local`).
#[derive(utoipa::ToSchema)]
pub struct Supported {
    pub kinds: Vec<SupportedKind>,
    /// Signer addresses by CAIP-2 pattern (`eip155:*`).
    pub signers: Option<std::collections::BTreeMap<String, Vec<String>>>,
    /// Extension names the facilitator supports.
    pub extensions: Option<Vec<String>>,
}

#[derive(utoipa::ToSchema)]
#[schema(rename_all = "camelCase")]
pub struct SupportedKind {
    /// 1 or 2.
    #[schema(minimum = 1, maximum = 2)]
    pub x402_version: u8,
    /// `exact`.
    pub scheme: String,
    /// CAIP-2 id under v2, the network's v1 name under v1.
    pub network: String,
    /// Scheme-specific data.
    #[schema(value_type = Option<Object>)]
    pub extra: Option<Value>,
}

/// The payment kinds (`{x402Version, scheme, network}`) the configured facilitator handles.
#[utoipa::path(get, path = "/x402/supported", tag = "payments",
    responses((status = 200, description = "Supported kinds", body = Supported), (status = 502, description = "Facilitator unreachable", body = ErrorBody)))]
pub async fn supported(State(app): State<AppState>) -> ApiResult<Json<Value>> {
    Ok(Json(app.payments.facilitator.supported().await?))
}
