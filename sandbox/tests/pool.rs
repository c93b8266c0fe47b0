//! The pool: admission, instances, eviction, recycling, retirement and shutdown.

mod util;

use std::time::Duration;

use sandbox::{EndpointCode, Limits, Overload, PoolConfig, SandboxError};
use serde_json::json;
use util::*;

/// Counts invocations in module state, so a fresh isolate is visible as a reset count.
const COUNTER: &str = "let calls = 0; export default () => ++calls;";

/// Awaits a host call that takes 300 ms, then reports its isolate's call count.
const SLOW: &str = "let calls = 0; export default async (req, ctx) => { await ctx.httpGetJson('https://slow.test/'); return ++calls; };";

/// Awaits a host call that never answers: the call runs until its time limit.
const HANG: &str =
    "export default async (req, ctx) => { await ctx.httpGetJson('https://hang.test/'); };";

/// An endpoint of `owner`'s, with every capability granted.
fn owned_by(slug: &str, owner: &str, source: &str) -> EndpointCode {
    EndpointCode {
        owner: Some(owner.to_owned()),
        ..granted(slug, source)
    }
}

fn versioned(code: &EndpointCode, version: &str, source: &str) -> EndpointCode {
    EndpointCode {
        version: version.to_owned(),
        source: source.to_owned(),
        ..code.clone()
    }
}

#[tokio::test]
async fn concurrency_beyond_the_bound_is_overloaded() {
    let config = PoolConfig {
        max_concurrent_per_endpoint: 2,
        overload_retry_after_secs: 3,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let code = granted("busy", SLOW);
    let (a, b, c) = tokio::join!(
        invoke(&pool, &code, json!(1)),
        invoke(&pool, &code, json!(2)),
        async {
            // Let the first two be admitted first.
            tokio::time::sleep(Duration::from_millis(50)).await;
            invoke(&pool, &code, json!(3)).await
        },
    );
    ok(a);
    ok(b);
    let e = err(c);
    assert_eq!(
        e,
        SandboxError::Overloaded {
            retry_after_secs: 3,
            why: Overload::EndpointBusy,
        }
    );
    assert_eq!(e.code(), "overloaded");
    assert_eq!(pool.stats().overloaded, 1);
    // Once drained, the endpoint is admitted again.
    ok(invoke(&pool, &code, json!(4)).await);
}

#[tokio::test]
async fn a_new_version_replaces_the_isolates() {
    let (pool, _) = pool();
    let v1 = endpoint("versioned", COUNTER);
    assert_eq!(body(&pool, &v1, json!(null)).await, json!(1));
    assert_eq!(body(&pool, &v1, json!(null)).await, json!(2));
    let v2 = versioned(&v1, "v2", "export default () => 'v2';");
    assert_eq!(body(&pool, &v2, json!(null)).await, json!("v2"));
    let stats = pool.stats();
    assert_eq!(stats.retired, 1);
    assert_eq!(stats.endpoints.len(), 1);
    assert_eq!(stats.endpoints[0].version, "v2");
    assert_eq!(stats.isolates_created, 2);
}

#[tokio::test]
async fn retire_drops_the_isolates() {
    let (pool, _) = pool();
    let code = endpoint("retired", COUNTER);
    assert_eq!(body(&pool, &code, json!(null)).await, json!(1));
    assert_eq!(pool.stats().live_isolates, 1);
    pool.retire("retired");
    pool.retire("never-existed");
    let stats = pool.stats();
    assert_eq!(stats.live_isolates, 0);
    assert_eq!(stats.retired, 1);
    // Invoked again, it starts from scratch.
    assert_eq!(body(&pool, &code, json!(null)).await, json!(1));
}

#[tokio::test]
async fn several_instances_serve_one_endpoint_in_parallel() {
    let config = PoolConfig {
        instances_per_endpoint: 2,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let code = granted("parallel", SLOW);
    let (a, b) = tokio::join!(
        invoke(&pool, &code, json!(1)),
        invoke(&pool, &code, json!(2))
    );
    // Each instance is its own isolate with its own module state: both saw their first call.
    assert_eq!(ok(a).body, json!(1));
    assert_eq!(ok(b).body, json!(1));
    let stats = pool.stats();
    assert_eq!(stats.endpoints[0].instances, 2);
    assert_eq!(stats.isolates_created, 2);
    // Idle instances are reused rather than multiplied.
    ok(invoke(&pool, &code, json!(3)).await);
    assert_eq!(pool.stats().endpoints[0].instances, 2);
}

#[tokio::test]
async fn warming_loads_instances_before_any_call_within_the_limits() {
    let config = PoolConfig {
        instances_per_endpoint: 3,
        max_isolates: 2,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let code = granted("warmed", SLOW);
    // Asked for four: three per endpoint at most, and two isolates in the whole pool.
    assert_eq!(pool.warm(&code, 4).await, 2);
    let stats = pool.stats();
    assert_eq!(stats.endpoints[0].instances, 2, "{stats:?}");
    assert_eq!(stats.isolates_created, 2, "{stats:?}");
    assert_eq!(stats.invocations, 0, "{stats:?}");
    // The calls find their isolates loaded: none is built for them, and each instance's
    // module state is fresh (its first call counts 1).
    let (a, b) = tokio::join!(
        invoke(&pool, &code, json!(1)),
        invoke(&pool, &code, json!(2))
    );
    assert_eq!((ok(a).body, ok(b).body), (json!(1), json!(1)));
    assert_eq!(pool.stats().isolates_created, 2);
}

#[tokio::test]
async fn a_module_that_fails_to_warm_leaves_nothing_behind() {
    let (pool, _) = pool();
    let code = endpoint("broken-warm", "export default (");
    assert_eq!(pool.warm(&code, 1).await, 0);
    assert!(pool.stats().endpoints.is_empty(), "{:?}", pool.stats());
    // The call meets the failure itself, as any cold start would.
    let e = err(invoke(&pool, &code, json!(null)).await);
    assert!(matches!(e, SandboxError::CompileError(_)), "{e:?}");
}

#[tokio::test]
async fn one_instance_queues_invocations_in_order() {
    let (pool, _) = pool();
    let code = granted("serial", SLOW);
    let (a, b) = tokio::join!(
        invoke(&pool, &code, json!(1)),
        invoke(&pool, &code, json!(2))
    );
    let mut answers = vec![ok(a).body, ok(b).body];
    answers.sort_by_key(|v| v.as_i64());
    assert_eq!(answers, vec![json!(1), json!(2)]);
    assert_eq!(pool.stats().endpoints[0].instances, 1);
}

#[tokio::test]
async fn least_recently_used_isolates_are_evicted_at_capacity() {
    let config = PoolConfig {
        max_isolates: 2,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let a = endpoint("a", COUNTER);
    let b = endpoint("b", COUNTER);
    let c = endpoint("c", COUNTER);
    assert_eq!(body(&pool, &a, json!(null)).await, json!(1));
    assert_eq!(body(&pool, &b, json!(null)).await, json!(1));
    assert_eq!(body(&pool, &a, json!(null)).await, json!(2));
    // `b` is the least recently used: it makes room for `c`.
    assert_eq!(body(&pool, &c, json!(null)).await, json!(1));
    let stats = pool.stats();
    assert_eq!(stats.live_isolates, 2);
    assert_eq!(stats.evictions, 1);
    let slugs: Vec<_> = stats.endpoints.iter().map(|e| e.slug.as_str()).collect();
    assert_eq!(slugs, vec!["a", "c"]);
    assert_eq!(body(&pool, &a, json!(null)).await, json!(3));
}

#[tokio::test]
async fn isolates_are_recycled_after_n_invocations() {
    let config = PoolConfig {
        recycle_after_invocations: 2,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let code = endpoint("recycled", COUNTER);
    let mut answers = Vec::new();
    for _ in 0..5 {
        answers.push(body(&pool, &code, json!(null)).await);
    }
    assert_eq!(
        answers,
        vec![json!(1), json!(2), json!(1), json!(2), json!(1)]
    );
    assert_eq!(pool.stats().recycled, 2);
}

#[tokio::test]
async fn per_endpoint_limits_override_the_defaults() {
    let (pool, _) = pool();
    // 24 MiB fits the test default (32 MiB) but not a 16 MiB override.
    let hungry = "export default () => { const a = []; for (let i = 0; i < 24; i++) a.push('x'.repeat(1 << 20) + i); return a.length; };";
    let roomy = endpoint("roomy", hungry);
    assert_eq!(body(&pool, &roomy, json!(null)).await, json!(24));
    let mut tight = endpoint("tight-heap", hungry);
    tight.limits = Some(sandbox::Limits {
        heap_bytes: 16 * 1024 * 1024,
        timeout: test_config().default_limits.timeout,
    });
    let e = err(invoke(&pool, &tight, json!(null)).await);
    assert_eq!(
        e,
        SandboxError::ResourceLimit("heap limit exceeded".to_owned())
    );
    // The host call takes 300 ms: fine by default, past a 100 ms override.
    let mut quick = granted("tight-time", SLOW);
    assert_eq!(body(&pool, &quick, json!(null)).await, json!(1));
    quick.version = "v2".to_owned();
    quick.limits = Some(sandbox::Limits {
        heap_bytes: test_config().default_limits.heap_bytes,
        timeout: Duration::from_millis(100),
    });
    assert_eq!(
        err(invoke(&pool, &quick, json!(null)).await),
        SandboxError::Timeout
    );
}

#[tokio::test]
async fn compile_errors_are_remembered_for_the_version() {
    let (pool, _) = pool();
    let code = endpoint("broken", "export default (");
    for _ in 0..3 {
        let e = err(invoke(&pool, &code, json!(null)).await);
        assert!(matches!(e, SandboxError::CompileError(_)), "{e:?}");
    }
    assert_eq!(pool.stats().isolates_created, 0);
    let fixed = versioned(&code, "v2", "export default () => 'fixed';");
    assert_eq!(body(&pool, &fixed, json!(null)).await, json!("fixed"));
}

#[tokio::test]
async fn shutdown_finishes_and_refuses_new_work() {
    let (pool, _) = pool();
    let code = endpoint("bye", COUNTER);
    ok(invoke(&pool, &code, json!(null)).await);
    pool.shutdown().await;
    let e = err(invoke(&pool, &code, json!(null)).await);
    assert_eq!(e.code(), "sandbox_internal");
    assert_eq!(pool.stats().live_isolates, 0);
}

#[tokio::test]
async fn many_endpoints_run_side_by_side() {
    let (pool, _) = pool();
    let endpoints: Vec<_> = (0..8)
        .map(|i| {
            endpoint(
                &format!("e{i}"),
                &format!("export default (req) => ({{ me: {i}, input: req.input }});"),
            )
        })
        .collect();
    let answers = futures_join_all(&pool, &endpoints).await;
    for (i, answer) in answers.into_iter().enumerate() {
        assert_eq!(answer, json!({ "me": i, "input": i }));
    }
}

async fn futures_join_all(
    pool: &sandbox::Pool,
    endpoints: &[EndpointCode],
) -> Vec<serde_json::Value> {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, code) in endpoints.iter().enumerate() {
        let pool = pool.clone();
        let code = code.clone();
        tasks.spawn(async move { (i, body(&pool, &code, json!(i)).await) });
    }
    let mut answers = vec![serde_json::Value::Null; endpoints.len()];
    while let Some(joined) = tasks.join_next().await {
        let (i, answer) = joined.unwrap();
        answers[i] = answer;
    }
    answers
}

#[tokio::test]
async fn spares_take_cold_starts_and_are_refilled() {
    let config = PoolConfig {
        spare_isolates: 1,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    assert_eq!(pool.stats().spare_isolates, 1);
    assert_eq!(
        body(&pool, &endpoint("first", COUNTER), json!(null)).await,
        json!(1)
    );
    assert_eq!(
        body(&pool, &endpoint("second", COUNTER), json!(null)).await,
        json!(1)
    );
    let stats = pool.stats();
    assert_eq!(stats.spare_isolates, 1);
    assert_eq!(stats.live_isolates, 2);
    // The refilled spare builds its runtime on its own thread, then reports itself ready.
    wait_for_ready_spares(&pool, 1).await;
}

/// Uses the web globals: URL, Response, and `performance.now()`, the time since its isolate's
/// time origin.
const WEB: &str = "export default async () => { const r = new Response(new URL('https://a.example/?q=1').searchParams.get('q')); return { text: await r.text(), now: performance.now() }; };";

#[tokio::test]
async fn spares_follow_the_kind_of_cold_starts() {
    let config = PoolConfig {
        spare_isolates: 1,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    wait_for_ready_spares(&pool, 1).await;
    assert_eq!(pool.stats().web_spares, 0);

    // A web endpoint takes the plain spare (its scripts load as it binds) and is replaced by
    // a spare with every web script loaded.
    let first = body(&pool, &endpoint("web-1", WEB), json!(null)).await;
    assert_eq!(first["text"], "1");
    assert_eq!(pool.stats().web_spares, 1);
    wait_for_ready_spares(&pool, 1).await;

    // The next one binds that spare. Its scripts were loaded while it waited, but its time
    // origin is when it was bound, not when it was prepared.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let second = body(&pool, &endpoint("web-2", WEB), json!(null)).await;
    assert_eq!(second["text"], "1");
    let now = second["now"].as_f64().expect("performance.now()");
    assert!(now < 2000.0, "time origin set before binding: {now} ms");
    assert_eq!(pool.stats().web_spares, 1);
    wait_for_ready_spares(&pool, 1).await;

    // A plain endpoint takes whatever spare there is, and its replacement is plain again.
    assert_eq!(
        body(&pool, &endpoint("plain", COUNTER), json!(null)).await,
        json!(1)
    );
    let stats = pool.stats();
    assert_eq!((stats.spare_isolates, stats.web_spares), (1, 0));
    assert_eq!(stats.live_isolates, 3);
}

/// Polls until `n` spares have their runtime built (bounded, so a broken flag fails the test).
async fn wait_for_ready_spares(pool: &sandbox::Pool, n: usize) {
    for _ in 0..3000 {
        let stats = pool.stats();
        assert!(stats.ready_spares <= stats.spare_isolates, "{stats:?}");
        if stats.ready_spares == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("spares never became ready: {:?}", pool.stats());
}

#[tokio::test]
async fn without_spares_cold_starts_build_their_own_runtime() {
    let config = PoolConfig {
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    assert_eq!(
        body(&pool, &endpoint("solo", COUNTER), json!(null)).await,
        json!(1)
    );
    let stats = pool.stats();
    assert_eq!(stats.spare_isolates, 0);
    assert_eq!(stats.ready_spares, 0);
    assert_eq!(stats.live_isolates, 1);
}

/// An endpoint whose heap limit no room could ever hold (a builder's over its builder's heap
/// cap, anyone's over the budget) is refused at once with `resource_limit`, saying so, not
/// kept waiting its time limit and then told to retry (`overloaded`) for ever.
#[tokio::test]
async fn a_heap_limit_no_room_can_hold_is_refused_at_once() {
    let config = PoolConfig {
        memory_budget_bytes: 96 << 20,
        max_heap_per_owner_bytes: 48 << 20,
        heap_floor_per_owner_bytes: 32 << 20,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let limits = |mib: usize| {
        Some(Limits {
            heap_bytes: mib << 20,
            timeout: Duration::from_secs(5),
        })
    };
    let cases = [
        (
            owned_by("big-builder", "erin", ECHO),
            64,
            "(64 MiB)",
            "(48 MiB)",
        ),
        (endpoint("big-operator", ECHO), 128, "(128 MiB)", "(96 MiB)"),
    ];
    for (code, mib, asked, largest) in cases {
        let code = EndpointCode {
            limits: limits(mib),
            ..code
        };
        let started = std::time::Instant::now();
        match err(invoke(&pool, &code, json!({})).await) {
            SandboxError::ResourceLimit(message) => {
                assert!(
                    message.contains(asked) && message.contains(largest),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(4), "it waited");
    }
    assert_eq!(pool.stats().live_isolates, 0);
    // Within both, it serves.
    let fits = EndpointCode {
        limits: limits(40),
        ..owned_by("fits", "erin", ECHO)
    };
    assert_eq!(body(&pool, &fits, json!(1)).await, json!({"echo": 1}));
    pool.shutdown().await;
}

/// Isolates count at their heap limit (32 MiB in `test_config`) against the pool's memory
/// budget and their owner's quotas. Making room evicts the owner's least recently used idle
/// isolate first; when nothing idle can make room no limit is exceeded: a call over its
/// owner's quota is refused `Overloaded`, one that finds the pool's budget taken waits for
/// room.
#[tokio::test]
async fn the_memory_budget_and_owner_quotas_hold() {
    const HEAP: usize = 32 * 1024 * 1024;
    let budget = 3 * HEAP;
    let config = PoolConfig {
        memory_budget_bytes: budget,
        max_isolates_per_owner: 2,
        max_heap_per_owner_bytes: usize::MAX,
        instances_per_endpoint: 1,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let owned = |slug: &str, owner: Option<&str>, source: &str| EndpointCode {
        owner: owner.map(str::to_owned),
        ..granted(slug, source)
    };
    let live = |pool: &sandbox::Pool| -> Vec<String> {
        let stats = pool.stats();
        assert!(stats.live_heap_bytes <= budget, "{stats:?}");
        stats
            .endpoints
            .into_iter()
            .filter(|e| e.instances > 0)
            .map(|e| e.slug)
            .collect()
    };

    // Alice's third endpoint takes the place of her least recently used one.
    for slug in ["a1", "a2", "a3"] {
        ok(invoke(&pool, &owned(slug, Some("alice"), COUNTER), json!(1)).await);
    }
    assert_eq!(live(&pool), ["a2", "a3"]);
    // Bob fills the budget, and his second endpoint then evicts his own idle isolate, not Alice's.
    ok(invoke(&pool, &owned("b1", Some("bob"), COUNTER), json!(1)).await);
    assert_eq!(live(&pool), ["a2", "a3", "b1"]);
    ok(invoke(&pool, &owned("b2", Some("bob"), COUNTER), json!(1)).await);
    assert_eq!(live(&pool), ["a2", "a3", "b2"]);
    assert_eq!(pool.stats().evictions, 2);

    // Carol's two isolates busy: her third endpoint finds nothing of hers idle to evict.
    let [c1, c2, c3] = ["c1", "c2", "c3"].map(|slug| owned(slug, Some("carol"), SLOW));
    let (x, y, z) = tokio::join!(
        invoke(&pool, &c1, json!(1)),
        invoke(&pool, &c2, json!(2)),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            invoke(&pool, &c3, json!(3)).await
        },
    );
    ok(x);
    ok(y);
    assert!(matches!(
        err(z),
        SandboxError::Overloaded {
            why: Overload::BuilderQuota,
            ..
        }
    ));

    // The operator's endpoints have no owner quota, but the budget holds: three busy isolates
    // fill it, and a fourth endpoint waits for room (not refused: busy isolates free theirs
    // within their time limits), starting once one of them is idle.
    let [o1, o2, o3, o4] = ["o1", "o2", "o3", "o4"].map(|slug| owned(slug, None, SLOW));
    let (p, q, r, (s, waiting)) = tokio::join!(
        invoke(&pool, &o1, json!(1)),
        invoke(&pool, &o2, json!(2)),
        invoke(&pool, &o3, json!(3)),
        async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let look = async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                live(&pool)
            };
            tokio::join!(invoke(&pool, &o4, json!(4)), look)
        },
    );
    ok(p);
    ok(q);
    ok(r);
    assert_eq!(waiting, ["o1", "o2", "o3"], "o4 waited, evicting nothing");
    ok(s);
    let after = live(&pool);
    assert!(
        after.len() == 3 && after.contains(&"o4".to_owned()),
        "{after:?}"
    );
    // Idle again, they make room as usual.
    ok(invoke(&pool, &owned("a1", Some("alice"), COUNTER), json!(1)).await);
}

/// Two attacker builders fill the pool with busy isolates (calls that never settle) while one
/// victim's isolate sits idle and another victim starts cold: past their floor the attackers
/// may not take the budget's last floor-sized reserve nor evict the idle victim, so the cold
/// victim gets an isolate and the idle one keeps its own. (Before floors, the second attacker
/// evicted the idle victim and filled the budget, and the cold victim was refused.)
#[tokio::test]
async fn attackers_past_their_floor_leave_room_for_the_other_builders() {
    const HEAP: usize = 32 * 1024 * 1024;
    let config = PoolConfig {
        memory_budget_bytes: 8 * HEAP,
        max_isolates_per_owner: 4,
        max_heap_per_owner_bytes: 4 * HEAP,
        heap_floor_per_owner_bytes: 2 * HEAP,
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    ok(invoke(&pool, &owned_by("v1", "victor", COUNTER), json!(1)).await);

    let attack = |owner: &'static str, after: u64| {
        let pool = pool.clone();
        let codes: Vec<EndpointCode> = (1..=4)
            .map(|n| owned_by(&format!("{owner}-{n}"), owner, HANG))
            .collect();
        async move {
            tokio::time::sleep(Duration::from_millis(after)).await;
            let calls: Vec<_> = codes
                .into_iter()
                .map(|code| {
                    let pool = pool.clone();
                    tokio::spawn(async move { invoke(&pool, &code, json!(0)).await })
                })
                .collect();
            let mut reports = Vec::new();
            for call in calls {
                reports.push(call.await.unwrap());
            }
            reports
        }
    };
    let victim = async {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let answer = invoke(&pool, &owned_by("w1", "wendy", COUNTER), json!(1)).await;
        (answer, pool.stats())
    };
    let (mallory, trudy, (wendy, during)) =
        tokio::join!(attack("mallory", 0), attack("trudy", 300), victim);

    let outcomes = |reports: Vec<sandbox::InvocationReport>| -> Vec<&'static str> {
        let mut outcomes = reports
            .into_iter()
            .map(|report| match report.result {
                Err(SandboxError::Timeout) => "ran",
                Err(SandboxError::Overloaded { .. }) => "refused",
                other => panic!("an attacker's call: {other:?}"),
            })
            .collect::<Vec<_>>();
        outcomes.sort();
        outcomes
    };
    // Mallory's two isolates past her floor fit in the budget less the reserve; Trudy gets
    // her floor, and past it finds the reserve is all that is left: her other two calls wait
    // for room (and get it, or give up, once Mallory's time out).
    assert_eq!(outcomes(mallory), ["ran"; 4]);
    assert_eq!(outcomes(trudy).len(), 4);
    ok(wendy);
    let live: Vec<String> = during
        .endpoints
        .into_iter()
        .filter(|e| e.instances > 0)
        .map(|e| e.slug)
        .collect();
    let trudys = live.iter().filter(|slug| slug.starts_with("trudy")).count();
    assert_eq!(trudys, 2, "{live:?}");
    assert!(
        live.contains(&"v1".to_owned()),
        "the idle victim kept its isolate: {live:?}"
    );
    assert!(
        during.live_heap_bytes <= 8 * HEAP,
        "{}",
        during.live_heap_bytes
    );
}

/// Many attacker builders, each within its floor, whose calls keep timing out: once their
/// calls have cost them isolates they are held back as builders past their floor, so they
/// neither evict an idle victim's isolate nor take the budget's reserve, and a cold victim
/// still gets an isolate. (Before: the attackers took the whole budget, evicting the idle
/// victim, and the cold victim was refused `PoolFull`.)
#[tokio::test]
async fn builders_losing_isolates_leave_room_for_the_others() {
    const HEAP: usize = 32 * 1024 * 1024;
    let config = PoolConfig {
        memory_budget_bytes: 8 * HEAP,
        heap_floor_per_owner_bytes: 2 * HEAP,
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let attackers: Vec<EndpointCode> = (1..=8)
        .map(|n| owned_by(&format!("a{n}"), &format!("attacker-{n}"), HANG))
        .collect();
    let attack = || {
        let calls: Vec<_> = attackers
            .iter()
            .map(|code| {
                let (pool, code) = (pool.clone(), code.clone());
                tokio::spawn(async move { invoke(&pool, &code, json!(0)).await.result })
            })
            .collect();
        async move {
            let mut refused = 0;
            for call in calls {
                match call.await.unwrap() {
                    Err(SandboxError::Timeout) => {}
                    Err(SandboxError::Overloaded { .. }) => refused += 1,
                    other => panic!("an attacker's call: {other:?}"),
                }
            }
            refused
        }
    };
    // The first round fits (8 isolates), and every call times out, losing its isolate.
    assert_eq!(attack().await, 0);
    ok(invoke(&pool, &owned_by("v1", "victor", COUNTER), json!(1)).await);

    let victim = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let answer = invoke(&pool, &owned_by("w1", "wendy", COUNTER), json!(1)).await;
        (answer, pool.stats())
    };
    let (refused, (wendy, during)) = tokio::join!(attack(), victim);
    // Held to the budget less the reserve (6 isolates), beside the idle victim's: five ran.
    assert_eq!(refused, 3);
    ok(wendy);
    let live: Vec<String> = during
        .endpoints
        .into_iter()
        .filter(|e| e.instances > 0)
        .map(|e| e.slug)
        .collect();
    assert!(
        live.contains(&"v1".to_owned()) && live.contains(&"w1".to_owned()),
        "both victims hold an isolate: {live:?}"
    );
}

/// Each isolate is built on a fresh thread: on one thread, the engine's per-thread state wore
/// out around the 136th isolate (a 32 MiB heap limit), after which no module could be
/// evaluated there.
#[tokio::test(flavor = "multi_thread")]
async fn a_thread_is_replaced_before_its_engine_state_wears_out() {
    let config = PoolConfig {
        recycle_after_invocations: 1,
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let code = endpoint("recycled", ECHO);
    for n in 0..300 {
        let report = invoke(&pool, &code, json!(n)).await;
        assert_eq!(ok(report).body, json!({ "echo": n }), "call {n}");
    }
    assert!(pool.stats().recycled >= 300);
}

/// The bench's handler (bench/peers/toolhost-bench-words.js), which spins when asked to.
const WORDS: &str = r#"
function words(input) {
  const text = input && typeof input.text === "string" ? input.text : "";
  const trimmed = text.trim();
  return { words: trimmed === "" ? 0 : trimmed.split(/\s+/).length, upper: text.toUpperCase(), input };
}
export default async function (req, ctx) {
  if (req.input.spin) for (;;) {}
  return words(req.input);
}
"#;

/// Many callers, isolates recycled every few hundred calls on two instances, and calls that
/// hit the time limit among them: every other call is answered by the handler. Isolates built
/// one after another on one thread used to break it for good after a few dozen: a call's
/// promise stopped settling (`Timeout` within milliseconds) and every later call was a
/// `CompileError` ("Module evaluation is still pending ...").
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn recycling_under_load_never_breaks_an_endpoint() {
    const CALLERS: usize = 48;
    const CALLS: usize = 400;
    let config = PoolConfig {
        recycle_after_invocations: 300,
        instances_per_endpoint: 2,
        ..PoolConfig::default()
    };
    let (pool, _) = pool_with(config);
    let words = std::sync::Arc::new(endpoint("words", WORDS));
    let spinner = {
        let (pool, words) = (pool.clone(), words.clone());
        tokio::spawn(async move {
            let mut timed_out = 0;
            for _ in 0..3 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                match invoke(&pool, &words, json!({ "spin": true })).await.result {
                    Err(SandboxError::Timeout) => timed_out += 1,
                    Err(SandboxError::Overloaded { .. }) => {}
                    other => panic!("a spinning call: {other:?}"),
                }
            }
            timed_out
        })
    };
    let callers: Vec<_> = (0..CALLERS)
        .map(|caller| {
            let (pool, words) = (pool.clone(), words.clone());
            tokio::spawn(async move {
                let mut answered = 0;
                for call in 0..CALLS {
                    let text = format!("caller {caller} call {call}");
                    match invoke(&pool, &words, json!({ "text": text })).await.result {
                        Ok(answer) => {
                            assert_eq!(answer.body["words"], json!(4), "{caller}/{call}");
                            answered += 1;
                        }
                        Err(SandboxError::Overloaded { .. }) => {}
                        Err(err) => panic!("caller {caller} call {call}: {err:?}"),
                    }
                }
                answered
            })
        })
        .collect();
    let mut answered = 0;
    for caller in callers {
        answered += caller.await.unwrap();
    }
    let timed_out = spinner.await.unwrap();
    let stats = pool.stats();
    assert!(answered >= CALLERS * CALLS * 9 / 10, "{answered} answered");
    assert!(timed_out >= 1, "no spinning call timed out");
    assert!(stats.recycled >= 50, "{stats:?}");
    assert_eq!(stats.engine_resets, 0, "{stats:?}");
}

/// A module that loaded before and then fails to load (here at random, as on an engine whose
/// thread state wore out did) is tried again on a fresh thread, counted, and not remembered:
/// the endpoint keeps answering.
#[tokio::test(flavor = "multi_thread")]
async fn a_module_that_loaded_before_is_not_remembered_as_broken() {
    let config = PoolConfig {
        recycle_after_invocations: 1,
        spare_isolates: 0,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let source = "if (crypto.getRandomValues(new Uint8Array(1))[0] < 128) throw new Error('unlucky');\nexport default () => 1;";
    // A version whose first load fails is remembered as broken, as any module that never
    // loaded: take the first version that loads.
    let mut flaky = endpoint("flaky", source);
    for version in 0.. {
        flaky = versioned(&flaky, &format!("v{version}"), source);
        if invoke(&pool, &flaky, json!(null)).await.result.is_ok() {
            break;
        }
        assert!(version < 40, "no version ever loaded");
    }
    let mut outcomes = Vec::new();
    for _ in 0..60 {
        outcomes.push(match invoke(&pool, &flaky, json!(null)).await.result {
            Ok(answer) => {
                assert_eq!(answer.body, json!(1));
                true
            }
            Err(SandboxError::CompileError(message)) => {
                assert!(message.contains("unlucky"), "{message}");
                false
            }
            Err(err) => panic!("{err:?}"),
        });
    }
    // Each call fails only if its load fails twice.
    let answered = outcomes.iter().filter(|ok| **ok).count();
    assert!(answered > outcomes.len() / 2, "{outcomes:?}");
    assert!(pool.stats().engine_resets > 0, "{:?}", pool.stats());
}
