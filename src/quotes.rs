//! Quotes: what a call will cost before it is made.
//!
//! - `hosted`: `POST /ai/quote`, an all-in quote for one of our endpoints with the exact x402
//!   requirements and the handoff (URL, method, headers); `/ai/invoke` honours its `quoteId`.
//! - `conversion`: `POST /ai/conversion/quote`, the route from a caller's asset to the
//!   settlement asset, priced from the configured table.
//! - `external`: `POST /x402/quote`, a third-party seller's 402 normalized to one shape.

pub mod conversion;
pub mod external;
pub mod hosted;

pub use hosted::sweep_expired;
