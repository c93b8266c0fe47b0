//! Sales in a table of their own (`toolhost_sales`, migration 5): written by batches' typed
//! members (see `transaction`), read here. A seller's sales are one range of the
//! `(seller, receipt_id)` index, and nothing is stored twice.

use async_trait::async_trait;

use super::{limit_param, PgStore};
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
        self.entry_by_id(SQL_GET, receipt_id).await
    }

    async fn sales_after(
        &self,
        seller: Option<&str>,
        after: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let limit = limit_param(limit);
        match seller {
            Some(seller) => {
                (self.ids_and_entries(SQL_SELLERS_AFTER, &[&seller, &after, &limit])).await
            }
            None => self.ids_and_entries(SQL_AFTER, &[&after, &limit]).await,
        }
    }

    /// Migration 5 moved every sale an earlier release stored.
    async fn upgrade_sales(&self) -> StoreResult<u64> {
        Ok(0)
    }
}
