//! Endpoint logs as the store keeps them: each endpoint's newest entries, an id that sorts in
//! call order (a uuid v7 in hex) and the entry's JSON, the oldest pruned as new ones arrive.
//!
//! The domains speak to the store in their own terms here rather than in trees and keys, so
//! each engine keeps the records in the shape that suits it: [`kv`] is the shape any key-value
//! engine can use (sled's: an append's entries in pages of many, in the `logs` tree, and a count
//! per endpoint in `meta` read to know how many to prune); PostgreSQL keeps a table of them and
//! prunes by one statement, with no count to read and no keys sent back and forth.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRow {
    /// Sorts after every earlier entry of the endpoint (uuid v7, 32 hex digits).
    pub id: String,
    /// The entry's JSON.
    pub entry: Vec<u8>,
}

/// Appends of an endpoint within which its log is back to its newest `keep` when an append
/// kept more: an entry older than what was pruned (stored by a node whose clock is behind),
/// or one stored by another writer while a prune ran. PostgreSQL prunes from where a node's
/// last prune ended, and from the start once in this many appends (`postgres/logs.rs` says
/// why); sled prunes the oldest every time.
pub const FULL_PRUNE_EVERY: usize = 64;

/// Where endpoint logs are kept. Every engine implements it (the conformance suite's `logs_*`
/// cases); each write is durable when it returns, as every store write.
#[async_trait]
pub trait EndpointLogs {
    /// Stores an endpoint's new entries (oldest first, each newer than any stored as a rule;
    /// one whose id is stored replaces that entry and counts once) and prunes its oldest so
    /// that at most `keep` remain, in one atomic write; within
    /// [`FULL_PRUNE_EVERY`] appends when the rule was broken or writers appended at once.
    async fn append_logs(&self, endpoint: &str, rows: &[LogRow], keep: u64) -> StoreResult<()>;
    /// At most `limit` of an endpoint's entries, newest first, only those older than `before`
    /// (an id) when given.
    async fn logs_before(
        &self,
        endpoint: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<LogRow>>;
    /// Removes every entry of an endpoint; returns how many there were.
    async fn delete_logs(&self, endpoint: &str) -> StoreResult<u64>;
}

/// Endpoint logs over any [`Store`](crate::Store)'s trees, for engines without a shape of their
/// own.
pub mod kv;
