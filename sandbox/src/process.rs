//! Worker processes: builders' JavaScript runs in processes that hold nothing worth stealing.
//!
//! The server holds the receipt signing key, the secrets master key, the settler's chain key,
//! the store and every decrypted secret; the engine under the isolates is C. So isolates run in
//! worker processes (the server's own executable started again in worker mode) that start with
//! an empty environment and no arguments but their mode, receive their configuration and each
//! endpoint's code over a pipe, confine themselves (see `confine`) before running any handler,
//! and reach storage and the network only by asking the server, which checks every request
//! again (`host_ops`). The server routes an owner's endpoints to one worker, replaces a worker
//! that dies, hangs, breaks the protocol or keeps an isolate that would not stop, and answers
//! the calls it held with the usual errors.
//!
//! - `wire`: the frames and their encoding.
//! - `host_ops`: `ctx` operations on the wire, and the server's check of each.
//! - `supervisor`: the server's side ([`WorkerPool`]).
//! - `lanes`: the frames to one worker, the server's first, then each builder's replies in turn.
//! - `newcomers`: a builder's calls one at a time until one has ended within its limits.
//! - `child`: the worker's side ([`run_worker`]).
//! - `confine`: what a worker takes away from itself.

mod child;
mod confine;
pub(crate) mod host_ops;
mod lanes;
mod newcomers;
#[cfg(feature = "wall-probe")]
mod probe;
mod supervisor;
mod wire;

pub use child::run_worker;
#[cfg(feature = "wall-probe")]
pub use probe::Probe;
pub use supervisor::{WorkerCommand, WorkerOptions, WorkerPool};
