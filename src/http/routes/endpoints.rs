//! `POST /ai/endpoints/create`, `PATCH`/`DELETE /ai/endpoints/{slug}`, a builder's test run of
//! a draft (`POST /ai/builders/drafts/run`), and the admin's review and capability-grant
//! routes. `GET /ai/endpoints/{slug}` lives with the catalog and shows the owner's view too.

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::app::AppState;
use crate::builders::Caller;
use crate::catalog::{CatalogForm, CompiledEndpoint, EndpointRecord, Owner};
use crate::endpoints::draft::{self, DraftRequest};
use crate::endpoints::lifecycle::{self, GrantView, ManageView};
use crate::endpoints::revisions::{self, RevisionDetail};
use crate::endpoints::{CreateRequest, PatchRequest};
use crate::error::{ApiResult, ErrorBody};
use crate::http::auth::{Admin, BuilderAuth};
use crate::http::extract::{JsonBody, JsonFields};
use crate::js_handlers::DraftRun;

/// The public record plus the owner's view, as create, PATCH, review and grant answer.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Managed {
    /// Always true.
    ok: bool,
    endpoint: EndpointRecord,
    manage: ManageView,
}

pub(super) async fn managed(
    app: &AppState,
    compiled: &CompiledEndpoint,
) -> ApiResult<Json<Managed>> {
    let endpoint = &compiled.endpoint;
    Ok(Json(Managed {
        ok: true,
        endpoint: EndpointRecord::new(endpoint, &app.urls, CatalogForm::Current),
        manage: lifecycle::manage_view(&app.endpoint_parts(), endpoint).await?,
    }))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Deleted {
    /// Always true.
    ok: bool,
    /// The slug deleted, free again.
    deleted: String,
}

/// An admin queue: the endpoints awaiting a decision, each with what the decision needs.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Queue<T> {
    /// Always true.
    ok: bool,
    endpoints: Vec<T>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InReview {
    endpoint: EndpointRecord,
    owner: Owner,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AwaitingGrant {
    endpoint: EndpointRecord,
    owner: Owner,
    capability_grant: GrantView,
    /// The revision waiting for the grant, when the serving one serves meanwhile: its
    /// content, the hosts it would reach and its source's diff against the serving one's.
    #[schema(required = true)]
    pending_revision: Option<RevisionDetail>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BuilderEndpoints {
    /// Always true.
    ok: bool,
    builder_id: String,
    endpoints: Vec<OwnedEndpoint>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnedEndpoint {
    endpoint: EndpointRecord,
    manage: ManageView,
}

/// Create an endpoint owned by the caller. Builders must attest (`safetyAttestation.accepted`)
/// and their content is scanned: blocked (422 `content_blocked`) or held paused for review.
#[utoipa::path(post, path = "/ai/endpoints/create", tag = "builders",
    request_body = CreateRequest,
    params(("X-Admin-Token" = Option<String>, Header, description = "Admin token"), ("X-Builder-Key" = Option<String>, Header, description = "Builder key")),
    responses(
        (status = 200, description = "Created: public record and owner's view", body = Managed),
        (status = 401, description = "No valid admin token or builder key (`unauthorized`, `invalid_admin_token`, `invalid_builder_key`, `builder_key_revoked`)", body = ErrorBody),
        (status = 403, description = "A builder setting an admin-only field", body = ErrorBody),
        (status = 409, description = "Slug taken", body = ErrorBody),
        (status = 422, description = "Invalid field, schema, attestation_required or content_blocked", body = ErrorBody),
    ))]
pub async fn create_endpoint(
    State(app): State<AppState>,
    caller: Caller,
    JsonFields(request): JsonFields<CreateRequest>,
) -> ApiResult<Json<Managed>> {
    let compiled = lifecycle::create(&app.endpoint_parts(), &caller, request).await?;
    managed(&app, &compiled).await
}

/// A test run of a draft (builder key): the module runs once with `input` in a throwaway
/// isolate under a call's limits, with `env`, `logs`, and a scratch `ctx.kv` and `ctx.files`
/// of its own (empty at the start, wiped after; never an endpoint's data), no secrets or
/// network. Answers what a call would have: `run`
/// `{status, body, headers, logs, durationMs, error?}`, `error` being `{code, message, line,
/// column, stack}` when the handler failed. Spends an anonymous-write token like a test call.
#[utoipa::path(post, path = "/ai/builders/drafts/run", tag = "builders",
    request_body = DraftRequest,
    params(("X-Builder-Key" = String, Header, description = "Builder key")),
    responses(
        (status = 200, description = "Ran: what a call would have answered", body = DraftAnswer),
        (status = 401, description = "No valid builder key", body = ErrorBody),
        (status = 422, description = "`invalid_body`, `invalid_field` (`details.errors`), or `compile_error` (`details` `{field, line, column, sourceLine, hint}`)", body = ErrorBody),
        (status = 429, description = "`rate_limited` (anonymous-write tokens) or `overloaded`", body = ErrorBody),
    ))]
pub async fn run_draft(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
    JsonFields(request): JsonFields<DraftRequest>,
) -> ApiResult<Json<DraftAnswer>> {
    crate::rate_limit::anonymous_write()?;
    let run = draft::run(
        &app.runtime,
        app.store.as_ref(),
        &app.urls,
        &builder.id,
        request,
    )
    .await?;
    Ok(Json(DraftAnswer { ok: true, run }))
}

/// What a draft's test run answers.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftAnswer {
    /// Always true: the run happened (the handler's own failure is in `run.error`).
    ok: bool,
    run: DraftRun,
}

/// Update an endpoint (owner or admin). `status` pauses or resumes it; `grantedCapabilities`
/// and `limits` are admin only.
#[utoipa::path(patch, path = "/ai/endpoints/{slug}", tag = "builders",
    request_body = PatchRequest,
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "Updated", body = Managed),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner, or an admin-only field", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 409, description = "Under review or rejected", body = ErrorBody),
        (status = 422, description = "Invalid field or content_blocked", body = ErrorBody),
    ))]
pub async fn patch_endpoint(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
    JsonFields(patch): JsonFields<PatchRequest>,
) -> ApiResult<Json<Managed>> {
    let compiled = lifecycle::update(&app.endpoint_parts(), &caller, &slug, patch).await?;
    managed(&app, &compiled).await
}

/// Delete an endpoint (owner or admin): it leaves the catalog with its secrets, files and logs,
/// and its slug is free again. Its receipts stay retrievable.
#[utoipa::path(delete, path = "/ai/endpoints/{slug}", tag = "builders",
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 401, description = "No valid credential", body = ErrorBody),
        (status = 403, description = "Not the owner", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
    ))]
pub async fn delete_endpoint(
    State(app): State<AppState>,
    caller: Caller,
    Path(slug): Path<String>,
) -> ApiResult<Json<Deleted>> {
    let removed = lifecycle::delete(&app.endpoint_parts(), &caller, &slug).await?;
    Ok(Json(Deleted {
        ok: true,
        deleted: removed.slug,
    }))
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewDecision {
    /// `approve` or `reject`.
    pub decision: Decision,
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Reject,
}

/// Admin: approve (listed and active) or reject (stays paused and unlisted) an endpoint held
/// for content-safety review.
#[utoipa::path(post, path = "/ai/admin/endpoints/{slug}/review", tag = "admin",
    request_body = ReviewDecision,
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "Decided", body = Managed),
        (status = 401, description = "No valid admin token", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 409, description = "Not under review", body = ErrorBody),
    ))]
pub async fn review_endpoint(
    State(app): State<AppState>,
    _admin: Admin,
    Path(slug): Path<String>,
    JsonBody(body): JsonBody<ReviewDecision>,
) -> ApiResult<Json<Managed>> {
    let approve = matches!(body.decision, Decision::Approve);
    let compiled = lifecycle::decide(&app.endpoint_parts(), &slug, approve, body.note).await?;
    managed(&app, &compiled).await
}

/// Admin: endpoints awaiting content-safety review, oldest first.
#[utoipa::path(get, path = "/ai/admin/reviews", tag = "admin",
    responses((status = 200, description = "Review queue", body = Queue<InReview>), (status = 401, description = "No valid admin token", body = ErrorBody)))]
pub async fn review_queue(State(app): State<AppState>, _admin: Admin) -> Json<Queue<InReview>> {
    let endpoints = lifecycle::review_queue(&app.endpoint_parts())
        .iter()
        .map(|c| InReview {
            endpoint: EndpointRecord::new(&c.endpoint, &app.urls, CatalogForm::Current),
            owner: c.endpoint.owner.clone(),
        })
        .collect();
    Json(Queue {
        ok: true,
        endpoints,
    })
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantRequest {
    /// `grant` (every requested capability) or `refuse`.
    pub decision: GrantChoice,
    /// Shown to the owner in its events and `manage.capabilityGrant`; at most 1000 characters.
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrantChoice {
    Grant,
    Refuse,
}

/// Admin: answer an endpoint's capability request. `grant` gives every requested capability:
/// the endpoint leaves `awaiting_grant` (active and listed unless paused or held for review).
/// `refuse` keeps it `awaiting_grant` and out of the queue until its owner changes the request
/// or the code. The owner gets a `capabilities_granted` or `capabilities_refused` event with
/// the note.
#[utoipa::path(post, path = "/ai/admin/endpoints/{slug}/grant", tag = "admin",
    request_body = GrantRequest,
    params(("slug" = String, Path, description = "Endpoint slug")),
    responses(
        (status = 200, description = "Decided: public record and owner's view", body = Managed),
        (status = 401, description = "No valid admin token", body = ErrorBody),
        (status = 404, description = "No such endpoint", body = ErrorBody),
        (status = 409, description = "`not_awaiting_grant`: every requested capability is granted; `edit_conflict`", body = ErrorBody),
        (status = 422, description = "Note over 1000 characters", body = ErrorBody),
    ))]
pub async fn grant_endpoint(
    State(app): State<AppState>,
    _admin: Admin,
    Path(slug): Path<String>,
    JsonBody(body): JsonBody<GrantRequest>,
) -> ApiResult<Json<Managed>> {
    let grant = matches!(body.decision, GrantChoice::Grant);
    let compiled = lifecycle::decide_grant(&app.endpoint_parts(), &slug, grant, body.note).await?;
    managed(&app, &compiled).await
}

/// Admin: capability requests awaiting an answer, the longest waiting first: each endpoint's
/// record, owner and `capabilityGrant` (requested, granted, missing).
#[utoipa::path(get, path = "/ai/admin/grants", tag = "admin",
    responses((status = 200, description = "`endpoints`: `[{endpoint, owner, capabilityGrant}]`", body = Queue<AwaitingGrant>), (status = 401, description = "No valid admin token", body = ErrorBody)))]
pub async fn grant_queue(
    State(app): State<AppState>,
    _admin: Admin,
) -> ApiResult<Json<Queue<AwaitingGrant>>> {
    let parts = app.endpoint_parts();
    let mut endpoints = Vec::new();
    for c in lifecycle::grant_queue(&parts) {
        let pending_revision = revisions::pending_detail(&parts, &c.endpoint).await?;
        endpoints.push(AwaitingGrant {
            endpoint: EndpointRecord::new(&c.endpoint, &app.urls, CatalogForm::Current),
            owner: c.endpoint.owner.clone(),
            capability_grant: lifecycle::grant_view(&c.endpoint),
            pending_revision,
        });
    }
    Ok(Json(Queue {
        ok: true,
        endpoints,
    }))
}

/// The calling builder's endpoints, each with the owner's view, sorted by slug. Endpoints held
/// for or refused by content-safety review, or awaiting a capability grant, are included (the
/// owner sees them everywhere).
#[utoipa::path(get, path = "/ai/builders/endpoints", tag = "builders",
    responses(
        (status = 200, description = "`endpoints`: `[{endpoint, manage}]`", body = BuilderEndpoints),
        (status = 401, description = "No valid builder key (unknown, or revoked: `builder_key_revoked`)", body = ErrorBody),
    ))]
pub async fn builder_endpoints(
    State(app): State<AppState>,
    BuilderAuth(builder): BuilderAuth,
) -> ApiResult<Json<BuilderEndpoints>> {
    let owner = Owner::Builder(builder.id.clone());
    let mut owned: Vec<_> = app
        .catalog
        .all()
        .iter()
        .filter(|c| c.endpoint.owner == owner)
        .cloned()
        .collect();
    owned.sort_by(|a, b| a.endpoint.slug.cmp(&b.endpoint.slug));
    let mut endpoints = Vec::with_capacity(owned.len());
    for c in &owned {
        endpoints.push(OwnedEndpoint {
            endpoint: EndpointRecord::new(&c.endpoint, &app.urls, CatalogForm::Current),
            manage: lifecycle::manage_view(&app.endpoint_parts(), &c.endpoint).await?,
        });
    }
    Ok(Json(BuilderEndpoints {
        ok: true,
        builder_id: builder.id,
        endpoints,
    }))
}
