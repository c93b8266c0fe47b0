//! Receipts in a table of their own (`toolhost_receipts`, migration 6): written by batches'
//! typed members (see `transaction`), read and swept here. Free calls' receipts are indexed by
//! when they were issued (a partial index, of free ones only), so a sweep is one bounded
//! delete of the old ones and their proofs (`toolhost_receipt_proofs`, migration 26), however
//! many paid receipts there are.

use async_trait::async_trait;

use super::{limit_param, PgStore};
use crate::receipts::ReceiptRecords;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_receipts WHERE receipt_id = $1";
const SQL_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_receipts \
     WHERE receipt_id > $1 ORDER BY receipt_id LIMIT $2";
const SQL_PROOF: &str = "SELECT entry FROM toolhost_receipt_proofs WHERE receipt_id = $1";
/// The old free receipts go, and the proofs of those that go with them, in one statement; its
/// row count is the receipts'.
const SQL_SWEEP: &str = "WITH old AS ( \
         SELECT receipt_id FROM toolhost_receipts WHERE free AND issued_at_ms < $1 \
         ORDER BY issued_at_ms LIMIT $2 FOR UPDATE), \
     proofs AS ( \
         DELETE FROM toolhost_receipt_proofs WHERE receipt_id IN (SELECT receipt_id FROM old)) \
     DELETE FROM toolhost_receipts WHERE receipt_id IN (SELECT receipt_id FROM old)";

#[async_trait]
impl ReceiptRecords for PgStore {
    async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, receipt_id).await
    }

    async fn receipt_proof(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_PROOF, receipt_id).await
    }

    async fn receipts_after(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_AFTER, after, limit).await
    }

    async fn sweep_free_receipts(&self, before_ms: i64, limit: usize) -> StoreResult<u64> {
        self.write_one(SQL_SWEEP, &[&before_ms, &limit_param(limit)])
            .await
    }
}
