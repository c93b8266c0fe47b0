//! On-chain refunds in flight: a claim per refunded receipt while its transfer back to the
//! payer is made (the claim's JSON: the refund to record, the transfer, and once broadcast its
//! transaction).
//!
//! A claim is written in the batch that checks the sale, the refund and the payout as read
//! ([`Batch::put_refund_claim`](crate::Batch::put_refund_claim), on condition there is none:
//! of concurrent refunds of a receipt one transfers), noted with its transaction before the
//! broadcast and deleted, as read, with the refund it becomes or alone when nothing moved
//! ([`Batch::require_refund_claim`](crate::Batch::require_refund_claim)). Recovery pages them.
//! [`kv`] is the shape any key-value engine keeps (sled's: the `ledger` tree's
//! `refunding/{receiptId}`, as every release has stored it); PostgreSQL keeps a table
//! (`toolhost_refund_claims`, migration 17).

use async_trait::async_trait;

use crate::StoreResult;

/// Where refund claims are read. Every engine implements it (the conformance suite's
/// `refund_claims_*` case).
#[async_trait]
pub trait RefundClaims {
    /// The claim of `receipt_id`'s refund in flight, if there is one.
    async fn refund_claim(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Claims whose receipt id sorts after `after` (from the first when `None`), in id order,
    /// at most `limit`: receipt ids and claims.
    async fn refund_claims(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
}

/// Refund claims over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub mod kv {
    use crate::prefixed::Prefixed;
    use crate::Tree;

    pub(crate) const PLACE: Prefixed = Prefixed {
        tree: Tree::Ledger,
        prefix: b"refunding/",
    };
}
