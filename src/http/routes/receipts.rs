//! `GET /ai/receipts/{receiptId}`.

use axum::extract::{Path, State};
use axum::Json;
use serde_json::Value;

use crate::app::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::receipts;

/// The public-safe receipt record, or 404.
#[utoipa::path(get, path = "/ai/receipts/{receiptId}", tag = "receipts",
    params(("receiptId" = String, Path, description = "Receipt id")),
    responses((status = 200, description = "Receipt", body = crate::receipts::Receipt), (status = 404, description = "Receipt not found", body = ErrorBody)))]
pub async fn get_receipt(
    State(app): State<AppState>,
    Path(receipt_id): Path<String>,
) -> ApiResult<Json<Value>> {
    receipts::lookup(app.store.as_ref(), &receipt_id)
        .await
        .map(Json)
}
