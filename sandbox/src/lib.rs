//! The toolhost sandbox: runs builders' JavaScript handlers in deno_core isolates (QuickJS
//! backend by default), one isolate per endpoint instance, never shared across endpoints.
//!
//! A handler is an ES module whose default export is `async function (req, ctx)`. Its `ctx`
//! is the only way out: `ctx.kv`, `ctx.files`, `ctx.httpGetJson` and `ctx.log`, each gated by
//! the endpoint's [`Capabilities`] inside the Rust op, plus `ctx.respond` and a frozen
//! `ctx.env`. Handlers see standard ECMAScript globals only (no `Deno`, no ops), can import
//! nothing, and run under a heap limit, a wall-clock limit, a result-size limit and log caps.
//!
//! The server calls [`Pool::invoke`] with an [`EndpointCode`] and an [`Invocation`], and
//! implements [`Host`] to provide storage and outbound HTTP.
//!
//! # Layout
//!
//! - `config`: [`PoolConfig`], [`Limits`], [`Capabilities`], [`StorageLimits`].
//! - `error`: [`SandboxError`] (what an invocation can end with) and [`HostError`].
//! - `host`: the [`Host`] trait the server implements.
//! - `invocation`: [`EndpointCode`], [`Invocation`], [`InvocationReport`] and what it holds.
//! - `pool`: [`Pool`], the actor front: admission, instances, eviction, retirement.
//! - `worker`: the isolate thread and its command loop.
//! - `isolate`: building an isolate, loading the module, running one invocation.
//! - `loader`: the module loader that refuses every import.
//! - `limits`: one file per limit policy (`timeout` watchdog, `heap`, `admission`).
//! - `ops`: one `extension!` per `ctx` area (`kv`, `files`, `http`, `log`) and the `bootstrap`
//!   that wires the glue in `runtime-js/`.
//! - [`response`]: the result contract, including the response-header allow-list.
//! - `paths`: [`normalize_file_path`], shared with the server for uploaded assets.

mod config;
mod error;
mod host;
mod invocation;
mod isolate;
mod limits;
mod loader;
mod ops;
mod paths;
mod pool;
pub mod response;
mod worker;

pub use config::{Capabilities, Limits, PoolConfig, StorageLimits};
pub use error::{HostError, SandboxError};
pub use host::{FileEntry, Host, HostFuture, KvEntry, KvPage};
pub use invocation::{
    EndpointCode, HandlerResponse, Invocation, InvocationReport, LogLevel, LogLine,
};
pub use paths::{normalize_file_path, PathError, MAX_FILE_PATH_BYTES};
pub use pool::{EndpointStats, Pool, PoolStats};
