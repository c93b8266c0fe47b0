//! `GET /ai/content-safety/policy`.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::app::AppState;
use crate::safety::policy::{RULES, SUMMARY};

/// The content-safety policy: rules with ids, categories and outcomes.
#[utoipa::path(get, path = "/ai/content-safety/policy", tag = "safety",
    responses((status = 200, description = "The policy", body = Object)))]
pub async fn policy(State(app): State<AppState>) -> Json<Value> {
    Json(json!({
        "ok": true,
        "version": "1",
        "summary": SUMMARY,
        "outcomes": {
            "block": "The create or update is refused with 422 content_blocked and the findings.",
            "review": "The endpoint is stored paused with contentSafety.status = \"review\" until an admin decides.",
        },
        "attestation": {
            "field": "safetyAttestation.accepted",
            "required": true,
            "statement": "I own or have the right to publish this content; it contains no illegal material, secrets or private data.",
        },
        "catalog": app.urls.at("/ai/endpoints"),
        "rules": RULES,
    }))
}
