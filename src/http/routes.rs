//! The HTTP handlers of each domain, thin: they take the caller's credentials and input as
//! extractors, call the domain's plain functions and shape the answer. The invocation routes
//! (`/tools/{slug}`, `/ai/invoke`) hand calls to the pipeline.

pub mod backup;
pub mod builders;
pub mod catalog;
pub mod endpoints;
pub mod events;
pub mod files;
pub mod invoke;
pub mod logs;
pub mod manifest;
pub mod payments;
pub mod quotes;
pub mod receipts;
pub mod revenue;
pub mod revisions;
pub mod safety;
pub mod secrets;
pub mod tools;
