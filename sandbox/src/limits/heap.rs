//! Heap limit: the isolate is created with a heap cap; when the engine reports that the cap is
//! near, the callback marks the isolate, terminates the running script and grants headroom so
//! the script can unwind. A marked isolate answers `ResourceLimit` and is discarded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use deno_core::{v8, JsRuntime};

/// Most heap a terminated script is given past its limit to unwind.
const UNWIND_ROOM: usize = 16 * 1024 * 1024;

pub(crate) fn create_params(heap_bytes: usize) -> v8::CreateParams {
    v8::Isolate::create_params().heap_limits(0, heap_bytes)
}

/// Installs the near-limit callback; the returned flag is set once the limit was reached.
pub(crate) fn install(runtime: &mut JsRuntime) -> Arc<AtomicBool> {
    let exceeded = Arc::new(AtomicBool::new(false));
    let flag = exceeded.clone();
    let isolate = runtime.v8_isolate().thread_safe_handle();
    runtime.add_near_heap_limit_callback(move |current, _initial| {
        // Once only: room to unwind the terminated script (the isolate is dropped right
        // after). The engine may poll for termination only thousands of operations later,
        // and a script allocating all the while calls this again: granting more each time
        // let one call of a 64 MiB isolate grow past 1 GiB. Past the one grant, allocations
        // fail inside the script until the termination lands.
        if flag.swap(true, Ordering::AcqRel) {
            return current;
        }
        isolate.terminate_execution();
        current.saturating_add(UNWIND_ROOM.min(current / 4))
    });
    exceeded
}
