//! Settlements broadcast but not yet seen mined: an entry per sale whose on-chain transfer is
//! pending, under the sale's receipt id (the entry is the domain's JSON: the transaction, the
//! transfer it must show, since when).
//!
//! An entry is written in the batch that records its sale
//! ([`Batch::put_pending_settlement`](crate::Batch::put_pending_settlement)) and removed, on
//! condition that it is as read, by the reconciler's batch that settles or voids the sale
//! ([`Batch::require_pending_settlement`](crate::Batch::require_pending_settlement)); a payout
//! packet takes a sale only on condition it has none. A sale written `pending` is collected once
//! its entry is gone. [`kv`] is the shape any key-value engine keeps (sled's: the `ledger`
//! tree's `pending/{receiptId}`, as every release has stored it); PostgreSQL keeps a table
//! (`toolhost_pending_settlements`, migration 14), which a revenue report's sums join by
//! receipt id.

use async_trait::async_trait;

use crate::StoreResult;

/// Where pending settlements are read. Every engine implements it (the conformance suite's
/// `pending_settlements_*` case).
#[async_trait]
pub trait PendingSettlements {
    /// Entries whose receipt id sorts after `after` (from the first when `None`), in id order,
    /// at most `limit`: receipt ids and entries.
    async fn pending_settlements(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// The entry of each sale (`None` where its settlement is not pending), in their order:
    /// one read for many (callers ask for at most [`GET_MANY_KEYS`](crate::GET_MANY_KEYS) at
    /// once).
    async fn pending_settlements_of(
        &self,
        receipt_ids: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>>;
}

/// Pending settlements over any [`Store`](crate::Store)'s trees, for engines without a shape
/// of their own.
pub mod kv {
    use crate::prefixed::Prefixed;
    use crate::Tree;

    pub(crate) const PLACE: Prefixed = Prefixed {
        tree: Tree::Ledger,
        prefix: b"pending/",
    };
}
