//! HTTP plumbing: the router, extractors, metrics and the OpenAPI document.
//!
//! # Layout
//! - `auth`: who is calling, as extractors (admin, builder, either).
//! - `extract`: extractors whose rejections are `ApiError`s.
//! - `metrics`: the request-metrics middleware and `/metrics`.
//! - `openapi`: the generated OpenAPI 3.1 document.
//! - `rate_limit`: per-client token buckets for anonymous writes.
//! - `routes`: the route handlers of every domain.
//! - `router`: `build_router`, every route and middleware in one place.

pub mod auth;
pub mod extract;
pub mod metrics;
pub mod openapi;
pub mod rate_limit;
mod router;
pub mod routes;

pub use router::build_router;
