//! What builders owe back, and the version of each builder's payout balance.
//!
//! A refund of a sale already paid out leaves its builder a *debt*: the builder's share of the
//! refund, in atomic units, under the builder and the refunded receipt, deducted (and deleted)
//! by the builder's next payout packet. Every such refund and every packet moves the builder's
//! *payout version* on, on condition it is as read, so a refund checked against a balance
//! cannot race a packet that spends it. Both are written only inside batches
//! ([`Batch::put_debt`](crate::Batch::put_debt),
//! [`Batch::put_payout_version`](crate::Batch::put_payout_version) and their conditions).
//! [`kv`] is the shape any key-value engine keeps (sled's, the `ledger` tree's keys every
//! release has written: `debt/{builderId}/{receiptId}` → units as decimal text,
//! `balance/{builderId}` → the version as decimal text); PostgreSQL keeps `toolhost_debts`,
//! found by builder, and `toolhost_payout_versions` (migration 16).

use async_trait::async_trait;

use crate::StoreResult;

/// One debt: what a builder owes for the refund of one of its paid-out sales.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebtRow {
    /// `{builderId}/{receiptId}`: builder ids have no `/`.
    pub key: String,
    /// Owed, in atomic units.
    pub units: i64,
    /// The units as decimal text, as every engine keeps them.
    pub entry: Vec<u8>,
}

impl DebtRow {
    pub fn new(builder: &str, receipt_id: &str, units: i64) -> Self {
        Self {
            key: debt_key(builder, receipt_id),
            units,
            entry: units.to_string().into_bytes(),
        }
    }

    /// The builder who owes it.
    pub fn builder(&self) -> &str {
        self.key
            .split_once('/')
            .map_or(&self.key, |(builder, _)| builder)
    }
}

/// Where a debt is kept: `{builderId}/{receiptId}`.
pub fn debt_key(builder: &str, receipt_id: &str) -> String {
    format!("{builder}/{receipt_id}")
}

/// Where debts and payout versions are read. Every engine implements it (the conformance
/// suite's `debts_*` case).
#[async_trait]
pub trait BuilderDebts {
    /// `builder`'s debts whose receipt id sorts after `after` (from the first when `None`), in
    /// receipt id order, at most `limit`: receipt ids and entries.
    async fn debts(
        &self,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// `builder`'s payout version, as stored (`None`: nothing has moved it yet).
    async fn payout_version(&self, builder: &str) -> StoreResult<Option<Vec<u8>>>;
}

/// Debts and payout versions over any [`Store`](crate::Store)'s trees, for engines without a
/// shape of their own.
pub mod kv {
    use crate::prefixed::Prefixed;
    use crate::{Store, StoreResult, Tree};

    /// Debts, under `{builderId}/{receiptId}`.
    pub(crate) const DEBTS: Prefixed = Prefixed {
        tree: Tree::Ledger,
        prefix: b"debt/",
    };
    pub(crate) const VERSIONS: Prefixed = Prefixed {
        tree: Tree::Ledger,
        prefix: b"balance/",
    };

    pub(crate) async fn of<S: Store + ?Sized>(
        store: &S,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let prefix = DEBTS.key(&format!("{builder}/"));
        let owed_by = Prefixed {
            prefix: &prefix,
            ..DEBTS
        };
        owed_by.page(store, after, limit).await
    }
}
