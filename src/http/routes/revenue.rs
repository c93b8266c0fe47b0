//! Builders' money routes: revenue, payout settings, payout packets; the admin marks packets
//! paid.

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::app::{App, AppState};
use crate::error::{ApiResult, ErrorBody};
use crate::events::{self, EventKind};
use crate::http::auth::{Admin, BuilderAuth};
use crate::http::extract::{JsonBody, QueryParams};
use crate::revenue::payouts::{self, Packet, PayoutSettings};
use crate::revenue::report::{self, Revenue};
use crate::revenue::sums;

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BuilderRevenue {
    /// Always true.
    ok: bool,
    builder_id: String,
    /// The start of the period (RFC 3339).
    #[schema(format = DateTime)]
    since: String,
    revenue: Revenue,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlatformRevenue {
    /// Always true.
    ok: bool,
    /// The start of the period (RFC 3339).
    #[schema(format = DateTime)]
    since: String,
    /// Builders' sales: `feeUnits` is the platform's cut, `netUnits` what builders are owed.
    builder_sales: Revenue,
    /// The platform's own paid endpoints (no fee).
    platform_endpoints: Revenue,
    registration_fees: Revenue,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PayoutSettingsView {
    /// Always true.
    ok: bool,
    /// `null` until set.
    #[schema(required = true)]
    payout_settings: Option<PayoutSettings>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Payouts {
    /// Always true.
    ok: bool,
    /// What a packet would pay now (collected, unpaid net).
    #[schema(schema_with = crate::money::units_schema)]
    unpaid_net_units: String,
    unpaid_receipts: u64,
    /// Unpaid net revenue not collected (recorded only, or pending on-chain): left out of packets.
    #[schema(schema_with = crate::money::units_schema)]
    uncollected_net_units: String,
    uncollected_receipts: u64,
    /// What the builder owes for refunds of receipts already paid out: the next packet pays
    /// `unpaidNetUnits − owedNetUnits` (docs/payments.md, refunds).
    #[schema(schema_with = crate::money::units_schema)]
    owed_net_units: String,
    packets: Vec<Packet>,
}

/// A packet as creating it and marking it paid answer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketView {
    /// Always true.
    ok: bool,
    packet: Packet,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RevenueQuery {
    /// How far back: `<n>` and a unit `s`, `m`, `h`, `d` or `w` (default `30d`).
    #[param(schema_with = crate::timestamp::since_schema)]
    since: Option<String>,
}

/// The caller's revenue: gross, platform fee, net, count, by endpoint and by day. The totals
/// (`grossUsd`, `grossUnits`, … and `count`) cover every sale, collected or not; `collected`
/// and `uncollected` split them exactly (`{grossUnits, feeUnits, netUnits, count}`, integer
/// atomic units as strings), at the top and in each `byEndpoint` and `byDay` entry.
/// Collected: an x402 transfer seen mined, a remote facilitator's settlement with its
/// transaction, or a developer-credit debit. Uncollected: recorded in the ledger only (a
/// deployment that cannot settle: never collected) or still pending on-chain;
/// `uncollectedByState` tells the two apart. Only collected money is paid out.
#[utoipa::path(get, path = "/ai/builders/revenue", tag = "builders", params(RevenueQuery),
    responses(
        (status = 200, description = "Revenue report: totals of all sales, with `collected` and `uncollected` parts (`{grossUnits, feeUnits, netUnits, count}`) and `uncollectedByState` (`recorded`, `pending`), also per `byEndpoint` and `byDay` entry", body = BuilderRevenue),
        (status = 400, description = "Invalid `since`", body = ErrorBody),
        (status = 401, description = "No valid builder key", body = ErrorBody),
    ))]
pub async fn revenue(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
    QueryParams(query): QueryParams<RevenueQuery>,
) -> ApiResult<Json<BuilderRevenue>> {
    let since = crate::timestamp::since_cutoff(query.since.as_deref(), "30d")?;
    let fee_bps = app.config.platform_fee_bps;
    let groups = sums(app.store.as_ref(), Some(&builder.id), since, fee_bps).await?;
    let revenue = report::report(&groups, fee_bps);
    Ok(Json(BuilderRevenue {
        ok: true,
        builder_id: builder.id,
        since: crate::timestamp::rfc3339(since),
        revenue,
    }))
}

/// Admin: the platform's revenue since `since`, collected and uncollected apart: builders'
/// sales (`feeUnits` is the platform's cut, `netUnits` what builders are owed), the platform's
/// own paid endpoints, and builder registration fees, each with the same `collected`,
/// `uncollected` and `uncollectedByState` parts as the builder report. A registration fee paid
/// on a deployment that cannot settle (recorded only) counts as uncollected here, as on its
/// receipt.
#[utoipa::path(get, path = "/ai/admin/revenue", tag = "admin", params(RevenueQuery),
    responses(
        (status = 200, description = "`builderSales`, `platformEndpoints` and `registrationFees`, each a revenue report with `collected` and `uncollected` parts (integer atomic units as strings)", body = PlatformRevenue),
        (status = 400, description = "Invalid `since`", body = ErrorBody),
        (status = 401, description = "X-Admin-Token missing or wrong", body = ErrorBody),
    ))]
pub async fn admin_revenue(
    State(app): State<AppState>,
    _admin: Admin,
    QueryParams(query): QueryParams<RevenueQuery>,
) -> ApiResult<Json<PlatformRevenue>> {
    let since = crate::timestamp::since_cutoff(query.since.as_deref(), "30d")?;
    let fee_bps = app.config.platform_fee_bps;
    let groups = sums(app.store.as_ref(), None, since, fee_bps).await?;
    let (platform, builders): (Vec<_>, Vec<_>) =
        groups.into_iter().partition(|group| group.platform);
    let (endpoints, registrations): (Vec<_>, Vec<_>) = platform
        .into_iter()
        .partition(|group| group.endpoint_slug.is_some());
    // The platform keeps the whole of its own sales: no fee is taken from them.
    Ok(Json(PlatformRevenue {
        ok: true,
        since: crate::timestamp::rfc3339(since),
        builder_sales: report::report(&builders, fee_bps),
        platform_endpoints: report::report(&endpoints, 0),
        registration_fees: report::report(&registrations, 0),
    }))
}

/// The caller's payout settings (null until set).
#[utoipa::path(get, path = "/ai/builders/payout-settings", tag = "builders",
    responses((status = 200, description = "Payout settings", body = PayoutSettingsView), (status = 401, description = "No valid builder key", body = ErrorBody)))]
pub async fn get_payout_settings(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<PayoutSettingsView>> {
    Ok(Json(PayoutSettingsView {
        ok: true,
        payout_settings: payouts::settings(app.store.as_ref(), &builder.id).await?,
    }))
}

/// Set the payout address (EIP-55 checksummed), network, asset and minimum.
#[utoipa::path(post, path = "/ai/builders/payout-settings", tag = "builders", request_body = PayoutSettings,
    responses(
        (status = 200, description = "Saved settings", body = PayoutSettingsView),
        (status = 401, description = "No valid builder key", body = ErrorBody),
        (status = 422, description = "`invalid_pay_to`, `invalid_network` or `invalid_asset`", body = ErrorBody),
    ))]
pub async fn set_payout_settings(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
    JsonBody(settings): JsonBody<PayoutSettings>,
) -> ApiResult<Json<PayoutSettingsView>> {
    let saved = payouts::save_settings(
        app.store.as_ref(),
        &app.config.payment,
        &builder.id,
        settings,
    )
    .await?;
    Ok(Json(PayoutSettingsView {
        ok: true,
        payout_settings: Some(saved),
    }))
}

/// The caller's payout packets and unpaid net balance: `unpaidNetUnits` / `unpaidReceipts` is
/// what a packet would pay now (collected money only); `uncollectedNetUnits` /
/// `uncollectedReceipts` is unpaid revenue that is not collected (recorded only, or pending
/// on-chain) and is left out of packets.
#[utoipa::path(get, path = "/ai/builders/payouts", tag = "builders",
    responses((status = 200, description = "Packets, the collected unpaid balance (`unpaidNetUnits`, `unpaidReceipts`) and the uncollected one (`uncollectedNetUnits`, `uncollectedReceipts`)", body = Payouts), (status = 401, description = "No valid builder key", body = ErrorBody)))]
pub async fn list_payouts(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<Payouts>> {
    let store = app.store.as_ref();
    let fee_bps = app.config.platform_fee_bps;
    let unpaid = payouts::unpaid_sums(store, &builder.id, fee_bps).await?;
    let (payable, uncollected): (Vec<_>, Vec<_>) =
        (unpaid.into_iter()).partition(|group| group.standing.is_collected());
    let payable = report::report(&payable, fee_bps);
    let uncollected = report::report(&uncollected, fee_bps);
    Ok(Json(Payouts {
        ok: true,
        unpaid_net_units: payable.net_units,
        unpaid_receipts: payable.totals.count,
        uncollected_net_units: uncollected.net_units,
        uncollected_receipts: uncollected.totals.count,
        owed_net_units: payouts::owed(store, &builder.id).await?.units().to_string(),
        packets: payouts::packets(store, &builder.id).await?,
    }))
}

/// Create a payout packet for the whole collected, unpaid net balance. Uncollected sales
/// (recorded only, or pending on-chain) are never included: 409 `nothing_collectable` (with
/// `details.uncollectedNetUnits`) when they are all there is, `below_minimum` when the
/// collected balance is under the configured minimum.
#[utoipa::path(post, path = "/ai/builders/payouts", tag = "builders",
    responses(
        (status = 200, description = "The pending, signed packet", body = PacketView),
        (status = 401, description = "No valid builder key", body = ErrorBody),
        (status = 409, description = "`payout_settings_missing`, `nothing_collectable`, `below_minimum` or `payout_conflict`", body = ErrorBody),
    ))]
pub async fn create_payout(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<PacketView>> {
    let packet = payouts::create_packet(
        app.store.as_ref(),
        &app.receipt_signer,
        &builder.id,
        app.config.platform_fee_bps,
    )
    .await?;
    payout_event(&app, EventKind::PayoutCreated, &packet).await;
    Ok(Json(PacketView { ok: true, packet }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkPaid {
    /// The payout transaction hash (0x + 64 hex).
    #[schema(pattern = "^0x[0-9a-fA-F]{64}$")]
    transaction: String,
}

/// Admin: mark a payout packet paid with its transaction hash.
#[utoipa::path(post, path = "/ai/admin/payouts/{packetId}/paid", tag = "admin", request_body = MarkPaid,
    params(("packetId" = String, Path, description = "Packet id")),
    responses(
        (status = 200, description = "The paid, re-signed packet", body = PacketView),
        (status = 401, description = "X-Admin-Token missing", body = ErrorBody),
        (status = 404, description = "No such packet", body = ErrorBody),
        (status = 409, description = "Already paid", body = ErrorBody),
    ))]
pub async fn mark_paid(
    State(app): State<AppState>,
    _admin: Admin,
    Path(packet_id): Path<String>,
    JsonBody(request): JsonBody<MarkPaid>,
) -> ApiResult<Json<PacketView>> {
    let packet = payouts::mark_paid(
        app.store.as_ref(),
        &app.receipt_signer,
        &packet_id,
        &request.transaction,
    )
    .await?;
    payout_event(&app, EventKind::PayoutPaid, &packet).await;
    Ok(Json(PacketView { ok: true, packet }))
}

/// Tells the builder about its packet; the packet itself is already stored, so a failure to
/// record the event is logged, not returned.
async fn payout_event(app: &App, kind: EventKind, packet: &payouts::Packet) {
    let data = json!({"packetId": packet.packet_id, "amount": packet.amount, "status": packet.status, "transaction": packet.transaction});
    if let Err(e) = events::record(app.store.as_ref(), &packet.builder_id, kind, None, data).await {
        tracing::error!(error = %e, packet = %packet.packet_id, "recording the payout event failed");
    }
}
