//! What callers see of the catalog: the public endpoint record (spec 2.1) and the catalog
//! envelope (spec 2.3), in the current form and the older ("legacy") form without content safety.

use serde::Serialize;
use serde_json::{json, Map, Value};

use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use super::model::{Endpoint, HandlerType, JsonText, PricingMode, ShownStatus};
use super::registry::{CatalogPage, CatalogPosition, CompiledEndpoint, Registry};
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
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EndpointRecord {
    pub slug: String,
    pub id: String,
    pub title: String,
    pub description: String,
    /// `active` or `paused`; `awaiting_grant` (owner and admin only) while requested
    /// capabilities are not all granted.
    pub status: ShownStatus,
    #[schema(value_type = f64, example = 0.001)]
    pub price_usd: Usd,
    pub handler_type: HandlerType,
    pub runtime: &'static str,
    pub pricing_mode: PricingMode,
    /// How a metered price charges (`priceUsd` is then the most a call costs); absent on
    /// fixed and free prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metering: Option<super::Metering>,
    pub url: String,
    pub method: &'static str,
    pub tags: Vec<String>,
    #[schema(schema_with = super::schema::json_schema_schema)]
    pub input_schema: JsonText,
    #[schema(schema_with = super::schema::json_schema_schema)]
    pub output_schema: JsonText,
    /// `{}` for built-in handlers; the granted booleans for JS handlers.
    #[schema(value_type = super::Capabilities)]
    pub capabilities: Value,
    /// Who owns it and is paid for its calls: a builder by id and display name, or the
    /// service. Absent in the legacy form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<super::OwnerView>,
    /// Absent in the legacy form; `null` on catalogued endpoints without a scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::safety::ContentSafety>)]
    pub content_safety: Option<Value>,
    pub created_at: String,
    pub updated_at: String,
}

impl EndpointRecord {
    pub fn new(endpoint: &Endpoint, urls: &Urls, form: CatalogForm) -> Self {
        let capabilities = match endpoint.handler_type {
            HandlerType::JsRequestResponse => json!(endpoint.capabilities()),
            _ => json!({}),
        };
        Self {
            slug: endpoint.slug.clone(),
            id: endpoint.id.clone(),
            title: endpoint.title.clone(),
            description: endpoint.description.clone(),
            status: endpoint.shown_status(),
            price_usd: endpoint.price_usd,
            handler_type: endpoint.handler_type,
            runtime: endpoint.handler_type.runtime(),
            pricing_mode: endpoint.pricing_mode(),
            metering: endpoint.metering.clone(),
            url: urls.tool(&endpoint.slug),
            method: "POST",
            tags: endpoint.tags.clone(),
            input_schema: endpoint.input_schema.clone(),
            output_schema: endpoint.output_schema.clone(),
            capabilities,
            owner: match form {
                CatalogForm::Current => Some(endpoint.owner_view()),
                CatalogForm::Legacy => None,
            },
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

/// The body of `GET /ai/endpoints`: the envelope's fixed part, then the records, serialized
/// one at a time straight into the response (a catalog of 100,000 never exists as one JSON
/// tree), then `nextCursor` when the listing is one page.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Listing<'a> {
    #[serde(flatten)]
    head: EnvelopeHead,
    #[schema(value_type = Vec<EndpointRecord>)]
    endpoints: Records<'a>,
    /// The `cursor` of the next page, `null` on a last page; absent when the listing is not
    /// paged.
    #[serde(rename = "nextCursor", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    next_cursor: Option<Value>,
}

/// The catalog envelope of `GET /ai/endpoints` without its records.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct EnvelopeHead {
    /// Always true.
    ok: bool,
    /// `<namespace>.x402.hosted-endpoint-catalog.v1`.
    schema: String,
    dashboard: String,
    create_endpoint: String,
    /// How to take each lifecycle step, by step: `METHOD URL` and who may.
    #[schema(value_type = BTreeMap<String, String>)]
    lifecycle: Map<String, Value>,
    builder_controls: BuilderControls,
    /// Each handler type's description, by handler type.
    #[schema(value_type = BTreeMap<String, String>)]
    supported_handler_types: Map<String, Value>,
    note: String,
    /// Absent in the legacy form.
    #[serde(skip_serializing_if = "Option::is_none")]
    content_safety: Option<EnvelopeSafety>,
}

/// Where a builder finds its controls.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct BuilderControls {
    register: String,
    revenue: String,
    events: String,
    payout_settings: String,
    payouts: String,
    docs: String,
}

/// The envelope's content-safety pointer (current form only).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct EnvelopeSafety {
    policy: String,
    self_serve_rule: &'static str,
}

/// The public records of some endpoints, rendered as they are serialized.
struct Records<'a> {
    endpoints: Vec<Arc<CompiledEndpoint>>,
    urls: &'a Urls,
    form: CatalogForm,
}

impl Serialize for Records<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.endpoints.len()))?;
        for compiled in &self.endpoints {
            seq.serialize_element(&EndpointRecord::new(
                &compiled.endpoint,
                self.urls,
                self.form,
            ))?;
        }
        seq.end()
    }
}

fn envelope_head(urls: &Urls, namespace: &str, form: CatalogForm) -> EnvelopeHead {
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
    EnvelopeHead {
        ok: true,
        schema: format!("{namespace}.x402.hosted-endpoint-catalog.v1"),
        dashboard: u("/dashboard"),
        create_endpoint: u("/ai/endpoints/create"),
        lifecycle,
        builder_controls: BuilderControls {
            register: u("/ai/builders/register"),
            revenue: u("/ai/builders/revenue"),
            events: u("/ai/builders/events"),
            payout_settings: u("/ai/builders/payout-settings"),
            payouts: u("/ai/builders/payouts"),
            docs: u("/guides/x402-agent-payment-infrastructure"),
        },
        supported_handler_types: handler_types,
        note: format!(
            "Invoke any endpoint with POST {{url}} and a JSON body matching its inputSchema. Paid endpoints ({}) \
    answer 402 with x402 payment requirements; retry with a signed payment to receive the result and a receipt.",
            PricingMode::FixedPriceSuccessReceipt.as_str()
        ),
        content_safety: (form == CatalogForm::Current).then(|| EnvelopeSafety {
            policy: u("/ai/content-safety/policy"),
            self_serve_rule: SELF_SERVE_RULE,
        }),
    }
}

/// The catalog filters of `GET /ai/endpoints`, shared with the MCP `catalog_search` tool: all
/// that are given must hold.
#[derive(Clone, Debug, Default)]
pub struct CatalogFilter {
    /// An endpoint carries this tag (ignoring case).
    tag: Option<String>,
    /// Occurs in the slug, title, description or a tag, ignoring case (kept lower-cased).
    needle: Option<String>,
    mode: Option<PricingMode>,
}

impl CatalogFilter {
    pub fn new(tag: Option<&str>, q: Option<&str>, mode: Option<PricingMode>) -> Self {
        Self {
            tag: tag.map(str::to_owned),
            needle: q.map(str::to_lowercase),
            mode,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tag.is_none() && self.needle.is_none() && self.mode.is_none()
    }

    /// Up to `limit` endpoints passing the filter and `keep`, after `after`: through the tag's
    /// own list when filtering by tag, and the trigram index when searching
    /// ([`Registry::search`]).
    pub fn page(
        &self,
        catalog: &Registry,
        after: Option<&CatalogPosition>,
        limit: usize,
        keep: impl Fn(&CompiledEndpoint) -> bool,
    ) -> CatalogPage {
        let tag = self.tag.as_deref();
        let keep = |c: &CompiledEndpoint| {
            keep(c) && self.mode.is_none_or(|m| c.endpoint.pricing_mode() == m)
        };
        match self.needle.as_deref() {
            None => catalog.page(after, tag, limit, keep),
            Some(needle) => catalog.search(after, tag, needle, limit, keep),
        }
    }
}

/// The body of `GET /ai/endpoints`: the catalog envelope around the public record of every
/// listed endpoint that passes `filter`, in catalog order.
pub fn listing<'a>(
    catalog: &Registry,
    urls: &'a Urls,
    namespace: &str,
    form: CatalogForm,
    filter: &CatalogFilter,
) -> Listing<'a> {
    let endpoints = filter
        .page(catalog, None, usize::MAX, |c| c.endpoint.is_listed())
        .endpoints;
    Listing {
        head: envelope_head(urls, namespace, form),
        endpoints: Records {
            endpoints,
            urls,
            form,
        },
        next_cursor: None,
    }
}

/// One page of [`listing`]: the same envelope with `limit` records at most after `after`, and
/// `nextCursor` (`null` on the last page).
pub fn listing_page<'a>(
    catalog: &Registry,
    urls: &'a Urls,
    namespace: &str,
    form: CatalogForm,
    filter: &CatalogFilter,
    after: Option<&CatalogPosition>,
    limit: usize,
) -> Listing<'a> {
    let page = filter.page(catalog, after, limit, |c| c.endpoint.is_listed());
    Listing {
        head: envelope_head(urls, namespace, form),
        endpoints: Records {
            endpoints: page.endpoints,
            urls,
            form,
        },
        next_cursor: Some(json!(page.next.as_ref().map(CatalogPosition::to_cursor))),
    }
}

/// The unfiltered listing, rendered once per catalog generation and form, with an entity tag
/// (a digest of the body, so nodes serving the same catalog give the same tag).
#[derive(Default)]
pub struct ListingCache {
    /// One slot per form: current, legacy.
    slots: Mutex<[Option<RenderedListing>; 2]>,
}

#[derive(Clone)]
pub struct RenderedListing {
    generation: u64,
    pub body: bytes::Bytes,
    /// A strong entity tag, quoted.
    pub etag: String,
}

impl ListingCache {
    /// The full listing in `form`, rendered again only if the catalog changed since last time.
    pub fn full(
        &self,
        catalog: &Registry,
        urls: &Urls,
        namespace: &str,
        form: CatalogForm,
    ) -> RenderedListing {
        let slot = match form {
            CatalogForm::Current => 0,
            CatalogForm::Legacy => 1,
        };
        // Read before rendering: a change during the render makes the next request render again.
        let generation = catalog.generation();
        if let Some(hit) = self.lock()[slot]
            .as_ref()
            .filter(|r| r.generation == generation)
        {
            return hit.clone();
        }
        let body = bytes::Bytes::from(
            serde_json::to_vec(&listing(
                catalog,
                urls,
                namespace,
                form,
                &CatalogFilter::default(),
            ))
            .expect("a JSON value serializes"),
        );
        let digest = Sha256::digest(&body);
        let rendered = RenderedListing {
            generation,
            etag: format!("\"{}\"", hex::encode(&digest[..16])),
            body,
        };
        self.lock()[slot] = Some(rendered.clone());
        rendered
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, [Option<RenderedListing>; 2]> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }
}
