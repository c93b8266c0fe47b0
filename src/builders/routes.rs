//! `POST /ai/builders/register`, `POST /ai/builders/keys/rotate`, `POST /ai/admin/builders`.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use serde_json::{json, Value};

use super::identity::{self, BuilderRecord, PayerInfo, RegisterRequest};
use crate::app::AppState;
use crate::auth::{Admin, BuilderAuth};
use crate::http::error::{ApiError, ApiResult, ErrorBody};
use crate::http::extract::JsonBody;

/// Headers that carry an x402 payment proof (v1, v2) or a developer credit.
pub const PAYMENT_HEADERS: [&str; 3] = ["x-payment", "payment-signature", "x-developer-credit"];

fn issued(record: BuilderRecord, key: String) -> Json<Value> {
    Json(json!({
        "ok": true,
        "builder": record,
        "builderKey": key,
        "note": "Store the builder key now: it is shown once and only its hash is kept. Send it as X-Builder-Key.",
    }))
}

/// Register as a builder: requires an x402 payment of the registration fee or a developer
/// credit (402 without one). Returns the builder record and a key shown once.
#[utoipa::path(post, path = "/ai/builders/register", tag = "builders",
    request_body = RegisterRequest,
    responses(
        (status = 200, description = "Registered; the builder key is shown once", body = Object),
        (status = 402, description = "Payment or developer credit required", body = ErrorBody),
        (status = 422, description = "Invalid name or contact", body = ErrorBody),
        (status = 503, description = "Payment verification unavailable", body = ErrorBody),
    ))]
pub async fn register(
    State(app): State<AppState>,
    headers: HeaderMap,
    JsonBody(request): JsonBody<RegisterRequest>,
) -> ApiResult<Json<Value>> {
    request.check()?;
    let fee = app.config.payment.builder_registration_fee;
    if !PAYMENT_HEADERS.iter().any(|h| headers.contains_key(*h)) {
        return Err(ApiError::new(
            StatusCode::PAYMENT_REQUIRED,
            "payment_required",
            format!("builder registration costs {fee} USD: pay with x402 (X-PAYMENT or PAYMENT-SIGNATURE) or a developer credit (X-Developer-Credit)"),
        )
        .with_details(json!({ "feeUsd": fee, "accepts": PAYMENT_HEADERS })));
    }
    // Payment verification lands with the payments module, which then calls
    // `identity::register` with the verified `PayerInfo`; until then nothing is accepted unverified.
    Err(ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "payment_verification_unavailable",
        "payments for builder registration cannot be verified on this server yet",
    ))
}

/// Replace the caller's builder key. The old key is revoked at once (403 from then on).
#[utoipa::path(post, path = "/ai/builders/keys/rotate", tag = "builders",
    responses(
        (status = 200, description = "The new key, shown once", body = Object),
        (status = 401, description = "No valid builder key", body = ErrorBody),
        (status = 403, description = "Revoked builder key", body = ErrorBody),
    ))]
pub async fn rotate_key(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<Value>> {
    let (record, key) = identity::rotate_key(app.store.as_ref(), &builder)?;
    Ok(issued(record, key))
}

/// Admin: onboard a builder without payment.
#[utoipa::path(post, path = "/ai/admin/builders", tag = "admin",
    request_body = RegisterRequest,
    responses(
        (status = 200, description = "Created; the builder key is shown once", body = Object),
        (status = 401, description = "No valid admin token", body = ErrorBody),
        (status = 422, description = "Invalid name or contact", body = ErrorBody),
    ))]
pub async fn admin_create_builder(
    State(app): State<AppState>,
    _admin: Admin,
    JsonBody(request): JsonBody<RegisterRequest>,
) -> ApiResult<Json<Value>> {
    let (record, key) = identity::register(app.store.as_ref(), request, PayerInfo::Admin)?;
    Ok(issued(record, key))
}
