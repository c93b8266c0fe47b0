//! `GET /ai/receipts/{receiptId}`.

use axum::extract::{Path, State};
use axum::Json;
use serde_json::Value;

use crate::app::{App, AppState};
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::store::{get_json, Tree};

/// The public-safe receipt record, or 404.
#[utoipa::path(get, path = "/ai/receipts/{receiptId}", tag = "receipts",
    params(("receiptId" = String, Path, description = "Receipt id")),
    responses((status = 200, description = "Receipt", body = Object), (status = 404, description = "Receipt not found", body = ErrorBody)))]
pub async fn get_receipt(
    State(app): State<AppState>,
    Path(receipt_id): Path<String>,
) -> ApiResult<Json<Value>> {
    lookup(&app, &receipt_id).await.map(Json)
}

/// The public-safe receipt record by id; shared with the MCP `receipt_lookup` tool.
pub async fn lookup(app: &App, receipt_id: &str) -> ApiResult<Value> {
    get_json::<Value>(app.store.as_ref(), Tree::Receipts, receipt_id.as_bytes())
        .await?
        .ok_or_else(|| {
            ApiError::not_found(
                ErrorCode::ReceiptNotFound,
                format!("no receipt {receipt_id:?}"),
            )
        })
}
