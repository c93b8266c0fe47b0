//! The catalog of hosted endpoints: the stored records, their public views, and the envelope of
//! `GET /ai/endpoints` (spec 2.1 and 2.3).
//!
//! # Layout
//! - `model`: the stored [`Endpoint`] and its enums.
//! - `grant`: capability requests and the admin's answer (`awaiting_grant`).
//! - `json_text`: JSON values of a record kept as their compact text.
//! - `view`: the public record and the catalog envelope, current and legacy forms.
//! - `revision`: every deploy as a numbered, immutable record; the one waiting for a grant.
//! - `registry`: the write-through in-memory index over the store, with compiled schemas.
//! - `schema`: JSON Schema compilation and violations with JSON pointers.
//! - `search`: what `q` searches, and its trigram index.
//! - `seed`: the catalogued endpoints loaded from `fixtures/` on first start.

pub mod grant;
mod json_text;
mod model;
mod registry;
pub mod revision;
mod schema;
mod search;
mod seed;
mod view;

pub use grant::{GrantDecision, GrantState};
pub use model::{
    Capabilities, Endpoint, HandlerType, JsonText, Metering, Owner, OwnerView, PricingMode,
    Rollout, RuntimeLimits, ShownStatus, SourceLanguage, Status,
};
pub use registry::{CatalogError, CatalogPage, CatalogPosition, CompiledEndpoint, Registry};
pub use schema::{
    example_for_schema, input_from_query, json_schema_schema, optional_json_schema_schema,
    Violation, Violations,
};
pub use seed::{seed_catalog, SeedError};
pub use view::{
    listing, listing_page, CatalogFilter, CatalogForm, EndpointRecord, Listing, ListingCache,
    RenderedListing,
};
