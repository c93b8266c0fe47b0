//! Refund claims in a table of their own (`toolhost_refund_claims`, migration 17): written by
//! batches' typed members (see `transaction`), read here by receipt id, or a page at a time.

use async_trait::async_trait;

use super::PgStore;
use crate::refund_claims::RefundClaims;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_refund_claims WHERE receipt_id = $1";
const SQL_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_refund_claims \
     WHERE receipt_id > $1 ORDER BY receipt_id LIMIT $2";

#[async_trait]
impl RefundClaims for PgStore {
    async fn refund_claim(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, receipt_id).await
    }

    async fn refund_claims(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_AFTER, after, limit).await
    }
}
