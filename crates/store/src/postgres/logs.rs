//! Endpoint logs in a table of their own (`toolhost_logs`, migration 2): an append is one
//! statement that inserts the new entries and prunes the oldest beyond what is kept, with no
//! count to read and no keys sent back; a page is an index range read.

use async_trait::async_trait;

use super::{column, limit_param, query, PgStore};
use crate::logs::{EndpointLogs, LogRow};
use crate::StoreResult;

/// Inserts the new entries and deletes the endpoint's stored entries beyond the newest `$4`.
/// The delete sees the table as it was before the insert (one statement, one snapshot), so it
/// counts only entries stored before: `$4` is what is kept minus the new ones. Two nodes
/// appending at once may each keep a few more than that for a while; the next append prunes
/// them.
const SQL_APPEND: &str = "WITH added AS (
         INSERT INTO toolhost_logs (endpoint, id, entry)
         SELECT $1, id, entry FROM unnest($2::TEXT[], $3::BYTEA[]) AS new(id, entry)
         ON CONFLICT (endpoint, id) DO UPDATE SET entry = excluded.entry
     )
     DELETE FROM toolhost_logs WHERE endpoint = $1 AND id <= (
         SELECT id FROM toolhost_logs WHERE endpoint = $1 ORDER BY id DESC OFFSET $4 LIMIT 1
     )";
const SQL_NEWEST: &str = "SELECT id, entry FROM toolhost_logs WHERE endpoint = $1 \
     ORDER BY id DESC LIMIT $2";
const SQL_BEFORE: &str = "SELECT id, entry FROM toolhost_logs WHERE endpoint = $1 AND id < $2 \
     ORDER BY id DESC LIMIT $3";
const SQL_DELETE_ALL: &str = "DELETE FROM toolhost_logs WHERE endpoint = $1";

#[async_trait]
impl EndpointLogs for PgStore {
    async fn append_logs(&self, endpoint: &str, rows: &[LogRow], keep: u64) -> StoreResult<()> {
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        let rows = &rows[rows.len().saturating_sub(keep as usize)..];
        if rows.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
        let entries: Vec<&[u8]> = rows.iter().map(|row| row.entry.as_slice()).collect();
        let kept_before = keep - rows.len() as i64;
        self.write_one(SQL_APPEND, &[&endpoint, &ids, &entries, &kept_before])
            .await
            .map(drop)
    }

    async fn logs_before(
        &self,
        endpoint: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<LogRow>> {
        let limit = limit_param(limit);
        let client = self.client().await?;
        let rows = match before {
            Some(before) => query(&client, SQL_BEFORE, &[&endpoint, &before, &limit]).await,
            None => query(&client, SQL_NEWEST, &[&endpoint, &limit]).await,
        }?;
        rows.iter()
            .map(|row| {
                Ok(LogRow {
                    id: column(row, 0)?,
                    entry: column(row, 1)?,
                })
            })
            .collect()
    }

    async fn delete_logs(&self, endpoint: &str) -> StoreResult<u64> {
        self.write_one(SQL_DELETE_ALL, &[&endpoint]).await
    }
}
