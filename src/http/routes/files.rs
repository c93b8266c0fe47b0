//! `GET /ai/endpoints/{slug}/files?path=`: one of an endpoint's files as stored, for its owner
//! and the admin (what `toolhost pull` fetches; the owner's view lists paths and sizes only).

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::app::AppState;
use crate::builders::Caller;
use crate::endpoints;
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::QueryParams;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct FileQuery {
    /// The file's path, as `manage.files` lists it.
    pub path: String,
}

/// One file's content, byte for byte (`text/plain; charset=utf-8` when it is UTF-8, else
/// `application/octet-stream`).
#[utoipa::path(get, path = "/ai/endpoints/{slug}/files", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug"), FileQuery),
    responses(
        (status = 200, description = "The file's content", body = String, content_type = "text/plain"),
        (status = 400, description = "`invalid_query`: no `path`", body = ErrorBody),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint, or `file_not_found`", body = ErrorBody),
    ))]
pub async fn get_file(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    QueryParams(query): QueryParams<FileQuery>,
) -> ApiResult<Response> {
    let endpoint = endpoints::owned(&app.endpoint_parts(), &caller, &slug)?;
    let Some(bytes) =
        endpoints::read_file(app.store.as_ref(), &endpoint.endpoint.id, &query.path).await?
    else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::FileNotFound,
            format!("{slug} has no file {:?}", query.path),
        ));
    };
    let kind = if std::str::from_utf8(&bytes).is_ok() {
        "text/plain; charset=utf-8"
    } else {
        "application/octet-stream"
    };
    Ok(([(header::CONTENT_TYPE, kind)], bytes).into_response())
}
