//! Pending settlements in a table of their own (`toolhost_pending_settlements`, migration 14):
//! written by batches' typed members (see `transaction`), read here a page at a time by
//! receipt id, or many ids in one statement.

use async_trait::async_trait;

use super::PgStore;
use crate::pending_settlements::PendingSettlements;
use crate::StoreResult;

const SQL_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_pending_settlements \
     WHERE receipt_id > $1 ORDER BY receipt_id LIMIT $2";
const SQL_GET_MANY: &str = "SELECT receipt_id, entry FROM toolhost_pending_settlements \
     WHERE receipt_id = ANY($1::TEXT[])";

#[async_trait]
impl PendingSettlements for PgStore {
    async fn pending_settlements(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_AFTER, after, limit).await
    }

    async fn pending_settlements_of(
        &self,
        receipt_ids: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>> {
        self.entries_of(SQL_GET_MANY, receipt_ids).await
    }
}
