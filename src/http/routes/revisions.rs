//! An endpoint's revisions (owner or admin): the kept ones, one whole with its diff against
//! the serving source, rollback, and gradual rollouts.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::Deserialize;

use super::endpoints::{managed, Managed};
use crate::app::AppState;
use crate::builders::Caller;
use crate::endpoints::revisions::{self, RevisionDetail, RevisionList};
use crate::endpoints::rollout::{self, Ending, RolloutRequest, RolloutStatus};
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::http::extract::JsonBody;

/// The kept revisions, newest first: the newest 20 and the serving one, each with its state
/// (`serving`, `pending`, `refused`, `kept`), who made it, the fields it changed, its price,
/// capabilities, hosts and source digest.
#[utoipa::path(get, path = "/ai/endpoints/{slug}/revisions", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The kept revisions", body = RevisionList),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
    ))]
pub async fn list_revisions(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<RevisionList>> {
    Ok(Json(
        revisions::list(&app.endpoint_parts(), &caller, &slug).await?,
    ))
}

/// One kept revision whole: its content, what it asks for beyond what the endpoint holds, and
/// a unified diff of its source against the serving revision's.
#[utoipa::path(get, path = "/ai/endpoints/{slug}/revisions/{revision}", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug"), ("revision" = u64, Path, description = "Revision number")),
    responses(
        (status = 200, description = "The revision", body = RevisionDetail),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint, or `revision_not_found` (`details.kept` lists the kept ones)", body = ErrorBody),
    ))]
pub async fn get_revision(
    State(app): State<AppState>,
    caller: Caller,
    Path((slug, revision)): Path<(String, String)>,
) -> ApiResult<Json<RevisionDetail>> {
    // Parsed here rather than by the extractor, whose refusal is not the JSON error shape.
    let Ok(revision) = revision.parse::<u64>() else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::RevisionNotFound,
            format!("{revision:?} is not a revision number"),
        ));
    };
    Ok(Json(
        revisions::detail(&app.endpoint_parts(), &caller, &slug, revision).await?,
    ))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollbackRequest {
    /// The kept revision to serve.
    pub revision: u64,
}

/// Serve a kept revision again, at once when it asks for no capability the endpoint does not
/// hold (grants are kept when a revision stops using them, so one that served before asks for
/// nothing new); otherwise it waits for the admin's grant as `manage.pendingRevision` while the
/// serving revision serves on. A revision waiting for a grant is withdrawn either way. The
/// owner gets an `endpoint_rolled_back` event.
#[utoipa::path(post, path = "/ai/endpoints/{slug}/rollback", tag = "builders",
    request_body = RollbackRequest,
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The endpoint as it now is", body = Managed),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint, or `revision_not_found` (`details.kept` lists the kept ones)", body = ErrorBody),
        (status = 409, description = "`content_rejected`, or `edit_conflict` (changed meanwhile)", body = ErrorBody),
    ))]
pub async fn rollback(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    JsonBody(body): JsonBody<RollbackRequest>,
) -> ApiResult<Json<Managed>> {
    let compiled =
        revisions::rollback(&app.endpoint_parts(), &caller, &slug, body.revision).await?;
    managed(&app, &compiled).await
}

/// The running rollout, if any: the revision rolling out, its share, and both revisions' calls
/// since it started (on every node): successes, client and server errors, error rate and
/// latency percentiles.
#[utoipa::path(get, path = "/ai/endpoints/{slug}/rollout", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The rollout (`rollout: null` when none runs)", body = RolloutStatus),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
    ))]
pub async fn rollout_status(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<RolloutStatus>> {
    // Calls counted on this node so far are stored first.
    app.recorder.flush().await;
    Ok(Json(
        rollout::status(&app.endpoint_parts(), &caller, &slug).await?,
    ))
}

/// Roll a kept revision out to a share of payers (1-100 %) beside the serving one, or change
/// the share of the running rollout (the same revision, or none named). Each payer (the x402
/// payer's address, the developer credit, else the client's address) always reaches the same
/// revision; raising the share keeps those already on the new one. The revision must charge
/// what the serving one charges and ask for no capability the endpoint does not hold. The owner
/// gets a `rollout_started` (or `rollout_changed`) event.
#[utoipa::path(post, path = "/ai/endpoints/{slug}/rollout", tag = "builders",
    request_body = RolloutRequest,
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The endpoint as it now is (`manage.rollout`)", body = Managed),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint, or `revision_not_found` (`details.kept` lists the kept ones)", body = ErrorBody),
        (status = 409, description = "`rollout_refused` (`details.reason`: `serving`, `needs_grant`, `price_differs`, `nothing_serving`), `content_rejected`, or `edit_conflict`", body = ErrorBody),
        (status = 422, description = "`invalid_field`: a share outside 1-100, or no revision named and none rolling out", body = ErrorBody),
    ))]
pub async fn start_rollout(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    JsonBody(body): JsonBody<RolloutRequest>,
) -> ApiResult<Json<Managed>> {
    let compiled = rollout::start(&app.endpoint_parts(), &caller, &slug, body).await?;
    managed(&app, &compiled).await
}

/// Promote the rolling-out revision: it serves every call, as a deploy would have made it.
/// The owner gets a `rollout_promoted` event.
#[utoipa::path(post, path = "/ai/endpoints/{slug}/rollout/promote", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The endpoint as it now is", body = Managed),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 409, description = "`no_rollout`, or `edit_conflict`", body = ErrorBody),
    ))]
pub async fn promote_rollout(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<Managed>> {
    let parts = app.endpoint_parts();
    let compiled = rollout::finish(&parts, &caller, &slug, Ending::Promoted).await?;
    managed(&app, &compiled).await
}

/// End the rollout: the serving revision serves every call again. The owner gets a
/// `rollout_ended` event.
#[utoipa::path(delete, path = "/ai/endpoints/{slug}/rollout", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "The endpoint as it now is", body = Managed),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 409, description = "`no_rollout`, or `edit_conflict`", body = ErrorBody),
    ))]
pub async fn end_rollout(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<Managed>> {
    let parts = app.endpoint_parts();
    let compiled = rollout::finish(&parts, &caller, &slug, Ending::Ended).await?;
    managed(&app, &compiled).await
}
