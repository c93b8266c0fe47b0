//! Worker processes: handlers run in a separate process started from the `sandbox-worker`
//! binary, their `ctx` operations cross to this (the server's) process and its host, and the
//! server survives whatever happens to a worker: killed mid-call, wedged, or gone.

mod util;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox::{
    EndpointCode, Invocation, InvocationReport, Overload, PoolConfig, SandboxError, WorkerOptions,
    WorkerPool,
};
use serde_json::json;
use util::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_recycled_worker_hands_over_to_a_successor_that_already_loaded_its_endpoints() {
    // A worker is `Ready` before it has built a runtime; switched to cold, every call behind
    // the switch waited for its builds (half a second under load). The pool's stats ask the
    // serving worker, so polling them closely, without calls, shows what the successor held
    // when it took over.
    let config = PoolConfig {
        recycle_after_invocations: 1,
        ..test_config()
    };
    let (pool, _) = recycling_workers(config, 1, 2);
    pool.start().await.unwrap();
    let code = endpoint(
        "warm-handover",
        "let calls = 0; export default () => ++calls;",
    );
    let mut pid = pool.stats().await.worker_pids;
    let mut handovers = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while handovers < 2 && Instant::now() < deadline {
        assert_eq!(ok(call(&pool, &code, json!(null)).await).body, json!(1));
        // Without calls until the recycle (started by the call) has switched, or a while.
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            let stats = pool.stats().await;
            if stats.worker_pids != pid {
                let endpoint = stats.endpoints.iter().find(|e| e.slug == "warm-handover");
                assert_eq!(
                    endpoint.map(|e| e.instances),
                    Some(1),
                    "the successor took over cold: {stats:?}"
                );
                pid = stats.worker_pids;
                handovers += 1;
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    assert_eq!(handovers, 2, "two recycles within a minute");
    pool.shutdown().await;
}

/// A recycled worker's successor warms up what its predecessor served, but not the endpoints
/// of heavy builders (a call of 50 ms of CPU, or a lost isolate, in the last minute): while
/// the two workers overlap, an attacker's isolates would be held twice. Those builders stay
/// heavy in the successor.
#[tokio::test(flavor = "multi_thread")]
async fn a_successor_does_not_warm_up_a_heavy_builders_endpoints() {
    // Recycled after one dropped isolate.
    let (pool, _) = recycling_workers(test_config(), 1, 1);
    pool.start().await.unwrap();
    let owned = |slug: &str, owner: &str, source: &str| EndpointCode {
        owner: Some(owner.to_owned()),
        ..endpoint(slug, source)
    };
    let light = owned("light", "light-builder", "export default () => 'light';");
    let heavy = owned(
        "heavy",
        "heavy-builder",
        // 400 ms of wall time: at least 50 ms of CPU even with both cores busy with other work.
        "export default () => { const end = Date.now() + 400; while (Date.now() < end) {} return 'heavy'; }",
    );
    let quick = owned("quick", "heavy-builder", "export default () => 'quick';");
    let gone = owned("gone", "light-builder", "export default () => 'gone';");
    for code in [&heavy, &light, &gone] {
        ok(call(&pool, code, json!(null)).await);
    }
    let first = pool.stats().await.worker_pids;
    pool.retire("gone");
    // The next call sees the dropped isolate and starts the recycle.
    ok(call(&pool, &light, json!(null)).await);
    let deadline = Instant::now() + Duration::from_secs(20);
    let stats = loop {
        let stats = pool.stats().await;
        if stats.worker_pids != first || Instant::now() > deadline {
            break stats;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(stats.worker_recycles, 1, "{stats:?}");
    let endpoint = |stats: &sandbox::PoolStats, slug: &str| {
        stats.endpoints.iter().find(|e| e.slug == slug).cloned()
    };
    assert_eq!(
        endpoint(&stats, "light").map(|e| e.instances),
        Some(1),
        "{stats:?}"
    );
    assert_eq!(
        endpoint(&stats, "heavy").map_or(0, |e| e.instances),
        0,
        "{stats:?}"
    );
    // The builder is still heavy in the successor, before any heavy call of its there.
    ok(call(&pool, &quick, json!(null)).await);
    let stats = pool.stats().await;
    assert_eq!(
        endpoint(&stats, "quick").map(|e| e.heavy),
        Some(true),
        "{stats:?}"
    );
    assert_eq!(
        endpoint(&stats, "light").map(|e| e.heavy),
        Some(false),
        "{stats:?}"
    );
    pool.shutdown().await;
}

fn workers_with(config: PoolConfig, count: usize) -> (WorkerPool, Arc<MemoryHost>) {
    recycling_workers(config, count, WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED)
}

fn recycling_workers(
    config: PoolConfig,
    count: usize,
    recycle_after_dropped: u64,
) -> (WorkerPool, Arc<MemoryHost>) {
    let host = Arc::new(MemoryHost::default());
    let options = WorkerOptions {
        command: worker_command(),
        count,
        recycle_after_dropped,
    };
    (WorkerPool::new(config, host.clone(), options), host)
}

fn workers() -> (WorkerPool, Arc<MemoryHost>) {
    workers_with(test_config(), 2)
}

async fn call(
    pool: &WorkerPool,
    code: &EndpointCode,
    input: serde_json::Value,
) -> InvocationReport {
    pool.invoke(code, request(input)).await
}

fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} {pid}");
}

#[tokio::test(flavor = "multi_thread")]
async fn handlers_run_in_workers_and_reach_the_servers_host() {
    let (pool, host) = workers();
    pool.start().await.unwrap();
    let stats = pool.stats().await;
    assert_eq!(stats.worker_pids.len(), 2, "{stats:?}");
    assert!(!stats.worker_pids.contains(&std::process::id()));

    let echo = endpoint("echo", ECHO);
    assert_eq!(
        ok(call(&pool, &echo, json!({ "a": 1 })).await).body,
        json!({ "echo": { "a": 1 } })
    );

    let store = granted(
        "store",
        r#"export default async (req, ctx) => {
            await ctx.kv.set("k", { n: req.input.n });
            await ctx.files.write("notes/a.txt", "héllo");
            ctx.log("stored", req.input.n);
            const page = await ctx.kv.list({ prefix: "" });
            return { kv: await ctx.kv.get("k"), file: await ctx.files.read("notes/a.txt"),
                     keys: page.entries.map(e => e.key), files: await ctx.files.list("notes") };
        }"#,
    );
    let report = call(&pool, &store, json!({ "n": 7 })).await;
    assert_eq!(report.logs.len(), 1, "{:?}", report.logs);
    assert_eq!(
        ok(report).body,
        json!({ "kv": { "n": 7 }, "file": "héllo", "keys": ["k"],
                "files": [{ "path": "notes/a.txt", "size": 6 }] })
    );
    // The data is in the server's host, under the endpoint the server knows the call for.
    let kv = host.kv.lock().unwrap().clone();
    assert_eq!(
        kv[&("store".to_owned(), "k".to_owned())].0,
        json!({ "n": 7 })
    );

    // A capability not granted is refused (by the worker's op and again by the server).
    let denied = endpoint(
        "denied",
        "export default async (req, ctx) => ctx.kv.get('k')",
    );
    assert!(matches!(
        err(call(&pool, &denied, json!({})).await),
        SandboxError::CapabilityDenied(_)
    ));
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn workers_start_with_no_secrets_in_their_environment_or_arguments() {
    std::env::set_var("TOOLHOST_ADMIN_TOKEN", "must-not-reach-workers");
    let (pool, _) = workers();
    pool.start().await.unwrap();
    for pid in pool.stats().await.worker_pids {
        // Only what `confine::prepare_command` sets: the engine's bytecode cache off, and the
        // server's namespaces for the worker's report.
        let environ = std::fs::read_to_string(format!("/proc/{pid}/environ")).unwrap();
        for variable in environ.split('\0').filter(|v| !v.is_empty()) {
            let name = variable.split('=').next().unwrap();
            assert!(
                [
                    "V82JSC_NO_BC_CACHE",
                    sandbox::confine::PARENT_NAMESPACES_ENV
                ]
                .contains(&name),
                "worker {pid} has {variable}"
            );
            assert!(!variable.contains("must-not-reach"), "{variable}");
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        let args: Vec<_> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .collect();
        assert_eq!(args.len(), 1, "worker {pid} has arguments: {args:?}");
    }
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn limits_hold_in_workers() {
    let (pool, _) = workers();
    let spin = endpoint("spin", "export default () => { for (;;) {} }");
    let started = Instant::now();
    assert_eq!(
        err(call(&pool, &spin, json!({})).await),
        SandboxError::Timeout
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let bomb = endpoint(
        "bomb",
        "export default () => { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }",
    );
    let outcome = err(call(&pool, &bomb, json!({})).await);
    assert!(
        matches!(
            outcome,
            SandboxError::ResourceLimit(_) | SandboxError::Timeout
        ),
        "{outcome:?}"
    );
    // New code for a slug replaces the old in the worker.
    let v1 = endpoint("versioned", "export default () => 1");
    assert_eq!(ok(call(&pool, &v1, json!({})).await).body, json!(1));
    let v2 = EndpointCode {
        version: "v2".into(),
        source: "export default () => 2".into(),
        ..v1.clone()
    };
    pool.retire("versioned");
    assert_eq!(ok(call(&pool, &v2, json!({})).await).body, json!(2));
    pool.shutdown().await;
}

/// A worker that crashes takes every call it runs with it. The builders whose calls were in
/// progress then go to a quarantine worker for a while: if one of them crashed it, its next
/// crash there costs nothing to the builders who shared the first worker.
#[tokio::test(flavor = "multi_thread")]
async fn builders_running_when_a_worker_crashed_are_moved_to_a_quarantine_worker() {
    let (pool, _) = workers_with(test_config(), 1);
    pool.start().await.unwrap();
    let of = |owner: &str, slug: &str| {
        EndpointCode {
        owner: Some(owner.into()),
        limits: Some(sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout: Duration::from_secs(5),
        }),
        ..endpoint(
            slug,
            "export default async (req) => { if (req.input.wait) await new Promise(r => setTimeout(r, req.input.wait)); return 'done'; }",
        )
    }
    };
    let (suspect, neighbour) = (
        of("bld_suspect", "suspect"),
        of("bld_neighbour", "neighbour"),
    );
    let running = |code: &EndpointCode, wait: u64| {
        let (pool, code) = (pool.clone(), code.clone());
        tokio::spawn(async move { call(&pool, &code, json!({ "wait": wait })).await })
    };
    for code in [&suspect, &neighbour] {
        assert_eq!(ok(call(&pool, code, json!({})).await).body, json!("done"));
    }
    let shared = pool.stats().await.worker_pids;
    assert_eq!(shared.len(), 1, "both on the one worker: {shared:?}");

    // The worker crashes during a call of the suspect.
    let crashed = running(&suspect, 3000);
    tokio::time::sleep(Duration::from_millis(500)).await;
    signal(shared[0], "-KILL");
    assert!(matches!(
        err(crashed.await.unwrap()),
        SandboxError::Internal(_)
    ));
    assert_eq!(
        ok(call(&pool, &neighbour, json!({})).await).body,
        json!("done")
    );
    assert_eq!(
        ok(call(&pool, &suspect, json!({})).await).body,
        json!("done")
    );
    let apart = pool.stats().await.worker_pids;
    assert_eq!(
        apart.len(),
        2,
        "the suspect has a worker of its own: {apart:?}"
    );
    assert_eq!(pool.stats().await.quarantined_builders, 1);

    // It crashes again, in quarantine: the neighbour's call in progress meanwhile is fine.
    let (crashed, waiting) = (running(&suspect, 3000), running(&neighbour, 1500));
    tokio::time::sleep(Duration::from_millis(500)).await;
    signal(apart[1], "-KILL");
    assert!(matches!(
        err(crashed.await.unwrap()),
        SandboxError::Internal(_)
    ));
    assert_eq!(ok(waiting.await.unwrap()).body, json!("done"));
    pool.shutdown().await;
}

/// Stopping an endpoint (as the server does when it is deleted) stops its calls in progress:
/// each caller is answered `Stopped` at once, and whatever its code still runs in the worker
/// reaches nothing (every operation names a call that ended: `call_ended`), while another
/// endpoint's call on the same worker goes on. Retiring it (as a node does when the endpoint
/// changed elsewhere) lets its calls finish.
#[tokio::test(flavor = "multi_thread")]
async fn stopping_an_endpoint_stops_its_calls_in_progress_and_retiring_does_not() {
    let (pool, host) = workers_with(test_config(), 1);
    pool.start().await.unwrap();
    let patient = |code: EndpointCode| EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout: Duration::from_secs(5),
        }),
        ..code
    };
    let writer = patient(granted(
        "writer",
        r#"export default async (req, ctx) => {
            for (let n = 1; n <= 30; n++) {
                await ctx.kv.set("n", n);
                await new Promise((r) => setTimeout(r, 50));
            }
            return "finished";
        }"#,
    ));
    let neighbour = patient(endpoint(
        "neighbour",
        "export default async () => { await new Promise(r => setTimeout(r, 1500)); return 'fine'; }",
    ));
    let written = || {
        host.kv
            .lock()
            .unwrap()
            .remove(&("writer".to_owned(), "n".to_owned()))
            .map(|(v, _)| v)
    };
    let start = |code: &EndpointCode| {
        let (pool, code) = (pool.clone(), code.clone());
        tokio::spawn(async move { call(&pool, &code, json!(null)).await })
    };
    // Until the writer writes (after its cold start, the first time).
    let writing = || async {
        let started = Instant::now();
        while written().is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the writer never wrote"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };

    let retired = start(&writer);
    writing().await;
    pool.retire("writer");
    assert_eq!(ok(retired.await.unwrap()).body, json!("finished"));
    written();

    let (stopped, waiting) = (start(&writer), start(&neighbour));
    writing().await;
    let stopping = Instant::now();
    pool.stop("writer");
    assert_eq!(err(stopped.await.unwrap()), SandboxError::Stopped);
    assert!(
        stopping.elapsed() < Duration::from_millis(500),
        "answered at once: {:?}",
        stopping.elapsed()
    );
    written();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(written(), None, "the stopped call wrote on");
    assert_eq!(ok(waiting.await.unwrap()).body, json!("fine"));
    pool.shutdown().await;
}

/// Every message between the server and a worker fits in one frame (64 MiB), and a frame over
/// it would end the worker with every call it runs. Each side checks the size before it sends:
/// a request, an answer, an operation or an operation's answer too large fails that call (or
/// that operation) with `resource_limit`, while a neighbour's call on the same worker runs on.
#[tokio::test(flavor = "multi_thread")]
async fn a_message_too_large_for_a_frame_fails_its_call_not_the_worker() {
    const MIB: usize = 1024 * 1024;
    let mut config = test_config();
    config.max_result_bytes = 80 * MIB;
    config.storage.max_file_bytes = 80 * MIB;
    let (pool, host) = workers_with(config, 1);
    pool.start().await.unwrap();
    let pid = pool.stats().await.worker_pids;
    let roomy = |code: EndpointCode| EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 512 * MIB,
            timeout: Duration::from_secs(30),
        }),
        ..code
    };
    // The neighbour: a call in progress on the same worker the whole time.
    let neighbour = roomy(endpoint(
        "neighbour",
        "export default async () => { await new Promise(r => setTimeout(r, 3000)); return 'fine'; }",
    ));
    let waiting = {
        let (pool, neighbour) = (pool.clone(), neighbour.clone());
        tokio::spawn(async move { call(&pool, &neighbour, json!(null)).await })
    };

    // The server's request: 65 MiB of input.
    let echo = endpoint("big-echo", ECHO);
    let outcome = err(call(&pool, &echo, json!("x".repeat(65 * MIB))).await);
    assert!(
        matches!(&outcome, SandboxError::ResourceLimit(m) if m.contains("64 MiB")),
        "{outcome:?}"
    );
    // The handler's answer: 65 MiB of JSON.
    let answer = roomy(endpoint(
        "big-answer",
        "export default () => 'x'.repeat(65 * 1024 * 1024)",
    ));
    let outcome = err(call(&pool, &answer, json!(null)).await);
    assert!(
        matches!(&outcome, SandboxError::ResourceLimit(m) if m.contains("64 MiB")),
        "{outcome:?}"
    );
    // An operation (a 50 MiB file is 67 MiB as base64) and an operation's answer (the same
    // file read back, put in place by the host): each fails as an error the handler catches.
    host.files.lock().unwrap().insert(
        ("big-ops".to_owned(), "placed.bin".to_owned()),
        vec![7; 50 * MIB],
    );
    let ops = roomy(granted(
        "big-ops",
        r#"export default async (req, ctx) => {
            const failed = async (op) => {
                try { await op(); return "done"; } catch (e) { return `${e.code}: ${e.message}`; }
            };
            return {
                write: await failed(() => ctx.files.write("big.bin", "x".repeat(50 * 1024 * 1024))),
                read: await failed(() => ctx.files.read("placed.bin")),
                small: await failed(() => ctx.files.write("small.txt", "ok")),
            };
        }"#,
    ));
    let body = ok(call(&pool, &ops, json!(null)).await).body;
    for op in ["write", "read"] {
        let outcome = body[op].as_str().unwrap();
        assert!(
            outcome.starts_with("resource_limit: ") && outcome.contains("64 MiB"),
            "{body}"
        );
    }
    assert_eq!(body["small"], "done", "{body}");

    assert_eq!(ok(waiting.await.unwrap()).body, json!("fine"));
    assert_eq!(
        ok(call(&pool, &echo, json!("small")).await).body,
        json!({ "echo": "small" })
    );
    assert_eq!(
        pool.stats().await.worker_pids,
        pid,
        "the same worker serves on"
    );
    pool.shutdown().await;
}

/// The worker serving one call is killed while the call runs: that call gets a clean error,
/// the next one a new worker.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_mid_call_fails_that_call_cleanly_and_is_replaced() {
    let (pool, _) = workers_with(test_config(), 1);
    pool.start().await.unwrap();
    let before = pool.stats().await;
    let slow = endpoint(
        "slow",
        "export default async () => { const t = Date.now(); while (Date.now() - t < 1000) {} return 1; }",
    );
    let running = {
        let pool = pool.clone();
        let slow = slow.clone();
        tokio::spawn(async move { call(&pool, &slow, json!({})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    signal(before.worker_pids[0], "-KILL");
    let report = running.await.unwrap();
    assert!(
        matches!(report.result, Err(SandboxError::Internal(ref m)) if m.contains("worker")),
        "{:?}",
        report.result
    );
    assert_eq!(
        ok(call(&pool, &endpoint("echo", ECHO), json!(1)).await).body,
        json!({ "echo": 1 })
    );
    let after = pool.stats().await;
    assert_eq!(after.worker_restarts, 1);
    assert_ne!(after.worker_pids, before.worker_pids);
    pool.shutdown().await;
}

/// A worker that stops answering altogether (stopped, here) costs its caller what the server
/// allows a cold start (5 s, twice the limit, the grace, a 2 s margin), then is killed and
/// replaced.
#[tokio::test(flavor = "multi_thread")]
async fn a_wedged_worker_is_killed_and_replaced() {
    let (pool, _) = workers_with(test_config(), 1);
    pool.start().await.unwrap();
    let pid = pool.stats().await.worker_pids[0];
    signal(pid, "-STOP");
    let started = Instant::now();
    let report = call(&pool, &endpoint("echo", ECHO), json!(1)).await;
    assert_eq!(report.result.unwrap_err(), SandboxError::Timeout);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(15), "{waited:?}");
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let stats = pool.stats().await;
        if !stats.worker_pids.contains(&pid) {
            break;
        }
        assert!(Instant::now() < until, "the wedged worker was not killed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        ok(call(&pool, &endpoint("echo", ECHO), json!(2)).await).body,
        json!({ "echo": 2 })
    );
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn many_concurrent_calls_across_workers() {
    let (pool, host) = workers();
    let counter = granted(
        "counter",
        r#"export default async (req, ctx) => { await ctx.kv.set("k" + req.input, req.input); return req.input; }"#,
    );
    let calls = (0..200).map(|n| {
        let pool = pool.clone();
        let code = EndpointCode {
            slug: format!("counter-{}", n % 7),
            owner: Some(format!("owner-{}", n % 3)),
            ..counter.clone()
        };
        tokio::spawn(async move { pool.invoke(&code, request(json!(n))).await })
    });
    for (n, call) in calls.enumerate() {
        assert_eq!(ok(call.await.unwrap()).body, json!(n));
    }
    assert_eq!(host.kv.lock().unwrap().len(), 200);
    pool.shutdown().await;
}

/// A worker keeps an endpoint's code (its env, with the decrypted secrets) only while it has
/// an isolate of it: once the isolate is evicted, the worker drops the code within a second,
/// and the next call of that endpoint has the server send it again.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_forgets_the_code_of_endpoints_it_no_longer_runs() {
    let config = PoolConfig {
        max_isolates: 1,
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _) = workers_with(config, 1);
    let secret = EndpointCode {
        env: [("API_KEY".to_owned(), "s3cret".to_owned())].into(),
        ..endpoint("secret", "export default (req, ctx) => ctx.env.API_KEY")
    };
    let echo = endpoint("echo", ECHO);
    assert_eq!(
        ok(call(&pool, &secret, json!({})).await).body,
        json!("s3cret")
    );
    // The one isolate goes to `echo`: `secret`'s is evicted.
    ok(call(&pool, &echo, json!(1)).await);
    assert_eq!(pool.stats().await.evictions, 1);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // This call prunes `secret`'s code; the next call of `secret` needs it sent again.
    ok(call(&pool, &echo, json!(2)).await);
    assert_eq!(
        ok(call(&pool, &secret, json!({})).await).body,
        json!("s3cret")
    );
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_is_recycled_after_dropping_its_share_of_isolates() {
    // Every call gets a fresh isolate; a worker is replaced once it has dropped three.
    let config = PoolConfig {
        recycle_after_invocations: 1,
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _) = recycling_workers(config, 1, 3);
    pool.start().await.unwrap();
    let first = pool.stats().await.worker_pids;
    let code = endpoint("fresh", "let calls = 0; export default () => ++calls;");
    for _ in 0..10 {
        // No call is lost or failed by a recycle: each one answers from a fresh isolate.
        assert_eq!(ok(call(&pool, &code, json!(null)).await).body, json!(1));
    }
    // Each recycled worker served on until its successor was ready, then ended; its counters
    // stay in the totals once it has.
    let deadline = Instant::now() + Duration::from_secs(10);
    let stats = loop {
        let stats = pool.stats().await;
        let settled = stats.invocations == 10 && stats.worker_pids != first;
        if settled || Instant::now() > deadline {
            break stats;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(stats.invocations, 10, "{stats:?}");
    // One isolate per call, and each successor warmed one before it took over (which served
    // its first call, unless no call came after the switch).
    assert!(
        (10..=10 + stats.worker_recycles).contains(&stats.isolates_created),
        "{stats:?}"
    );
    // At least one recycle (a worker builds its fourth isolate after dropping three), at most
    // three (how many depends on how soon each successor was ready).
    assert!((1..=3).contains(&stats.worker_recycles), "{stats:?}");
    assert_eq!(stats.worker_restarts, 0, "{stats:?}");
    assert_eq!(stats.worker_pids.len(), 1, "{stats:?}");
    assert_ne!(stats.worker_pids, first);
    pool.shutdown().await;
}

/// A worker gives back the heap of the isolates it drops (third_party/README.md): 20 isolates
/// of a handler keeping 16 MiB in a module variable, each dropped after its one call, leave
/// the worker near where it was after the first few, with no recycle. (Before, each left its
/// 16 MiB behind and only ending the worker gave it back.)
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_gives_back_the_heap_of_the_isolates_it_drops() {
    let mut config = PoolConfig {
        recycle_after_invocations: 1,
        spare_isolates: 0,
        ..test_config()
    };
    // Each call is a cold start building a million-element array: a debug build on a busy
    // machine took longer than the usual 1.5 s (a CI run beside release builds). What this
    // test measures is memory, not time.
    config.default_limits.timeout = Duration::from_secs(15);
    let (pool, _) = recycling_workers(config, 1, 1000);
    pool.start().await.unwrap();
    let keeps = endpoint(
        "keeps",
        r#"const kept = Array.from({ length: 1 << 20 }, (_, i) => i + 0.5);
        export default () => kept.length;"#,
    );
    for _ in 0..4 {
        assert_eq!(
            ok(call(&pool, &keeps, json!(null)).await).body,
            json!(1 << 20)
        );
    }
    let pid = pool.stats().await.worker_pids[0];
    let settled = resident(&pid.to_string(), "VmRSS:");
    for _ in 0..20 {
        assert_eq!(
            ok(call(&pool, &keeps, json!(null)).await).body,
            json!(1 << 20)
        );
    }
    let grew = resident(&pid.to_string(), "VmRSS:").saturating_sub(settled);
    let stats = pool.stats().await;
    assert_eq!(stats.worker_pids, vec![pid], "{stats:?}");
    assert_eq!(stats.worker_recycles, 0, "{stats:?}");
    // 20 hoards would be 320 MiB.
    assert!(
        grew <= 48 << 20,
        "20 dropped isolates grew the worker {} MiB",
        grew >> 20
    );
    pool.shutdown().await;
}

/// A handler that starts hundreds of operations at once gets every answer: its worker sends
/// a call's operations 16 at a time (the rest wait their turn there), so they never pile past
/// the server's cap of 128 in progress per builder, where the rest would be refused; and the
/// answers a busy handler has not taken yet stay few.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_starting_hundreds_of_operations_at_once_gets_every_answer() {
    let (pool, _host) = workers();
    let many = granted(
        "many",
        r#"export default async (req, ctx) => {
            // Each answered 10 ms later by the test host: all in progress at once, unwindowed.
            const got = await Promise.allSettled(
                Array.from({ length: 600 }, () => ctx.kv.get("sleep-ms:10")));
            return {
                ok: got.filter((g) => g.status === "fulfilled").length,
                refused: [...new Set(got.filter((g) => g.status === "rejected")
                    .map((g) => g.reason.code))],
            };
        }"#,
    );
    assert_eq!(
        ok(call(&pool, &many, json!({})).await).body,
        json!({ "ok": 600, "refused": [] })
    );
    pool.shutdown().await;
}

/// The nice value of each thread of process `pid`: field 19 of `/proc/PID/task/TID/stat`,
/// counted after the command name's closing parenthesis (the name may hold spaces).
fn thread_nices(pid: u32) -> Vec<i32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the worker runs");
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("stat")).ok())
        .filter_map(|stat| {
            let after_name = &stat[stat.rfind(')')? + 2..];
            after_name.split(' ').nth(16)?.parse().ok()
        })
        .collect()
}

/// Builders are served apart from their neighbours, each by a worker of its kind: one whose
/// call runs a long burst of CPU by the heavy worker (its calls would otherwise share their
/// neighbours' worker: its reader, its pipe, its allocator), one whose calls lose their
/// isolates (here to the time limit) by the quarantine worker, where the heap they fill and
/// leave behind cannot make its neighbours' worker recycle; a heavy builder that then loses
/// an isolate moves on to the quarantine. The neighbours stay where they are, and so does a
/// builder whose module takes long to load at its publish's check (a call's cold start counts
/// as the call's, but a check serves no call); the operator's own
/// endpoints are never set apart.
#[tokio::test(flavor = "multi_thread")]
async fn builders_running_long_bursts_or_losing_isolates_are_served_apart() {
    let (pool, _host) = workers_with(test_config(), 1);
    let limited = |timeout: Duration, code: EndpointCode| EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout,
        }),
        ..code
    };
    let (short, long) = (Duration::from_millis(300), Duration::from_secs(5));
    let owned = |owner: &str, timeout, code: EndpointCode| EndpointCode {
        owner: Some(owner.into()),
        ..limited(timeout, code)
    };
    // 400 ms of wall time: over 50 ms of CPU (a heavy call) even on a loaded machine.
    let spin = "export default () => { const end = Date.now() + 400; let n = 0;
        while (Date.now() < end) n++; return { n: n > 0 }; }";
    let slow_load = "const end = Date.now() + 400; let n = 0; while (Date.now() < end) n++;
        export default () => ({ n: n > 0 });";
    let stuck = "export default () => { for (;;) {} };";
    let light = owned("bld_light", short, endpoint("light", ECHO));
    let loading = owned("bld_loading", long, endpoint("loading", slow_load));
    let busy = owned("bld_busy", long, endpoint("busy", spin));
    let busy_stuck = owned("bld_busy", short, endpoint("busy-stuck", stuck));
    let losing = owned("bld_losing", short, endpoint("losing", stuck));
    let operators_busy = limited(long, endpoint("operators-busy", spin));
    let operators_stuck = limited(short, endpoint("operators-stuck", stuck));
    ok(call(&pool, &light, json!({})).await);
    ok(call(&pool, &operators_busy, json!({})).await);
    assert!(matches!(
        err(call(&pool, &operators_stuck, json!({})).await),
        SandboxError::Timeout
    ));
    let check = Invocation {
        load_only: true,
        ..request(json!(null))
    };
    assert!(pool.invoke(&loading, check).await.result.is_ok());
    let stats = pool.stats().await;
    assert_eq!((stats.heavy_builders, stats.quarantined_builders), (0, 0));

    ok(call(&pool, &busy, json!({})).await);
    let stats = pool.stats().await;
    assert_eq!((stats.heavy_builders, stats.quarantined_builders), (1, 0));
    assert!(matches!(
        err(call(&pool, &losing, json!({})).await),
        SandboxError::Timeout
    ));
    let stats = pool.stats().await;
    assert_eq!((stats.heavy_builders, stats.quarantined_builders), (1, 1));
    assert_eq!(stats.worker_pids.len(), 1);
    // Their next calls go to the workers apart; the neighbours' stay on the shared one.
    ok(call(&pool, &busy, json!({})).await);
    assert!(matches!(
        err(call(&pool, &losing, json!({})).await),
        SandboxError::Timeout
    ));
    ok(call(&pool, &light, json!({})).await);
    let pids = pool.stats().await.worker_pids;
    assert_eq!(pids.len(), 3, "a shared worker and two apart: {pids:?}");
    // The workers apart run at a lower CPU priority, every thread from its start; the shared
    // one at the normal priority (but for the operator's busy endpoint's demoted thread).
    let least_nice = |pid| thread_nices(pid).into_iter().min().unwrap();
    assert!(least_nice(pids[0]) < 10);
    for &apart in &pids[1..] {
        assert!(least_nice(apart) >= 10, "{:?}", thread_nices(apart));
    }
    // The heavy builder loses an isolate: on to the quarantine.
    assert!(matches!(
        err(call(&pool, &busy_stuck, json!({})).await),
        SandboxError::Timeout
    ));
    let stats = pool.stats().await;
    assert_eq!((stats.heavy_builders, stats.quarantined_builders), (0, 2));
    pool.shutdown().await;
}

/// In the workers apart every builder is heavy, so none is held back for it there (as heavy
/// builders are on a shared worker, counted past their floor and refused rather than waiting
/// for room): each worker's budget is what holds them. Calls of isolates at the 64 MiB limit
/// are all answered, those finding no room waiting for it: two of a builder in quarantine
/// (64 MiB: one at a time), three of two builders in the heavy worker (128 MiB: two at a
/// time). Held back, the quarantine would run none of them and the heavy worker one, refusing
/// the others `overloaded` at once.
#[tokio::test(flavor = "multi_thread")]
async fn builders_apart_are_held_by_their_workers_budget_not_held_back() {
    let (pool, _host) = workers_with(test_config(), 1);
    let with = |owner: &str, slug: &str, source: &str, heap_mb: usize, timeout_ms| EndpointCode {
        owner: Some(owner.into()),
        limits: Some(sandbox::Limits {
            heap_bytes: heap_mb << 20,
            timeout: Duration::from_millis(timeout_ms),
        }),
        ..endpoint(slug, source)
    };
    let spin = "export default () => { const end = Date.now() + 400; let n = 0;
        while (Date.now() < end) n++; return { n: n > 0 }; }";
    let stuck = "export default () => { for (;;) {} };";
    let wait = "export default async () => {
        await new Promise((r) => setTimeout(r, 1000)); return { waited: true }; }";
    assert!(matches!(
        err(call(&pool, &with("bld_q", "q-stuck", stuck, 32, 300), json!({})).await),
        SandboxError::Timeout
    ));
    ok(call(&pool, &with("bld_h1", "h1-spin", spin, 32, 5000), json!({})).await);
    ok(call(&pool, &with("bld_h2", "h2-spin", spin, 32, 5000), json!({})).await);
    let stats = pool.stats().await;
    assert_eq!((stats.heavy_builders, stats.quarantined_builders), (2, 1));

    let at_once = [
        with("bld_q", "q-a", wait, 64, 5000),
        with("bld_q", "q-b", wait, 64, 5000),
        with("bld_h1", "h1-a", wait, 64, 5000),
        with("bld_h1", "h1-b", wait, 64, 5000),
        with("bld_h2", "h2-a", wait, 64, 5000),
    ];
    let mut calls = tokio::task::JoinSet::new();
    for code in at_once {
        let pool = pool.clone();
        calls.spawn(async move { call(&pool, &code, json!({})).await });
    }
    while let Some(report) = calls.join_next().await {
        ok(report.unwrap());
    }
    pool.shutdown().await;
}

/// A builder set apart leaves no isolate behind on its shared worker: there its other
/// endpoints' isolates (and what their globals hold) are dropped, so its isolate quota and
/// its heap count once, in the quarantine worker, not in both.
#[tokio::test(flavor = "multi_thread")]
async fn a_builder_set_apart_leaves_no_isolate_on_its_shared_worker() {
    let (pool, _host) = workers_with(test_config(), 1);
    let owned = |slug: &str, source: &str| EndpointCode {
        owner: Some("bld_hoarder".into()),
        limits: Some(sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout: Duration::from_millis(300),
        }),
        ..endpoint(slug, source)
    };
    let hoard = owned(
        "hoard",
        "const kept = []; export default () => { kept.push('x'.repeat(1 << 20));
            return { held: kept.length }; };",
    );
    let stuck = owned("hoarder-stuck", "export default () => { for (;;) {} };");
    let instances = |stats: &sandbox::PoolStats| -> usize {
        let hoard = stats.endpoints.iter().filter(|e| e.slug == "hoard");
        hoard.map(|e| e.instances).sum()
    };
    for held in [1, 2] {
        assert_eq!(ok(call(&pool, &hoard, json!({})).await).body["held"], held);
    }
    assert!(matches!(
        err(call(&pool, &stuck, json!({})).await),
        SandboxError::Timeout
    ));
    assert_eq!(pool.stats().await.quarantined_builders, 1);
    // Served by the quarantine worker now, from a fresh isolate: the shared worker's one,
    // holding 2 MiB, is gone.
    assert_eq!(ok(call(&pool, &hoard, json!({})).await).body["held"], 1);
    let stats = pool.stats().await;
    assert_eq!(stats.worker_pids.len(), 2, "{stats:?}");
    assert_eq!(instances(&stats), 1, "{stats:?}");
    pool.shutdown().await;
}

/// A builder's calls go one at a time until one of them has ended within its limits: the
/// first of a burst runs alone, the rest once it has ended, and a known builder's burst runs
/// side by side. A first call that loses its isolate sets its builder apart before the next
/// one runs, so an endless loop's second call never runs beside the first on a shared worker.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_builders_calls_wait_until_one_has_ended_within_its_limits() {
    let config = PoolConfig {
        instances_per_endpoint: 3,
        ..test_config()
    };
    let (pool, _host) = workers_with(config, 1);
    let owned = |owner: &str, code: EndpointCode| EndpointCode {
        owner: Some(owner.into()),
        ..code
    };
    let nap = owned(
        "bld_new",
        endpoint(
            "nap",
            "export default async () => { const start = Date.now();
                await new Promise((r) => setTimeout(r, 200)); return { start, end: Date.now() }; }",
        ),
    );
    let burst = || async {
        let (a, b, c) = tokio::join!(
            call(&pool, &nap, json!(null)),
            call(&pool, &nap, json!(null)),
            call(&pool, &nap, json!(null))
        );
        vec![a, b, c]
    };
    let spans = |reports: Vec<InvocationReport>| {
        let mut spans: Vec<(u64, u64)> = reports
            .into_iter()
            .map(|report| {
                let body = ok(report).body;
                (
                    body["start"].as_u64().unwrap(),
                    body["end"].as_u64().unwrap(),
                )
            })
            .collect();
        spans.sort_unstable();
        spans
    };
    let first = spans(burst().await);
    assert!(
        first[0].1 <= first[1].0 && first[0].1 <= first[2].0,
        "the first call ran alone: {first:?}"
    );
    let known = spans(burst().await);
    let last_start = known.iter().map(|span| span.0).max().unwrap();
    let first_end = known.iter().map(|span| span.1).min().unwrap();
    assert!(
        last_start < first_end,
        "a known builder's calls run side by side: {known:?}"
    );

    let limit = Duration::from_millis(300);
    let stuck = EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout: limit,
        }),
        ..owned(
            "bld_stuck",
            endpoint("stuck", "export default () => { for (;;) {} };"),
        )
    };
    let (a, b) = tokio::join!(
        call(&pool, &stuck, json!(null)),
        call(&pool, &stuck, json!(null))
    );
    let waited = a.duration.max(b.duration);
    assert!(matches!(err(a), SandboxError::Timeout));
    assert!(matches!(err(b), SandboxError::Timeout));
    assert!(
        waited >= limit * 2,
        "the second call waited for the first ({waited:?})"
    );
    let stats = pool.stats().await;
    assert_eq!(stats.quarantined_builders, 1);
    assert_eq!(
        stats.worker_pids.len(),
        2,
        "the second call ran apart: {stats:?}"
    );
    pool.shutdown().await;
}

/// A heavy builder's calls spend from the heavy builders' CPU budget and pause past it: the
/// same 400 ms of spinning gets through far fewer iterations where demoted threads have a
/// budget, its first call included (demoted once it has run 50 ms of CPU).
#[tokio::test(flavor = "multi_thread")]
async fn a_heavy_builders_calls_pause_past_the_heavy_cpu_budget() {
    let spin = "export default () => { const end = Date.now() + 400; let n = 0;
        while (Date.now() < end) n++; return { n }; }";
    let heavy = endpoint("heavy", spin);
    let light = endpoint("light", ECHO);
    let mut spins = Vec::new();
    for budget in [Duration::ZERO, Duration::from_millis(100)] {
        let config = PoolConfig {
            heavy_cpu_per_sec: budget,
            ..test_config()
        };
        let (pool, _host) = workers_with(config, 1);
        ok(call(&pool, &light, json!({})).await);
        let mut calls = Vec::new();
        for _ in 0..2 {
            calls.push(
                ok(call(&pool, &heavy, json!({})).await).body["n"]
                    .as_u64()
                    .unwrap(),
            );
        }
        ok(call(&pool, &light, json!({})).await);
        spins.push(calls);
        pool.shutdown().await;
    }
    // Two calls of 400 ms at 100 ms a second (after a 25 ms burst, and the first call's
    // 50-100 ms before its first check) are about a quarter of what they get unthrottled.
    let (free, throttled) = (&spins[0], &spins[1]);
    assert!(
        throttled.iter().sum::<u64>() < free.iter().sum::<u64>() / 2,
        "iterations without a budget {free:?}, with {throttled:?}"
    );
}

/// Demoted threads together spend no more than the heavy builders' CPU budget, whether their
/// calls spend it running JS (paused at the engine's interrupt checks) or in native work that
/// no check interrupts (a large string built and serialized: what the hostile suite's
/// oversized answers did, 1.6 cores of two against a budget of half a core, until a call
/// paid the debt left by those before it).
#[tokio::test(flavor = "multi_thread")]
async fn demoted_threads_together_spend_no_more_than_the_heavy_cpu_budget() {
    let budget = Duration::from_millis(100);
    let config = PoolConfig {
        heavy_cpu_per_sec: budget,
        ..test_config()
    };
    let (pool, _host) = workers_with(config, 1);
    let codes = four_heavy_endpoints();
    // Each endpoint called with `input` over and over, all four at once, until `busy` is
    // over (at least one call each).
    let keep_calling = |input: serde_json::Value, busy: Duration| {
        let (pool, codes) = (pool.clone(), codes.clone());
        async move {
            let until = Instant::now() + busy;
            let one = |code: EndpointCode| {
                let (pool, input) = (pool.clone(), input.clone());
                async move {
                    loop {
                        ok(call(&pool, &code, input.clone()).await);
                        if Instant::now() >= until {
                            break;
                        }
                    }
                }
            };
            let [a, b, c, d] = <[EndpointCode; 4]>::try_from(codes).unwrap();
            tokio::join!(one(a), one(b), one(c), one(d));
        }
    };
    // Marked heavy, then its four isolates warm in the heavy worker.
    ok(call(&pool, &codes[0], json!({ "spin": 200 })).await);
    keep_calling(json!({ "spin": 100 }), Duration::ZERO).await;
    let pids = pool.stats().await.worker_pids;
    assert_eq!(pids.len(), 2, "a shared worker and the heavy one: {pids:?}");

    let cpu = || pids.iter().map(|&pid| process_cpu(pid)).sum::<Duration>();
    for (work, input) in [
        ("JS", json!({ "spin": 1000 })),
        ("native work", json!({ "mb": 1 })),
    ] {
        let (cpu_before, started) = (cpu(), Instant::now());
        keep_calling(input, Duration::from_secs(1)).await;
        let (used, took) = (cpu() - cpu_before, started.elapsed());
        // The budget over the calls' time, with room for what each thread may run past it
        // between two checks (or in one call) and the workers' other threads.
        let bound = budget.mul_f64(took.as_secs_f64()) * 3;
        assert!(
            used <= bound,
            "four demoted threads spending CPU in {work} used {used:?} in {took:?} (a budget \
             of {budget:?} a second)"
        );
    }
    pool.shutdown().await;
}

/// A heavy builder's call that could not run before its time limit for the CPU budget's debt
/// is refused `overloaded` at once, with when to retry, and its isolate serves on: waiting
/// would only have timed it out, cost its isolate and sent its builder to the quarantine.
/// Four endpoints each building and serializing 4 MiB strings call after call, at a budget of
/// 0.05 core, owe more than half their 2 s time limit (what a call waits for the budget at
/// most) can pay; without the refusal they wait, time out and are quarantined.
#[tokio::test(flavor = "multi_thread")]
async fn a_heavy_call_the_budget_cannot_pay_for_in_time_is_refused_not_timed_out() {
    let config = PoolConfig {
        heavy_cpu_per_sec: Duration::from_millis(50),
        default_limits: sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout: Duration::from_secs(2),
        },
        ..test_config()
    };
    let (pool, _host) = workers_with(config, 1);
    let codes = four_heavy_endpoints();
    ok(call(&pool, &codes[0], json!({ "spin": 200 })).await);
    let until = Instant::now() + Duration::from_secs(3);
    let keep_calling = |code: EndpointCode| {
        let pool = pool.clone();
        async move {
            let (mut answered, mut refused) = (0, Vec::new());
            while Instant::now() < until {
                match call(&pool, &code, json!({ "mb": 4 })).await.result {
                    Ok(_) => answered += 1,
                    Err(SandboxError::Overloaded {
                        retry_after_secs,
                        why: Overload::HeavyCpuBudget,
                    }) => refused.push(retry_after_secs),
                    Err(other) => panic!("{other:?}"),
                }
            }
            (answered, refused)
        }
    };
    let [a, b, c, d] = <[EndpointCode; 4]>::try_from(codes).unwrap();
    let outcomes = tokio::join!(
        keep_calling(a),
        keep_calling(b),
        keep_calling(c),
        keep_calling(d)
    );
    let outcomes = <[_; 4]>::from(outcomes);
    let answered: usize = outcomes.iter().map(|(answered, _)| answered).sum();
    let refused: Vec<u64> = outcomes
        .into_iter()
        .flat_map(|(_, refused)| refused)
        .collect();
    assert!(
        answered > 0 && !refused.is_empty(),
        "{answered} answered, refused {refused:?}"
    );
    assert!(refused.iter().all(|&secs| secs >= 1), "{refused:?}");
    let stats = pool.stats().await;
    assert_eq!(
        (stats.heavy_builders, stats.quarantined_builders),
        (1, 0),
        "served by the heavy worker, never timed out into the quarantine"
    );
    pool.shutdown().await;
}

/// Four endpoints of one builder, each an isolate (and a thread) of its own: each call spins
/// for the milliseconds of wall time its input asks (`spin`), then builds and serializes a
/// string of the MiB it asks (`mb`), native work no check interrupts.
fn four_heavy_endpoints() -> Vec<EndpointCode> {
    let source = "export default (req) => {
        const end = Date.now() + (req.input.spin ?? 0); let n = 0; while (Date.now() < end) n++;
        const s = JSON.stringify('x'.repeat((req.input.mb ?? 0) * 1048576));
        return { n, length: s.length }; }";
    (0..4)
        .map(|i| EndpointCode {
            owner: Some("bld_heavy".into()),
            ..endpoint(&format!("heavy-{i}"), source)
        })
        .collect()
}

/// The CPU time `pid` has used (all its threads, ended ones included).
fn process_cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the worker runs");
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // The kernel's clock ticks are a hundredth of a second on Linux.
    Duration::from_millis(ticks * 10)
}

/// A builder's first long call, which nothing marked heavy yet, is demoted once it has used a
/// heavy call's CPU, not when it ends: its thread is at the lowest priority while it still
/// runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_burst_is_demoted_while_it_runs() {
    let (pool, _host) = workers_with(test_config(), 1);
    let light = endpoint("light", ECHO);
    let heavy = endpoint(
        "heavy",
        "export default () => { const end = Date.now() + 1000; let n = 0;
            while (Date.now() < end) n++; return { n: n > 0 }; }",
    );
    ok(call(&pool, &light, json!({})).await);
    let pid = pool.stats().await.worker_pids[0];
    let demoted = || thread_nices(pid).into_iter().filter(|&n| n == 19).count();
    let running = {
        let pool = pool.clone();
        tokio::spawn(async move { call(&pool, &heavy, json!({})).await })
    };
    // Its thread is demoted long before the second the call spins is over.
    let mut demoted_while_running = false;
    while !running.is_finished() {
        if demoted() == 1 {
            demoted_while_running = !running.is_finished();
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(demoted_while_running, "{:?}", thread_nices(pid));
    ok(running.await.unwrap());
    pool.shutdown().await;
}

/// A builder whose call ran a long burst of CPU (in the call, or in the cold start it needed)
/// has its isolate threads in the (confined) worker moved to the lowest CPU priority, so that
/// it yields the cores to other builders' short calls; the other builders' threads stay at the
/// normal priority.
#[tokio::test(flavor = "multi_thread")]
async fn a_builder_running_long_cpu_bursts_yields_the_cores_to_the_others() {
    let (pool, _host) = workers_with(test_config(), 1);
    let light = endpoint("light", ECHO);
    // 400 ms of wall clock spinning is well over the 50 ms of CPU that marks a builder heavy,
    // even on a loaded machine.
    let heavy = endpoint(
        "heavy",
        "export default () => { const end = Date.now() + 400; let n = 0;
            while (Date.now() < end) n++; return { n: n > 0 }; }",
    );
    ok(call(&pool, &light, json!({})).await);
    let pid = pool.stats().await.worker_pids[0];
    let normal = thread_nices(pid)[0];
    assert!(
        normal < 19,
        "the test runs at nice {normal}: nothing to lower"
    );
    let demoted = || thread_nices(pid).into_iter().filter(|&n| n == 19).count();
    assert_eq!(demoted(), 0);
    assert_eq!(pool.stats().await.cpu_demotions, 0);

    ok(call(&pool, &heavy, json!({})).await);
    assert_eq!(pool.stats().await.cpu_demotions, 1);
    assert_eq!(demoted(), 1, "{:?}", thread_nices(pid));
    // The light builder's calls, before and after, on its own thread: not demoted.
    for _ in 0..3 {
        ok(call(&pool, &light, json!({})).await);
    }
    ok(call(&pool, &heavy, json!({})).await);
    assert_eq!(demoted(), 1, "{:?}", thread_nices(pid));
    assert_eq!(pool.stats().await.cpu_demotions, 1);

    // A builder whose calls are short but whose module's top level spins: the call that
    // needed the isolate pays for its cold start, so a builder whose calls keep losing their
    // isolates (timed out, over their heap) is charged for the isolates that costs.
    let heavy_start = endpoint(
        "heavy-start",
        "const end = Date.now() + 600; let n = 0; while (Date.now() < end) n++;
         export default () => ({ n: n > 0 });",
    );
    ok(call(&pool, &heavy_start, json!({})).await);
    assert_eq!(pool.stats().await.cpu_demotions, 2);
    assert_eq!(demoted(), 2, "{:?}", thread_nices(pid));
    pool.shutdown().await;
}
