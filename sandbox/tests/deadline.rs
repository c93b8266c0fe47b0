//! The caller's hard deadline: an isolate thread that does not stop at its time limit (here
//! blocked in native code by the test host's `block-ms:<n>` key, which the watchdog's
//! `terminate_execution` cannot interrupt, like an engine busy in garbage collection) is given
//! up on at the time limit plus `timeout_grace`, and abandoned: the caller is answered, the
//! endpoint's next call runs on a fresh isolate at once, and the thread's late return changes
//! nothing. Timing asserts are generous: the machine running them may be loaded.

mod util;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use sandbox::{Overload, Pool, PoolConfig, SandboxError};
use serde_json::json;
use util::*;

/// The time limit of `test_config`.
const LIMIT: Duration = Duration::from_millis(1500);

/// On top of the limit and the grace, what a loaded machine may add before the caller runs.
const MARGIN: Duration = Duration::from_secs(2);

/// Counts its calls in module state (so a fresh isolate shows as a reset count). Input
/// `{ block: ms }` blocks the thread in the host for that long, then writes a KV key the
/// caller must never see written: the call was terminated while it was blocked.
const BLOCKER: &str = r#"let calls = 0;
export default async (req, ctx) => {
    calls++;
    if (req.input && req.input.block) {
        await ctx.kv.get("block-ms:" + req.input.block);
        await ctx.kv.set("after-block", calls);
    }
    if (req.input && req.input.mark) await ctx.kv.set(req.input.mark, calls);
    return calls;
};"#;

fn config() -> PoolConfig {
    let config = test_config();
    assert_eq!(config.default_limits.timeout, LIMIT);
    config
}

/// Waits (bounded) until every abandoned thread has come back and ended.
async fn wait_for_abandoned_to_end(pool: &Pool, within: Duration) {
    let until = Instant::now() + within;
    while pool.stats().abandoned_isolates > 0 {
        assert!(
            Instant::now() < until,
            "abandoned threads never ended: {:?}",
            pool.stats()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn kv(host: &MemoryHost, slug: &str, key: &str) -> Option<serde_json::Value> {
    host.kv
        .lock()
        .unwrap()
        .get(&(slug.to_owned(), key.to_owned()))
        .map(|(value, _)| value.clone())
}

#[tokio::test]
async fn a_thread_stuck_in_native_code_is_abandoned_at_the_hard_deadline() {
    let config = config();
    let (grace, heap) = (config.timeout_grace, config.default_limits.heap_bytes);
    let (pool, host) = pool_with(config);
    let code = granted("stuck", BLOCKER);
    assert_eq!(body(&pool, &code, json!(null)).await, json!(1));

    // Blocked for 10 s: the caller is answered at the limit plus the grace.
    let started = Instant::now();
    let e = err(invoke(&pool, &code, json!({ "block": 10_000 })).await);
    let waited = started.elapsed();
    assert_eq!(e, SandboxError::Timeout);
    assert!(
        waited >= LIMIT + grace,
        "answered before the hard deadline: {waited:?}"
    );
    assert!(waited < LIMIT + grace + MARGIN, "answered late: {waited:?}");
    let stats = pool.stats();
    assert_eq!(
        (stats.abandoned_isolates, stats.abandoned),
        (1, 1),
        "{stats:?}"
    );
    assert_eq!(stats.live_isolates, 0, "{stats:?}");
    // The stuck thread still holds its memory: it counts against the budget.
    assert_eq!(stats.live_heap_bytes, heap, "{stats:?}");

    // The next call runs at once on a fresh isolate (module state starts over), while the
    // old thread is still blocked.
    let started = Instant::now();
    assert_eq!(body(&pool, &code, json!(null)).await, json!(1));
    assert!(started.elapsed() < MARGIN, "{:?}", started.elapsed());
    assert_eq!(host.unblocked.load(Ordering::SeqCst), 0, "still blocked");
    assert_eq!(pool.stats().live_heap_bytes, 2 * heap);
    assert_neighbour_ok(&pool).await;

    // The stuck thread comes back (10 s after it blocked) and ends without running any more
    // of the handler, and without disturbing the endpoint's new isolate.
    wait_for_abandoned_to_end(&pool, Duration::from_secs(20)).await;
    assert_eq!(host.unblocked.load(Ordering::SeqCst), 1);
    assert_eq!(kv(&host, "stuck", "after-block"), None);
    assert_eq!(body(&pool, &code, json!(null)).await, json!(2));
    let stats = pool.stats();
    assert_eq!(
        (stats.abandoned_isolates, stats.abandoned),
        (0, 1),
        "{stats:?}"
    );
    assert_eq!(stats.live_isolates, 2, "stuck and neighbour: {stats:?}");
    assert_eq!(stats.live_heap_bytes, 2 * heap, "{stats:?}");
    pool.shutdown().await;
}

#[tokio::test]
async fn calls_queued_behind_a_stuck_call_are_answered_and_never_run() {
    let config = PoolConfig {
        instances_per_endpoint: 1,
        ..config()
    };
    let grace = config.timeout_grace;
    let (pool, host) = pool_with(config);
    let code = granted("jammed", BLOCKER);
    assert_eq!(body(&pool, &code, json!(null)).await, json!(1));

    let started = Instant::now();
    let (stuck, queued) = tokio::join!(invoke(&pool, &code, json!({ "block": 10_000 })), async {
        // Queued on the same (only) instance, behind the blocked call.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let report = invoke(&pool, &code, json!({ "mark": "queued-ran" })).await;
        (report, started.elapsed())
    });
    let waited = started.elapsed();
    assert_eq!(err(stuck), SandboxError::Timeout);
    let (queued, queued_waited) = queued;
    assert_eq!(err(queued), SandboxError::Timeout);
    assert!(queued_waited < LIMIT + grace + MARGIN, "{queued_waited:?}");
    assert!(waited < LIMIT + grace + MARGIN, "{waited:?}");
    assert_eq!(pool.stats().abandoned, 1, "one thread abandoned, once");

    // A fresh instance serves the endpoint meanwhile.
    assert_eq!(body(&pool, &code, json!(null)).await, json!(1));
    wait_for_abandoned_to_end(&pool, Duration::from_secs(20)).await;
    // The queued call was dropped with the stuck thread, never run.
    assert_eq!(kv(&host, "jammed", "queued-ran"), None);
    assert_eq!(kv(&host, "jammed", "after-block"), None);
    assert_eq!(body(&pool, &code, json!(null)).await, json!(2));
}

/// At `max_abandoned_isolates` no new isolate starts (cold starts answer `Overloaded`) while
/// live isolates keep serving; once the stuck thread ends, cold starts work again.
#[tokio::test]
async fn at_the_cap_of_abandoned_threads_no_new_isolate_starts() {
    let config = PoolConfig {
        max_abandoned_isolates: 1,
        ..config()
    };
    let (pool, _host) = pool_with(config);
    let live = endpoint("live", ECHO);
    ok(invoke(&pool, &live, json!(1)).await);
    let code = granted("stuck-at-cap", BLOCKER);
    assert_eq!(
        err(invoke(&pool, &code, json!({ "block": 5_000 })).await),
        SandboxError::Timeout
    );
    assert_eq!(pool.stats().abandoned_isolates, 1);
    assert!(matches!(
        err(invoke(&pool, &code, json!(null)).await),
        SandboxError::Overloaded {
            why: Overload::StuckIsolates,
            ..
        }
    ));
    assert!(matches!(
        err(invoke(&pool, &endpoint("cold", ECHO), json!(null)).await),
        SandboxError::Overloaded {
            why: Overload::StuckIsolates,
            ..
        }
    ));
    ok(invoke(&pool, &live, json!(2)).await);

    wait_for_abandoned_to_end(&pool, Duration::from_secs(20)).await;
    assert_eq!(body(&pool, &code, json!(null)).await, json!(1));
    ok(invoke(&pool, &endpoint("cold", ECHO), json!(null)).await);
}

/// A call that stops at its limit, as usual, abandons nothing.
#[tokio::test]
async fn a_prompt_timeout_abandons_nothing() {
    let (pool, _host) = pool_with(config());
    let code = endpoint("spin", "export default () => { for (;;) {} };");
    let started = Instant::now();
    assert_eq!(
        err(invoke(&pool, &code, json!(null)).await),
        SandboxError::Timeout
    );
    assert!(
        started.elapsed() < LIMIT + MARGIN,
        "{:?}",
        started.elapsed()
    );
    let stats = pool.stats();
    assert_eq!(
        (stats.abandoned_isolates, stats.abandoned),
        (0, 0),
        "{stats:?}"
    );
    assert_neighbour_ok(&pool).await;
}
