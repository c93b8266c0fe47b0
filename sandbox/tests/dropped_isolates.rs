//! A dropped isolate gives its heap back. In a test binary of its own: it reads this process's
//! resident set, which tests running beside it would move.
//!
//! The published QuickJS binding kept everything a dropped isolate's realm reached (the
//! binding still references deno_core's op functions when the engine's runtime is freed, and
//! each function holds its realm): a handler keeping 16 MiB in a module variable left 16 MiB
//! behind with every isolate, so a worker dropping isolates grew until it was replaced.
//! `third_party/v8x` frees those objects with the runtime.

mod util;

use serde_json::json;
use util::*;

/// Keeps about 16 MiB reachable from the module for the isolate's whole life.
const HOARDER: &str = r#"
const hoard = Array.from({ length: 1 << 20 }, (_, i) => i + 0.5);
export default () => hoard.length;
"#;

/// Every call gets a fresh isolate (the previous one is dropped after its one call): after
/// 24 of them the process holds about what it held after the first few, not 24 hoards.
#[tokio::test]
async fn a_dropped_isolate_gives_back_its_heap() {
    let (pool, _) = pool_with(sandbox::PoolConfig {
        recycle_after_invocations: 1,
        spare_isolates: 0,
        ..test_config()
    });
    let hoarder = endpoint("hoarder", HOARDER);
    for _ in 0..4 {
        assert_eq!(
            ok(invoke(&pool, &hoarder, json!(0)).await).body,
            json!(1 << 20)
        );
    }
    let settled = resident("self", "VmRSS:");
    for _ in 0..20 {
        assert_eq!(
            ok(invoke(&pool, &hoarder, json!(0)).await).body,
            json!(1 << 20)
        );
    }
    let grew = resident("self", "VmRSS:").saturating_sub(settled);
    println!("20 dropped isolates grew the process {} KiB", grew >> 10);
    // 20 hoards would be 320 MiB; what each isolate leaves besides is a fraction of one.
    assert!(
        grew <= 48 << 20,
        "20 dropped isolates grew the process {} MiB",
        grew >> 20
    );
    assert!(pool.stats().recycled >= 20, "{:?}", pool.stats());
}
