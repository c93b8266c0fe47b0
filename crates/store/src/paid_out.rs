//! Which sales a payout packet paid: a mark per paid-out sale, under the sale's receipt id,
//! naming the packet (a sale is paid out once).
//!
//! A mark is written only inside batches, with the packet that pays the sale
//! ([`Batch::put_paid_out`](crate::Batch::put_paid_out), claimed with
//! [`Batch::require_paid_out`](crate::Batch::require_paid_out) `None`); a refund is conditioned
//! on the mark as it read it. This trait reads them. [`kv`] is the shape any key-value engine
//! keeps (sled's: the packet id in the `ledger` tree under `paid/{receiptId}`, as every release
//! has stored it); PostgreSQL keeps a table with the packet id as a column
//! (`toolhost_paid_out`, migration 13), which a payout view's sum looks a sale up in.

use async_trait::async_trait;

use crate::StoreResult;

/// One paid-out sale's mark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaidOutRow {
    /// The sale's receipt id.
    pub receipt_id: String,
    /// The packet that paid it (`pay_…`); also the mark's stored entry, as its bytes.
    pub packet_id: String,
}

/// Where paid-out marks are read. Every engine implements it (the conformance suite's
/// `paid_out_*` case).
#[async_trait]
pub trait PaidOutMarks {
    /// The packet id (as stored, its bytes) that paid each sale (`None` where none did), in
    /// their order: one read for many (callers ask for at most
    /// [`GET_MANY_KEYS`](crate::GET_MANY_KEYS) at once).
    async fn paid_out(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>>;
}

/// Paid-out marks over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub mod kv {
    use crate::prefixed::Prefixed;
    use crate::Tree;

    pub(crate) const PLACE: Prefixed = Prefixed {
        tree: Tree::Ledger,
        prefix: b"paid/",
    };
}
