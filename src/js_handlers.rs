//! Running `js_request_response` endpoints in the sandbox's isolate pool.
//!
//! The `sandbox` crate knows nothing of the catalog or the store; this module is the glue:
//! it turns an endpoint and a call into the sandbox's [`sandbox::EndpointCode`] and `req`
//! object, gives the pool a [`host::StoreHost`] for `ctx.kv`, `ctx.files`, `ctx.httpGetJson`
//! and `fetch`,
//! and maps the outcome onto HTTP.
//!
//! # Layout
//! - `host`: the store- and network-backed [`sandbox::Host`].
//! - `fetch`: handlers' `fetch` requests and their response bodies, held until read.
//! - `run`: [`EndpointRuntime`], one call of an endpoint in the pool, from endpoint and call to
//!   HTTP status, body and headers.
//! - `check`: the publish-time check of a module ([`EndpointRuntime::check`]).
//! - `draft`: a test run of an unpublished module ([`EndpointRuntime::run_draft`]).
//! - `slots`: the sandbox slots calls run in (an endpoint's, a tried revision's, a draft's).
//! - `typescript`: TypeScript sources transpiled to the JS the sandbox runs, and the source map
//!   that points the sandbox's positions back at the TypeScript.

mod check;
mod draft;
mod fetch;
pub mod host;
mod run;
mod slots;
mod typescript;

pub use check::{CheckError, CompileFailure};
pub use draft::{Draft, DraftRun};
pub use run::{EndpointRuntime, HandlerOutput, HandlerRequest, JsOutcome};
pub use slots::DRAFT_SCRATCH_PREFIX;
