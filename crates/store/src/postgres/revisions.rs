//! Endpoints' revisions in a table of their own (`toolhost_revisions`, migration 18): written
//! by batches' typed members (see `transaction`), read here by endpoint and number; a deleted
//! endpoint's removed in one statement.

use async_trait::async_trait;

use super::{column, limit_param, query, PgStore};
use crate::revisions::EndpointRevisions;
use crate::{StoreError, StoreResult};

const SQL_GET: &str = "SELECT entry FROM toolhost_revisions WHERE endpoint_id = $1 AND number = $2";
const SQL_NEWEST: &str = "SELECT number, entry FROM toolhost_revisions \
     WHERE endpoint_id = $1 ORDER BY number DESC LIMIT $2";
const SQL_DELETE_ALL: &str = "DELETE FROM toolhost_revisions WHERE endpoint_id = $1";

/// A revision number as its column holds it; one past `i64` is none that was stored.
fn number_param(number: u64) -> Option<i64> {
    i64::try_from(number).ok()
}

#[async_trait]
impl EndpointRevisions for PgStore {
    async fn revision(&self, endpoint_id: &str, number: u64) -> StoreResult<Option<Vec<u8>>> {
        let Some(number) = number_param(number) else {
            return Ok(None);
        };
        let client = self.client().await?;
        let rows = query(&client, SQL_GET, &[&endpoint_id, &number]).await?;
        rows.first().map(|row| column(row, 0)).transpose()
    }

    async fn newest_revisions(
        &self,
        endpoint_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        let client = self.client().await?;
        let limit = limit_param(limit);
        let rows = query(&client, SQL_NEWEST, &[&endpoint_id, &limit]).await?;
        rows.iter()
            .map(|row| {
                let number: i64 = column(row, 0)?;
                let number = u64::try_from(number)
                    .map_err(|_| StoreError::Corrupt(format!("revision number {number}")))?;
                Ok((number, column(row, 1)?))
            })
            .collect()
    }

    async fn delete_revisions(&self, endpoint_id: &str) -> StoreResult<()> {
        self.write_one(SQL_DELETE_ALL, &[&endpoint_id]).await?;
        Ok(())
    }
}
