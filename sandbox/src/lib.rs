//! The toolhost sandbox: runs builders' JavaScript handlers in deno_core isolates (QuickJS
//! backend by default), one isolate per endpoint instance, never shared across endpoints.
//!
//! # Handler contract
//!
//! A handler is one ES module whose default export is called with the request and a `ctx`:
//!
//! ```js
//! export default async function (req, ctx) {
//!   const cached = await ctx.kv.get(req.input.city);            // needs `kv`
//!   if (cached) return ctx.respond(200, cached, { "cache-control": "max-age=60" });
//!   const data = await ctx.httpGetJson(`https://api.example.com/w?q=${req.input.city}`,
//!     { headers: { authorization: ctx.env.API_KEY }, timeoutMs: 1500 }); // `httpGetJson`
//!   ctx.log("fetched", req.input.city);                          // needs `logs`
//!   await ctx.kv.set(req.input.city, data, { ttlSeconds: 60 });
//!   return data;                                                 // 200, JSON body
//! }
//! ```
//!
//! - The default export may instead be a Workers-style object whose `fetch` method is called
//!   as `fetch(request, env, ctx)`: a standard `Request` (POST to `req.url` with `req.headers`
//!   and `req.input` as its JSON body), `ctx.env`, and `ctx` with Workers' `waitUntil` (awaited
//!   before the answer, within the time limit) beside toolhost's members.
//! - `req` is the JSON the server builds (`{ input, method, query, headers, endpoint: { slug },
//!   url, requestId, payment }`). The settled value is the body of a 200 response, as JSON
//!   (`undefined` is `null`); `ctx.respond(status, body, headers?)` picks the status
//!   (`200..=599`) and headers from the allow-list documented on [`HandlerResponse`]; anything
//!   else is [`SandboxError::InvalidResponse`].
//! - A thrown error fails the invocation with [`SandboxError::HandlerError`] carrying its
//!   message only; an escaping `capability_denied` error is [`SandboxError::CapabilityDenied`];
//!   a thrown value whose integer `status` is in `400..=499` (a thrown `Response` too) is
//!   [`SandboxError::HandlerRefused`], the handler refusing the caller's request.
//!   Where it arose in the handler's module (line, column, its frames there) is in the
//!   report's [`SourceTrace`], for the endpoint's owner; so is a compile error's position.
//!   [`Sandbox::check`] loads a module without calling it (the publish-time check).
//! - `ctx.kv` (`get`, `set(key, value, { ttlSeconds }?)`, `delete`, `list({ prefix, limit,
//!   cursor })`), `ctx.files` (`read`, `readJson`, `write`, `list`, `delete`, with paths checked
//!   by [`normalize_file_path`]), `ctx.httpGetJson(url, { headers, timeoutMs })` and `ctx.log`
//!   (`ctx.log(...)`, `.info`, `.warn`, `.error`; `console.*` writes there too) are gated by the
//!   endpoint's [`Capabilities`]. The check is in Rust, inside each op: a call without the
//!   capability rejects with an `Error` whose `code` is `capability_denied`. Other op errors
//!   carry `code` `invalid_argument`, `too_large`, or the [`HostError`] code.
//! - The global `fetch` (capability `fetch`) sends any request through the host
//!   ([`Host::fetch_start`]) and answers a standard `Response` whose body is pulled from the
//!   host a chunk at a time ([`Host::fetch_read`]); its caps are [`FetchLimits`], its time the
//!   call's, and what a call leaves open is cancelled when it ends (`ops/fetch.rs`).
//! - `ctx.env` is the endpoint's env, frozen; `ctx` and its members are frozen too.
//! - Globals are standard ECMAScript plus `console`, WebCrypto (`crypto.getRandomValues`,
//!   `crypto.randomUUID`, `crypto.subtle` with digest, HMAC, Ed25519 and ECDSA P-256; every
//!   handler has it, no capability needed) and the web platform's (timers, `URL`, encoding,
//!   events, streams, `Blob`, `Headers`/`Request`/`Response`: `ops/web.rs`,
//!   docs/handler-platform.md): no `Deno`, no ops, no `SharedArrayBuffer`/`Atomics`/
//!   `WebAssembly`. The module can import
//!   nothing, statically or with `import()`. Module state persists between invocations of the
//!   same isolate (until it is recycled); unhandled rejections are logged, not fatal.
//! - Limits: heap per isolate, wall-clock time per invocation (covering awaits), result size,
//!   log lines and bytes, concurrent invocations per endpoint ([`PoolConfig`], [`Limits`]).
//!
//! # Time limit and grace
//!
//! At its time limit a call's JS is terminated (the watchdog's `terminate_execution`), which
//! the engine honours at its next check: in a loop, a call, an op. An engine busy elsewhere (in
//! garbage collection near its heap limit, in a long native operation, or a [`Host`] method
//! that blocks its thread) does not check, so the caller's wait has a hard deadline of its own
//! on the host side: [`Pool::invoke`] answers at the latest at the time limit plus
//! [`PoolConfig::timeout_grace`] (250 ms by default) after the call started, with `Timeout`
//! (`ResourceLimit` if the heap limit was reached), whatever the engine is doing. The thread
//! still busy is *abandoned*: it never serves another call (calls queued behind it answer
//! `Timeout` too, at their own time limit plus the grace, without running), its endpoint's next
//! call starts a fresh isolate at once, and when the thread comes back it drops its isolate
//! and ends. Until then it counts against every limit as a live isolate of its endpoint (its
//! memory is still held); at [`PoolConfig::max_abandoned_isolates`] (16) no new isolate starts,
//! so cold starts wait (up to their time limit) and then answer `Overloaded`, until one ends. [`PoolStats::abandoned_isolates`] and
//! [`PoolStats::abandoned`] count them, and each is logged at error level.
//!
//! A call's time starts when its isolate thread takes it (not while it is queued behind
//! another call of the same instance); a cold start loads the module under its own time limit
//! first. The sandbox's own work, which runs no handler code (building a runtime, the glue's
//! setup, dropping an isolate; milliseconds), gets the limit but at least 5 s before a thread
//! counts as stuck, so a loaded machine does not fail calls about to succeed. A call that
//! stops promptly at its limit costs nothing extra: the caller's hard deadline is a timer that
//! never fires.
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
//! - `pool`: [`Pool`], the actor front: admission, instances, spares, eviction, retirement.
//! - `worker`: the isolate thread and its command loop.
//! - `isolate`: a blank runtime, binding it to an endpoint, running one invocation.
//! - `snapshot`: the per-process startup snapshot new runtimes are restored from.
//! - `loader`: the module loader that refuses every import.
//! - `limits`: one file per limit policy (`timeout` watchdog, `deadline`, the caller's hard
//!   deadline, `heap`, `admission`).
//! - `ops`: one `extension!` per `ctx` area (`kv`, `files`, `http`, `fetch`, `log`), `web`
//!   (the web platform's globals), `crypto` (the WebCrypto global), and the `bootstrap` that
//!   loads the glue; each area's glue script sits beside its op (`ops/10_kv.js` by
//!   `ops/kv.rs`), Deno's scripts come from the `deno_web` and `deno_webidl` crates' sources
//!   (copied at build time, `build.rs`) and `ops/web/deno_fetch/`.
//! - `response`: the result contract (status range, response-header allow-list).
//! - `trace`: [`SourceTrace`], where an error arose in the handler's source (for its owner).
//! - `paths`: [`normalize_file_path`], shared with the server for uploaded assets.
//! - `mode`: [`Sandbox`], the pool wherever it runs ([`Isolation`]).
//! - `process`: worker processes ([`WorkerPool`], [`run_worker`]).
//! - [`confine`]: what a worker process takes away from itself (seccomp, Landlock, namespaces).

mod config;
pub mod confine;
mod error;
mod host;
mod invocation;
mod isolate;
mod isolation;
mod limits;
mod loader;
mod ops;
mod paths;
mod pool;
mod process;
mod response;
mod snapshot;
mod trace;
mod worker;

pub use config::{Capabilities, FetchLimits, Limits, PoolConfig, StorageLimits};
pub use error::{HostError, Overload, SandboxError};
pub use host::{
    is_versionstamp, FetchHead, FetchRequest, FileEntry, Host, HostAnswer, HostFuture, HostOp,
    KvAtomic, KvCheck, KvEntry, KvMutation, KvPage, KvValue, KvVersioned, MAX_FETCH_CHUNK_BYTES,
    MAX_SAFE_INTEGER, NO_CALL,
};
pub use invocation::{
    ConsoleLevel, ConsoleLine, EndpointCode, HandlerResponse, Invocation, InvocationReport, Usage,
};
pub use isolation::{Isolation, Sandbox};
pub use limits::fair::{inherit_charge, Charged};
pub use paths::{normalize_file_path, PathError, MAX_FILE_PATH_BYTES};
pub use pool::{EndpointStats, Pool, PoolStats, Wear};
#[cfg(feature = "wall-probe")]
pub use process::Probe;
pub use process::{run_worker, WorkerCommand, WorkerOptions, WorkerPool};
pub use trace::SourceTrace;
pub use worker::on_isolate_thread;
