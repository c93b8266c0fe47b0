//! x402 `payment-identifier` ids as the store keeps them: each under `{payer}/{id}`, read by
//! that key when a paid call names one.
//!
//! A record is written only inside batches: reserved by a call with its nonce claim
//! ([`Batch::require_payment_id`](crate::Batch::require_payment_id) `None`, or as a stale one
//! was read, and [`Batch::put_payment_id`](crate::Batch::put_payment_id)), then answered with
//! the call's receipt; this trait reads them. [`kv`] is the shape any key-value engine keeps
//! (sled's: the record's JSON in the `payment_ids` tree under its key, as every release has
//! stored it); PostgreSQL keeps a table with the payer, whether the call answered and when
//! the id was reserved as columns (`toolhost_payment_ids`, migration 11).

use async_trait::async_trait;

use crate::StoreResult;

/// One stored id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentIdRow {
    /// `{payer}/{id}`: the payer as its authorization names it, lowercase, then the id.
    pub key: String,
    /// Whether the call that reserved it answered (its answer is in the entry).
    pub answered: bool,
    /// When a call reserved it.
    pub created_at_ms: i64,
    /// The record's JSON, as the domain reads it back.
    pub entry: Vec<u8>,
}

impl PaymentIdRow {
    /// The payer: the key up to its first `/`.
    pub fn payer(&self) -> &str {
        self.key.split_once('/').map_or("", |(payer, _)| payer)
    }
}

/// Where payment ids are read. Every engine implements it (the conformance suite's
/// `payment_ids_*` case).
#[async_trait]
pub trait PaymentIds {
    /// The record under `{payer}/{id}`, if any.
    async fn payment_id(&self, key: &str) -> StoreResult<Option<Vec<u8>>>;
}

/// Payment ids over any [`Store`](crate::Store)'s trees, for engines without a shape of their
/// own.
pub mod kv {
    use crate::{Store, StoreResult, Tree};

    pub(crate) const TREE: Tree = Tree::PaymentIds;

    pub(crate) async fn get<S: Store + ?Sized>(
        store: &S,
        key: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(TREE, key.as_bytes()).await
    }
}
