//! Receipts: the public-safe record of each paid call.
//!
//! # Layout
//! - `routes`: `GET /ai/receipts/{receiptId}`.

pub mod routes;
