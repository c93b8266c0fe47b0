//! `GET /ai/builders/events` (the builder's own feed).

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::app::AppState;
use crate::error::{ApiResult, ErrorBody};
use crate::events::Event;
use crate::http::auth::BuilderAuth;
use crate::http::extract::QueryParams;
use crate::paging::PageRequest;

/// One page of the builder's events.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Events {
    /// Always true.
    ok: bool,
    builder_id: String,
    /// The `since` the page was read with (`7d` when none was sent).
    since: String,
    /// Newest first.
    events: Vec<Event>,
    /// The `cursor` of the next (older) page; `null` on the last page.
    #[schema(required = true)]
    next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// How far back: `<n>` and a unit `s`, `m`, `h`, `d` or `w` (default `7d`).
    #[param(schema_with = crate::timestamp::since_schema)]
    since: Option<String>,
    /// Only events of this endpoint.
    endpoint_slug: Option<String>,
    /// `nextCursor` of the previous page.
    #[param(pattern = "^[0-9a-fA-F]{32}$")]
    cursor: Option<String>,
    /// Items per page, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<usize>,
}

/// The calling builder's events, newest first.
#[utoipa::path(get, path = "/ai/builders/events", tag = "builders", params(EventsQuery),
    responses(
        (status = 200, description = "`events` newest first and `nextCursor`", body = Events),
        (status = 400, description = "Bad since, cursor or limit", body = ErrorBody),
        (status = 401, description = "No valid builder key (unknown, or revoked: `builder_key_revoked`)", body = ErrorBody),
    ))]
pub async fn builder_events(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
    QueryParams(query): QueryParams<EventsQuery>,
) -> ApiResult<Json<Events>> {
    let since_text = query.since.as_deref().unwrap_or("7d");
    let cutoff = crate::timestamp::since_cutoff(Some(since_text), "7d")?;
    let request = PageRequest::parse(query.cursor.as_deref(), query.limit)?;
    app.recorder.flush().await;
    let page = crate::events::page(
        app.store.as_ref(),
        &builder.id,
        cutoff,
        query.endpoint_slug.as_deref(),
        &request,
    )
    .await?;
    Ok(Json(Events {
        ok: true,
        builder_id: builder.id,
        since: since_text.to_owned(),
        events: page.items,
        next_cursor: page.next_cursor,
    }))
}
