//! Criterion micro-benchmarks of the sandbox, through the public [`Pool`] API:
//!
//! - `isolate_creation/cold_start_spare_ready`: the first invocation of a new endpoint while a
//!   spare runtime is ready (bind, module load, first call).
//! - `isolate_creation/cold_start_no_spare`: the same with `spare_isolates: 0`, so the cold start
//!   also spawns the isolate thread and restores a fresh runtime from the startup snapshot.
//! - `warm_call/trivial_handler`: `Pool::invoke` of a trivial handler on a live isolate, one call
//!   at a time (each call wakes the parked isolate thread, then the caller).
//!   `warm_call/trivial_handler_64_in_flight`: the same with 64 calls in flight, per call.
//! - `ctx_op/kv_get`: one `await ctx.kv.get(key)` against an in-memory host, per op (the handler
//!   loops; one invocation covers up to [`OPS_PER_CALL`] ops). `ctx_op/await_baseline` is the
//!   same loop awaiting a resolved promise instead, to tell the op apart from the JS loop.
//!
//! Run with `bench/micro.sh` (or `cargo bench -p sandbox --bench sandbox`). The caller is a
//! current-thread tokio runtime, like `bench/examples/measure.rs`; isolates run on their own threads.

#[path = "../../sandbox/tests/util/mod.rs"]
mod util;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use deno_core::futures::future::join_all;
use sandbox::{Capabilities, EndpointCode, Invocation, Pool, PoolConfig};
use serde_json::json;
use tokio::runtime::Runtime;
use util::{endpoint, request, MemoryHost};

/// The handler of the cold start and warm call benchmarks (the one `bench/examples/measure.rs` uses).
const TRIVIAL: &str =
    "export default async (req, ctx) => ({ echo: req.input, n: [1, 2, 3].map((x) => x * 2) });";

/// `req.input.n` reads of one key.
const KV_GET_LOOP: &str = r#"export default async (req, ctx) => {
    let value;
    for (let i = 0; i < req.input.n; i++) value = await ctx.kv.get("greeting");
    return value;
};"#;

/// The same loop without the op.
const AWAIT_LOOP: &str = r#"export default async (req, ctx) => {
    let value;
    for (let i = 0; i < req.input.n; i++) value = await Promise.resolve(i);
    return value;
};"#;

/// Ops per invocation in `ctx_op`: large enough that the invocation's own cost is noise per op.
const OPS_PER_CALL: u64 = 1000;

/// Concurrent calls in the loaded variant of `warm_call` (the default per-endpoint admission bound).
const IN_FLIGHT: u64 = 64;

/// Retired isolates per batch in the cold start benchmarks (see [`settle`]).
const RETIRE_BATCH: usize = 32;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Production defaults, except that isolates are never recycled mid-measurement.
fn config() -> PoolConfig {
    PoolConfig {
        recycle_after_invocations: u64::MAX,
        ..PoolConfig::default()
    }
}

fn pool(config: PoolConfig) -> (Pool, Arc<MemoryHost>) {
    let host = Arc::new(MemoryHost::default());
    (Pool::new(config, host.clone()), host)
}

async fn call(pool: &Pool, code: &EndpointCode, invocation: Invocation) {
    let report = pool.invoke(code, invocation).await;
    if let Err(err) = &report.result {
        panic!("{} failed: {err:?} (logs: {:?})", code.slug, report.logs);
    }
    black_box(report);
}

/// Waits (untimed) until `n` spares have their runtime built. Blocking is fine: the current-
/// thread runtime has nothing else to run, and the spares are built on their own threads.
fn wait_for_ready_spares(pool: &Pool, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while pool.stats().ready_spares < n {
        assert!(Instant::now() < deadline, "spares never became ready");
        std::thread::sleep(Duration::from_micros(100));
    }
}

/// Retires `slugs` and gives their threads time to drop their runtimes, so teardown does not
/// overlap the next timed cold start (the pool offers no signal for a finished thread).
fn settle(pool: &Pool, slugs: &mut Vec<String>) {
    for slug in slugs.drain(..) {
        pool.retire(&slug);
    }
    std::thread::sleep(Duration::from_millis(50));
}

fn isolate_creation(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("isolate_creation");
    // Each iteration is a new endpoint: few, fixed-size samples keep the run short.
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    for (name, spares) in [("cold_start_spare_ready", 1), ("cold_start_no_spare", 0)] {
        let (pool, _host) = pool(PoolConfig {
            spare_isolates: spares,
            ..config()
        });
        let mut next = 0u64;
        let mut live = Vec::new();
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut timed = Duration::ZERO;
                    for _ in 0..iters {
                        if live.len() >= RETIRE_BATCH {
                            settle(&pool, &mut live);
                        }
                        wait_for_ready_spares(&pool, spares);
                        next += 1;
                        let code = endpoint(&format!("cold-{next}"), TRIVIAL);
                        let invocation = request(json!({ "i": next }));
                        let started = Instant::now();
                        call(&pool, &code, invocation).await;
                        timed += started.elapsed();
                        live.push(code.slug);
                    }
                    timed
                })
            });
        });
        settle(&pool, &mut live);
        assert_eq!(pool.stats().isolates_created, next, "every call was cold");
        rt.block_on(pool.shutdown());
    }
    group.finish();
}

fn warm_call(c: &mut Criterion) {
    let rt = runtime();
    let (pool, _host) = pool(config());
    let code = endpoint("warm", TRIVIAL);
    let invocation = request(json!({ "q": "hello" }));
    rt.block_on(call(&pool, &code, invocation.clone()));
    let mut group = c.benchmark_group("warm_call");
    group.bench_function("trivial_handler", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    call(&pool, &code, invocation.clone()).await;
                }
                started.elapsed()
            })
        });
    });
    // Many calls in flight, as on a loaded server: the isolate thread goes from one queued call
    // to the next without parking, so this is the per-call cost without idle wake-ups.
    group.bench_function(format!("trivial_handler_{IN_FLIGHT}_in_flight"), |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let started = Instant::now();
                let mut left = iters;
                while left > 0 {
                    let n = left.min(IN_FLIGHT);
                    join_all((0..n).map(|_| call(&pool, &code, invocation.clone()))).await;
                    left -= n;
                }
                started.elapsed()
            })
        });
    });
    group.finish();
    assert_eq!(pool.stats().isolates_created, 1, "every call was warm");
    rt.block_on(pool.shutdown());
}

fn ctx_op(c: &mut Criterion) {
    let rt = runtime();
    let (pool, host) = pool(config());
    let mut group = c.benchmark_group("ctx_op");
    for (name, source) in [("kv_get", KV_GET_LOOP), ("await_baseline", AWAIT_LOOP)] {
        let code = EndpointCode {
            capabilities: Capabilities {
                kv: true,
                ..Capabilities::default()
            },
            ..endpoint(name, source)
        };
        host.kv.lock().unwrap().insert(
            (code.slug.clone(), "greeting".to_owned()),
            (json!({ "text": "hello", "n": 42 }), None),
        );
        rt.block_on(call(&pool, &code, request(json!({ "n": 1 }))));
        // One criterion iteration is one op: `iters` ops spread over invocations.
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let started = Instant::now();
                    let mut left = iters;
                    while left > 0 {
                        let n = left.min(OPS_PER_CALL);
                        call(&pool, &code, request(json!({ "n": n }))).await;
                        left -= n;
                    }
                    started.elapsed()
                })
            });
        });
    }
    group.finish();
    rt.block_on(pool.shutdown());
}

criterion_group!(benches, isolate_creation, warm_call, ctx_op);
criterion_main!(benches);
