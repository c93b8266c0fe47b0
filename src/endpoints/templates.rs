//! `GET /ai/templates/creator-skill`: a ready create body for the creator-skill endpoints of
//! spec 2.4, so a builder starts from the input shape agents expect (`situation`, `goal`,
//! `audience`, `constraints` as an array of strings, other fields allowed) and a handler that
//! already answers it. The builder edits slug, title and handler, adds its own
//! `safetyAttestation` (an attestation is the builder's statement, so the template leaves it
//! out) and posts it to `POST /ai/endpoints/create`.

use axum::Json;
use serde::Serialize;
use serde_json::{json, Value};

/// The example handler, kept as a file so it reads (and is tested) like any builder's source.
const CREATOR_SKILL_SOURCE: &str = include_str!("../../fixtures/templates/creator-skill.js");

/// The creator-skill input schema of spec 2.4.
fn creator_skill_input_schema() -> Value {
    let text = |description: &str| json!({"type": "string", "minLength": 1, "maxLength": 2000, "description": description});
    json!({
        "type": "object",
        "required": ["situation", "goal"],
        "properties": {
            "situation": text("Where the creator stands now"),
            "goal": text("What they want to reach"),
            "audience": text("Who it is for"),
            "constraints": {
                "type": "array",
                "maxItems": 20,
                "items": {"type": "string", "maxLength": 200},
                "description": "What the plan must respect, e.g. \"no video\""
            }
        },
        "additionalProperties": true
    })
}

/// A template: a create body and an input to try the endpoint with.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Template {
    /// Always true.
    ok: bool,
    /// Always `creator_skill`.
    template: &'static str,
    /// A body for `POST /ai/endpoints/create` (a `CreateRequest` without `safetyAttestation`,
    /// which the builder adds).
    #[schema(value_type = crate::endpoints::CreateRequest)]
    create: Value,
    /// An input that passes `create.inputSchema`.
    #[schema(value_type = Object)]
    example_input: Value,
    notes: [&'static str; 3],
}

/// A create body for a creator-skill endpoint, and an input to try it with.
#[utoipa::path(get, path = "/ai/templates/creator-skill", tag = "builders",
    responses((status = 200, description = "`{template, create, exampleInput, notes}`: `create` is a body for POST /ai/endpoints/create (add `safetyAttestation`)", body = Template)))]
pub async fn creator_skill() -> Json<Template> {
    Json(Template {
        ok: true,
        template: "creator_skill",
        create: json!({
            "slug": "my-creator-skill",
            "title": "Creator skill",
            "description": "Turns a creator's situation, goal, audience and constraints into a short ordered plan.",
            "priceUsd": 0,
            "handlerType": "js_request_response",
            "tags": ["creator-skill"],
            "inputSchema": creator_skill_input_schema(),
            "outputSchema": {
                "type": "object",
                "required": ["summary", "steps"],
                "properties": {
                    "summary": {"type": "string"},
                    "steps": {"type": "array", "items": {"type": "object"}}
                }
            },
            "source": CREATOR_SKILL_SOURCE,
        }),
        example_input: json!({
            "situation": "I teach watercolour at a community centre and have 200 newsletter readers",
            "goal": "sell my first online course",
            "audience": "adult beginners",
            "constraints": ["no video"],
            "timezone": "Europe/Lisbon"
        }),
        notes: [
            "Change slug, title, description and priceUsd; the handler needs no capability.",
            "Add \"safetyAttestation\": {\"accepted\": true} and POST the body to /ai/endpoints/create with your X-Builder-Key.",
            "Keep the input schema: agents call creator-skill endpoints with situation, goal, audience and constraints (spec 2.4); extra fields are allowed."
        ],
    })
}
