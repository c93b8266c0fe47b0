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
//! stream and session teardown) answer 405. It speaks MCP 2026-07-28 (no `initialize`, the
//! revision in every request's `_meta`) and, beside it, the 2025 revisions that `initialize`
//! negotiates, deciding per request (`era`).
//!
//! The protocol is implemented here rather than with the `rmcp` SDK: the surface is three
//! methods per era, while the route must keep this service's contract (OpenAPI, metrics,
//! deadline, exact revision set, payment `_meta` into the shared pipeline); the costs of each
//! are weighed in `docs/mcp.md`.
//!
//! # Layout
//! - `transport`: the HTTP side: origin, content negotiation, JSON or SSE.
//! - `era`: which revision a request speaks (envelope and `MCP-Protocol-Version`), and the
//!   2026-07-28 header checks (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
//! - `protocol`: JSON-RPC messages, error codes, supported revisions.
//! - `methods`: `initialize`, `ping`, `server/discover`, `tools/list`, `tools/call` dispatch.
//! - `tools`: tool definitions for catalog endpoints, paging, and the service tools (catalog
//!   search, receipt lookup, the three quotes).
//! - `payment`: `_meta` payment into pipeline headers, and the HTTP outcome into a tool result.

mod era;
mod methods;
mod payment;
mod protocol;
mod tools;
pub mod transport;
