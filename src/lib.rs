//! toolhost: a host for paid AI/API tools. Agents discover endpoints in the catalog, pay with
//! x402, call them over HTTP or MCP and get a verifiable receipt; builders publish JavaScript
//! handlers that run in the `sandbox` crate's isolates beside native built-in handlers.
//!
//! # Layout, by layer (bottom first; a module uses its own layer and those below, checked by
//! `tests/architecture.rs`; `docs/architecture.md` follows one paid call through them)
//! - Values and errors, the crate `toolhost-values`: `error` (the one error shape,
//!   [`error::ErrorCode`]), `money`, `timestamp`, `urls`, `keyfile`, `metrics` (the counters);
//!   here beside them, `config` (every setting). In tests only, `arbitrary` (proptest
//!   strategies, `docs/fuzzing.md`) from the test kit, `toolhost-testkit`.
//! - The store, the crate `toolhost-store`: `store` (the trait, sled and PostgreSQL), `paging`,
//!   `keyring` (the service's own keys, per data dir or shared by a cluster).
//! - Domains, each taking the parts it uses: `net` (the SSRF-guarded outbound client),
//!   `rate_limit`, `safety` (content safety), `readiness` (the x402 readiness check),
//!   `handler_data` (handlers' kv and files, with quotas), `catalog`, `builders` (identity, keys,
//!   [`builders::Caller`]), `events`, `logs`, `tallies` (a rollout's per-revision counts), `secrets`, `receipts`, `revenue` (the sale
//!   ledger, payouts), `js_handlers` (JS endpoints in the sandbox's isolate pool), `activity` (the recorder of
//!   log entries and events),
//!   `endpoints` (the lifecycle), `x402` (the protocol: headers, requirements, verify,
//!   facilitators), `payments` (selling with it: developer credit, the gate, nonces, recovery),
//!   `builtins` (native handlers), `quotes`, `backup` (the embedded store's backups).
//! - Composition: `app`, the services built once at start-up.
//! - The call pipeline: `pipeline` (prepare, authorize payment, run, settle, receipt);
//!   `maintenance` (background sweeps).
//! - Transports: `http` (route handlers, extractors, metrics middleware, OpenAPI), `mcp`,
//!   `web` (dashboard and guide), `well_known`.
//! - `router` (every route and middleware), then `server` (binding, start-up, shutdown) and
//!   beside it `cli`, the builder's command line: a client of the HTTP API (`dev` runs a
//!   `server` of its own).

// The layers below the service are crates of their own (Cargo keeps them from reaching up);
// they keep their paths here, so `crate::store` is the store wherever the service names it.
pub use toolhost_store::{self as store, keyring, paging};
#[cfg(test)]
use toolhost_testkit::arbitrary;
pub use toolhost_values::{error, keyfile, metrics, money, timestamp, urls};
pub use toolhost_x402 as x402;

pub mod activity;
pub mod app;
pub mod backup;
pub mod builders;
pub mod builtins;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod endpoints;
pub mod events;
pub mod handler_data;
pub mod http;
pub mod js_handlers;
pub mod logs;
pub mod maintenance;
pub mod mcp;
pub mod net;
pub mod payments;
pub mod pipeline;
pub mod quotes;
pub mod rate_limit;
pub mod readiness;
pub mod receipts;
pub mod revenue;
pub mod router;
pub mod safety;
pub mod secrets;
pub mod server;
pub mod tallies;
pub mod web;
pub mod well_known;
