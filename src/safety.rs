//! Content safety: the published policy, the scanner applying it to builder content, and the
//! per-endpoint verdict an admin reviews.
//!
//! # Layout
//! - `policy`: the rules, each with a stable id, a category and an outcome.
//! - `scanner`: one detector per rule id; findings with masked excerpts.
//! - `verdict`: the `contentSafety` object of builder endpoints and its transitions.

pub mod policy;
pub mod scanner;
pub mod verdict;

pub use scanner::{scan, Finding};
pub use verdict::{field_group, ContentSafety, SafetyStatus};
