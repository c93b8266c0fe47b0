//! Putting right what a crash or a slow chain left unresolved: orphaned nonce claims and
//! settlements still pending on-chain.
//!
//! A paid call holds a nonce claim while it runs (see `nonces`). If the process dies
//! (kill -9, power loss) the claim stays, and that signed authorization could never be used
//! again; with on-chain settlement the transfer may even have happened with nothing recorded.
//! And a settlement broadcast but not mined within the confirmation timeout is served with a
//! `pending` receipt that nobody would ever update. Two passes fix both, run once at start-up
//! (before the server serves) and then every [`Recovery::interval`] in the background:
//!
//! - [`Recovery::recover_claims`]: claims older than the staleness bound are resolved. Without
//!   a way to ask the chain, a `claimed` claim (nothing left our hands) is released. With one
//!   ([`Facilitator::chain`]), EIP-3009 `authorizationState(payer, nonce)` decides: used → the
//!   transfer happened, so the receipt, the sale and the spent nonce are recorded in one batch
//!   (the receipt id, digests and transaction come from the claim's `settling` note when the
//!   process got that far); unused → released, unless a transaction was broadcast that the
//!   chain still has in its pool, or that it has not seen for less than the bound.
//!   A `settling` claim handed to a remote facilitator is kept: the standard facilitator API
//!   cannot be asked whether it moved the money, and keeping a claim only blocks reuse of an
//!   authorization that the chain would refuse if it was used. A burned nonce
//!   (`failed/{receiptId}`, settlement failed after the handler ran) is no claim: left alone.
//! - [`Recovery::reconcile_pending`]: every pending settlement (by receipt id) is checked
//!   against the chain: mined with the expected `Transfer` → the receipt becomes `settled`
//!   (`onChain:true`, re-signed); reverted, mined without the transfer, or unknown to the node
//!   for longer than the bound, with `authorizationState` still false → the receipt becomes
//!   `failed` / `dropped` (`charged:false`, re-signed) and the sale is removed (pending sales
//!   are never paid out, see `revenue`); `authorizationState` true → the money arrived by
//!   another transaction: `settled` without a transaction hash.
//!
//! Every resolution is one atomic batch conditioned on the exact bytes it read, so a live call
//! that commits concurrently wins and the pass leaves that key alone.
//!
//! # The staleness bound
//! A live call holds a `claimed` claim for at most the request deadline (the handler is cut
//! off there and its claim released) plus the settlement's run up to the broadcast (a few RPC
//! calls of 10 s each and the settler's nonce lock) and a durable write; after the broadcast the
//! claim is `settling` and is resolved by asking the chain, not by its age. [`stale_bound`] is
//! `request timeout + settlement (confirmation) timeout + 60 s`: 105 s with the defaults,
//! overridden by `--claim-stale-after-secs`. The bound is age-based so that in a cluster no
//! node releases a claim another live node is still using. Even a call slower than the bound
//! stays safe: its claim, once released, can no longer be turned `settling` (compare-and-swap),
//! so it answers an error and submits nothing.
//!
//! At start-up on the embedded store, which one process alone can open (sled locks its
//! directory), no call can be live: every claim is resolved regardless of age
//! ([`Cutoffs::exclusive_start`]). Legacy claims (`pending/{claimId}`, written before claim
//! records) carry no time and no sale: on the embedded store at start-up they are released
//! (or, if the chain says the authorization was used, kept: there is no sale to record); on a
//! shared store a node releases one only after seeing it unchanged for longer than the bound
//! (remembered in memory from the first pass that saw it), since an older node of the cluster
//! may still be running that call.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use alloy_primitives::{Address, B256, U256};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::nonces::{self, ClaimRecord, ClaimState, Stored};
use crate::config::Config;
use crate::money::Usd;
use crate::receipts::{
    store_receipt, PaymentMethod, Receipt, ReceiptSettlement, ReceiptSigner, RECEIPT_SCHEMA,
};
use crate::revenue::{self, Sale};
use crate::store::{Batch, NonceState, Store, StoreError};
use crate::urls::Urls;
use crate::x402::config::FacilitatorConfig;
use crate::x402::facilitator::{
    ChainError, ChainStatus, ExpectedTransfer, Facilitator, PaymentNonce, TransferStatus,
};

/// Added to the request and settlement timeouts: RPC calls before the broadcast, lock waits,
/// clock skew between nodes.
pub const STALE_MARGIN: Duration = Duration::from_secs(60);
/// Entries scanned per store page.
const PAGE: usize = 256;

/// How old a claim must be before no live call can hold it (see the module docs).
pub fn stale_bound(config: &Config) -> Duration {
    if let Some(bound) = config.payment.claim_stale_after {
        return bound;
    }
    config.limits.request_timeout + settlement_bound(config)
}

/// How long a settlement may run once begun: the confirmation timeout on-chain, the remote
/// client's timeout, nothing for recording only; plus [`STALE_MARGIN`]. The request deadline
/// waits this much more for a call that is settling.
pub fn settlement_bound(config: &Config) -> Duration {
    let settlement = match &config.payment.facilitator {
        FacilitatorConfig::Local => Duration::ZERO,
        FacilitatorConfig::OnChain(onchain) => onchain.confirmation_timeout,
        // The remote client's own timeout.
        FacilitatorConfig::Remote(_) => Duration::from_secs(20),
    };
    settlement + STALE_MARGIN
}

#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("asking the chain: {0}")]
    Chain(#[from] ChainError),
    #[error("unreadable record {key}: {detail}")]
    Corrupt { key: String, detail: String },
}

/// Which claims a pass may resolve (Unix milliseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cutoffs {
    /// Claims made before this belong to no live call.
    pub claimed_before_ms: u64,
    /// A settlement transaction unknown to the chain and noted before this was dropped.
    pub unseen_before_ms: u64,
}

impl Cutoffs {
    /// A background pass: everything older than the bound.
    pub fn periodic(now_ms: u64, bound: Duration) -> Self {
        let before = now_ms.saturating_sub(bound.as_millis() as u64);
        Self {
            claimed_before_ms: before,
            unseen_before_ms: before,
        }
    }

    /// Start-up on a store no other process can open: no call is live, so every claim is an
    /// orphan; a transaction the chain has not seen still gets the bound to show up.
    pub fn exclusive_start(now_ms: u64, bound: Duration) -> Self {
        Self {
            claimed_before_ms: u64::MAX,
            unseen_before_ms: now_ms.saturating_sub(bound.as_millis() as u64),
        }
    }

    fn everything(&self) -> bool {
        self.claimed_before_ms == u64::MAX
    }
}

/// What a claims pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClaimsReport {
    /// Claims deleted: the authorization may be used again.
    pub released: usize,
    /// Claims whose transfer happened: receipt, sale and spent nonce recorded.
    pub recorded: usize,
    /// Orphaned claims left for a later pass (transaction in the pool, remote facilitator,
    /// used legacy claim).
    pub kept: usize,
    /// Claims the chain could not be asked about this time.
    pub failed: usize,
}

/// What a pending-settlements pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingReport {
    pub settled: usize,
    pub failed: usize,
    pub dropped: usize,
    pub waiting: usize,
    pub errors: usize,
}

/// A settlement broadcast but not seen mined, as stored under its receipt id
/// ([`crate::store::pending_settlements`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSettlement {
    pub receipt_id: String,
    pub transaction: String,
    pub asset: String,
    pub payer: String,
    pub pay_to: String,
    pub amount_units: u64,
    /// The EIP-3009 nonce, 0x-hex; or Permit2's, decimal, when `permit2`.
    pub nonce: String,
    pub since_ms: u64,
    /// A Permit2 payment (`upto`, `exact` by Permit2): its nonce is Permit2's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub permit2: bool,
}

impl PendingSettlement {
    /// Adds the entry to a settling batch.
    pub fn index(&self, batch: Batch) -> Result<Batch, StoreError> {
        let bytes = serde_json::to_vec(self).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(batch.put_pending_settlement(&self.receipt_id, bytes))
    }
}

/// How a pending settlement ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// The money arrived; by this transaction, when known.
    Settled(Option<String>),
    /// `failed` (reverted or no transfer) or `dropped` (never mined): nothing arrived.
    Lost(&'static str),
    Waiting,
}

/// Legacy claims by key, with the bytes seen and when first seen (ms).
type LegacySeen = HashMap<String, (Vec<u8>, u64)>;

/// What the passes need; one per node, kept for the process's life.
pub struct Recovery {
    store: Arc<dyn Store>,
    facilitator: Arc<dyn Facilitator>,
    signer: Arc<ReceiptSigner>,
    urls: Urls,
    pub bound: Duration,
    pub interval: Duration,
    /// The platform fee, for the builder's share of a refund recovered after a payout.
    fee_bps: u64,
    legacy_seen: Mutex<LegacySeen>,
}

impl Recovery {
    pub fn new(
        store: Arc<dyn Store>,
        facilitator: Arc<dyn Facilitator>,
        signer: Arc<ReceiptSigner>,
        urls: Urls,
        bound: Duration,
        interval: Duration,
        fee_bps: u64,
    ) -> Self {
        Self {
            store,
            facilitator,
            signer,
            urls,
            bound,
            interval,
            fee_bps,
            legacy_seen: Mutex::new(HashMap::new()),
        }
    }

    /// Resolves the orphaned claims `cutoffs` allow, reading the open nonces only
    /// ([`NonceClaims::open_nonces`]: on PostgreSQL an index of them, so a pass costs the claims
    /// in flight; sled reads every nonce and skips the spent ones by a byte check, linear in
    /// the payments ever taken).
    pub async fn recover_claims(&self, cutoffs: Cutoffs) -> Result<ClaimsReport, RecoveryError> {
        let mut report = ClaimsReport::default();
        let mut after: Option<String> = None;
        loop {
            let page = self.store.open_nonces(after.as_deref(), PAGE).await?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (key, bytes) in page {
                let stored = Stored::parse(&bytes).map_err(|e| RecoveryError::Corrupt {
                    key: key.clone(),
                    detail: e.to_string(),
                })?;
                let result = match stored {
                    Stored::Spent(_) | Stored::Failed(_) => continue,
                    Stored::Legacy => self.legacy(&key, &bytes, cutoffs).await,
                    Stored::Claim(record) => self.claim(&key, &bytes, &record, cutoffs).await,
                };
                match result {
                    Ok(Resolution::Live) => {}
                    Ok(Resolution::Released) => report.released += 1,
                    Ok(Resolution::Recorded) => report.recorded += 1,
                    Ok(Resolution::Kept) => report.kept += 1,
                    Err(RecoveryError::Chain(e)) => {
                        tracing::warn!(error = %e, "cannot ask the chain about a claim; will retry");
                        report.failed += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(report)
    }

    async fn legacy(
        &self,
        key: &str,
        bytes: &[u8],
        cutoffs: Cutoffs,
    ) -> Result<Resolution, RecoveryError> {
        if !cutoffs.everything() {
            let now = nonces::now_ms();
            let first_seen = {
                let mut seen = self
                    .legacy_seen
                    .lock()
                    .map_err(|_| StoreError::Engine("legacy claim map poisoned".into()))?;
                let entry = seen
                    .entry(key.to_owned())
                    .or_insert_with(|| (bytes.to_vec(), now));
                if entry.0 != bytes {
                    *entry = (bytes.to_vec(), now);
                }
                entry.1
            };
            if first_seen >= cutoffs.claimed_before_ms {
                return Ok(Resolution::Live);
            }
        }
        if let Some(chain) = self.facilitator.chain() {
            if let Some((asset, from, nonce)) = parse_key(key) {
                if chain
                    .payment_used(asset, from, PaymentNonce::Eip3009(nonce))
                    .await?
                {
                    tracing::warn!(
                        claim = %key,
                        "a legacy claim's authorization was used on-chain; it carries no sale to record, kept"
                    );
                    return Ok(Resolution::Kept);
                }
            }
        }
        let released = self.release(key, bytes).await?;
        if let Ok(mut seen) = self.legacy_seen.lock() {
            seen.remove(key);
        }
        Ok(released)
    }

    async fn claim(
        &self,
        key: &str,
        bytes: &[u8],
        record: &ClaimRecord,
        cutoffs: Cutoffs,
    ) -> Result<Resolution, RecoveryError> {
        if record.claimed_at_ms >= cutoffs.claimed_before_ms {
            return Ok(Resolution::Live);
        }
        let transaction = record
            .settling
            .as_ref()
            .and_then(|s| s.transaction.as_deref())
            .and_then(|t| B256::from_str(t).ok());
        let Some(chain) = self.facilitator.chain() else {
            return match record.state {
                ClaimState::Claimed => self.release(key, bytes).await,
                ClaimState::Settling => {
                    tracing::warn!(
                        claim = %key,
                        node = %record.node,
                        "a settlement handed to the facilitator was never recorded, and the facilitator cannot be asked about it; the claim is kept"
                    );
                    Ok(Resolution::Kept)
                }
            };
        };
        let expected = expected_transfer(
            &record.sale.asset,
            &record.sale.payer,
            &record.sale.pay_to,
            record.settled_units(),
        );
        let nonce = PaymentNonce::parse(&record.sale.nonce, record.sale.permit2);
        let (Some(expected), Some(nonce)) = (expected, nonce) else {
            return Err(RecoveryError::Corrupt {
                key: key.to_owned(),
                detail: "the claim's sale names no valid asset, payer, payee or nonce".into(),
            });
        };
        if chain
            .payment_used(expected.asset, expected.from, nonce)
            .await?
        {
            // The transfer happened. Name our transaction only if it is the one that did it.
            let ours = match transaction {
                Some(tx) => {
                    chain.transfer_status(tx, expected).await? == TransferStatus::Transferred
                }
                None => false,
            };
            let transaction = transaction.filter(|_| ours).map(|t| t.to_string());
            return self.record(key, bytes, record, transaction).await;
        }
        let Some(tx) = transaction else {
            return self.release(key, bytes).await;
        };
        let marked = record.settling.as_ref().map_or(0, |s| s.marked_at_ms);
        match chain.transfer_status(tx, expected).await? {
            TransferStatus::Reverted | TransferStatus::MinedWithoutTransfer => {
                self.release(key, bytes).await
            }
            TransferStatus::Unknown if marked < cutoffs.unseen_before_ms => {
                self.release(key, bytes).await
            }
            // In the pool, not yet seen, or mined a moment after we asked: next pass.
            TransferStatus::Unknown | TransferStatus::InPool | TransferStatus::Transferred => {
                Ok(Resolution::Kept)
            }
        }
    }

    /// Deletes the claim if it still holds `bytes`.
    async fn release(&self, key: &str, bytes: &[u8]) -> Result<Resolution, RecoveryError> {
        let batch = Batch::new()
            .require_nonce(key, Some(bytes.to_vec()))
            .delete_nonce(key);
        match self.store.apply(batch).await {
            Ok(()) => {
                tracing::info!(claim = %key, "released an orphaned nonce claim");
                Ok(Resolution::Released)
            }
            Err(StoreError::ConditionFailed(_)) => Ok(Resolution::Live),
            Err(e) => Err(e.into()),
        }
    }

    /// Records the transfer a dead call left: receipt, sale and spent nonce, one batch.
    async fn record(
        &self,
        key: &str,
        bytes: &[u8],
        record: &ClaimRecord,
        transaction: Option<String>,
    ) -> Result<Resolution, RecoveryError> {
        let sale = &record.sale;
        let note = record.settling.as_ref();
        let receipt_id = note.map_or_else(
            || format!("rcpt_{}", uuid::Uuid::now_v7().simple()),
            |n| n.receipt_id.clone(),
        );
        let units = record.settled_units();
        let amount = Usd::from_units(units);
        let mut receipt = Receipt {
            url: self.urls.receipt(&receipt_id),
            receipt_id: receipt_id.clone(),
            schema: RECEIPT_SCHEMA.into(),
            purpose: sale.purpose.clone(),
            endpoint_slug: sale.endpoint_slug.clone(),
            price_usd: amount.to_string(),
            amount: units.to_string(),
            asset: Some(sale.asset.clone()),
            network: Some(sale.network.clone()),
            payer: Some(sale.payer.clone()),
            payment_method: PaymentMethod::X402,
            x402_version: note.map(|n| n.x402_version),
            charged: true,
            settlement: ReceiptSettlement {
                status: "settled".into(),
                on_chain: true,
                transaction,
                facilitator: Some("local".into()),
                collected: Some(true),
            },
            // Empty when the call died before its result existed.
            request_sha256: note.map(|n| n.request_sha256.clone()).unwrap_or_default(),
            result_sha256: note.map(|n| n.result_sha256.clone()).unwrap_or_default(),
            issued_at: crate::timestamp::now_rfc3339(),
            metering: None,
            signature: None,
        };
        self.signer.sign(&mut receipt);
        let batch = revenue::record(
            store_receipt(Batch::new(), &receipt)?,
            &Sale {
                receipt_id: receipt_id.clone(),
                endpoint_slug: sale.endpoint_slug.clone(),
                seller: sale.seller.clone(),
                amount,
                method: PaymentMethod::X402,
                at: OffsetDateTime::now_utc(),
                // Recovery records a sale only when the chain says the transfer happened.
                collection: Some(revenue::Collection::Collected),
                credit_id: None,
                refunded: Usd::ZERO,
            },
        )?
        .require_nonce(key, Some(bytes.to_vec()))
        .put_nonce(nonces::row(
            key,
            NonceState::Spent,
            receipt_id.as_bytes().to_vec(),
        ));
        match self.store.apply(batch).await {
            Ok(()) => {
                tracing::warn!(
                    receipt = %receipt_id,
                    node = %record.node,
                    "a transfer made by a call that died before recording it was recorded"
                );
                Ok(Resolution::Recorded)
            }
            Err(StoreError::ConditionFailed(_)) => Ok(Resolution::Live),
            Err(e) => Err(e.into()),
        }
    }

    /// Checks every pending settlement against the chain (nothing to do without one).
    pub async fn reconcile_pending(
        &self,
        unseen_before_ms: u64,
    ) -> Result<PendingReport, RecoveryError> {
        let mut report = PendingReport::default();
        let Some(chain) = self.facilitator.chain() else {
            return Ok(report);
        };
        let mut after: Option<String> = None;
        loop {
            let page = (self.store)
                .pending_settlements(after.as_deref(), PAGE)
                .await?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (receipt_id, bytes) in page {
                let pending: PendingSettlement =
                    serde_json::from_slice(&bytes).map_err(|e| RecoveryError::Corrupt {
                        key: format!("pending settlement {receipt_id}"),
                        detail: e.to_string(),
                    })?;
                let outcome = match outcome(chain, &pending, unseen_before_ms).await {
                    Ok(outcome) => outcome,
                    Err(RecoveryError::Chain(e)) => {
                        tracing::warn!(error = %e, receipt = %pending.receipt_id, "cannot ask the chain about a pending settlement; will retry");
                        report.errors += 1;
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                let counter = match &outcome {
                    Outcome::Waiting => {
                        report.waiting += 1;
                        continue;
                    }
                    Outcome::Settled(_) => &mut report.settled,
                    Outcome::Lost("dropped") => &mut report.dropped,
                    Outcome::Lost(_) => &mut report.failed,
                };
                if self.conclude(&pending, &bytes, outcome).await? {
                    *counter += 1;
                } else {
                    report.errors += 1;
                }
            }
        }
        Ok(report)
    }

    /// Writes how a pending settlement ended: the re-signed receipt, the sale removed when the
    /// money did not arrive, the index entry gone; one batch. `false`: something changed
    /// meanwhile, try again next pass.
    async fn conclude(
        &self,
        pending: &PendingSettlement,
        index_bytes: &[u8],
        outcome: Outcome,
    ) -> Result<bool, RecoveryError> {
        let id = &pending.receipt_id;
        let Some(old) = self.store.receipt(id).await? else {
            return Err(RecoveryError::Corrupt {
                key: id.clone(),
                detail: "a pending settlement without its receipt".into(),
            });
        };
        let mut receipt: Receipt =
            serde_json::from_slice(&old).map_err(|e| RecoveryError::Corrupt {
                key: id.clone(),
                detail: e.to_string(),
            })?;
        let mut batch = Batch::new()
            .require_pending_settlement(id, Some(index_bytes.to_vec()))
            .delete_pending_settlement(id);
        match outcome {
            Outcome::Settled(transaction) => {
                receipt.settlement.status = "settled".into();
                receipt.settlement.on_chain = true;
                receipt.settlement.transaction = transaction;
                receipt.settlement.collected = Some(true);
            }
            Outcome::Lost(status) => {
                receipt.settlement.status = status.into();
                receipt.settlement.on_chain = false;
                receipt.settlement.collected = Some(false);
                receipt.charged = false;
                // Pending sales are never in a packet; the condition makes that exact.
                batch = batch.require_paid_out(id, None);
                if let Some(sale) = self.store.sale(id).await? {
                    batch = revenue::remove(batch, &sale)?;
                }
            }
            Outcome::Waiting => return Ok(true),
        }
        self.signer.sign(&mut receipt);
        let batch = crate::receipts::replace(batch, old, &receipt)?;
        let batch = crate::receipts::log::pending_version(batch, &receipt);
        match self.store.apply(batch).await {
            Ok(()) => {
                tracing::info!(receipt = %id, status = %receipt.settlement.status, "pending settlement concluded");
                Ok(true)
            }
            Err(StoreError::ConditionFailed(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// One start-up or background pass of both, logged; errors are logged and left for the
    /// next pass.
    pub async fn run_pass(&self, cutoffs: Cutoffs) {
        match self.recover_claims(cutoffs).await {
            Ok(report) if report != ClaimsReport::default() => {
                tracing::info!(?report, "nonce claim recovery")
            }
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "nonce claim recovery failed"),
        }
        match self.reconcile_pending(cutoffs.unseen_before_ms).await {
            Ok(report) if report != PendingReport::default() => {
                tracing::info!(?report, "pending settlements checked")
            }
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "checking pending settlements failed"),
        }
        let refunds = super::refunds::Parts {
            store: self.store.clone(),
            signer: self.signer.clone(),
            facilitator: self.facilitator.clone(),
            fee_bps: self.fee_bps,
        };
        match super::refunds::on_chain::recover(&refunds, cutoffs.unseen_before_ms).await {
            Ok(report) if report != Default::default() => {
                tracing::info!(?report, "refund transfers checked")
            }
            Ok(_) => {}
            Err(e) => tracing::error!(error = %e, "checking refund transfers failed"),
        }
    }
}

/// What a pass did with one claim.
enum Resolution {
    /// Young enough to belong to a live call, or changed by one meanwhile: untouched.
    Live,
    Released,
    Recorded,
    Kept,
}

async fn outcome(
    chain: &dyn ChainStatus,
    pending: &PendingSettlement,
    unseen_before_ms: u64,
) -> Result<Outcome, RecoveryError> {
    let corrupt = |detail: &str| RecoveryError::Corrupt {
        key: pending.receipt_id.clone(),
        detail: detail.into(),
    };
    let expected = expected_transfer(
        &pending.asset,
        &pending.payer,
        &pending.pay_to,
        pending.amount_units,
    )
    .ok_or_else(|| corrupt("no valid asset, payer or payee"))?;
    let transaction =
        B256::from_str(&pending.transaction).map_err(|_| corrupt("no valid transaction"))?;
    let nonce = PaymentNonce::parse(&pending.nonce, pending.permit2)
        .ok_or_else(|| corrupt("no valid nonce"))?;
    let lost = match chain.transfer_status(transaction, expected).await? {
        TransferStatus::Transferred => {
            return Ok(Outcome::Settled(Some(pending.transaction.clone())))
        }
        TransferStatus::InPool => return Ok(Outcome::Waiting),
        TransferStatus::Unknown if pending.since_ms >= unseen_before_ms => {
            return Ok(Outcome::Waiting)
        }
        TransferStatus::Unknown => "dropped",
        TransferStatus::Reverted | TransferStatus::MinedWithoutTransfer => "failed",
    };
    // Ours did not move it; another transaction may have used the authorization.
    Ok(
        if chain
            .payment_used(expected.asset, expected.from, nonce)
            .await?
        {
            Outcome::Settled(None)
        } else {
            Outcome::Lost(lost)
        },
    )
}

fn expected_transfer(asset: &str, from: &str, to: &str, units: u64) -> Option<ExpectedTransfer> {
    Some(ExpectedTransfer {
        asset: Address::from_str(asset).ok()?,
        from: Address::from_str(from).ok()?,
        to: Address::from_str(to).ok()?,
        value: U256::from(units),
    })
}

/// `{chainId}/{asset}/{from}/{nonce}` → asset, authorizer, nonce.
fn parse_key(key: &str) -> Option<(Address, Address, B256)> {
    let mut parts = key.split('/');
    let (_, asset, from, nonce) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    Some((
        Address::from_str(asset).ok()?,
        Address::from_str(from).ok()?,
        B256::from_str(nonce).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use futures::future::BoxFuture;
    use futures::FutureExt;
    use serde_json::Value;

    use super::*;
    use crate::payments::nonces::{SaleDraft, SettlingNote};
    use crate::receipts::verify_receipt;
    use crate::store::{NonceClaims, PendingSettlements, SledStore};
    use crate::x402::facilitator::{SettleJournal, Settlement};
    use crate::x402::header::PaymentPayload;
    use crate::x402::requirements::Offer;
    use crate::x402::verify::Verified;
    use crate::x402::PaymentError;

    const BOUND: Duration = Duration::from_secs(100);
    const ASSET: &str = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

    /// A facilitator whose chain answers from tables, or that has no chain at all.
    #[derive(Default)]
    struct FakeChain {
        has_chain: bool,
        used: HashSet<B256>,
        transactions: HashMap<B256, TransferStatus>,
    }

    impl Facilitator for FakeChain {
        fn verify<'a>(
            &'a self,
            _: &'a PaymentPayload,
            _: &'a Offer,
        ) -> BoxFuture<'a, Result<Verified, PaymentError>> {
            futures::future::ready(Err(PaymentError::Facilitator("not in these tests".into())))
                .boxed()
        }

        fn settle<'a>(
            &'a self,
            _: &'a PaymentPayload,
            _: &'a Offer,
            _: &'a Verified,
            _: crate::money::Usd,
            _: &'a dyn SettleJournal,
        ) -> BoxFuture<'a, Result<Settlement, PaymentError>> {
            futures::future::ready(Err(PaymentError::Facilitator("not in these tests".into())))
                .boxed()
        }

        fn supported(&self) -> BoxFuture<'_, Result<Value, PaymentError>> {
            futures::future::ready(Ok(Value::Null)).boxed()
        }

        fn chain(&self) -> Option<&dyn ChainStatus> {
            self.has_chain.then_some(self as &dyn ChainStatus)
        }
    }

    impl ChainStatus for FakeChain {
        fn payment_used(
            &self,
            _: Address,
            _: Address,
            nonce: PaymentNonce,
        ) -> BoxFuture<'_, Result<bool, ChainError>> {
            let used = matches!(nonce, PaymentNonce::Eip3009(n) if self.used.contains(&n));
            futures::future::ready(Ok(used)).boxed()
        }

        fn transfer_status(
            &self,
            transaction: B256,
            _: ExpectedTransfer,
        ) -> BoxFuture<'_, Result<TransferStatus, ChainError>> {
            let status = self
                .transactions
                .get(&transaction)
                .copied()
                .unwrap_or(TransferStatus::Unknown);
            futures::future::ready(Ok(status)).boxed()
        }
    }

    struct Setup {
        store: Arc<SledStore>,
        signer: Arc<ReceiptSigner>,
        recovery: Recovery,
    }

    fn setup(chain: FakeChain) -> Setup {
        let store = Arc::new(SledStore::temporary().unwrap());
        let signer = Arc::new(ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap());
        let recovery = Recovery::new(
            store.clone(),
            Arc::new(chain),
            signer.clone(),
            Urls::new("http://test"),
            BOUND,
            crate::config::DEFAULT_RECOVERY_INTERVAL,
            1000,
        );
        Setup {
            store,
            signer,
            recovery,
        }
    }

    fn payer() -> Address {
        Address::repeat_byte(0x11)
    }

    fn nonce_key(nonce: B256) -> String {
        nonces::key(84532, ASSET, payer(), nonce)
    }

    fn claim(nonce: B256, claimed_at_ms: u64, settling: Option<(Option<B256>, u64)>) -> Vec<u8> {
        ClaimRecord {
            claim_id: nonce.to_string(),
            claimed_at_ms,
            node: "node_dead".into(),
            state: if settling.is_some() {
                ClaimState::Settling
            } else {
                ClaimState::Claimed
            },
            sale: SaleDraft {
                purpose: "invocation".into(),
                endpoint_slug: Some("e".into()),
                seller: Some("b".into()),
                amount_units: 1000,
                payer: payer().to_checksum(None),
                network: "eip155:84532".into(),
                chain_id: 84532,
                asset: ASSET.into(),
                pay_to: Address::repeat_byte(0x22).to_checksum(None),
                nonce: nonce.to_string(),
                permit2: false,
            },
            settling: settling.map(|(transaction, marked_at_ms)| SettlingNote {
                transaction: transaction.map(|t| t.to_string()),
                receipt_id: format!("rcpt_{}", uuid::Uuid::now_v7().simple()),
                request_sha256: "aa".into(),
                result_sha256: "bb".into(),
                x402_version: 2,
                marked_at_ms,
                amount_units: None,
            }),
        }
        .to_bytes()
        .unwrap()
    }

    async fn put(store: &SledStore, nonce: B256, bytes: &[u8]) {
        let state = match Stored::parse(bytes).unwrap() {
            Stored::Claim(record) => record.state.into(),
            Stored::Legacy => NonceState::Legacy,
            Stored::Spent(_) => NonceState::Spent,
            Stored::Failed(_) => NonceState::Failed,
        };
        let row = nonces::row(&nonce_key(nonce), state, bytes.to_vec());
        store.apply(Batch::new().put_nonce(row)).await.unwrap();
    }

    async fn stored(store: &SledStore, nonce: B256) -> Option<Stored> {
        store
            .nonce(&nonce_key(nonce))
            .await
            .unwrap()
            .map(|b| Stored::parse(&b).unwrap())
    }

    #[tokio::test]
    async fn without_a_chain_releases_only_stale_claims_and_keeps_handed_off_ones() {
        let Setup {
            store, recovery, ..
        } = setup(FakeChain::default());
        let now = nonces::now_ms();
        let (old, young, handed, legacy) = (
            B256::repeat_byte(1),
            B256::repeat_byte(2),
            B256::repeat_byte(3),
            B256::repeat_byte(4),
        );
        put(&store, old, &claim(old, now - 200_000, None)).await;
        put(&store, young, &claim(young, now - 1_000, None)).await;
        put(
            &store,
            handed,
            &claim(handed, now - 200_000, Some((None, now - 190_000))),
        )
        .await;
        put(&store, legacy, b"pending/abc").await;
        put(&store, B256::repeat_byte(5), b"rcpt_spent").await;

        let report = recovery
            .recover_claims(Cutoffs::periodic(now, BOUND))
            .await
            .unwrap();
        assert_eq!(
            report,
            ClaimsReport {
                released: 1,
                recorded: 0,
                kept: 1,
                failed: 0
            }
        );
        assert_eq!(stored(&store, old).await, None);
        assert!(matches!(
            stored(&store, young).await,
            Some(Stored::Claim(_))
        ));
        assert!(matches!(
            stored(&store, handed).await,
            Some(Stored::Claim(_))
        ));
        // A legacy claim carries no time: first seen now, so it waits out the bound.
        assert_eq!(stored(&store, legacy).await, Some(Stored::Legacy));
        let later = Cutoffs::periodic(now + 2 * BOUND.as_millis() as u64, BOUND);
        let report = recovery.recover_claims(later).await.unwrap();
        assert_eq!((report.released, report.kept), (2, 1));
        assert_eq!(stored(&store, legacy).await, None);
        assert_eq!(stored(&store, young).await, None);
        assert_eq!(
            stored(&store, B256::repeat_byte(5)).await,
            Some(Stored::Spent("rcpt_spent".into()))
        );
    }

    #[tokio::test]
    async fn at_an_exclusive_start_every_claim_is_an_orphan() {
        let Setup {
            store, recovery, ..
        } = setup(FakeChain::default());
        let now = nonces::now_ms();
        let (fresh, legacy) = (B256::repeat_byte(1), B256::repeat_byte(2));
        put(&store, fresh, &claim(fresh, now, None)).await;
        put(&store, legacy, b"pending/abc").await;
        let report = recovery
            .recover_claims(Cutoffs::exclusive_start(now + 1, BOUND))
            .await
            .unwrap();
        assert_eq!(report.released, 2);
        assert_eq!(stored(&store, fresh).await, None);
        assert_eq!(stored(&store, legacy).await, None);
    }

    #[tokio::test]
    async fn with_a_chain_records_transfers_that_happened_and_releases_the_rest() {
        let now = nonces::now_ms();
        let long_ago = now - 500_000;
        let mined = B256::repeat_byte(0xa1);
        let (settled, other_tx, unused, pooled, dropped, unseen, reverted) = (
            B256::repeat_byte(1),
            B256::repeat_byte(2),
            B256::repeat_byte(3),
            B256::repeat_byte(4),
            B256::repeat_byte(5),
            B256::repeat_byte(6),
            B256::repeat_byte(7),
        );
        let (pool_tx, lost_tx, fresh_tx, revert_tx) = (
            B256::repeat_byte(0xb1),
            B256::repeat_byte(0xb2),
            B256::repeat_byte(0xb3),
            B256::repeat_byte(0xb4),
        );
        let chain = FakeChain {
            has_chain: true,
            used: [settled, other_tx].into_iter().collect(),
            transactions: [
                (mined, TransferStatus::Transferred),
                (pool_tx, TransferStatus::InPool),
                (revert_tx, TransferStatus::Reverted),
            ]
            .into_iter()
            .collect(),
        };
        let Setup {
            store,
            signer,
            recovery,
        } = setup(chain);
        let settling_claim = claim(settled, long_ago, Some((Some(mined), long_ago)));
        put(&store, settled, &settling_claim).await;
        // Used on-chain, but not by any transaction of ours: recorded without a hash.
        put(&store, other_tx, &claim(other_tx, long_ago, None)).await;
        put(&store, unused, &claim(unused, long_ago, None)).await;
        put(
            &store,
            pooled,
            &claim(pooled, long_ago, Some((Some(pool_tx), long_ago))),
        )
        .await;
        put(
            &store,
            dropped,
            &claim(dropped, long_ago, Some((Some(lost_tx), long_ago))),
        )
        .await;
        put(
            &store,
            unseen,
            &claim(unseen, long_ago, Some((Some(fresh_tx), now))),
        )
        .await;
        put(
            &store,
            reverted,
            &claim(reverted, long_ago, Some((Some(revert_tx), long_ago))),
        )
        .await;

        let report = recovery
            .recover_claims(Cutoffs::periodic(now, BOUND))
            .await
            .unwrap();
        assert_eq!(
            report,
            ClaimsReport {
                released: 3,
                recorded: 2,
                kept: 2,
                failed: 0
            }
        );
        for released in [unused, dropped, reverted] {
            assert_eq!(stored(&store, released).await, None);
        }
        for kept in [pooled, unseen] {
            assert!(matches!(stored(&store, kept).await, Some(Stored::Claim(_))));
        }

        // The settling claim's receipt: the id, digests and transaction it noted, signed.
        let Stored::Claim(record) = Stored::parse(&settling_claim).unwrap() else {
            unreachable!()
        };
        let note = record.settling.unwrap();
        assert_eq!(
            stored(&store, settled).await,
            Some(Stored::Spent(note.receipt_id.clone()))
        );
        let receipt = crate::receipts::read(store.as_ref(), &note.receipt_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(receipt.settlement.status, "settled");
        assert!(receipt.settlement.on_chain);
        assert_eq!(receipt.settlement.transaction, Some(mined.to_string()));
        assert_eq!(
            (receipt.request_sha256.as_str(), receipt.amount.as_str()),
            ("aa", "1000")
        );
        assert!(verify_receipt(&receipt, &signer.public_key()));
        let Some(Stored::Spent(other_id)) = stored(&store, other_tx).await else {
            panic!("the claim used by another transaction is spent")
        };
        let other = crate::receipts::read(store.as_ref(), &other_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(other.settlement.transaction, None);
        // Both sales are in the seller's revenue.
        let sales = revenue::sales_of(store.as_ref(), "b", OffsetDateTime::UNIX_EPOCH)
            .await
            .unwrap();
        assert_eq!(sales.len(), 2);
        assert!(sales.iter().all(|s| s.amount.units() == 1000));

        // Nothing left to do for what was resolved; a second pass changes nothing.
        let again = recovery
            .recover_claims(Cutoffs::periodic(now, BOUND))
            .await
            .unwrap();
        assert_eq!((again.released, again.recorded, again.kept), (0, 0, 2));
    }

    /// Writes what the gate commits for a pending settlement: receipt, sale, index entry.
    async fn pending(
        store: &SledStore,
        signer: &ReceiptSigner,
        transaction: B256,
        nonce: B256,
        since_ms: u64,
    ) -> String {
        let id = format!("rcpt_{}", uuid::Uuid::now_v7().simple());
        let mut receipt = Receipt {
            receipt_id: id.clone(),
            schema: RECEIPT_SCHEMA.into(),
            purpose: "invocation".into(),
            endpoint_slug: Some("e".into()),
            price_usd: "0.001".into(),
            amount: "1000".into(),
            asset: Some(ASSET.into()),
            network: Some("eip155:84532".into()),
            payer: Some(payer().to_checksum(None)),
            payment_method: PaymentMethod::X402,
            x402_version: Some(2),
            charged: true,
            settlement: ReceiptSettlement {
                status: "pending".into(),
                on_chain: false,
                transaction: Some(transaction.to_string()),
                facilitator: Some("local".into()),
                collected: Some(false),
            },
            request_sha256: "aa".into(),
            result_sha256: "bb".into(),
            issued_at: crate::timestamp::now_rfc3339(),
            url: format!("http://test/ai/receipts/{id}"),
            metering: None,
            signature: None,
        };
        signer.sign(&mut receipt);
        let sale = Sale {
            receipt_id: id.clone(),
            endpoint_slug: Some("e".into()),
            seller: Some("b".into()),
            amount: Usd::from_units(1000),
            method: PaymentMethod::X402,
            at: OffsetDateTime::now_utc(),
            collection: Some(revenue::Collection::Pending),
            credit_id: None,
            refunded: Usd::ZERO,
        };
        let index = PendingSettlement {
            receipt_id: id.clone(),
            transaction: transaction.to_string(),
            asset: ASSET.into(),
            payer: payer().to_checksum(None),
            pay_to: Address::repeat_byte(0x22).to_checksum(None),
            amount_units: 1000,
            nonce: nonce.to_string(),
            since_ms,
            permit2: false,
        };
        let batch = revenue::record(store_receipt(Batch::new(), &receipt).unwrap(), &sale).unwrap();
        store.apply(index.index(batch).unwrap()).await.unwrap();
        id
    }

    #[tokio::test]
    async fn pending_settlements_settle_fail_or_drop_and_revenue_stays_exact() {
        let now = nonces::now_ms();
        let long_ago = now - 500_000;
        let (mined, reverted, lost, pooled, fresh, elsewhere) = (
            B256::repeat_byte(0xa1),
            B256::repeat_byte(0xa2),
            B256::repeat_byte(0xa3),
            B256::repeat_byte(0xa4),
            B256::repeat_byte(0xa5),
            B256::repeat_byte(0xa6),
        );
        let used_elsewhere = B256::repeat_byte(0x66);
        let chain = FakeChain {
            has_chain: true,
            used: [used_elsewhere].into_iter().collect(),
            transactions: [
                (mined, TransferStatus::Transferred),
                (reverted, TransferStatus::Reverted),
                (pooled, TransferStatus::InPool),
            ]
            .into_iter()
            .collect(),
        };
        let Setup {
            store,
            signer,
            recovery,
        } = setup(chain);
        let s = store.as_ref();
        let settled_id = pending(s, &signer, mined, B256::repeat_byte(1), long_ago).await;
        let failed_id = pending(s, &signer, reverted, B256::repeat_byte(2), long_ago).await;
        let dropped_id = pending(s, &signer, lost, B256::repeat_byte(3), long_ago).await;
        let pooled_id = pending(s, &signer, pooled, B256::repeat_byte(4), long_ago).await;
        let fresh_id = pending(s, &signer, fresh, B256::repeat_byte(5), now).await;
        let elsewhere_id = pending(s, &signer, elsewhere, used_elsewhere, long_ago).await;
        // Pending sales count in revenue but are not paid out.
        assert_eq!(
            revenue::sales_of(s, "b", OffsetDateTime::UNIX_EPOCH)
                .await
                .unwrap()
                .len(),
            6
        );
        assert!(crate::revenue::payouts::payable_ids(s, "b")
            .await
            .unwrap()
            .is_empty());
        let unpaid = crate::revenue::payouts::unpaid_sums(s, "b", 0)
            .await
            .unwrap();
        assert_eq!(unpaid.iter().map(|group| group.count).sum::<u64>(), 6);

        let report = recovery
            .reconcile_pending(now - BOUND.as_millis() as u64)
            .await
            .unwrap();
        assert_eq!(
            report,
            PendingReport {
                settled: 2,
                failed: 1,
                dropped: 1,
                waiting: 2,
                errors: 0
            }
        );
        let receipt =
            |id: String| async move { crate::receipts::read(s, &id).await.unwrap().unwrap() };
        for (id, status, charged, on_chain) in [
            (&settled_id, "settled", true, true),
            (&elsewhere_id, "settled", true, true),
            (&failed_id, "failed", false, false),
            (&dropped_id, "dropped", false, false),
            (&pooled_id, "pending", true, false),
            (&fresh_id, "pending", true, false),
        ] {
            let r = receipt(id.clone()).await;
            assert_eq!(
                (
                    r.settlement.status.as_str(),
                    r.charged,
                    r.settlement.on_chain
                ),
                (status, charged, on_chain),
                "{id}"
            );
            assert!(verify_receipt(&r, &signer.public_key()), "{id}");
        }
        assert_eq!(
            receipt(settled_id.clone()).await.settlement.transaction,
            Some(mined.to_string())
        );
        assert_eq!(
            receipt(elsewhere_id.clone()).await.settlement.transaction,
            None
        );
        // Revenue: the two lost sales are gone; the settled ones became payable.
        let sales: Vec<String> = revenue::sales_of(s, "b", OffsetDateTime::UNIX_EPOCH)
            .await
            .unwrap()
            .into_iter()
            .map(|sale| sale.receipt_id)
            .collect();
        assert_eq!(sales.len(), 4);
        assert!(!sales.contains(&failed_id) && !sales.contains(&dropped_id));
        let mut payable = crate::revenue::payouts::payable_ids(s, "b").await.unwrap();
        payable.sort();
        let mut expected = vec![settled_id, elsewhere_id];
        expected.sort();
        assert_eq!(payable, expected);
        let left = s.pending_settlements(None, 100).await.unwrap();
        assert_eq!(left.len(), 2);
    }
}
