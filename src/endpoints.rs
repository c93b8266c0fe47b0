//! The endpoint lifecycle: builders and the admin create, change, pause, resume and delete
//! hosted endpoints; the admin gates the JS runtime (capabilities, limits) and decides
//! content-safety reviews.
//!
//! # Layout
//! - `input`: the create and PATCH bodies and per-field checks.
//! - `files`: per-endpoint handler files (`ctx.files`).
//! - `draft`: a builder's test run of an unpublished module.
//! - `parts`: the parts an operation works on, who may touch an endpoint, owner events.
//! - `lifecycle`: create, update, delete, review and capability grants as plain functions.
//! - `kept`: the kept revisions of an endpoint, looked up.
//! - `revisions`: where a deploy goes (serving, or waiting for a grant), rollback, conflicts.
//! - `rollout`: a kept revision serving a share of calls beside the serving one.
//! - `templates`: starting points for builders (the creator-skill endpoint of spec 2.4).
//! - `owners`: the owner's display name on endpoints stored before it was kept.
//! - `reservation`: a deleted slug stays its former owner's for a while.
//! - `wipe`: a deleted endpoint's data, wiped at once or by the next maintenance pass.

pub mod draft;
mod error;
mod files;
mod input;
mod kept;
pub mod lifecycle;
pub mod owners;
mod parts;
pub mod reservation;
pub mod revisions;
pub mod rollout;
pub mod templates;
pub mod wipe;

pub use error::EndpointError;
pub use files::{read as read_file, FileInfo, MAX_FILES, MAX_FILE_BYTES};
pub use input::{CreateRequest, PatchRequest, SafetyAttestation};
pub use lifecycle::{
    create, decide, decide_grant, delete, grant_queue, grant_view, manage_view, review_queue,
    secrets_changed, update, GrantView, ManageView,
};
pub use parts::{can_manage, owned, visible, Parts};
