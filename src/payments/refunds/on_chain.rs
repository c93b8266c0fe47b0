//! Refunding a payment that was transferred on-chain: a transfer of the refund from the
//! settlement wallet (the settler's account) back to the payer, as crash-safe as the settlement
//! it undoes.
//!
//! 1. **Claim.** The receipt's refund claim ([`crate::store::refund_claims`]) is written,
//!    conditioned on the sale as read and on no refund and no other claim being there: of
//!    concurrent refunds of one receipt at most one transfers anything.
//! 2. **Transfer.** `transfer(payer, amount)` is simulated (a wallet holding less than the
//!    refund is refused before anything is signed), signed, and its hash written into the
//!    claim before it is broadcast; if that write fails, nothing is sent.
//! 3. **Record.** Mined with the expected `Transfer` log: the refund is recorded with its
//!    transaction (the same writes as every refund) and the claim deleted, in one batch.
//!    Reverted, or refused before broadcast: the claim is deleted and nothing else changes.
//!    Not seen mined within the confirmation timeout: the claim stays, the answer is 409
//!    `refund_in_progress` naming the transaction, and recovery records the refund once it is
//!    mined (or deletes the claim once the chain has dropped it).
//!
//! The refund is recorded whatever the ledger did meanwhile, because the money has moved: a
//! payout made while the transfer was in flight leaves the builder owing its share, as an
//! admin's refund after a payout does. The transfer runs in a task of its own, so a client that
//! disconnects cannot stop it between moving the money and recording it.

use std::str::FromStr;
use std::sync::Mutex;

use alloy_primitives::{Address, B256, U256};
use futures::future::BoxFuture;
use futures::FutureExt;
use serde::{Deserialize, Serialize};

use super::{ledger_batch, signed, tell_seller, Parts, Read, RefundError};
use crate::payments::nonces::now_ms;
use crate::receipts::Receipt;
use crate::revenue::payouts::paid_out_by;
use crate::revenue::refunds::{refund_of, Refund};
use crate::revenue::Sale;
use crate::store::{Batch, Store, StoreError};
use crate::x402::facilitator::{ExpectedTransfer, SettleJournal, TransferStatus};
use crate::x402::PaymentError;

/// A refund being transferred: what recovery needs to finish or undo it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefundClaim {
    /// The refund as it will be recorded (signed then, with its transaction).
    pub refund: Refund,
    pub asset: String,
    pub payer: String,
    /// The settlement wallet the transfer is sent from.
    pub wallet: String,
    /// The transfer's hash, written just before it is broadcast.
    pub transaction: Option<String>,
    pub claimed_at_ms: u64,
}

impl RefundClaim {
    /// The transfer it makes, as its `Transfer` log must show it.
    fn expected(&self) -> Result<ExpectedTransfer, StoreError> {
        let address = |text: &str| {
            Address::from_str(text)
                .map_err(|_| StoreError::Corrupt(format!("refund claim address {text:?}")))
        };
        Ok(ExpectedTransfer {
            asset: address(&self.asset)?,
            from: address(&self.wallet)?,
            to: address(&self.payer)?,
            value: U256::from(self.refund.amount_units()?),
        })
    }
}

/// The claim of a refund of `receipt_id` in flight, if there is one.
pub(super) async fn claim_of(
    store: &dyn Store,
    receipt_id: &str,
) -> Result<Option<RefundClaim>, StoreError> {
    let claim = store.refund_claim(receipt_id).await?;
    claim
        .map(|bytes| serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string())))
        .transpose()
}

/// Whether this server can pay `receipt_id` back on-chain: it settled it itself, and holds the
/// settlement wallet.
pub(super) async fn available(parts: &Parts, receipt_id: &str) -> Result<(), RefundError> {
    if parts.facilitator.repayer().is_none() {
        return Err(RefundError::Unavailable(
            "the payment was transferred on-chain, and this server has no settlement wallet to \
             give it back from (configure on-chain settlement, or return it yourself)",
        ));
    }
    let receipt = crate::receipts::read(parts.store.as_ref(), receipt_id).await?;
    match receipt.and_then(|r| r.settlement.facilitator) {
        Some(facilitator) if facilitator == "local" => Ok(()),
        _ => Err(RefundError::Unavailable(
            "the payment was settled by a hosted facilitator, whose API has no refund call: \
             return it from the receiving wallet yourself",
        )),
    }
}

/// Claims the refund, transfers it and records it (see the module docs).
pub(super) async fn refund(
    parts: &Parts,
    refund: Refund,
    read: Read<'_>,
) -> Result<(Refund, bool), RefundError> {
    let store = parts.store.as_ref();
    let receipt_id = refund.receipt_id.clone();
    let receipt: Receipt = crate::receipts::read(store, &receipt_id)
        .await?
        .ok_or_else(|| RefundError::NotFound(receipt_id.clone()))?;
    let (Some(payer), Some(asset)) = (receipt.payer, receipt.asset) else {
        return Err(RefundError::Unavailable(
            "the receipt names no payer or asset to give the payment back to",
        ));
    };
    let Some(repayer) = parts.facilitator.repayer() else {
        return Err(RefundError::Unavailable(
            "this server has no settlement wallet",
        ));
    };
    let claim = RefundClaim {
        refund,
        asset,
        payer,
        wallet: repayer.wallet().to_checksum(None),
        transaction: None,
        claimed_at_ms: now_ms(),
    };
    claim.expected()?;
    let bytes = serde_json::to_vec(&claim).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let batch = Batch::new()
        .require_sale(&receipt_id, Some(read.sale_bytes))
        .require_refund(&receipt_id, None)
        .require_refund_claim(&receipt_id, None)
        .require_paid_out(&receipt_id, read.paid_out)
        .put_refund_claim(&receipt_id, bytes.clone());
    store.apply(batch).await?;
    let parts = parts.clone();
    tokio::spawn(async move { transfer(&parts, claim, bytes).await })
        .await
        .map_err(|_| RefundError::Store(StoreError::Engine("the refund task failed".into())))?
}

/// Writes the transaction's hash into the claim just before it is broadcast.
struct ClaimJournal<'a> {
    store: &'a dyn Store,
    receipt_id: String,
    /// The claim as stored now, and its bytes.
    claim: Mutex<(RefundClaim, Vec<u8>)>,
}

impl ClaimJournal<'_> {
    fn now(&self) -> (RefundClaim, Vec<u8>) {
        self.claim.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl SettleJournal for ClaimJournal<'_> {
    fn before_submit(&self, transaction: Option<B256>) -> BoxFuture<'_, Result<(), PaymentError>> {
        async move {
            let (mut claim, bytes) = self.now();
            claim.transaction = transaction.map(|t| t.to_string());
            let noted =
                serde_json::to_vec(&claim).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            self.store
                .apply(
                    Batch::new()
                        .require_refund_claim(&self.receipt_id, Some(bytes))
                        .put_refund_claim(&self.receipt_id, noted.clone()),
                )
                .await?;
            *self.claim.lock().unwrap_or_else(|e| e.into_inner()) = (claim, noted);
            Ok(())
        }
        .boxed()
    }
}

/// Transfers a claimed refund and records (or undoes) it.
async fn transfer(
    parts: &Parts,
    claim: RefundClaim,
    bytes: Vec<u8>,
) -> Result<(Refund, bool), RefundError> {
    let store = parts.store.as_ref();
    let receipt_id = claim.refund.receipt_id.clone();
    let expected = claim.expected()?;
    let journal = ClaimJournal {
        store,
        receipt_id: receipt_id.clone(),
        claim: Mutex::new((claim, bytes)),
    };
    let Some(repayer) = parts.facilitator.repayer() else {
        return Err(RefundError::Unavailable(
            "this server has no settlement wallet",
        ));
    };
    let sent = repayer
        .repay(expected.asset, expected.to, expected.value, &journal)
        .await;
    let (claim, bytes) = journal.now();
    match sent {
        Ok(submitted) if submitted.confirmed => {
            let refund = record(parts, claim, bytes).await?;
            Ok((refund, true))
        }
        Ok(submitted) => Err(RefundError::InProgress {
            transaction: Some(submitted.transaction.to_string()),
        }),
        Err(error) => {
            // Nothing moved: refused before broadcast, or mined and reverted.
            release(store, &receipt_id, bytes).await?;
            Err(match error {
                PaymentError::Refused { message, .. } => RefundError::Transfer(message),
                PaymentError::Facilitator(message) => RefundError::Chain(message),
                PaymentError::Store(e) => RefundError::Store(e),
                PaymentError::Malformed(message) => RefundError::Transfer(message),
            })
        }
    }
}

/// Deletes the claim if it is still `bytes`.
async fn release(store: &dyn Store, receipt_id: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
    let batch = Batch::new()
        .require_refund_claim(receipt_id, Some(bytes))
        .delete_refund_claim(receipt_id);
    match store.apply(batch).await {
        Ok(()) | Err(StoreError::ConditionFailed(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Records a refund whose transfer was mined: the refund with its transaction, the ledger
/// writes of every refund, and the claim deleted, in one batch, on the ledger as it is now.
/// Another node (or recovery) that recorded it first: that refund.
pub(crate) async fn record(
    parts: &Parts,
    claim: RefundClaim,
    bytes: Vec<u8>,
) -> Result<Refund, RefundError> {
    let store = parts.store.as_ref();
    let receipt_id = claim.refund.receipt_id.clone();
    for _ in 0..super::ATTEMPTS {
        if let Some((made, _)) = refund_of(store, &receipt_id).await? {
            return Ok(made);
        }
        let sale_bytes = store
            .sale(&receipt_id)
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("the sale of {receipt_id} is gone")))?;
        let sale: Sale =
            serde_json::from_slice(&sale_bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let paid_out = paid_out_by(store, &receipt_id).await?;
        let refund = signed(
            Refund {
                transaction: claim.transaction.clone(),
                after_payout: paid_out.is_some(),
                refunded_at: crate::timestamp::now_rfc3339(),
                ..claim.refund.clone()
            },
            &parts.signer,
        );
        let read = Read {
            sale: &sale,
            sale_bytes,
            paid_out,
        };
        // The money has moved: recorded whatever the owner's balance (as the admin's are).
        let batch = ledger_batch(parts, &refund, &read, false)
            .await?
            .require_refund_claim(&receipt_id, Some(bytes.clone()))
            .delete_refund_claim(&receipt_id);
        match store.apply(batch).await {
            Ok(()) => {
                tell_seller(store, &sale, &refund).await;
                return Ok(refund);
            }
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(RefundError::Busy)
}

/// What a recovery pass did with the refund claims it found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    pub recorded: usize,
    pub released: usize,
    pub kept: usize,
}

/// Finishes or undoes the refunds a crash (or a slow chain) left claimed: a transfer mined
/// with its `Transfer` is recorded; one reverted, mined without it, or unknown to the chain
/// since before `unseen_before_ms` is released (nothing moved), as is a claim of that age that
/// never noted a transaction (it was never broadcast); the rest are kept for the next pass.
pub async fn recover(parts: &Parts, unseen_before_ms: u64) -> Result<RecoveryReport, RefundError> {
    let mut report = RecoveryReport::default();
    let Some(chain) = parts.facilitator.chain() else {
        return Ok(report);
    };
    let store = parts.store.as_ref();
    let mut after: Option<String> = None;
    loop {
        let page = store.refund_claims(after.as_deref(), 64).await?;
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        for (receipt_id, bytes) in page {
            let claim: RefundClaim =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let old = claim.claimed_at_ms < unseen_before_ms;
            let status = match claim.transaction.as_deref().map(B256::from_str) {
                None => None,
                Some(Ok(transaction)) => Some(
                    chain
                        .transfer_status(transaction, claim.expected()?)
                        .await
                        .map_err(|e| RefundError::Chain(e.to_string()))?,
                ),
                Some(Err(_)) => {
                    return Err(StoreError::Corrupt("refund claim transaction".into()).into())
                }
            };
            match status {
                Some(TransferStatus::Transferred) => {
                    let refund = record(parts, claim, bytes).await?;
                    tracing::info!(receipt = %refund.receipt_id, "recorded a refund whose transfer was mined");
                    report.recorded += 1;
                }
                Some(TransferStatus::Reverted | TransferStatus::MinedWithoutTransfer) => {
                    release(store, &receipt_id, bytes).await?;
                    report.released += 1;
                }
                None | Some(TransferStatus::Unknown) if old => {
                    release(store, &receipt_id, bytes).await?;
                    report.released += 1;
                }
                _ => report.kept += 1,
            }
        }
    }
    Ok(report)
}
