//! Paid-out marks in a table of their own (`toolhost_paid_out`, migration 13): written by
//! batches' typed members (see `transaction`), read here by receipt id, many in one statement.

use async_trait::async_trait;

use super::PgStore;
use crate::paid_out::PaidOutMarks;
use crate::StoreResult;

const SQL_GET_MANY: &str =
    "SELECT receipt_id, entry FROM toolhost_paid_out WHERE receipt_id = ANY($1::TEXT[])";

#[async_trait]
impl PaidOutMarks for PgStore {
    async fn paid_out(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        self.entries_of(SQL_GET_MANY, receipt_ids).await
    }
}
