//! `GET`/`POST /ai/endpoints/{slug}/secrets` (owner or admin). Values go in, never out.

use axum::extract::{Path, State};
use axum::Json;
use serde::Serialize;

use crate::app::AppState;
use crate::builders::Caller;
use crate::endpoints;
use crate::error::{ApiResult, ErrorBody};
use crate::http::extract::JsonBody;
use crate::secrets::vault::{self, SecretChanges, SecretInfo};

/// An endpoint's secrets as anyone sees them: names and timestamps, never values.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Secrets {
    /// Always true.
    ok: bool,
    slug: String,
    secrets: Vec<SecretInfo>,
}

/// Names and timestamps of the endpoint's secrets; never their values.
#[utoipa::path(get, path = "/ai/endpoints/{slug}/secrets", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "Secret names and timestamps", body = Secrets),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
    ))]
pub async fn list_secrets(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<Secrets>> {
    let endpoint = endpoints::owned(&app.endpoint_parts(), &caller, &slug)?;
    let secrets = vault::list(app.store.as_ref(), &endpoint.endpoint.id).await?;
    Ok(Json(Secrets {
        ok: true,
        slug,
        secrets,
    }))
}

/// Sets (`set: {NAME: value}`) and deletes (`delete: [NAME]`) secrets in one atomic step.
#[utoipa::path(post, path = "/ai/endpoints/{slug}/secrets", tag = "builders",
    request_body = SecretChanges,
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The resulting names and timestamps", body = Secrets),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 422, description = "Invalid name or value", body = ErrorBody),
    ))]
pub async fn change_secrets(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    JsonBody(changes): JsonBody<SecretChanges>,
) -> ApiResult<Json<Secrets>> {
    let endpoint = endpoints::owned(&app.endpoint_parts(), &caller, &slug)?;
    let names: Vec<String> = changes
        .set
        .keys()
        .chain(changes.delete.iter())
        .cloned()
        .collect();
    let secrets = vault::apply_changes(
        app.store.as_ref(),
        &app.secrets,
        &endpoint.endpoint.id,
        changes,
    )
    .await?;
    endpoints::secrets_changed(&app.endpoint_parts(), &slug, names).await?;
    Ok(Json(Secrets {
        ok: true,
        slug,
        secrets,
    }))
}
