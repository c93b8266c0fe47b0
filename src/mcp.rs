//! The MCP endpoint: `POST /ai/mcp`, Streamable HTTP JSON-RPC, with the catalog as tools.
//!
//! Every active catalog endpoint is a tool named by its slug; calling it goes through the same
//! invocation pipeline as `POST /tools/{slug}` ([`crate::pipeline::call`]), so status,
//! input validation, payment and receipts cannot differ between HTTP and MCP. Paid tools follow
//! the x402 MCP transport: an unpaid call returns the payment requirements as an error result,
//! a paid call carries its payment in `_meta["x402/payment"]`.
//!
//! The server is stateless: it issues no session id and keeps nothing between requests, so any
//! instance behind a load balancer answers any request, and `GET`/`DELETE` (the server-to-client
//! stream and session teardown) answer 405.
//!
//! The protocol is implemented here rather than with the `rmcp` SDK: the surface is five
//! methods, while the route must keep this service's contract (OpenAPI, metrics, deadline,
//! exact revision set, payment headers into the shared pipeline); see `docs/mcp.md`.
//!
//! # Layout
//! - `transport`: the HTTP side: origin, content negotiation, revision header, JSON or SSE.
//! - `protocol`: JSON-RPC messages, error codes, supported revisions.
//! - `methods`: `initialize`, `ping`, `tools/list`, `tools/call` dispatch.
//! - `tools`: tool definitions for catalog endpoints, paging, and the service tools (catalog
//!   search, receipt lookup, the three quotes).
//! - `payment`: `_meta` payment into pipeline headers, and the HTTP outcome into a tool result.

mod era;
mod methods;
mod payment;
mod protocol;
mod tools;
pub mod transport;
