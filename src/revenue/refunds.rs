//! Refunds in the ledger: what a refund takes back from a sale, and from whom.
//!
//! A refund of receipt `R` is one record, the store's refund of `R` (`RefundRecords`; a table
//! of its own on PostgreSQL), written once (a receipt is refunded at most once, wholly or in
//! part) in the same batch as whatever returns the money (`payments::refunds`). The receipt
//! itself is never rewritten; the record is signed by the service key like receipts and payout
//! packets, and names the receipt.
//!
//! # Accounting
//! A sale of `A` refunded `r` counts for `A − r` everywhere from then on: revenue reports and
//! payouts, with the platform fee computed per sale on `A − r` as on any sale, so `gross = fee +
//! net` still holds at every level and the refunded part is `refunded = A − (A − r)` exactly.
//! - A sale not yet in a payout packet is simply paid out for `A − r` (nothing if refunded
//!   whole). The refund's batch requires `R` not paid out, and a packet's batch requires each
//!   sale's refund as the packet read it, so one of a refund and a packet racing for the
//!   same sale fails and is retried or refused.
//! - A sale already in a packet paid the builder `net(A)`; the builder now owes
//!   `net(A) − net(A − r)` ([`owed`]), written as a debt of the builder's for `R` with the
//!   refund ([`crate::store::debts`]).
//!   The next packet deducts every debt and deletes it, in its batch. A builder may refund a
//!   paid-out sale only while its unpaid collected balance covers what it would owe; the admin
//!   may go beyond (the debts then wait for later sales).
//! - The builder's balance is read and changed under one version (its payout version),
//!   bumped by every packet and every refund of a paid-out sale, so a refund checked against a
//!   balance cannot race a packet that spends it.

use super::{split, Sale};
use crate::money::Usd;
use crate::receipts::PaymentMethod;
use crate::store::{Batch, DebtRow, RefundRow, Store, StoreError};
use serde::{Deserialize, Serialize};

/// A refund, as stored and served. Amounts are atomic units as strings.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refund {
    pub refund_id: String,
    pub receipt_id: String,
    #[schema(required = true)]
    pub endpoint_slug: Option<String>,
    /// The builder who sold the call; `None` for the platform's own endpoints and fees.
    #[schema(required = true)]
    pub seller: Option<String>,
    /// What the call was charged.
    #[schema(schema_with = crate::money::units_schema)]
    pub charged: String,
    /// What was refunded (at most `charged`).
    #[schema(schema_with = crate::money::units_schema)]
    pub amount: String,
    pub reason: String,
    /// `owner` (the endpoint's builder) or `admin`.
    #[schema(pattern = "^(owner|admin)$")]
    pub refunded_by: String,
    pub payment_method: PaymentMethod,
    /// Where the money went: `credit` (back to the developer credit that paid), `recorded` (the
    /// payment was recorded only, nothing was collected, so nothing moves), `on_chain` (a
    /// transfer from the settlement wallet to the payer: `transaction`).
    #[schema(pattern = "^(credit|recorded|on_chain)$")]
    pub returned_to: String,
    /// The transfer that returned the money on-chain, when one did.
    #[schema(required = true)]
    pub transaction: Option<String>,
    /// Whether the sale had already been paid out to the builder: the builder then owes its
    /// net share of the refund, deducted from its next payout.
    pub after_payout: bool,
    #[schema(format = DateTime)]
    pub refunded_at: String,
    /// Ed25519 over the canonical JSON of everything but `signature`.
    pub signature: super::Signature,
}

impl Refund {
    pub fn amount_units(&self) -> Result<u64, StoreError> {
        self.amount
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("refund amount {:?}", self.amount)))
    }

    /// The refund as the store keeps it: its JSON, with its seller and amount beside it.
    pub fn row(&self) -> Result<RefundRow, StoreError> {
        let amount = i64::try_from(self.amount_units()?)
            .map_err(|_| StoreError::Corrupt(format!("refund amount {:?}", self.amount)))?;
        Ok(RefundRow {
            receipt_id: self.receipt_id.clone(),
            seller: self.seller.clone(),
            amount,
            entry: serde_json::to_vec(self).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        })
    }
}

/// What a builder paid `net(charged)` owes when `refunded` of it goes back: its net share
/// before less its net share after.
pub fn owed(charged: Usd, refunded: Usd, fee_bps: u64) -> Usd {
    let kept = charged.checked_sub(refunded).unwrap_or(Usd::ZERO);
    let (before, after) = (split(charged, fee_bps).1, split(kept, fee_bps).1);
    before.checked_sub(after).unwrap_or(Usd::ZERO)
}

/// `batch` also requiring `builder`'s payout version as read (`version`) and moving it on.
pub fn bump_balance(batch: Batch, builder: &str, version: Option<Vec<u8>>) -> Batch {
    let next = version
        .as_deref()
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(0)
        .saturating_add(1);
    batch
        .require_payout_version(builder, version)
        .put_payout_version(builder, next)
}

/// `batch` also recording that `builder` owes `owed` for the refund of its paid-out sale
/// `receipt_id`.
pub fn owe(batch: Batch, builder: &str, receipt_id: &str, owed: Usd) -> Result<Batch, StoreError> {
    let units = i64::try_from(owed.units())
        .map_err(|_| StoreError::Corrupt(format!("the debt for {receipt_id} is out of range")))?;
    Ok(batch.put_debt(DebtRow::new(builder, receipt_id, units)))
}

/// The refund of `receipt_id`, with its stored bytes.
pub async fn refund_of(
    store: &dyn Store,
    receipt_id: &str,
) -> Result<Option<(Refund, Vec<u8>)>, StoreError> {
    let mut refunds = store.refunds(&[receipt_id]).await?;
    refunds.pop().flatten().map(stored_refund).transpose()
}

/// The refund of each of `sales` (at most [`GET_MANY_KEYS`](crate::store::GET_MANY_KEYS) of
/// them), read together.
pub async fn refunds_of(
    store: &dyn Store,
    sales: &[Sale],
) -> Result<Vec<Option<(Refund, Vec<u8>)>>, StoreError> {
    let ids: Vec<&str> = sales.iter().map(|s| s.receipt_id.as_str()).collect();
    (store.refunds(&ids).await?.into_iter())
        .map(|bytes| bytes.map(stored_refund).transpose())
        .collect()
}

/// A refund as stored, with its bytes.
fn stored_refund(bytes: Vec<u8>) -> Result<(Refund, Vec<u8>), StoreError> {
    let refund = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok((refund, bytes))
}

/// `builder`'s debts not yet deducted from a packet: `(receipt id, owed, stored bytes)`.
pub async fn debts_of(
    store: &dyn Store,
    builder: &str,
) -> Result<Vec<(String, Usd, Vec<u8>)>, StoreError> {
    let mut debts = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.debts(builder, after.as_deref(), 512).await?;
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        for (receipt_id, bytes) in page {
            let owed = std::str::from_utf8(&bytes)
                .ok()
                .and_then(|t| t.parse().ok())
                .map(Usd::from_units)
                .ok_or_else(|| StoreError::Corrupt(format!("debt for {receipt_id}")))?;
            debts.push((receipt_id, owed, bytes));
        }
    }
    Ok(debts)
}

/// Takes `refund` (if any) off `sale`: its amount becomes what is left, and
/// [`Sale::refunded`] what went back.
pub fn take_refund(sale: &mut Sale, refund: Option<&Refund>) -> Result<(), StoreError> {
    if let Some(refund) = refund {
        let kept = Usd::from_units(sale.amount.units().saturating_sub(refund.amount_units()?));
        sale.refunded = sale.amount.checked_sub(kept).unwrap_or(Usd::ZERO);
        sale.amount = kept;
    }
    Ok(())
}
