//! What a worker takes away from itself before it runs any handler.

/// Applies the confinement and says what was applied, for the server's log.
pub(crate) fn apply() -> String {
    "none".to_owned()
}
