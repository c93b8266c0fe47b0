//! The native built-in handlers that need nothing but the endpoint and the call: they run in
//! the server, beside the sandboxed JS handlers (the readiness check and the conversion quote
//! are built-ins too, and live with their domains, `readiness` and `quotes`).
//!
//! - `receipt_echo`: echoes a summary of the request; the free call still gets a receipt.
//! - `static_json`: answers the endpoint's configured JSON.

pub mod receipt_echo;
pub mod static_json;
