//! `GET /ai/content-safety/policy`.

use axum::extract::State;
use axum::Json;
use serde::Serialize;

use crate::app::AppState;
use crate::safety::policy::{Rule, RULES, SUMMARY};

#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Always true.
    ok: bool,
    version: &'static str,
    summary: &'static str,
    outcomes: Outcomes,
    attestation: Attestation,
    /// The catalog's URL.
    catalog: String,
    rules: &'static [Rule],
}

/// What each rule outcome does.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Outcomes {
    block: &'static str,
    review: &'static str,
}

/// The attestation builders give on create.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Attestation {
    /// Always `safetyAttestation.accepted`.
    field: &'static str,
    required: bool,
    statement: &'static str,
}

/// The content-safety policy: rules with ids, categories and outcomes.
#[utoipa::path(get, path = "/ai/content-safety/policy", tag = "safety",
    responses((status = 200, description = "The policy", body = Policy)))]
pub async fn policy(State(app): State<AppState>) -> Json<Policy> {
    Json(Policy {
        ok: true,
        version: "1",
        summary: SUMMARY,
        outcomes: Outcomes {
            block: "The create or update is refused with 422 content_blocked and the findings.",
            review: "The endpoint is stored paused with contentSafety.status = \"review\" until an admin decides.",
        },
        attestation: Attestation {
            field: "safetyAttestation.accepted",
            required: true,
            statement: "I own or have the right to publish this content; it contains no illegal material, secrets or private data.",
        },
        catalog: app.urls.at("/ai/endpoints"),
        rules: RULES,
    })
}
