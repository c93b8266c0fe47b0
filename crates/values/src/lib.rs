//! The bottom of toolhost: values every layer above uses and that use nothing of toolhost.
//!
//! - `error`: the one error shape of every answer ([`error::ApiError`]) and the closed list of
//!   codes clients see ([`error::ErrorCode`]); each domain converts its own errors into it.
//! - `money`: exact amounts in USDC atomic units.
//! - `timestamp`: RFC 3339 times and `since` filters.
//! - `urls`: the service's absolute URLs, from its base URL.
//! - `keyfile`: key files written once, readable by their owner only.
//! - `metrics`: the Prometheus counters and histograms.
//! - `canonical`: canonical JSON, the bytes receipts are signed over and logged as.
//! - `backup`: the embedded store's backup file (written by the server, checked by the CLI).

pub mod backup;
pub mod canonical;
pub mod error;
pub mod keyfile;
pub mod metrics;
pub mod money;
pub mod timestamp;
pub mod urls;
