//! Measures the sandbox through its public API: isolate cold start (first invocation of an
//! endpoint), with a spare ready and back to back, warm call overhead (`Pool::invoke` of a
//! trivial handler on a live isolate), and resident memory per idle isolate (the first `isolates`,
//! then as many more: the second figure is what each new one costs).
//!
//! Run with `cargo run --release -p sandbox --example measure [isolates] [warm-calls] [handler]`.
//! `handler` is `trivial` (the default: plain ECMAScript, so no web script is ever loaded),
//! `workers` (the same work as a Workers-style `fetch(request, env, ctx)` handler: a `Request`
//! built and read, a `Response` made and read, every call) or
//! `file:PATH` (a handler of one's own; its first answer is printed, so a handler may time
//! steps of its own and answer the figures) or
//! `web`: a handler that names `URL`, `TextEncoder`, `crypto.subtle` and `Response`, so every
//! isolate has those globals' scripts loaded (docs/handler-platform.md, "Loaded when used"). With
//! `web` the cold starts back to back include that load; with a spare ready, the spare loaded the
//! scripts while it waited ("Spares"); the idle memory includes what they leave.
//!
//! With `MEASURE_WORKER=path/to/sandbox-worker` (`cargo build --release -p sandbox --bin
//! sandbox-worker`) the warm calls go through one worker process (`WorkerPool`, as the server
//! runs handlers) and only they are measured: cold starts and idle memory are the worker's, not
//! this process's. `perf stat` of the example counts the worker with it (children inherit), so
//! the same figure in both modes is the cost of the process boundary.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox::{
    Capabilities, EndpointCode, Host, HostAnswer, HostError, HostFuture, HostOp, Invocation,
    InvocationReport, Pool, PoolConfig, WorkerCommand, WorkerOptions, WorkerPool,
};
use serde_json::json;

/// A host with no storage: the measured handlers never call it.
struct NoHost;

impl Host for NoHost {
    fn call(&self, _: &EndpointCode, _: u64, _: HostOp) -> HostFuture<HostAnswer> {
        Box::pin(async { Err(HostError::new("unsupported", "no host in this measurement")) })
    }
}

/// The handler of the default run (the one the criterion cold start benchmarks use).
const TRIVIAL: &str =
    "export default async (req, ctx) => ({ echo: req.input, n: [1, 2, 3].map((x) => x * 2) });";

/// A handler that uses the web globals on every call: URL, TextEncoder, SHA-256 through
/// `crypto.subtle.digest`, and a `Response.json` body read back.
const WEB: &str = r#"export default async (req, ctx) => {
    const url = new URL(`https://example.com/items?i=${req.input.i}`);
    const bytes = new TextEncoder().encode(url.href);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    const res = Response.json({ path: url.pathname, i: url.searchParams.get("i"), first: digest[0] });
    return await res.json();
};"#;

/// The trivial handler's work in the Workers style: `fetch(request, env, ctx)`, the input
/// read from the `Request` the glue builds, the answer a `Response`.
const WORKERS: &str = r#"export default {
  async fetch(request, env, ctx) {
    const input = await request.json();
    return Response.json({ echo: input, n: [1, 2, 3].map((x) => x * 2) });
  },
};"#;

fn endpoint(slug: String, source: &str) -> EndpointCode {
    EndpointCode {
        id: format!("ep_{slug}"),
        slug,
        version: "v1".to_owned(),
        source: source.to_owned(),
        capabilities: Capabilities::default(),
        env: BTreeMap::new(),
        limits: None,
        owner: None,
    }
}

fn invocation(i: usize) -> Invocation {
    Invocation {
        request: serde_json::value::to_raw_value(
            &json!({ "input": { "i": i }, "method": "POST", "query": {}, "headers": {} }),
        )
        .expect("a request serializes"),
        request_id: format!("req-{i}"),
        load_only: false,
    }
}

/// Resident set size of this process, from /proc (Linux only).
fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let isolates: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let warm_calls: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let (handler, source) = match args.next().as_deref() {
        None | Some("trivial") => ("trivial", TRIVIAL),
        Some("web") => ("web", WEB),
        Some("workers") => ("workers", WORKERS),
        Some(path) if path.starts_with("file:") => {
            let source = std::fs::read_to_string(&path[5..]).expect("the handler file reads");
            ("file", &*Box::leak(source.into_boxed_str()))
        }
        Some(other) => {
            panic!("unknown handler {other:?}: expected `trivial`, `web`, `workers` or `file:PATH`")
        }
    };
    println!("handler: {handler}");
    if let Ok(worker) = std::env::var("MEASURE_WORKER") {
        return through_a_worker(worker, source, warm_calls).await;
    }
    // Room for every measured isolate: the default memory budget (1 GiB, each isolate counted
    // at its 64 MiB heap limit) holds only 16, and evicted isolates would leave the idle
    // reading and overlap the back-to-back cold starts with teardowns.
    let defaults = PoolConfig::default();
    let config = PoolConfig {
        max_isolates: 2 * isolates + 21,
        memory_budget_bytes: (2 * isolates + 21) * defaults.default_limits.heap_bytes,
        ..defaults
    };
    let pool = Pool::new(config, Arc::new(NoHost));

    // The first isolate of the process pays one-time engine initialization.
    let started = Instant::now();
    let first = pool
        .invoke(&endpoint("first".into(), source), invocation(0))
        .await;
    assert!(first.result.is_ok(), "{:?}", first.result);
    println!("process-first isolate + call: {:?}", started.elapsed());
    if handler == "file" {
        println!("its answer: {:?}", first.result);
    }

    // Cold starts with a spare ready: wait for the spares to be rebuilt between endpoints.
    let mut cold_spare = Vec::new();
    for i in 0..20 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let report = pool
            .invoke(&endpoint(format!("s{i}"), source), invocation(i))
            .await;
        assert!(report.result.is_ok(), "{:?}", report.result);
        cold_spare.push(report.duration);
    }
    cold_spare.sort();
    println!(
        "cold start with a spare ready (bind + module + first call), 20 endpoints: p50 {:?}, p90 {:?}",
        percentile(&cold_spare, 0.5),
        percentile(&cold_spare, 0.9)
    );
    for i in 0..20 {
        pool.retire(&format!("s{i}"));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    let rss_before = rss_bytes();
    let mut cold = Vec::with_capacity(isolates);
    for i in 0..isolates {
        let report = pool
            .invoke(&endpoint(format!("e{i}"), source), invocation(i))
            .await;
        assert!(report.result.is_ok(), "{:?}", report.result);
        cold.push(report.duration);
    }
    // Let the spares consumed above be rebuilt, so they are counted in both readings.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_after = rss_bytes();
    let stats = pool.stats();
    assert_eq!(
        stats.evictions, 0,
        "an isolate was evicted: the idle reading would be low"
    );
    cold.sort();
    println!(
        "cold start back to back (spares exhausted: thread + runtime + module + first call), {isolates} endpoints: p50 {:?}, p90 {:?}, max {:?}",
        percentile(&cold, 0.5),
        percentile(&cold, 0.9),
        cold[cold.len() - 1]
    );
    if let (Some(before), Some(after)) = (rss_before, rss_after) {
        println!(
            "idle memory: {:.2} MiB per isolate (RSS {:.1} -> {:.1} MiB for {isolates} isolates, {} live)",
            (after.saturating_sub(before)) as f64 / isolates as f64 / (1024.0 * 1024.0),
            before as f64 / (1024.0 * 1024.0),
            after as f64 / (1024.0 * 1024.0),
            stats.live_isolates
        );
    }

    // The reading above starts after the 20 endpoints of the spare-ready cold starts were
    // retired: the first isolates reuse what those left free in the process (its allocators
    // keep it), so it is low for a few isolates. As many again, started after it, grow the
    // process by what an idle isolate really takes.
    if let Some(before) = rss_bytes() {
        for i in 0..isolates {
            let report = pool
                .invoke(&endpoint(format!("m{i}"), source), invocation(i))
                .await;
            assert!(report.result.is_ok(), "{:?}", report.result);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Some(after) = rss_bytes() {
            println!(
                "idle memory, {isolates} more isolates: {:.2} MiB per isolate",
                (after.saturating_sub(before)) as f64 / isolates as f64 / (1024.0 * 1024.0),
            );
        }
    }

    let warm_endpoint = endpoint("e0".into(), source);
    let warm = time_calls(warm_calls, |i| pool.invoke(&warm_endpoint, invocation(i))).await;
    print_warm("Pool::invoke", warm);
    let stats = pool.stats();
    println!(
        "pool: {} live isolates, {} spares, {} created, {} invocations",
        stats.live_isolates, stats.spare_isolates, stats.isolates_created, stats.invocations
    );
    pool.shutdown().await;
}

/// Warm calls of `source` through one worker process started from `program`.
async fn through_a_worker(program: String, source: &str, warm_calls: usize) {
    let command = WorkerCommand {
        program: program.into(),
        args: Vec::new(),
        log_filter: "warn".into(),
    };
    let options = WorkerOptions {
        command,
        count: 1,
        recycle_after_dropped: WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
    };
    let pool = WorkerPool::new(PoolConfig::default(), Arc::new(NoHost), options);
    pool.start().await.expect("the worker starts");
    let code = endpoint("e0".into(), source);
    let first = pool.invoke(&code, invocation(0)).await;
    assert!(first.result.is_ok(), "{:?}", first.result);
    let warm = time_calls(warm_calls, |i| pool.invoke(&code, invocation(i))).await;
    print_warm("WorkerPool::invoke (one worker process)", warm);
    pool.shutdown().await;
}

/// The durations of `calls` calls made by `invoke` one after another, each checked to succeed.
async fn time_calls<F, Fut>(calls: usize, mut invoke: F) -> Vec<Duration>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = InvocationReport>,
{
    let mut durations = Vec::with_capacity(calls);
    for i in 0..calls {
        let report = invoke(i).await;
        assert!(report.result.is_ok(), "{:?}", report.result);
        durations.push(report.duration);
    }
    durations
}

fn print_warm(through: &str, mut warm: Vec<Duration>) {
    warm.sort();
    let total: Duration = warm.iter().sum();
    println!(
        "warm call through {through}, {} calls: mean {:?}, p50 {:?}, p99 {:?}",
        warm.len(),
        total / warm.len() as u32,
        percentile(&warm, 0.5),
        percentile(&warm, 0.99)
    );
}
