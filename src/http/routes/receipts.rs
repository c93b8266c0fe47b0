//! `GET /ai/receipts/{receiptId}`, its place in the receipt log, and the log itself, served
//! read-only as C2SP `tlog-tiles` under `/ai/receipts/log/` (docs/receipt-log.md).

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use toolhost_tlog::Tile;

use crate::app::AppState;
use crate::builders::Caller;
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::JsonBody;
use crate::http::extract::QueryParams;
use crate::http::routes::manifest::ReceiptLogInfo;
use crate::payments::refunds::{RefundRequest, Refunder};
use crate::receipts;
use crate::receipts::log::Inclusion;
use crate::revenue::refunds::{self, Refund};

/// How long a reader may cache a full tile: it never changes.
const FULL_TILE_CACHE: &str = "public, max-age=31536000, immutable";
/// The checkpoint and partial tiles change as the log grows.
const GROWING_CACHE: &str = "no-cache";

/// The public-safe receipt record, or 404. A refunded receipt's answer links its refund
/// (`Link: </ai/receipts/{receiptId}/refund>; rel="refund"`): the receipt itself, signed as
/// issued, is never rewritten.
#[utoipa::path(get, path = "/ai/receipts/{receiptId}", tag = "receipts",
    params(("receiptId" = String, Path, description = "Receipt id")),
    responses((status = 200, description = "Receipt", body = crate::receipts::Receipt), (status = 404, description = "Receipt not found", body = ErrorBody)))]
pub async fn get_receipt(
    State(app): State<AppState>,
    Path(receipt_id): Path<String>,
) -> ApiResult<Response> {
    let receipt = receipts::lookup(app.store.as_ref(), &receipt_id).await?;
    let mut response = Json(receipt).into_response();
    if refunds::refund_of(app.store.as_ref(), &receipt_id)
        .await?
        .is_some()
    {
        let link = format!("</ai/receipts/{receipt_id}/refund>; rel=\"refund\"");
        if let Ok(link) = header::HeaderValue::from_str(&link) {
            response.headers_mut().insert(header::LINK, link);
        }
    }
    Ok(response)
}

/// A refund, as made and as served.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefundView {
    /// Always true.
    ok: bool,
    refund: Refund,
    /// Where the refund's record is in the receipt log (an entry of its own: the canonical JSON
    /// of `refund`), with its proof and checkpoint; absent while it waits to be appended.
    #[serde(skip_serializing_if = "Option::is_none")]
    refund_log: Option<Inclusion>,
}

impl RefundView {
    /// `refund` with where it is in the receipt log: waited for when `just_made` (it was
    /// stored pending a moment ago), otherwise as far as it is appended (absent while it waits).
    async fn of(app: &AppState, refund: Refund, just_made: bool) -> RefundView {
        let name = receipts::log::refund_name(&refund.receipt_id);
        let log = &app.receipt_log;
        let refund_log = match just_made {
            true => {
                log.include_entry(&name, receipts::log::entry_of(&refund))
                    .await
            }
            false => log.inclusion_of(&name, None).await,
        };
        RefundView {
            ok: true,
            refund,
            refund_log: refund_log.ok(),
        }
    }
}

/// Refund a paid call, wholly or in part, with a reason: the endpoint's owner (`X-Builder-Key`)
/// or the admin (`X-Admin-Token`). Once per receipt: the same request again answers the refund
/// made. Credit goes back to the developer credit; a payment recorded only moves nothing; the
/// sale counts for what is left of it in revenue and payouts (docs/payments.md, refunds).
#[utoipa::path(post, path = "/ai/receipts/{receiptId}/refund", tag = "receipts",
    params(("receiptId" = String, Path, description = "Receipt id")),
    request_body = RefundRequest,
    responses(
        (status = 200, description = "The signed refund record", body = RefundView),
        (status = 401, description = "No valid builder key or admin token", body = ErrorBody),
        (status = 403, description = "`not_owner`: another builder's receipt", body = ErrorBody),
        (status = 404, description = "`receipt_not_found`", body = ErrorBody),
        (status = 409, description = "`not_refundable`, `already_refunded`, `refund_unavailable`, `refund_exceeds_balance` or `refund_in_progress`", body = ErrorBody),
        (status = 422, description = "`invalid_field` (reason) or `invalid_amount`", body = ErrorBody),
        (status = 502, description = "`facilitator_unavailable`: the chain did not answer before the transfer back was sent (nothing moved)", body = ErrorBody),
    ))]
pub async fn refund(
    State(app): State<AppState>,
    Path(receipt_id): Path<String>,
    caller: Caller,
    JsonBody(request): JsonBody<RefundRequest>,
) -> ApiResult<Json<RefundView>> {
    let refunder = match caller {
        Caller::Admin => Refunder::Admin,
        Caller::Builder(builder) => Refunder::Builder(builder.id),
    };
    let (refund, made) =
        crate::payments::refunds::refund(&app.refund_parts(), &receipt_id, &request, &refunder)
            .await?;
    // A new refund waits for its append, as a paid call waits for its receipt's.
    Ok(Json(RefundView::of(&app, refund, made).await))
}

/// A receipt's refund: its signed record, public like the receipt.
#[utoipa::path(get, path = "/ai/receipts/{receiptId}/refund", tag = "receipts",
    params(("receiptId" = String, Path, description = "Receipt id")),
    responses(
        (status = 200, description = "The signed refund record", body = RefundView),
        (status = 404, description = "`receipt_not_found`: no refund of that receipt", body = ErrorBody),
    ))]
pub async fn get_refund(
    State(app): State<AppState>,
    Path(receipt_id): Path<String>,
) -> ApiResult<Json<RefundView>> {
    match refunds::refund_of(app.store.as_ref(), &receipt_id).await? {
        Some((refund, _)) => Ok(Json(RefundView::of(&app, refund, false).await)),
        None => Err(ApiError::not_found(
            ErrorCode::ReceiptNotFound,
            format!("no refund of receipt {receipt_id:?}"),
        )),
    }
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct InclusionQuery {
    /// The size of the tree to prove inclusion in (default: the latest). Only the latest
    /// tree's checkpoint is returned; for an older size `checkpoint` is empty.
    #[param(minimum = 1)]
    tree_size: Option<u64>,
}

/// Where a receipt is in the receipt log: its leaf index and inclusion proof, with the signed
/// checkpoint of the tree the proof is of. A free call's receipt is not in the log: its proof
/// is its place in its signed batch (the checkpoint names the batches, not the log).
#[utoipa::path(get, path = "/ai/receipts/{receiptId}/inclusion", tag = "receipts",
    params(("receiptId" = String, Path, description = "Receipt id"), InclusionQuery),
    responses(
        (status = 200, description = "The receipt's leaf index, inclusion proof and checkpoint (of the log, or of a free receipt's batch)", body = Inclusion),
        (status = 400, description = "Bad treeSize", body = ErrorBody),
        (status = 404, description = "`not_in_log`: no such receipt in the log (yet), or a tree size past the log's end", body = ErrorBody),
    ))]
pub async fn inclusion(
    State(app): State<AppState>,
    Path(receipt_id): Path<String>,
    QueryParams(query): QueryParams<InclusionQuery>,
) -> ApiResult<Json<Inclusion>> {
    let proof = crate::receipts::proof_of(
        &app.receipt_log,
        &app.receipt_batches,
        &receipt_id,
        query.tree_size,
    )
    .await?;
    Ok(Json(proof))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ConsistencyQuery {
    /// The older tree's size.
    #[param(minimum = 1)]
    from: u64,
    /// The newer tree's size, at most the log's.
    #[param(minimum = 1)]
    to: u64,
}

/// A consistency proof between two tree sizes (RFC 6962 section 2.1.2).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Consistency {
    from: u64,
    to: u64,
    /// Base64 of each hash of the proof.
    proof: Vec<String>,
}

/// The proof that the log's tree of `from` leaves is a prefix of its tree of `to` leaves: what
/// a monitor checks between two checkpoints it saw.
#[utoipa::path(get, path = "/ai/receipts/log/consistency", tag = "receipts",
    params(ConsistencyQuery),
    responses(
        (status = 200, description = "The proof", body = Consistency),
        (status = 400, description = "Sizes missing or out of order (`0 < from <= to <= size`)", body = ErrorBody),
    ))]
pub async fn consistency(
    State(app): State<AppState>,
    QueryParams(query): QueryParams<ConsistencyQuery>,
) -> ApiResult<Json<Consistency>> {
    let proof = app.receipt_log.consistency(query.from, query.to).await?;
    Ok(Json(Consistency {
        from: query.from,
        to: query.to,
        proof,
    }))
}

/// The log's latest signed checkpoint (C2SP `tlog-checkpoint`, as a signed note), verified
/// with the log's key (`receiptLog.verifierKey` in `/ai/manifest`).
#[utoipa::path(get, path = "/ai/receipts/log/checkpoint", tag = "receipts",
    responses((status = 200, description = "The signed checkpoint", content_type = "text/plain", body = String)))]
pub async fn checkpoint(State(app): State<AppState>) -> ApiResult<Response> {
    let note = app.receipt_log.checkpoint().await?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, GROWING_CACHE),
        ],
        note,
    )
        .into_response())
}

/// `GET /ai/receipts/log/tile/{*path}`: a tile of the log (C2SP `tlog-tiles`),
/// `tile/<L>/<N>[.p/<W>]` (hashes) or `tile/entries/<N>[.p/<W>]` (receipts, as canonical
/// JSON), or 404 `tile_not_found`. Full tiles never change and are cached for a year.
pub async fn tile(State(app): State<AppState>, Path(path): Path<String>) -> ApiResult<Response> {
    let tile = Tile::parse(&format!("tile/{path}")).ok_or_else(|| {
        ApiError::not_found(
            ErrorCode::TileNotFound,
            format!(
                "{path:?} is not a tile's path (tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>])"
            ),
        )
    })?;
    let bytes = app.receipt_log.tile(tile).await?;
    let cache = if tile.is_full() {
        FULL_TILE_CACHE
    } else {
        GROWING_CACHE
    };
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream"),
            (header::CACHE_CONTROL, cache),
        ],
        bytes,
    )
        .into_response())
}

/// Where the receipt log is and the key that signs its checkpoints (also in `/ai/manifest`
/// as `receipts.log`), for tlog clients and monitors.
#[utoipa::path(get, path = "/.well-known/receipt-log", tag = "receipts",
    responses((status = 200, description = "The log's origin, verifier key and URLs", body = ReceiptLogInfo)))]
pub async fn well_known(State(app): State<AppState>) -> Json<ReceiptLogInfo> {
    Json(ReceiptLogInfo::of(&app))
}
