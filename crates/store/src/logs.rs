//! Endpoint logs as the store keeps them: each endpoint's newest entries, an id that sorts in
//! call order (a uuid v7 in hex) and the entry's JSON, the oldest pruned as new ones arrive.
//!
//! The domains speak to the store in their own terms here rather than in trees and keys, so
//! each engine keeps the records in the shape that suits it: [`kv`] is the shape any key-value
//! engine can use (sled's: entries in the `logs` tree under `{endpoint}/{id}`, and a count per
//! endpoint in `meta` read to know how many to prune); PostgreSQL keeps a table of them and
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
pub mod kv {
    use crate::{paging, Batch, Store, StoreError, StoreResult, Tree};

    use super::LogRow;

    fn prefix(endpoint: &str) -> Vec<u8> {
        format!("{endpoint}/").into_bytes()
    }

    /// Where an endpoint's number of stored entries is kept (in `meta`).
    pub fn count_key(endpoint: &str) -> Vec<u8> {
        format!("log_count/{endpoint}").into_bytes()
    }

    async fn read_count<S: Store + ?Sized>(
        store: &S,
        key: &[u8],
    ) -> StoreResult<(Option<Vec<u8>>, u64)> {
        let raw = store.get(Tree::Meta, key).await?;
        let n = raw
            .as_deref()
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok((raw, n))
    }

    pub(crate) async fn append<S: Store + ?Sized>(
        store: &S,
        endpoint: &str,
        rows: &[LogRow],
        keep: u64,
    ) -> StoreResult<()> {
        let rows = &rows[rows
            .len()
            .saturating_sub(usize::try_from(keep).unwrap_or(usize::MAX))..];
        if rows.is_empty() {
            return Ok(());
        }
        let prefix = prefix(endpoint);
        let counter = count_key(endpoint);
        // Entries, pruning and count move together; again when a concurrent writer changed the
        // count or pruned the same entries (at the cap an append leaves the count as it was,
        // so the count alone would let two appends that each prune one entry both land, and
        // the log would grow past `keep`).
        let keys: Vec<Vec<u8>> = (rows.iter())
            .map(|row| [prefix.as_slice(), row.id.as_bytes()].concat())
            .collect();
        loop {
            let (raw, stored) = read_count(store, &counter).await?;
            // An entry appended again replaces itself: it adds nothing to the count, and it
            // must still be there as read when the batch lands.
            let stored_now = store.get_many(Tree::Logs, &keys).await?;
            let replaced: Vec<(Vec<u8>, Vec<u8>)> = (keys.iter().zip(stored_now))
                .filter_map(|(key, old)| Some((key.clone(), old?)))
                .collect();
            let total = stored + (rows.len() - replaced.len()) as u64;
            let excess = total.saturating_sub(keep);
            // The oldest but those replaced (put again below; a rule broken, so one may be
            // among them, and goes at the next append).
            let oldest: Vec<_> = match excess as usize {
                0 => Vec::new(),
                n => (store
                    .scan_prefix(Tree::Logs, &prefix, None, n + replaced.len())
                    .await?)
                    .into_iter()
                    .filter(|(key, _)| !replaced.iter().any(|(r, _)| r == key))
                    .take(n)
                    .collect(),
            };
            let count = total.saturating_sub(oldest.len() as u64);
            let mut batch = Batch::new().require_equals(Tree::Meta, counter.clone(), raw);
            for (key, old) in replaced {
                batch = batch.require_equals(Tree::Logs, key, Some(old));
            }
            for (key, entry) in oldest {
                batch = batch
                    .require_equals(Tree::Logs, key.clone(), Some(entry))
                    .delete(Tree::Logs, key);
            }
            for (key, row) in keys.iter().zip(rows) {
                batch = batch.put(Tree::Logs, key.clone(), row.entry.clone());
            }
            batch = batch.put(Tree::Meta, counter.clone(), count.to_string().into_bytes());
            match store.apply(batch).await {
                Ok(()) => return Ok(()),
                Err(StoreError::ConditionFailed(_)) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub(crate) async fn before<S: Store + ?Sized>(
        store: &S,
        endpoint: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<LogRow>> {
        let prefix = prefix(endpoint);
        let before = before.map(|id| [prefix.as_slice(), id.as_bytes()].concat());
        let entries = store
            .scan_prefix_rev(Tree::Logs, &prefix, before.as_deref(), limit)
            .await?;
        entries
            .into_iter()
            .map(|(key, entry)| {
                let id = String::from_utf8(key[prefix.len()..].to_vec())
                    .map_err(|_| StoreError::Corrupt(format!("log key of {endpoint}")))?;
                Ok(LogRow { id, entry })
            })
            .collect()
    }

    pub(crate) async fn delete<S: Store + ?Sized>(store: &S, endpoint: &str) -> StoreResult<u64> {
        let deleted = paging::delete_prefix(store, Tree::Logs, &prefix(endpoint)).await?;
        store.delete(Tree::Meta, &count_key(endpoint)).await?;
        Ok(deleted as u64)
    }
}
