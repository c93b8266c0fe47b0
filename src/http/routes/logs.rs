//! `GET /ai/endpoints/{slug}/logs` (owner or admin).

use axum::extract::{Path, State};
use axum::Json;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::builders::Caller;
use crate::endpoints;
use crate::error::{ApiResult, ErrorBody};
use crate::http::extract::QueryParams;
use crate::paging::{PageQuery, PageRequest};

/// Invocation records with their (redacted) log lines, newest first; page with `cursor`.
#[utoipa::path(get, path = "/ai/endpoints/{slug}/logs", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug"), PageQuery),
    responses(
        (status = 200, description = "`entries` newest first and `nextCursor`", body = Object),
        (status = 400, description = "Bad cursor or limit", body = ErrorBody),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
    ))]
pub async fn endpoint_logs(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    QueryParams(query): QueryParams<PageQuery>,
) -> ApiResult<Json<Value>> {
    endpoints::owned(&app.endpoint_parts(), &caller, &slug)?;
    app.recorder.flush().await;
    let request = PageRequest::parse(query.cursor.as_deref(), query.limit)?;
    let page = crate::logs::page(app.store.as_ref(), &slug, &request).await?;
    Ok(Json(
        json!({ "ok": true, "slug": slug, "entries": page.items, "nextCursor": page.next_cursor }),
    ))
}
