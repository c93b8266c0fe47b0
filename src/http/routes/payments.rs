//! Payment routes: developer credit administration and the facilitator's supported kinds.

use axum::extract::State;
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
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
    /// Amount in USD, up to 6 decimals.
    #[schema(schema_with = crate::money::positive_usd_schema)]
    amount_usd: Usd,
    /// When the grant stops being spendable (RFC 3339).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    expires_at: Option<OffsetDateTime>,
    #[serde(default)]
    note: Option<String>,
}

fn grant_view(grant: &credits::Grant, balance: Usd) -> Value {
    json!({
        "creditId": grant.credit_id,
        "grantedUsd": grant.granted_usd,
        "balanceUsd": balance,
        "balanceUnits": balance.units().to_string(),
        "expiresAt": grant.expires_at.map(crate::timestamp::rfc3339),
        "createdAt": crate::timestamp::rfc3339(grant.created_at),
        "note": grant.note,
    })
}

/// Issue a developer credit grant. The token is in this answer only; send it as
/// `X-Developer-Credit`.
#[utoipa::path(post, path = "/ai/admin/credits", tag = "payments",
    request_body = CreditRequest,
    responses(
        (status = 200, description = "The grant and its one-time token", body = Object),
        (status = 401, description = "X-Admin-Token missing", body = ErrorBody),
        (status = 422, description = "Invalid amount or expiry", body = ErrorBody),
    ))]
pub async fn issue_credit(
    State(app): State<AppState>,
    _admin: Admin,
    JsonBody(request): JsonBody<CreditRequest>,
) -> ApiResult<Json<Value>> {
    if request.amount_usd.is_zero() {
        return Err(ApiError::unprocessable(
            ErrorCode::InvalidAmount,
            "amountUsd must be positive",
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
    let mut view = grant_view(&grant, grant.granted_usd);
    view["token"] = Value::String(token);
    view["header"] = Value::String("X-Developer-Credit".into());
    Ok(Json(json!({"ok": true, "credit": view})))
}

/// Every grant with its balance (never the tokens).
#[utoipa::path(get, path = "/ai/admin/credits", tag = "payments",
    responses((status = 200, description = "Grants", body = Object), (status = 401, description = "X-Admin-Token missing", body = ErrorBody)))]
pub async fn list_credits(State(app): State<AppState>, _admin: Admin) -> ApiResult<Json<Value>> {
    let grants: Vec<Value> = credits::list(app.store.as_ref())
        .await?
        .iter()
        .map(|(grant, balance)| grant_view(grant, *balance))
        .collect();
    Ok(Json(json!({"ok": true, "credits": grants})))
}

/// The payment kinds (`{x402Version, scheme, network}`) the configured facilitator handles.
#[utoipa::path(get, path = "/x402/supported", tag = "payments",
    responses((status = 200, description = "Supported kinds", body = Object), (status = 502, description = "Facilitator unreachable", body = ErrorBody)))]
pub async fn supported(State(app): State<AppState>) -> ApiResult<Json<Value>> {
    Ok(Json(app.payments.facilitator.supported().await?))
}
