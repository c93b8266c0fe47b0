//! Invoking hosted endpoints: `GET`/`POST /tools/{slug}` and `POST /ai/invoke`.
//!
//! The route reads the input (JSON body, or the query string for GET), validates it against the
//! endpoint's `inputSchema`, applies the endpoint's status and price, and dispatches on its
//! handler type. Built-in handlers run natively here; JS handlers run in the sandbox.
//!
//! # Layout
//! - `routes`: the `/tools/{slug}` handlers and the invocation pipeline.
//! - `invoke`: `POST /ai/invoke`, with SSE streaming for long-running endpoints.
//! - `receipt_echo`, `static_json`: the native built-in handlers.
//! - `record`: the invocation record (endpoint logs, owner events) every call leaves.

pub mod invoke;
mod receipt_echo;
mod record;
pub mod routes;
mod static_json;
