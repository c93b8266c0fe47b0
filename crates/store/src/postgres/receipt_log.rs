//! The receipt log's records in tables of their own: the pending entries
//! (`toolhost_log_pending`, by name) and the appended leaves (`toolhost_log_leaves`: a row a
//! leaf with its entry, its hash and its name, indexed by name), both migration 9; the tree's
//! interior nodes (`toolhost_log_nodes`, indexed by level and index) and the log's state
//! (`toolhost_log_state`, by name), both migration 27. Written by batches' typed members (see
//! `transaction`), read here.

use async_trait::async_trait;
use tokio_postgres::types::ToSql;

use super::{column, query, PgStore};
use crate::receipt_log::{LogState, ReceiptLogRecords};
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
const SQL_NODES: &str = "SELECT node_index, entry FROM toolhost_log_nodes \
     WHERE level = $3 AND node_index >= $1 AND node_index < $2 ORDER BY node_index";
const SQL_STATE: &str = "SELECT entry FROM toolhost_log_state WHERE name = $1";

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
        self.index_range(SQL_ENTRIES, first, count, &[]).await
    }

    async fn log_nodes(
        &self,
        level: u8,
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        match level {
            0 => self.index_range(SQL_HASHES, first, count, &[]).await,
            _ => {
                let level = i64::from(level);
                (self.index_range(SQL_NODES, first, count, &[&level])).await
            }
        }
    }

    async fn log_state(&self, state: LogState) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_STATE, state.name()).await
    }
}

impl PgStore {
    /// A column of leaves or nodes `first..first + count` (what `sql` reads: the range its
    /// `$1` and `$2`, then `more` parameters), with their indexes.
    async fn index_range(
        &self,
        sql: &str,
        first: u64,
        count: u64,
        more: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        let from = i64::try_from(first).unwrap_or(i64::MAX);
        let to = i64::try_from(first.saturating_add(count)).unwrap_or(i64::MAX);
        let params: Vec<&(dyn ToSql + Sync)> = [&from as _, &to as _]
            .into_iter()
            .chain(more.iter().copied())
            .collect();
        let client = self.client().await?;
        let rows = query(&client, sql, &params).await?;
        rows.iter()
            .map(|row| Ok((column::<i64>(row, 0)? as u64, column(row, 1)?)))
            .collect()
    }
}
