//! Where each builder is paid: its payout settings (the entry is their JSON, as the payouts
//! domain reads it back), one record per builder, replaced whole when the builder saves new
//! ones ([`Batch::put_payout_settings`](crate::Batch::put_payout_settings)).
//!
//! [`kv`] is the shape any key-value engine keeps (sled's: the `ledger` tree's
//! `settings/{builderId}`, as every release has stored it); PostgreSQL keeps a table
//! (`toolhost_payout_settings`, migration 19) with the address and network as columns.

use async_trait::async_trait;

use crate::StoreResult;

/// A builder's payout settings, as a batch writes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PayoutSettingsRow {
    pub builder: String,
    /// The address packets pay (EIP-55).
    pub pay_to: String,
    /// The CAIP-2 network they pay on.
    pub network: String,
    pub entry: Vec<u8>,
}

/// Where payout settings are read. Every engine implements it (the conformance suite's
/// `payout_settings_*` case).
#[async_trait]
pub trait BuilderPayoutSettings {
    /// `builder`'s payout settings, if it saved any.
    async fn payout_settings(&self, builder: &str) -> StoreResult<Option<Vec<u8>>>;
}

/// Payout settings over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub mod kv {
    use crate::prefixed::Prefixed;
    use crate::Tree;

    pub(crate) const PLACE: Prefixed = Prefixed {
        tree: Tree::Ledger,
        prefix: b"settings/",
    };
}
