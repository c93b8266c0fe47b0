//! HTTP plumbing: the router, the error shape, extractors, metrics and the OpenAPI document.
//!
//! # Layout
//! - `error`: [`error::ApiError`], the one JSON error of every route.
//! - `extract`: extractors whose rejections are `ApiError`s.
//! - `metrics`: Prometheus counters and histograms, and `/metrics`.
//! - `openapi`: the generated OpenAPI 3.1 document.
//! - `rate_limit`: per-client token buckets for anonymous writes.
//! - `router`: `build_router`, every route and middleware in one place.

pub mod error;
pub mod extract;
pub mod metrics;
pub mod openapi;
pub mod rate_limit;
mod router;

pub use router::{build_router, settlement_begins};
