//! Quotes: what a call will cost before it is made.
//!
//! - `hosted`: `POST /ai/quote`, an all-in quote for one of our endpoints with the exact x402
//!   requirements and the handoff (URL, method, headers); `/ai/invoke` honours its `quoteId`.
//! - `conversion`: `POST /ai/conversion/quote`, the route from a caller's asset to the
//!   settlement asset, priced from the configured table.
//! - `external`: `POST /x402/quote`, a third-party seller's 402 normalized to one shape.

//!
//! Each use case takes a transport-neutral request and the service's [`Parts`] it reads; the
//! HTTP routes (`http/routes/quotes.rs`) and the MCP tools (`mcp/tools.rs`) only call them.
//! Each issues or fetches something for an anonymous caller, so each spends one of the
//! caller's anonymous-write tokens (`rate_limit`).

pub mod conversion;
pub mod external;
pub mod hosted;

pub use hosted::sweep_expired;

use crate::catalog::Registry;
use crate::config::Config;
use crate::net::OutboundClient;
use crate::payments::Payments;
use crate::store::Store;
use crate::urls::Urls;

/// What the quote use cases read of the service.
pub struct Parts<'a> {
    pub catalog: &'a Registry,
    pub store: &'a dyn Store,
    pub urls: &'a Urls,
    pub config: &'a Config,
    pub payments: &'a Payments,
    pub outbound: &'a OutboundClient,
}
