//! What callers see of the catalog: the public endpoint record (spec 2.1) and the catalog
//! envelope (spec 2.3), in the current form and the older ("legacy") form without content safety.

use serde::Serialize;
use serde_json::{json, Map, Value};

use super::model::{Endpoint, HandlerType, PricingMode, Status};
use super::Registry;
use crate::money::Usd;
use crate::timestamp::rfc3339;
use crate::urls::Urls;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatalogForm {
    /// With `contentSafety` on records and envelope, and the `contentSafetyPolicy` lifecycle key.
    Current,
    /// The older form, for clients that predate content safety.
    Legacy,
}

impl CatalogForm {
    pub fn parse(text: Option<&str>) -> Option<Self> {
        match text {
            None | Some("current") => Some(CatalogForm::Current),
            Some("legacy") => Some(CatalogForm::Legacy),
            Some(_) => None,
        }
    }
}

/// The public record of one endpoint. Owner, source, env and secrets are never part of it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointRecord {
    pub slug: String,
    pub id: String,
    pub title: String,
    pub description: String,
    pub status: Status,
    #[schema(value_type = f64, example = 0.001)]
    pub price_usd: Usd,
    pub handler_type: HandlerType,
    pub runtime: &'static str,
    pub pricing_mode: PricingMode,
    pub url: String,
    pub method: &'static str,
    pub tags: Vec<String>,
    #[schema(value_type = Object)]
    pub input_schema: Value,
    #[schema(value_type = Object)]
    pub output_schema: Value,
    /// `{}` for built-in handlers; the granted booleans for JS handlers.
    #[schema(value_type = Object)]
    pub capabilities: Value,
    /// Absent in the legacy form; `null` on catalogued endpoints.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub content_safety: Option<Value>,
    pub created_at: String,
    pub updated_at: String,
}

impl EndpointRecord {
    pub fn new(endpoint: &Endpoint, urls: &Urls, form: CatalogForm) -> Self {
        let capabilities = match endpoint.handler_type {
            HandlerType::JsRequestResponse => json!(endpoint.granted_capabilities),
            _ => json!({}),
        };
        Self {
            slug: endpoint.slug.clone(),
            id: endpoint.id.clone(),
            title: endpoint.title.clone(),
            description: endpoint.description.clone(),
            status: endpoint.status,
            price_usd: endpoint.price_usd,
            handler_type: endpoint.handler_type,
            runtime: endpoint.handler_type.runtime(),
            pricing_mode: endpoint.pricing_mode(),
            url: urls.tool(&endpoint.slug),
            method: "POST",
            tags: endpoint.tags.clone(),
            input_schema: endpoint.input_schema.clone(),
            output_schema: endpoint.output_schema.clone(),
            capabilities,
            // `Some(Null)` serializes as `null`; `None` (legacy) omits the key.
            content_safety: match form {
                CatalogForm::Current => Some(json!(endpoint.content_safety)),
                CatalogForm::Legacy => None,
            },
            created_at: rfc3339(endpoint.created_at),
            updated_at: rfc3339(endpoint.updated_at),
        }
    }
}

/// The self-serve rule stated in the envelope, and enforced by endpoint creation.
pub(super) const SELF_SERVE_RULE: &str = "Builder-created endpoints must carry safetyAttestation.accepted = true. \
Every builder create and update is scanned; content that appears to contain illegal material, secrets, \
private data or unauthorized content is blocked (422 content_blocked) or held paused for admin review.";

/// The catalog envelope of `GET /ai/endpoints` around already-filtered records.
pub fn envelope(
    urls: &Urls,
    namespace: &str,
    form: CatalogForm,
    endpoints: Vec<EndpointRecord>,
) -> Value {
    let u = |path: &str| urls.at(path);
    let mut lifecycle = Map::new();
    let mut add = |key: &str, value: String| {
        lifecycle.insert(key.to_string(), Value::String(value));
    };
    add(
        "builderRegister",
        format!("POST {}", u("/ai/builders/register")),
    );
    add(
        "create",
        format!(
            "POST {} (X-Admin-Token or X-Builder-Key)",
            u("/ai/endpoints/create")
        ),
    );
    add("inspect", format!("GET {}", u("/ai/endpoints/{slug}")));
    add(
        "update",
        format!("PATCH {} (owner or admin)", u("/ai/endpoints/{slug}")),
    );
    add(
        "pause",
        format!(
            "PATCH {} {{\"status\":\"paused\"}}",
            u("/ai/endpoints/{slug}")
        ),
    );
    add(
        "resume",
        format!(
            "PATCH {} {{\"status\":\"active\"}}",
            u("/ai/endpoints/{slug}")
        ),
    );
    add(
        "delete",
        format!("DELETE {} (owner or admin)", u("/ai/endpoints/{slug}")),
    );
    add("logs", format!("GET {}", u("/ai/endpoints/{slug}/logs")));
    add(
        "secrets",
        format!("GET|POST {}", u("/ai/endpoints/{slug}/secrets")),
    );
    add(
        "revenue",
        format!("GET {}?since=30d", u("/ai/builders/revenue")),
    );
    add(
        "events",
        format!(
            "GET {}?since=7d&endpointSlug={{slug}}",
            u("/ai/builders/events")
        ),
    );
    add(
        "payoutSettings",
        format!("GET|POST {}", u("/ai/builders/payout-settings")),
    );
    add(
        "payoutPackets",
        format!("GET|POST {}", u("/ai/builders/payouts")),
    );
    if form == CatalogForm::Current {
        add(
            "contentSafetyPolicy",
            format!("GET {}", u("/ai/content-safety/policy")),
        );
    }
    let handler_types: Map<String, Value> = HandlerType::ALL
        .iter()
        .map(|h| {
            (
                h.as_str().to_string(),
                Value::String(h.description().to_string()),
            )
        })
        .collect();
    let mut out = json!({
        "ok": true,
        "schema": format!("{namespace}.x402.hosted-endpoint-catalog.v1"),
        "dashboard": u("/dashboard"),
        "createEndpoint": u("/ai/endpoints/create"),
        "lifecycle": lifecycle,
        "builderControls": {
            "register": u("/ai/builders/register"),
            "revenue": u("/ai/builders/revenue"),
            "events": u("/ai/builders/events"),
            "payoutSettings": u("/ai/builders/payout-settings"),
            "payouts": u("/ai/builders/payouts"),
            "docs": u("/guides/x402-agent-payment-infrastructure"),
        },
        "supportedHandlerTypes": handler_types,
        "note": format!(
            "Invoke any endpoint with POST {{url}} and a JSON body matching its inputSchema. Paid endpoints ({}) \
    answer 402 with x402 payment requirements; retry with a signed payment to receive the result and a receipt.",
            PricingMode::FixedPriceSuccessReceipt.as_str()
        ),
        "endpoints": endpoints,
    });
    if form == CatalogForm::Current {
        out["contentSafety"] = json!({
            "policy": u("/ai/content-safety/policy"),
            "selfServeRule": SELF_SERVE_RULE,
        });
    }
    out
}

/// The catalog filters of `GET /ai/endpoints`, shared with the MCP `catalog_search` tool.
pub fn matches(
    endpoint: &Endpoint,
    tag: Option<&str>,
    q: Option<&str>,
    mode: Option<PricingMode>,
) -> bool {
    let tag_ok = tag.is_none_or(|t| endpoint.tags.iter().any(|x| x.eq_ignore_ascii_case(t)));
    let mode_ok = mode.is_none_or(|m| endpoint.pricing_mode() == m);
    let q_ok = q.is_none_or(|q| {
        let q = q.to_lowercase();
        [&endpoint.slug, &endpoint.title, &endpoint.description]
            .into_iter()
            .chain(endpoint.tags.iter())
            .any(|field| field.to_lowercase().contains(&q))
    });
    tag_ok && mode_ok && q_ok
}

/// The body of `GET /ai/endpoints`: the catalog envelope around the public record of every
/// listed endpoint that passes the filters of [`matches`], in catalog order.
pub fn listing(
    catalog: &Registry,
    urls: &Urls,
    namespace: &str,
    form: CatalogForm,
    tag: Option<&str>,
    q: Option<&str>,
    mode: Option<PricingMode>,
) -> Value {
    let records = catalog
        .all()
        .iter()
        .map(|c| &c.endpoint)
        .filter(|e| e.is_listed())
        .filter(|e| matches(e, tag, q, mode))
        .map(|e| EndpointRecord::new(e, urls, form))
        .collect();
    envelope(urls, namespace, form, records)
}
