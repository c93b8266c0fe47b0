//! Outbound HTTP on a caller's behalf (readiness checks, handler `ctx.httpGetJson`, external
//! x402 quotes), guarded against server-side request forgery.
//!
//! A caller chooses the URL, so without a guard the service would fetch its own admin routes,
//! cloud metadata (`169.254.169.254`) or anything else on the internal network for them. Every
//! such request goes through [`OutboundClient`], which allows only http(s) to public addresses,
//! opens connections (one pool for all requests) only to addresses its resolver checked,
//! re-checks every redirect hop, and caps time and response size.
//!
//! # Layout
//! - `guard`: which addresses and hosts may be reached.
//! - `client`: the shared client and its checking resolver, the request loop (check, send,
//!   redirect, read with limits).
//! - `error`: [`NetError`] and its API error mapping.

mod client;
mod error;
mod guard;
#[cfg(test)]
pub(crate) mod test_server;
#[cfg(test)]
mod tests;

pub use client::{
    FetchedResponse, OpenResponse, OutboundClient, OutboundMethod, OutboundRequest, StreamRequest,
};
pub use error::NetError;
pub use guard::check_ip;
