//! Refunds as the store keeps them: one record per refunded receipt, under the receipt's id
//! (a receipt is refunded at most once), read by id, many at once.
//!
//! A refund is written only inside batches (with whatever returns the money:
//! [`Batch::put_refund`](crate::Batch::put_refund), conditioned with
//! [`Batch::require_refund`](crate::Batch::require_refund)); this trait reads them. [`kv`] is
//! the shape any key-value engine keeps (sled's: the refund's JSON in the `ledger` tree under
//! `refund/{receiptId}`, as every release has stored it); PostgreSQL keeps a table with the
//! seller and the amount as columns (`toolhost_refunds`, migration 12), so a revenue report
//! takes refunds off its sales by a join on the receipt id, not by reading each refund's JSON.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored refund.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefundRow {
    /// The refunded receipt's id (its sale's).
    pub receipt_id: String,
    /// The builder who sold the call; `None` for the platform's own.
    pub seller: Option<String>,
    /// What went back, in atomic units.
    pub amount: i64,
    /// The refund's JSON, as it is served.
    pub entry: Vec<u8>,
}

/// Where refunds are read. Every engine implements it (the conformance suite's `refunds_*`
/// case).
#[async_trait]
pub trait RefundRecords {
    /// The refund of each receipt (`None` where there is none), in their order: one read for
    /// many (callers ask for at most [`GET_MANY_KEYS`](crate::GET_MANY_KEYS) at once).
    async fn refunds(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>>;
}

/// Refunds over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use crate::prefixed::Prefixed;
    use crate::Tree;

    pub(crate) const PLACE: Prefixed = Prefixed {
        tree: Tree::Ledger,
        prefix: b"refund/",
    };
}
