//! The HTTP transport: route handlers, credential extractors, metrics middleware and the
//! OpenAPI document. The router that mounts them (and MCP, the web pages) is `crate::router`.
//!
//! # Layout
//! - `admission`: what a request may cost before a handler sees it (body budget, slow bodies,
//!   JSON shape, connections per client).
//! - `auth`: who is calling, as extractors (admin, builder, either).
//! - `extract`: extractors whose rejections are `ApiError`s.
//! - `metrics`: the request-metrics middleware and `/metrics`.
//! - `openapi`: the generated OpenAPI 3.1 document.
//! - `routes`: the route handlers of every domain.

pub mod admission;
pub mod auth;
pub mod extract;
pub mod metrics;
pub mod openapi;
pub mod routes;
