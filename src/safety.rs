//! Content safety: the published policy (and, with builder endpoints, the scanner applying it).
//!
//! # Layout
//! - `policy`: the rules, each with a stable id, a category and an outcome.
//! - `routes`: `GET /ai/content-safety/policy`.

pub mod policy;
pub mod routes;
