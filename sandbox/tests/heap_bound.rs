//! A heap bomb stays near its heap limit. In a test binary of its own: it reads this process's
//! peak resident set, which tests running beside it would move.

mod util;

use sandbox::SandboxError;
use serde_json::json;
use util::*;

/// Allocates without end, a few MiB between two of the engine's termination polls.
const BOMB: &str = r#"
export default async function () {
  const hoard = [];
  for (;;) hoard.push(new Array(100000).fill("x".repeat(64)));
}
"#;

/// Each call of a 32 MiB isolate allocating without end answers `ResourceLimit`, and the
/// process's peak stays within a few heap limits of where it started. The engine polls for
/// termination only every few thousand operations; while the near-limit callback granted
/// more heap each time it was called, one such call grew past 1 GiB.
#[tokio::test]
async fn a_heap_bomb_stays_near_its_heap_limit() {
    let (pool, _) = pool();
    let warm = endpoint("warm", "export default () => 1;");
    ok(invoke(&pool, &warm, json!(0)).await);
    let before = resident("self", "VmRSS:");
    let bomb = endpoint("bomb", BOMB);
    for _ in 0..3 {
        let report = invoke(&pool, &bomb, json!(0)).await;
        assert!(
            matches!(report.result, Err(SandboxError::ResourceLimit(_))),
            "{:?}",
            report.result
        );
    }
    let grew = resident("self", "VmHWM:").saturating_sub(before);
    // 32 MiB of heap, its unwind room, and the engine's own allocations, with margin.
    assert!(grew <= 160 << 20, "the peak grew {} MiB", grew >> 20);
}
