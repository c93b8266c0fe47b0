//! Refunds in a table of their own (`toolhost_refunds`, migration 12): written by batches'
//! typed members (see `transaction`), read here by receipt id, many in one statement.

use async_trait::async_trait;

use super::PgStore;
use crate::refunds::RefundRecords;
use crate::StoreResult;

const SQL_GET_MANY: &str =
    "SELECT receipt_id, entry FROM toolhost_refunds WHERE receipt_id = ANY($1::TEXT[])";

#[async_trait]
impl RefundRecords for PgStore {
    async fn refunds(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        self.entries_of(SQL_GET_MANY, receipt_ids).await
    }
}
