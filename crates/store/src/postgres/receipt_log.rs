//! The receipt log's records in tables of their own (migration 9): the pending entries
//! (`toolhost_log_pending`, by name) and the appended leaves (`toolhost_log_leaves`: a row a
//! leaf with its entry, its hash and its name, indexed by name), written by batches' typed
//! members (see `transaction`), read here. The interior nodes stay keys of the key-value
//! table's `receipt_log` tree ([`crate::receipt_log`]).

use async_trait::async_trait;

use super::{column, query, PgStore};
use crate::receipt_log::{kv, ReceiptLogRecords};
use crate::StoreResult;

const SQL_PENDING: &str = "SELECT name, entry FROM toolhost_log_pending \
     WHERE name > $1 ORDER BY name LIMIT $2";
const SQL_PENDING_ENTRY: &str = "SELECT entry FROM toolhost_log_pending WHERE name = $1";
/// A receipt re-signed has a leaf a version, all under its name: the latest is its place.
const SQL_LEAVES: &str = "SELECT DISTINCT ON (name) name, leaf FROM toolhost_log_leaves \
     WHERE name = ANY($1::TEXT[]) ORDER BY name, leaf DESC";
const SQL_ENTRIES: &str = "SELECT leaf, entry FROM toolhost_log_leaves \
     WHERE leaf >= $1 AND leaf < $2 ORDER BY leaf";
const SQL_HASHES: &str = "SELECT leaf, hash FROM toolhost_log_leaves \
     WHERE leaf >= $1 AND leaf < $2 ORDER BY leaf";

#[async_trait]
impl ReceiptLogRecords for PgStore {
    async fn log_pending(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_PENDING, after, limit).await
    }

    async fn log_pending_entry(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_PENDING_ENTRY, name).await
    }

    async fn log_leaves(&self, names: &[&str]) -> StoreResult<Vec<Option<u64>>> {
        let client = self.client().await?;
        let rows = query(&client, SQL_LEAVES, &[&names]).await?;
        let mut latest = std::collections::HashMap::with_capacity(rows.len());
        for row in &rows {
            let name: String = column(row, 0)?;
            latest.insert(name, column::<i64>(row, 1)? as u64);
        }
        Ok(names
            .iter()
            .map(|name| latest.get(*name).copied())
            .collect())
    }

    async fn log_entries(&self, first: u64, count: u64) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        self.leaf_range(SQL_ENTRIES, first, count).await
    }

    async fn log_nodes(
        &self,
        level: u8,
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        match level {
            0 => self.leaf_range(SQL_HASHES, first, count).await,
            _ => kv::nodes(self, level, first, count).await,
        }
    }
}

impl PgStore {
    /// A column of leaves `first..first + count` (what `sql` reads), with their indexes.
    async fn leaf_range(
        &self,
        sql: &str,
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        let from = i64::try_from(first).unwrap_or(i64::MAX);
        let to = i64::try_from(first.saturating_add(count)).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = query(&client, sql, &[&from, &to]).await?;
        rows.iter()
            .map(|row| Ok((column::<i64>(row, 0)? as u64, column(row, 1)?)))
            .collect()
    }
}
