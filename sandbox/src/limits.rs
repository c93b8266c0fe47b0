//! Limit policies, one per file: wall-clock time ([`timeout`], in the engine; [`deadline`], the
//! caller's hard deadline on the host side), heap ([`heap`]) and per-endpoint concurrency
//! ([`admission`]), the server's CPU for `ctx` operations shared among builders ([`fair`]), and
//! the isolates' CPU: builders running long bursts yield the cores to the others ([`cpu`]).
//! Output caps live where the output is made
//! (`response.rs` for results, `ops/log.rs` for logs).

pub(crate) mod admission;
pub(crate) mod cpu;
pub(crate) mod deadline;
pub(crate) mod fair;
pub(crate) mod heap;
pub(crate) mod throttle;
pub(crate) mod timeout;
