//! `POST /ai/builders/register`, `POST /ai/builders/keys/rotate`, `POST /ai/admin/builders`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::app::AppState;
use crate::builders::identity::{self, BuilderRecord, PayerInfo, RegisterRequest};
use crate::error::{ApiResult, ErrorBody};
use crate::http::auth::{Admin, BuilderAuth};
use crate::http::extract::JsonBody;
use crate::payments::{self, Charge};
use crate::receipts::{PaymentMethod, Receipt};
use crate::x402::{Offer, ResourceInfo};

/// A builder record with its new key: the answer of key rotation and admin onboarding, and of
/// registration with its `receipt` added.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Issued {
    /// Always true.
    ok: bool,
    builder: BuilderRecord,
    /// The key, shown this once; send it as `X-Builder-Key`.
    builder_key: String,
    note: &'static str,
}

/// Registration's answer: the builder, its key, and the receipt of the fee.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Registered {
    #[serde(flatten)]
    issued: Issued,
    receipt: Receipt,
    /// The salt of the receipt's digests (hex), for the registrant alone.
    receipt_salt: String,
}

fn issued(record: BuilderRecord, key: String) -> Json<Issued> {
    Json(Issued {
        ok: true,
        builder: record,
        builder_key: key,
        note: "Store the builder key now: it is shown once and only its hash is kept. Send it as X-Builder-Key.",
    })
}

/// Register as a builder: requires an x402 payment of the registration fee or a developer
/// credit (402 without one, with the x402 requirements). Returns the builder record, a key
/// shown once, and the payment's receipt.
///
/// The request is validated before payment, so once the fee is settled the only thing left to
/// fail is the store; the receipt then still proves the payment.
#[utoipa::path(post, path = "/ai/builders/register", tag = "builders",
    request_body = RegisterRequest,
    responses(
        (status = 200, description = "Registered; the builder key is shown once", body = Registered),
        (status = 400, description = "Malformed payment header", body = ErrorBody),
        (status = 402, description = "Payment or developer credit required or refused (x402 answer)", body = crate::x402::requirements::PaymentRequiredBody),
        (status = 422, description = "Invalid name or contact", body = ErrorBody),
        (status = 429, description = "`rate_limited`: too many anonymous writes from this client", body = ErrorBody),
    ))]
pub async fn register(
    State(app): State<AppState>,
    headers: HeaderMap,
    JsonBody(request): JsonBody<RegisterRequest>,
) -> ApiResult<Response> {
    crate::rate_limit::anonymous_write()?;
    request.check()?;
    let resource = ResourceInfo {
        url: app.urls.at("/ai/builders/register"),
        description: "Builder registration".into(),
        mime_type: "application/json".into(),
    };
    let charge = Charge {
        offer: std::sync::Arc::new(Offer::new(
            app.config.payment.terms(&app.payments.pay_to),
            resource,
            app.config.payment.builder_registration_fee,
        )),
        purpose: "builder_registration",
        endpoint_slug: None,
        seller: None,
        metering: None,
    };
    let summary = json!({"name": request.name, "contact": request.contact});
    let authorized = payments::gate(
        &app.payment_parts(),
        charge,
        &payments::Tender::from_headers(&headers),
        &summary,
    )
    .await?;
    let served = payments::Served {
        status: 200,
        result: &json!({"registered": true}),
        headers: &[],
        usage: None,
    };
    let settled = authorized
        .settle(&app.payment_parts(), &summary, served)
        .await?;
    let receipt = &settled.receipt;
    let payer = match receipt.payment_method {
        PaymentMethod::DeveloperCredit => PayerInfo::DeveloperCredit {
            credit_id: receipt.payer.clone().unwrap_or_default(),
        },
        PaymentMethod::X402 | PaymentMethod::Free => PayerInfo::X402 {
            payer: receipt.payer.clone().unwrap_or_default(),
            reference: receipt.receipt_id.clone(),
        },
    };
    let (record, key) = identity::register(app.store.as_ref(), request, payer).await?;
    let Json(issued) = issued(record, key);
    let body = Registered {
        issued,
        receipt: settled.receipt,
        receipt_salt: settled.salt,
    };
    let mut response = Json(body).into_response();
    response.headers_mut().extend(settled.headers);
    Ok(response)
}

/// Replace the caller's builder key. The old key is revoked at once (401 `builder_key_revoked`
/// from then on).
#[utoipa::path(post, path = "/ai/builders/keys/rotate", tag = "builders",
    responses(
        (status = 200, description = "The new key, shown once", body = Issued),
        (status = 401, description = "No valid builder key (unknown, or revoked: `builder_key_revoked`)", body = ErrorBody),
    ))]
pub async fn rotate_key(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<Issued>> {
    let (record, key) = identity::rotate_key(app.store.as_ref(), &builder).await?;
    Ok(issued(record, key))
}

/// Admin: onboard a builder without payment.
#[utoipa::path(post, path = "/ai/admin/builders", tag = "admin",
    request_body = RegisterRequest,
    responses(
        (status = 200, description = "Created; the builder key is shown once", body = Issued),
        (status = 401, description = "No valid admin token", body = ErrorBody),
        (status = 422, description = "Invalid name or contact", body = ErrorBody),
    ))]
pub async fn admin_create_builder(
    State(app): State<AppState>,
    _admin: Admin,
    JsonBody(request): JsonBody<RegisterRequest>,
) -> ApiResult<Json<Issued>> {
    let (record, key) = identity::register(app.store.as_ref(), request, PayerInfo::Admin).await?;
    Ok(issued(record, key))
}
