//! The stored endpoint record. What callers see is derived from it in `view`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::grant::{self, GrantDecision, GrantState};
pub use super::json_text::JsonText;

use crate::money::Usd;
use crate::safety::ContentSafety;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandlerType {
    ReceiptEcho,
    StaticJson,
    X402ReadinessCheck,
    ConversionQuote,
    JsRequestResponse,
}

/// The language of a `js_request_response` endpoint's `source`. TypeScript is transpiled to
/// JavaScript when the sandbox loads it (`js_handlers::typescript`); the owner keeps seeing and
/// editing the TypeScript.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SourceLanguage {
    #[default]
    Javascript,
    Typescript,
}

impl SourceLanguage {
    pub fn is_javascript(&self) -> bool {
        *self == SourceLanguage::Javascript
    }
}

impl HandlerType {
    pub const ALL: [HandlerType; 5] = [
        HandlerType::ReceiptEcho,
        HandlerType::StaticJson,
        HandlerType::X402ReadinessCheck,
        HandlerType::ConversionQuote,
        HandlerType::JsRequestResponse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HandlerType::ReceiptEcho => "receipt_echo",
            HandlerType::StaticJson => "static_json",
            HandlerType::X402ReadinessCheck => "x402_readiness_check",
            HandlerType::ConversionQuote => "conversion_quote",
            HandlerType::JsRequestResponse => "js_request_response",
        }
    }

    /// The runtime identifier of spec 2.2.
    pub fn runtime(self) -> &'static str {
        match self {
            HandlerType::JsRequestResponse => "admin_gated_js_request_response_v1",
            _ => "managed_builtin_handler",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            HandlerType::ReceiptEcho => "Echoes a public-safe request summary and the receipt.",
            HandlerType::StaticJson => "Returns a static JSON response.",
            HandlerType::X402ReadinessCheck => {
                "Inspects a submitted MCP/x402 metadata URL and returns readiness notes, expected discovery URLs and safe next actions."
            }
            HandlerType::ConversionQuote => {
                "Plans the route from a caller's asset to the x402 settlement asset; the same planner and price table as POST /ai/conversion/quote."
            }
            HandlerType::JsRequestResponse => {
                "A builder- or admin-supplied async function (req, ctx) run in an isolated sandbox; ctx offers scoped kv, files, env, httpGetJson and log, each enabled per the capabilities an admin granted."
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active,
    Paused,
}

/// The status an endpoint's record shows: the stored [`Status`], or `awaiting_grant` while an
/// active endpoint lacks capabilities it requested (see `grant`). Only its owner and the admin
/// ever see `awaiting_grant`: such an endpoint is not listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ShownStatus {
    Active,
    Paused,
    AwaitingGrant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PricingMode {
    FreePublicUtility,
    FixedPriceSuccessReceipt,
    /// Charged what the call reports it cost, at most `priceUsd`, after success (x402 `upto`).
    MeteredSuccessReceipt,
}

impl PricingMode {
    pub const ALL: [PricingMode; 3] = [
        PricingMode::FreePublicUtility,
        PricingMode::FixedPriceSuccessReceipt,
        PricingMode::MeteredSuccessReceipt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PricingMode::FreePublicUtility => "free_public_utility",
            PricingMode::FixedPriceSuccessReceipt => "fixed_price_success_receipt",
            PricingMode::MeteredSuccessReceipt => "metered_success_receipt",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == text)
    }
}

/// How a metered endpoint charges (`pricingMode` `metered_success_receipt`): what it counts,
/// the least a successful call costs, and what one unit costs when a handler reports units
/// only. Its `priceUsd` is the most one call can cost: what the payer signs as a maximum.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Metering {
    /// What a unit is, for agents deciding before they pay ("1k tokens", "page fetched").
    pub unit: String,
    /// What a successful call that reports less (or nothing) is charged; 0 by default.
    #[serde(default)]
    #[schema(schema_with = crate::money::usd_schema)]
    pub minimum_usd: Usd,
    /// The price of one unit, for a handler that reports units and no amount (a native
    /// built-in); a JS handler's `ctx.charge` names its amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::money::optional_usd_schema)]
    pub unit_price_usd: Option<Usd>,
}

/// The JS capabilities of spec 2.1 (`kv`, `files`, `httpGetJson`, `logs`) and `fetch`, the
/// sandbox's own type so what the catalog shows is exactly what the sandbox enforces. Built-in handlers have none.
pub use sandbox::Capabilities;

/// Per-endpoint sandbox limits, set by the admin only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeLimits {
    /// Isolate heap limit in MiB.
    pub memory_mb: u32,
    /// Wall-clock limit of one invocation in milliseconds.
    pub timeout_ms: u32,
}

impl RuntimeLimits {
    pub const MEMORY_MB: std::ops::RangeInclusive<u32> = 8..=1024;
    pub const TIMEOUT_MS: std::ops::RangeInclusive<u32> = 10..=60_000;

    pub fn is_valid(&self) -> bool {
        Self::MEMORY_MB.contains(&self.memory_mb) && Self::TIMEOUT_MS.contains(&self.timeout_ms)
    }
}

/// Who may change an endpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum Owner {
    /// Seeded from fixtures.
    System,
    Admin,
    Builder(String),
}

/// The newest revision of an endpoint, waiting for the admin's grant of what it asks for
/// beyond what the endpoint holds, while the serving revision serves on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub revision: u64,
    /// Its requested capabilities (the content is in its `revision::Revision`).
    pub requested: Capabilities,
    /// The admin's answer to it, once there is one.
    #[serde(default)]
    pub decision: Option<GrantDecision>,
}

/// What one revision serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Content {
    pub title: String,
    pub description: String,
    pub tags: Vec<String>,
    pub price_usd: Usd,
    /// `Some` when the price is metered: `price_usd` is then the most a call costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metering: Option<Metering>,
    pub source: Option<String>,
    #[serde(default)]
    pub source_language: SourceLanguage,
    pub response: Option<JsonText>,
    pub input_schema: JsonText,
    pub output_schema: JsonText,
    pub example_input: Option<JsonText>,
    pub requested_capabilities: Capabilities,
    pub allowed_hosts: Option<Vec<String>>,
    pub env: BTreeMap<String, String>,
}

impl Content {
    /// What `endpoint` serves now.
    pub fn of(endpoint: &Endpoint) -> Self {
        Content {
            title: endpoint.title.clone(),
            description: endpoint.description.clone(),
            tags: endpoint.tags.clone(),
            price_usd: endpoint.price_usd,
            metering: endpoint.metering.clone(),
            source: endpoint.source.clone(),
            source_language: endpoint.source_language,
            response: endpoint.response.clone(),
            input_schema: endpoint.input_schema.clone(),
            output_schema: endpoint.output_schema.clone(),
            example_input: endpoint.example_input.clone(),
            requested_capabilities: endpoint.requested_capabilities,
            allowed_hosts: endpoint.allowed_hosts.clone(),
            env: endpoint.env.clone(),
        }
    }

    /// Makes `endpoint` serve this content (what the revision does not cover stays).
    pub fn apply(self, endpoint: &mut Endpoint) {
        endpoint.title = self.title;
        endpoint.description = self.description;
        endpoint.tags = self.tags;
        endpoint.price_usd = self.price_usd;
        endpoint.metering = self.metering;
        endpoint.source = self.source;
        endpoint.source_language = self.source_language;
        endpoint.response = self.response;
        endpoint.input_schema = self.input_schema;
        endpoint.output_schema = self.output_schema;
        endpoint.example_input = self.example_input;
        endpoint.requested_capabilities = self.requested_capabilities;
        endpoint.allowed_hosts = self.allowed_hosts;
        endpoint.env = self.env;
    }
}

/// A gradual rollout: kept revision `revision` serves `share` percent of calls, chosen by
/// who pays (the same payer always reaches the same revision), beside the serving revision,
/// until its owner promotes it or ends the rollout. Its content is carried here so every node
/// routes without reading the revision back.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollout {
    /// Names this rollout's tallies, apart from an earlier rollout's of the same revision.
    pub id: String,
    pub revision: u64,
    /// The percentage of payers it serves, 1-100.
    pub share: u8,
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    pub content: Content,
}

/// Who owns an endpoint, as callers see it: a builder by id and display name, or the service
/// itself (`admin`, `system`), so an agent can pin whom it pays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct OwnerView {
    /// `builder`, `admin` or `system`.
    #[schema(value_type = String)]
    pub kind: &'static str,
    /// The builder's id; `null` for the service's own endpoints.
    #[schema(required = true)]
    pub id: Option<String>,
    /// The builder's display name; `null` for the service's own endpoints.
    #[schema(required = true)]
    pub name: Option<String>,
}

/// A hosted endpoint as stored. Private fields (source, env) never reach public views; the
/// owner does, by id and display name only ([`OwnerView`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    pub id: String,
    pub slug: String,
    pub title: String,
    pub description: String,
    pub status: Status,
    /// The price of a call; for a metered endpoint, the most one call can cost.
    pub price_usd: Usd,
    /// `Some` when the price is metered (`metered_success_receipt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metering: Option<Metering>,
    pub handler_type: HandlerType,
    #[serde(default)]
    pub tags: Vec<String>,
    pub input_schema: JsonText,
    pub output_schema: JsonText,
    /// Capabilities the serving revision asks for; the sandbox gets those also granted.
    #[serde(default)]
    pub requested_capabilities: Capabilities,
    /// What the admin has granted the endpoint. Kept when a revision stops asking for some,
    /// so rolling back to a revision that used them needs no new grant.
    #[serde(default)]
    pub granted_capabilities: Capabilities,
    /// The admin's last answer to the capability request; cleared by a new request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_decision: Option<GrantDecision>,
    /// `None` on catalogued and admin-created endpoints; the scanner's verdict on builder content.
    #[serde(default)]
    pub content_safety: Option<ContentSafety>,
    /// Sandbox limits set by the admin; `None`: the sandbox's defaults.
    #[serde(default)]
    pub limits: Option<RuntimeLimits>,
    /// Bumped by every change of the record (a deploy, a grant, a secrets change, a pause),
    /// so the sandbox and the payment offers retire what they built from an older one.
    /// Stored as `revision` by releases before revisions were kept.
    #[serde(default, alias = "revision")]
    pub generation: u64,
    /// The number of the revision serving: the record's content is its ([`super::revision`]).
    /// 0 in a record stored before revisions were kept, until `Registry::load` records it.
    #[serde(default)]
    pub serving_revision: u64,
    /// The number of the newest revision (serving, waiting, or neither after a rollback).
    #[serde(default)]
    pub latest_revision: u64,
    /// The newest revision when it waits for the admin's grant while the serving one serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// A kept revision taking a share of calls beside the serving one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<Rollout>,
    pub owner: Owner,
    /// The owning builder's display name when the endpoint was created, shown with the owner
    /// so an agent can tell whom it pays (`None` for the admin and the seeded catalog).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_name: Option<String>,
    /// JS source of `js_request_response` handlers.
    #[serde(default)]
    pub source: Option<String>,
    /// The language of `source`.
    #[serde(default, skip_serializing_if = "SourceLanguage::is_javascript")]
    pub source_language: SourceLanguage,
    /// The fixed response of `static_json` handlers.
    #[serde(default)]
    pub response: Option<JsonText>,
    /// Non-secret environment for `ctx.env`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Hosts `ctx.httpGetJson` may reach (exact names or `*.example.com`); `None`: any public host.
    /// `fetch` reaches these hosts only (`None`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_hosts: Option<Vec<String>>,
    /// A request body that passes `input_schema`, shown in the catalog as a copyable example.
    #[serde(default)]
    pub example_input: Option<JsonText>,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub updated_at: OffsetDateTime,
}

impl Endpoint {
    /// Derived from the price and the metering so they can never disagree (spec 2.1 rules 1
    /// and 2; a metered endpoint is never free).
    pub fn pricing_mode(&self) -> PricingMode {
        if self.price_usd.is_zero() {
            PricingMode::FreePublicUtility
        } else if self.metering.is_some() {
            PricingMode::MeteredSuccessReceipt
        } else {
            PricingMode::FixedPriceSuccessReceipt
        }
    }

    pub fn is_paid(&self) -> bool {
        !self.price_usd.is_zero()
    }

    /// Whether the public sees it: everything except builder endpoints held for or refused by
    /// review, and those awaiting a capability grant.
    pub fn is_listed(&self) -> bool {
        self.passes_review() && !self.awaits_grant()
    }

    /// Not held for, nor refused by, content-safety review (catalogued and admin-created
    /// endpoints are never reviewed).
    pub fn passes_review(&self) -> bool {
        self.content_safety
            .as_ref()
            .is_none_or(ContentSafety::is_listed)
    }

    /// The requested capabilities the admin has not granted.
    pub fn missing_capabilities(&self) -> Capabilities {
        grant::missing(&self.requested_capabilities, &self.granted_capabilities)
    }

    /// What the serving revision runs with: what it asks for and the endpoint was granted.
    pub fn capabilities(&self) -> Capabilities {
        grant::both(&self.requested_capabilities, &self.granted_capabilities)
    }

    /// Whether the pending revision asks for nothing the endpoint does not hold now (the
    /// admin granted it), so it can serve.
    pub fn pending_is_granted(&self) -> bool {
        self.pending.as_ref().is_some_and(|p| {
            grant::missing(&p.requested, &self.granted_capabilities) == Capabilities::default()
        })
    }

    /// Whether some requested capability is not granted: the endpoint is not listed and calls
    /// are refused (503 `awaiting_grant`) until the admin grants them or the owner stops
    /// asking. Its handler would only fail with `capability_denied` otherwise.
    pub fn awaits_grant(&self) -> bool {
        self.missing_capabilities() != Capabilities::default()
    }

    /// Where its capability request stands.
    pub fn grant_state(&self) -> GrantState {
        grant::state(&self.missing_capabilities(), self.grant_decision.as_ref())
    }

    /// The status its record shows.
    pub fn shown_status(&self) -> ShownStatus {
        match self.status {
            Status::Paused => ShownStatus::Paused,
            Status::Active if self.awaits_grant() => ShownStatus::AwaitingGrant,
            Status::Active => ShownStatus::Active,
        }
    }

    /// Who owns it, as the catalog, the 402 and MCP name them.
    pub fn owner_view(&self) -> OwnerView {
        let (kind, id, name) = match &self.owner {
            Owner::Builder(id) => ("builder", Some(id.clone()), self.owner_name.clone()),
            Owner::Admin => ("admin", None, None),
            Owner::System => ("system", None, None),
        };
        OwnerView { kind, id, name }
    }

    /// This endpoint as its kept revision `number` (with `content`) runs when it is not the
    /// serving one (a test call of it, a rollout's share): on the endpoint's data, grant and
    /// limits, asking only for what the endpoint holds (what it asks for beyond that is
    /// refused, `capability_denied`, when its handler uses it), and in no rollout of its own.
    pub fn as_kept(&self, content: Content, number: u64) -> Endpoint {
        let mut ep = self.clone();
        content.apply(&mut ep);
        ep.serving_revision = number;
        ep.requested_capabilities = ep.capabilities();
        ep.rollout = None;
        ep
    }

    /// The builder that owns it, if any.
    pub fn owner_builder(&self) -> Option<&str> {
        match &self.owner {
            Owner::Builder(id) => Some(id),
            Owner::System | Owner::Admin => None,
        }
    }
}
