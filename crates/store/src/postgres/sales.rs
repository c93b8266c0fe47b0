//! Sales in a table of their own (`toolhost_sales`, migration 5): written by batches' typed
//! members (see `transaction`), read here. A seller's sales are one range of the
//! `(seller, receipt_id)` index, and nothing is stored twice.

use async_trait::async_trait;

use super::{column, query, PgStore};
use crate::sales::SalesLedger;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_sales WHERE receipt_id = $1";
const SQL_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_sales \
     WHERE receipt_id > $1 ORDER BY receipt_id LIMIT $2";
const SQL_SELLERS_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_sales \
     WHERE seller = $1 AND receipt_id > $2 ORDER BY receipt_id LIMIT $3";

#[async_trait]
impl SalesLedger for PgStore {
    async fn sale(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        let client = self.client().await?;
        let rows = query(&client, SQL_GET, &[&receipt_id]).await?;
        rows.first().map(|row| column(row, 0)).transpose()
    }

    async fn sales_after(
        &self,
        seller: Option<&str>,
        after: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = match seller {
            Some(seller) => query(&client, SQL_SELLERS_AFTER, &[&seller, &after, &limit]).await,
            None => query(&client, SQL_AFTER, &[&after, &limit]).await,
        }?;
        rows.iter()
            .map(|row| Ok((column(row, 0)?, column(row, 1)?)))
            .collect()
    }

    /// Migration 5 moved every sale an earlier release stored.
    async fn upgrade_sales(&self) -> StoreResult<u64> {
        Ok(0)
    }
}
