//! Why an endpoint operation was refused, and the answer each reason becomes.

use axum::http::StatusCode;
use serde_json::json;

use super::input::FieldError;
use crate::catalog::CatalogError;
use crate::error::{ApiError, ErrorCode};
use crate::js_handlers::{CheckError, CompileFailure};
use crate::safety::Finding;
use crate::secrets::SecretsError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("{message}")]
    Invalid { field: String, message: String },
    /// Every field error of one body (at least one), answered together.
    #[error("{}", fields_message(.0))]
    Fields(Vec<FieldError>),
    #[error("builder-created endpoints need safetyAttestation.accepted = true")]
    AttestationRequired,
    #[error("builders may create js_request_response and static_json endpoints")]
    HandlerNotAllowed,
    #[error("only the admin may set {0}")]
    AdminOnly(&'static str),
    #[error("this endpoint belongs to someone else")]
    NotOwner,
    #[error("the content appears to contain material the content-safety policy blocks")]
    Blocked(Vec<Finding>),
    #[error("the endpoint is held for content-safety review; an admin must approve it first")]
    UnderReview,
    #[error("the endpoint was rejected by content-safety review; it can only be deleted")]
    Rejected,
    #[error("the endpoint is not awaiting content-safety review")]
    NotUnderReview,
    #[error(
        "every capability the endpoint requests is granted already; there is nothing to decide"
    )]
    NotAwaitingGrant,
    /// The source does not load (publish-time check).
    #[error("the source cannot run: {}", .0.message)]
    Compile(Box<CompileFailure>),
    /// The publish-time check could not run; its own answer (429 overloaded, 500).
    #[error("{0}")]
    CheckUnavailable(ApiError),
    #[error(
        "{slug:?} was deleted by its owner and stays reserved for them until {}; choose another slug",
        crate::timestamp::rfc3339(*.until)
    )]
    SlugReserved {
        slug: String,
        until: time::OffsetDateTime,
    },
    #[error("revision {revision} is not kept")]
    RevisionNotFound { revision: u64, kept: Vec<u64> },
    #[error(
        "this change was made on revision {base}, but the endpoint has moved on since (serving revision {serving}{}); fetch it again (toolhost pull) and redo the change, or force it",
        .pending.map(|p| format!(", revision {p} waiting for a grant")).unwrap_or_default()
    )]
    RevisionConflict {
        base: u64,
        serving: u64,
        pending: Option<u64>,
    },
    #[error("{0}")]
    RolloutRefused(RolloutRefusal),
    #[error("no rollout is running; start one with POST .../rollout {{revision, share}}")]
    NoRollout,
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error(transparent)]
    Secrets(#[from] SecretsError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a revision cannot take a share of calls beside the serving one.
#[derive(Debug, thiserror::Error)]
pub enum RolloutRefusal {
    #[error("nothing serves yet (the endpoint waits for the admin's grant); there is nothing to roll out beside")]
    NothingServing,
    #[error("revision {revision} is the serving one already")]
    Serving { revision: u64 },
    #[error(
        "the revision asks for capabilities the endpoint does not hold ({}); a rollout runs on the endpoint's grant, so deploy it whole to ask the admin",
        .missing.join(", ")
    )]
    NeedsGrant { missing: Vec<&'static str> },
    #[error(
        "the revision charges ${} and the serving one ${}; both revisions of a rollout must charge the same (an agent is quoted one price), so deploy a new price whole",
        .revision, .serving
    )]
    PriceDiffers {
        serving: crate::money::Usd,
        revision: crate::money::Usd,
    },
    #[error("a rollout needs a new revision, and this change makes none")]
    NoNewRevision,
}

impl RolloutRefusal {
    fn details(&self) -> serde_json::Value {
        match self {
            RolloutRefusal::NothingServing => json!({"reason": "nothing_serving"}),
            RolloutRefusal::Serving { revision } => {
                json!({"reason": "serving", "revision": revision})
            }
            RolloutRefusal::NeedsGrant { missing } => {
                json!({"reason": "needs_grant", "missing": missing})
            }
            RolloutRefusal::PriceDiffers { serving, revision } => json!({
                "reason": "price_differs",
                "servingPriceUsd": serving,
                "revisionPriceUsd": revision,
            }),
            RolloutRefusal::NoNewRevision => json!({"reason": "no_new_revision"}),
        }
    }
}

impl From<FieldError> for EndpointError {
    fn from((field, message): FieldError) -> Self {
        EndpointError::Invalid { field, message }
    }
}

impl From<CheckError> for EndpointError {
    fn from(e: CheckError) -> Self {
        match e {
            CheckError::Refused(failure) => EndpointError::Compile(failure),
            CheckError::Unavailable(answer) => EndpointError::CheckUnavailable(answer),
        }
    }
}

impl From<EndpointError> for ApiError {
    fn from(e: EndpointError) -> Self {
        let message = e.to_string();
        match e {
            EndpointError::Invalid { field, message } => invalid_fields(&[(field, message)]),
            EndpointError::Fields(errors) => invalid_fields(&errors),
            EndpointError::AttestationRequired => {
                ApiError::unprocessable(ErrorCode::AttestationRequired, message)
            }
            EndpointError::HandlerNotAllowed => {
                ApiError::unprocessable(ErrorCode::HandlerNotAllowed, message)
            }
            EndpointError::AdminOnly(field) => {
                ApiError::new(StatusCode::FORBIDDEN, ErrorCode::AdminOnlyField, message)
                    .with_details(json!({ "field": field }))
            }
            EndpointError::NotOwner => {
                ApiError::new(StatusCode::FORBIDDEN, ErrorCode::NotOwner, message)
            }
            EndpointError::Blocked(findings) => {
                let move_to_secrets = secrets_in_env(&findings);
                if move_to_secrets.is_empty() {
                    return ApiError::unprocessable(ErrorCode::ContentBlocked, message)
                        .with_details(json!({ "findings": findings }));
                }
                let message = format!(
                    "{message}. `env` is stored and shown as plain text; put {} in the endpoint's \
                     secrets instead (POST /ai/endpoints/{{slug}}/secrets): stored encrypted, \
                     never shown again, and read by the handler from ctx.env the same way",
                    move_to_secrets.join(", ")
                );
                ApiError::unprocessable(ErrorCode::ContentBlocked, message)
                    .with_details(json!({ "findings": findings, "moveToSecrets": move_to_secrets }))
            }
            EndpointError::UnderReview => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::UnderReview, message)
            }
            EndpointError::Rejected => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::ContentRejected, message)
            }
            EndpointError::NotUnderReview => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::NotUnderReview, message)
            }
            EndpointError::NotAwaitingGrant => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::NotAwaitingGrant, message)
            }
            EndpointError::SlugReserved { until, .. } => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::SlugReserved, message).with_details(
                    json!({ "field": "slug", "until": crate::timestamp::rfc3339(until) }),
                )
            }
            EndpointError::RevisionNotFound { revision, kept } => {
                ApiError::new(StatusCode::NOT_FOUND, ErrorCode::RevisionNotFound, message)
                    .with_details(json!({ "revision": revision, "kept": kept }))
            }
            EndpointError::RevisionConflict {
                base,
                serving,
                pending,
            } => ApiError::new(StatusCode::CONFLICT, ErrorCode::RevisionConflict, message)
                .with_details(json!({
                    "baseRevision": base,
                    "servingRevision": serving,
                    "pendingRevision": pending,
                })),
            EndpointError::RolloutRefused(refusal) => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::RolloutRefused, message)
                    .with_details(refusal.details())
            }
            EndpointError::NoRollout => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::NoRollout, message)
            }
            EndpointError::Compile(failure) => {
                let mut details = json!(failure);
                details["field"] = json!("source");
                ApiError::unprocessable(ErrorCode::CompileError, message).with_details(details)
            }
            EndpointError::CheckUnavailable(answer) => answer,
            EndpointError::Catalog(e) => e.into(),
            EndpointError::Secrets(e) => e.into(),
            EndpointError::Store(e) => e.into(),
        }
    }
}

/// One answer for a body's field errors: 422 `invalid_field`, `details.field` the first field,
/// `details.errors` each `{pointer, field, code, message}` (the shape of `invalid_body`'s list).
fn invalid_fields(errors: &[FieldError]) -> ApiError {
    let list: Vec<_> = errors
        .iter()
        .map(|(field, message)| {
            json!({
                "pointer": pointer(field),
                "field": field,
                "code": ErrorCode::InvalidField.as_str(),
                "message": message,
            })
        })
        .collect();
    let first = errors.first().map(|(field, _)| field.as_str());
    ApiError::unprocessable(ErrorCode::InvalidField, fields_message(errors))
        .with_details(json!({ "field": first, "errors": list }))
}

fn fields_message(errors: &[FieldError]) -> String {
    match errors {
        [(_, message)] => message.clone(),
        _ => format!(
            "{} fields are invalid: {}",
            errors.len(),
            errors
                .iter()
                .map(|(_, message)| message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// The JSON pointer of a field as the checks name it: `env.NAME`, `tags[2]`, `files/a/b.txt`.
fn pointer(field: &str) -> String {
    let escape = |part: &str| part.replace('~', "~0").replace('/', "~1");
    if let Some(path) = field.strip_prefix("files/") {
        return format!("/files/{}", escape(path));
    }
    if let Some(name) = field.strip_prefix("env.") {
        return format!("/env/{}", escape(name));
    }
    if let Some((list, index)) = field.strip_suffix(']').and_then(|f| f.split_once('[')) {
        return format!("/{}/{index}", escape(list));
    }
    format!("/{}", escape(field))
}

/// The `env` names whose values look like secrets (a `secret.*` rule blocked them): what the
/// builder meant to store with the secrets route.
fn secrets_in_env(findings: &[Finding]) -> Vec<String> {
    let mut names: Vec<String> = findings
        .iter()
        .filter(|f| f.rule_id.starts_with("secret."))
        .filter_map(|f| f.field.strip_prefix("env.").map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}
