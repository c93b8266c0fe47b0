//! Receipts as the store keeps them: one record per receipt, under its id, read by id, walked
//! in id (issue) order, and free calls' receipts swept once old.
//!
//! A receipt is written only inside batches (with the sale, the nonce and the log entry of its
//! call: [`Batch::put_receipt`](crate::Batch::put_receipt), conditioned with
//! [`Batch::require_receipt`](crate::Batch::require_receipt)); this trait reads and sweeps
//! them. [`kv`] is the shape any key-value engine keeps (sled's: the receipt's JSON in the
//! `receipts` tree under its id, as every release has stored it); PostgreSQL keeps a table with
//! the endpoint, the payer, whether it is a free call's and when it was issued as columns
//! (`toolhost_receipts`, migration 6), so a sweep is one bounded delete of old free receipts.
//!
//! A free call's receipt is proven by its batch's signature: the proof is a record of its own
//! under the same id, written with the receipt
//! ([`Batch::put_receipt_proof`](crate::Batch::put_receipt_proof)), read by
//! [`ReceiptRecords::receipt_proof`], and removed with the receipt by a sweep (sled keeps it in
//! the `receipt_proofs` tree, PostgreSQL in `toolhost_receipt_proofs`, migration 26).

use async_trait::async_trait;

use crate::StoreResult;

/// One stored receipt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiptRow {
    /// `rcpt_` and a UUIDv7: ids sort in issue order.
    pub receipt_id: String,
    pub endpoint: Option<String>,
    pub payer: Option<String>,
    /// A free call's (uncharged, no payment): swept once older than the retention.
    pub free: bool,
    /// When it was issued, in Unix milliseconds.
    pub issued_at_ms: i64,
    /// The receipt's JSON, as it is served.
    pub entry: Vec<u8>,
}

/// Where receipts are read and swept. Every engine implements it (the conformance suite's
/// `receipts_*` cases).
#[async_trait]
pub trait ReceiptRecords {
    /// The receipt's JSON, if it is kept.
    async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>>;
    /// The proof stored with a free call's receipt, if it has one.
    async fn receipt_proof(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Receipts whose id sorts after `after` (from the first when `None`), in id order, at
    /// most `limit`: ids and JSON.
    async fn receipts_after(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// Removes free calls' receipts issued before `before_ms`, with their proofs, looking at
    /// no more than about `limit` receipts (so a pass stays short; the next goes on); returns
    /// how many went. Receipts that are not free calls' are never removed.
    async fn sweep_free_receipts(&self, before_ms: i64, limit: usize) -> StoreResult<u64>;
}

/// Receipts over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use serde::Deserialize;

    use crate::{Batch, Store, StoreResult, Tree};

    /// In `meta`: the id of the last receipt a sweep passed, where the next one starts.
    const SWEEP_CURSOR: &[u8] = b"sweep/receipts";
    /// Receipts read per page by a sweep.
    const PAGE: usize = 256;

    /// What a sweep reads of a receipt.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Issued {
        issued_at: String,
        charged: bool,
        payment_method: String,
    }

    /// When a receipt was issued (`None`: unreadable) and whether it is a free call's.
    fn issued(entry: &[u8]) -> Option<(i64, bool)> {
        let receipt: Issued = serde_json::from_slice(entry).ok()?;
        let at = time::OffsetDateTime::parse(
            &receipt.issued_at,
            &time::format_description::well_known::Rfc3339,
        )
        .ok()?;
        let ms = i64::try_from(at.unix_timestamp_nanos() / 1_000_000).ok()?;
        Some((ms, !receipt.charged && receipt.payment_method == "free"))
    }

    pub(crate) async fn get<S: Store + ?Sized>(
        store: &S,
        receipt_id: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(Tree::Receipts, receipt_id.as_bytes()).await
    }

    pub(crate) async fn proof<S: Store + ?Sized>(
        store: &S,
        receipt_id: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(Tree::ReceiptProofs, receipt_id.as_bytes()).await
    }

    pub(crate) async fn after<S: Store + ?Sized>(
        store: &S,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let after = after.map(str::as_bytes);
        let page = store.scan_prefix(Tree::Receipts, b"", after, limit).await?;
        Ok(page
            .into_iter()
            .map(|(key, entry)| (String::from_utf8_lossy(&key).into_owned(), entry))
            .collect())
    }

    /// Walks from where the last sweep stopped, in id (issue) order, to the first receipt young
    /// enough to keep, a page at a time, `limit` receipts' worth of pages at most. A receipt it
    /// cannot read is kept: only a free one may go.
    pub(crate) async fn sweep<S: Store + ?Sized>(
        store: &S,
        before_ms: i64,
        limit: usize,
    ) -> StoreResult<u64> {
        let mut cursor = store.get(Tree::Meta, SWEEP_CURSOR).await?;
        let mut swept = 0;
        for _ in 0..limit.div_ceil(PAGE).max(1) {
            let page =
                (store.scan_prefix(Tree::Receipts, b"rcpt_", cursor.as_deref(), PAGE)).await?;
            let full = page.len() == PAGE;
            let mut batch = Batch::new();
            let mut young = false;
            let mut last_old = None;
            for (key, entry) in page {
                let issued = issued(&entry);
                if issued.is_some_and(|(at, _)| at >= before_ms) {
                    young = true;
                    break;
                }
                if issued.is_some_and(|(_, free)| free) {
                    batch = batch
                        .delete(Tree::Receipts, key.clone())
                        .delete(Tree::ReceiptProofs, key.clone());
                    swept += 1;
                }
                last_old = Some(key);
            }
            if let Some(key) = last_old {
                batch = batch.put(Tree::Meta, SWEEP_CURSOR, key.clone());
                cursor = Some(key);
            }
            if !batch.writes.is_empty() {
                store.apply(batch).await?;
            }
            if young || !full {
                break;
            }
        }
        Ok(swept)
    }
}
