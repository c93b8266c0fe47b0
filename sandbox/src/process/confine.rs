//! The worker's use of [`crate::confine`]: the steps in the order that module asks for.

use crate::confine::{self, ConfineError, ConfineOptions};
use crate::PoolConfig;

/// First thing in the worker, while it has one thread: drop inherited descriptors (stdio
/// stays: it is the pipe to the server, and stderr its log) and close the file system to every
/// thread it will start.
pub(crate) fn before_start() -> Result<(), ConfineError> {
    confine::close_inherited_fds(&[]).map_err(|source| ConfineError::Process {
        what: "closing inherited descriptors",
        source,
    })?;
    confine::restrict_file_system()?;
    Ok(())
}

/// Once the pool exists, before the first handler: the rest, for good. Returns the one-line
/// report the server logs.
pub(crate) fn before_serving(config: &PoolConfig) -> Result<String, ConfineError> {
    confine::confine_current_process_with(&ConfineOptions::for_pool(config))
        .map(|confinement| confinement.to_string())
}
