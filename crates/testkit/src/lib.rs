//! toolhost's test kit, a dev-dependency of the crates above it and never of the shipped
//! binary.
//!
//! - `conformance`: the behaviour every store engine must have, case by case.
//! - `pg_cluster`: throwaway PostgreSQL clusters on loopback ([`PgCluster`]).
//! - `test_stores`: the stores of tests that run on both engines, and [`on_both_engines!`].
//! - `arbitrary`: proptest strategies for the parsers of untrusted input.

pub mod arbitrary;
pub mod conformance;
pub mod pg_cluster;
pub mod test_stores;

pub use pg_cluster::PgCluster;
