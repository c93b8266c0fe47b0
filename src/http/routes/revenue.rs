//! Builders' money routes: revenue, payout settings, payout packets; the admin marks packets
//! paid.

use axum::extract::{Path, Query, State};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::app::{App, AppState};
use crate::error::{ApiResult, ErrorBody};
use crate::events::{self, EventKind};
use crate::http::auth::{Admin, BuilderAuth};
use crate::http::extract::JsonBody;
use crate::revenue::payouts::{self, PayoutSettings};
use crate::revenue::{report, sales_of};

#[derive(Deserialize, utoipa::IntoParams)]
pub struct RevenueQuery {
    /// How far back: `<n>` and a unit `s`, `m`, `h`, `d` or `w` (default `30d`).
    since: Option<String>,
}

/// The caller's revenue: gross, platform fee, net, count, by endpoint and by day.
#[utoipa::path(get, path = "/ai/builders/revenue", tag = "builders", params(RevenueQuery),
    responses(
        (status = 200, description = "Revenue report", body = Object),
        (status = 400, description = "Invalid `since`", body = ErrorBody),
        (status = 401, description = "No valid builder key", body = ErrorBody),
    ))]
pub async fn revenue(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
    Query(query): Query<RevenueQuery>,
) -> ApiResult<Json<Value>> {
    let window = crate::timestamp::since_param(query.since.as_deref(), "30d")?;
    let since = OffsetDateTime::now_utc() - window;
    let sales = sales_of(app.store.as_ref(), &builder.id, since).await?;
    let revenue = report::report(&sales, app.config.platform_fee_bps);
    Ok(Json(json!({
        "ok": true,
        "builderId": builder.id,
        "since": crate::timestamp::rfc3339(since),
        "revenue": revenue,
    })))
}

/// The caller's payout settings (null until set).
#[utoipa::path(get, path = "/ai/builders/payout-settings", tag = "builders",
    responses((status = 200, description = "Payout settings", body = Object), (status = 401, description = "No valid builder key", body = ErrorBody)))]
pub async fn get_payout_settings(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        json!({"ok": true, "payoutSettings": payouts::settings(app.store.as_ref(), &builder.id).await?}),
    ))
}

/// Set the payout address (EIP-55 checksummed), network, asset and minimum.
#[utoipa::path(post, path = "/ai/builders/payout-settings", tag = "builders", request_body = PayoutSettings,
    responses(
        (status = 200, description = "Saved settings", body = Object),
        (status = 401, description = "No valid builder key", body = ErrorBody),
        (status = 422, description = "`invalid_pay_to`, `invalid_network` or `invalid_asset`", body = ErrorBody),
    ))]
pub async fn set_payout_settings(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
    JsonBody(settings): JsonBody<PayoutSettings>,
) -> ApiResult<Json<Value>> {
    let saved = payouts::save_settings(
        app.store.as_ref(),
        &app.config.payment,
        &builder.id,
        settings,
    )
    .await?;
    Ok(Json(json!({"ok": true, "payoutSettings": saved})))
}

/// The caller's payout packets and unpaid net balance.
#[utoipa::path(get, path = "/ai/builders/payouts", tag = "builders",
    responses((status = 200, description = "Packets", body = Object), (status = 401, description = "No valid builder key", body = ErrorBody)))]
pub async fn list_payouts(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<Value>> {
    let store = app.store.as_ref();
    let unpaid = payouts::unpaid(store, &builder.id).await?;
    let balance = report::report(&unpaid, app.config.platform_fee_bps);
    Ok(Json(json!({
        "ok": true,
        "unpaidNetUnits": balance.net_units,
        "unpaidReceipts": balance.totals.count,
        "packets": payouts::packets(store, &builder.id).await?,
    })))
}

/// Create a payout packet for the whole unpaid net balance (409 `below_minimum` under the
/// configured minimum).
#[utoipa::path(post, path = "/ai/builders/payouts", tag = "builders",
    responses(
        (status = 200, description = "The pending, signed packet", body = Object),
        (status = 401, description = "No valid builder key", body = ErrorBody),
        (status = 409, description = "`payout_settings_missing`, `below_minimum` or `payout_conflict`", body = ErrorBody),
    ))]
pub async fn create_payout(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<Value>> {
    let packet = payouts::create_packet(
        app.store.as_ref(),
        &app.receipt_signer,
        &builder.id,
        app.config.platform_fee_bps,
    )
    .await?;
    payout_event(&app, EventKind::PayoutCreated, &packet).await;
    Ok(Json(json!({"ok": true, "packet": packet})))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkPaid {
    /// The payout transaction hash (0x + 64 hex).
    transaction: String,
}

/// Admin: mark a payout packet paid with its transaction hash.
#[utoipa::path(post, path = "/ai/admin/payouts/{packetId}/paid", tag = "admin", request_body = MarkPaid,
    params(("packetId" = String, Path, description = "Packet id")),
    responses(
        (status = 200, description = "The paid, re-signed packet", body = Object),
        (status = 401, description = "X-Admin-Token missing", body = ErrorBody),
        (status = 404, description = "No such packet", body = ErrorBody),
        (status = 409, description = "Already paid", body = ErrorBody),
    ))]
pub async fn mark_paid(
    State(app): State<AppState>,
    _admin: Admin,
    Path(packet_id): Path<String>,
    JsonBody(request): JsonBody<MarkPaid>,
) -> ApiResult<Json<Value>> {
    let packet = payouts::mark_paid(
        app.store.as_ref(),
        &app.receipt_signer,
        &packet_id,
        &request.transaction,
    )
    .await?;
    payout_event(&app, EventKind::PayoutPaid, &packet).await;
    Ok(Json(json!({"ok": true, "packet": packet})))
}

/// Tells the builder about its packet; the packet itself is already stored, so a failure to
/// record the event is logged, not returned.
async fn payout_event(app: &App, kind: EventKind, packet: &payouts::Packet) {
    let data = json!({"packetId": packet.packet_id, "amount": packet.amount, "status": packet.status, "transaction": packet.transaction});
    if let Err(e) = events::record(app.store.as_ref(), &packet.builder_id, kind, None, data).await {
        tracing::error!(error = %e, packet = %packet.packet_id, "recording the payout event failed");
    }
}
