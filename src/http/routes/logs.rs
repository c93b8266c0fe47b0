//! `GET /ai/endpoints/{slug}/logs` (owner or admin).

use axum::extract::{Path, State};
use axum::Json;
use serde::Serialize;

use crate::app::AppState;
use crate::builders::Caller;
use crate::endpoints;
use crate::error::{ApiResult, ErrorBody};
use crate::http::extract::QueryParams;
use crate::logs::LogEntry;
use crate::paging::{PageQuery, PageRequest};

/// One page of an endpoint's log.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Logs {
    /// Always true.
    ok: bool,
    slug: String,
    /// Newest first.
    entries: Vec<LogEntry>,
    /// The `cursor` of the next (older) page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

/// Invocation records with their (redacted) log lines, newest first; page with `cursor`.
#[utoipa::path(get, path = "/ai/endpoints/{slug}/logs", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug"), PageQuery),
    responses(
        (status = 200, description = "`entries` newest first and `nextCursor`", body = Logs),
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
) -> ApiResult<Json<Logs>> {
    let endpoint = endpoints::owned(&app.endpoint_parts(), &caller, &slug)?;
    app.recorder.flush().await;
    let request = PageRequest::parse(query.cursor.as_deref(), query.limit)?;
    let page = crate::logs::page(app.store.as_ref(), &endpoint.endpoint.id, &request).await?;
    Ok(Json(Logs {
        ok: true,
        slug,
        entries: page.items,
        next_cursor: page.next_cursor,
    }))
}
