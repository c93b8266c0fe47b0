//! The startup snapshot: deno_core's bootstrap and the ops' glue, run once per process
//! and serialized, so each new isolate restores it instead of evaluating the scripts again.
//! The QuickJS backend supports this by recording and replaying its C-API calls. If building
//! the snapshot fails, isolates are built from scratch (slower, same behaviour).

use std::sync::OnceLock;

use deno_core::{JsRuntimeForSnapshot, RuntimeOptions};

use crate::ops;

static SNAPSHOT: OnceLock<Option<&'static [u8]>> = OnceLock::new();

/// The process's snapshot, built on first use (threads asking meanwhile wait for it).
pub(crate) fn startup_snapshot() -> Option<&'static [u8]> {
    *SNAPSHOT.get_or_init(|| match std::panic::catch_unwind(build) {
        Ok(Ok(blob)) => Some(Box::leak(blob)),
        Ok(Err(err)) => {
            tracing::warn!(%err, "cannot build the isolate startup snapshot");
            None
        }
        Err(_) => {
            tracing::warn!("building the isolate startup snapshot panicked");
            None
        }
    })
}

fn build() -> Result<Box<[u8]>, deno_core::error::CoreError> {
    let runtime = JsRuntimeForSnapshot::try_new(RuntimeOptions {
        // No code runs in the snapshot's runtime: it needs no blob budget.
        extensions: ops::extensions(0),
        ..Default::default()
    })?;
    Ok(runtime.snapshot())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_quickjs_backend_builds_a_snapshot() {
        let blob = super::startup_snapshot().expect("snapshot");
        assert!(!blob.is_empty());
    }
}
