//! toolhost: a host for paid AI/API tools. Agents discover endpoints in the catalog, pay with
//! x402, call them over HTTP or MCP and get a verifiable receipt; builders publish JavaScript
//! handlers that run in the `sandbox` crate's isolates beside native built-in handlers.
//!
//! # Layout
//! - `config`: every setting, in one struct.
//! - `app`: the shared state handed to handlers; `server`: binding, start-up and shutdown.
//! - `http`: router, the one error shape, extractors, metrics, OpenAPI.
//! - `store`: the storage trait, its embedded sled engine and the shared PostgreSQL engine.
//! - `catalog`: endpoint records, the catalog envelope, seeding from `fixtures/`.
//! - `builders`: builder identity, keys and registration.
//! - `endpoints`: the endpoint lifecycle (create, update, pause, delete, review) and handler files.
//! - `secrets`, `logs`, `events`: per-endpoint encrypted secrets and logs; the builder event feed.
//! - `pipeline`: one call of an endpoint: prepare, authorize payment, run, settle, receipt.
//! - `builtins`: the native built-in handlers (receipt echo, static JSON).
//! - `runtime`: running JS endpoints in the sandbox's isolate pool.
//! - `storage`: handlers' kv entries and files, with per-endpoint and per-builder quotas.
//! - `readiness`: the `x402_readiness_check` handler.
//! - `net`: the SSRF-guarded client for every outbound request made for a caller.
//! - `mcp`: the MCP endpoint (Streamable HTTP JSON-RPC), the catalog as tools.
//! - `payments`: x402 (v1 and v2) and developer credit, gated around paid work.
//! - `quotes`: hosted, conversion and external x402 quotes.
//! - `revenue`: the sale ledger behind builders' revenue and payouts.
//! - `receipts`, `safety`: signed receipts; the content-safety policy and scanner.
//! - `keyring`: the service's own keys, per data dir or shared by a cluster (`keyfile`: the files).
//! - `money`, `timestamp`, `urls`, `paging`: small shared value types and helpers.
//! - `web`: the dashboard and the guide, embedded from `web/`.
//! - `maintenance`: background sweeps (stale credit holds, expired quotes, old free receipts
//!   and events).
//! - `well_known`: toolhost's own `/.well-known/x402` and `/.well-known/mcp/server.json`.

pub mod app;
pub mod builders;
pub mod builtins;
pub mod catalog;
pub mod config;
pub mod endpoints;
pub mod error;
pub mod events;
pub mod http;
pub mod keyfile;
pub mod keyring;
pub mod logs;
pub mod maintenance;
pub mod mcp;
pub mod metrics;
pub mod money;
pub mod net;
pub mod paging;
pub mod payments;
pub mod pipeline;
pub mod quotes;
pub mod rate_limit;
pub mod readiness;
pub mod receipts;
pub mod recorder;
pub mod revenue;
pub mod router;
pub mod runtime;
pub mod safety;
pub mod secrets;
pub mod server;
pub mod storage;
pub mod store;
pub mod timestamp;
pub mod urls;
pub mod web;
pub mod well_known;
