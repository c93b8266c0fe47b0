//! EIP-3009 nonce claims: the replay guard, and what recovery needs when a call dies mid-way.
//!
//! A nonce is unique per token contract and authorizer, so the key is
//! `{chainId}/{asset}/{from}/{nonce}`. A claim is written on condition that the key holds
//! nothing (`Batch::require_nonce` with `None`) in one atomic step, so of any number of
//! concurrent requests carrying the same authorization exactly one gets it. Nonces are the
//! store's typed records (`toolhost_store::nonces`): each write says the nonce's state, so the
//! store can find the open ones (claimed, settling, legacy) without the spent ones. What the
//! key holds says where the payment is:
//!
//! | value | meaning |
//! |---|---|
//! | a [`ClaimRecord`] (JSON, `state:"claimed"`) | a call is running with this payment |
//! | a [`ClaimRecord`] with `state:"settling"` | the settlement is about to leave our hands (transaction hash, when there is one, recorded just before it is broadcast) |
//! | `rcpt_…` | spent by that receipt |
//! | `failed/{receiptId}` | burned: the handler ran, then settlement failed (no receipt `receiptId` was issued) |
//! | `pending/{claimId}` | a claim written before claim records existed (legacy) |
//!
//! Settling replaces the claim with the receipt id in the same batch that writes the receipt;
//! a call whose handler failed deletes it (only if it is still ours) so the caller may retry
//! the unspent authorization. A call whose handler succeeded but whose settlement then failed
//! burns it instead (`failed/…`): the work was done, so the same authorization must not run
//! the handler again for free; the payer signs a new one. Every transition is a compare-and-swap on the exact bytes the claim holder
//! last wrote, so a claim released or resolved by [`recovery`](super::recovery) meanwhile is
//! never overwritten: the slower side sees its condition fail and stops.
//!
//! The record carries the claim time (recovery only touches claims older than a bound), the
//! node that claimed it (for the operator's logs), and the sale it would settle, so recovery
//! can record the sale when the chain says the transfer happened although the process died.

use std::fmt::Display;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::store::{Batch, NonceRow, NonceState, Store, StoreError};
use crate::x402::{PaymentError, Reason};

/// The legacy claim value's prefix (`pending/{claimId}`), written before claim records: the
/// store's, which tells open nonces by it.
pub use crate::store::nonces::LEGACY_PREFIX;
/// A burned nonce's prefix (`failed/{receiptId}`): settlement failed after the handler ran.
pub const FAILED_PREFIX: &[u8] = b"failed/";

/// What a claimed nonce holds while its call runs. Stored as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimRecord {
    pub claim_id: String,
    pub claimed_at_ms: u64,
    /// The node (process) that claimed it.
    pub node: String,
    pub state: ClaimState,
    pub sale: SaleDraft,
    /// Set with `state: settling`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settling: Option<SettlingNote>,
}

impl ClaimRecord {
    /// What its settlement moves: the note's amount (a metered call's bill) once settling,
    /// else the sale's.
    pub fn settled_units(&self) -> u64 {
        self.settling
            .as_ref()
            .and_then(|note| note.amount_units)
            .unwrap_or(self.sale.amount_units)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimState {
    /// The call runs; nothing has left our hands.
    Claimed,
    /// Settlement was submitted, or is about to be: the money may move.
    Settling,
}

/// The sale a claim would settle: what recovery records if the transfer happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SaleDraft {
    /// `invocation` or `builder_registration`.
    pub purpose: String,
    pub endpoint_slug: Option<String>,
    pub seller: Option<String>,
    /// Atomic units of the asset (USDC: micro-dollars).
    pub amount_units: u64,
    /// The authorizer, EIP-55.
    pub payer: String,
    /// CAIP-2.
    pub network: String,
    pub chain_id: u64,
    pub asset: String,
    pub pay_to: String,
    /// The EIP-3009 nonce, 0x-hex; or Permit2's, decimal, when `permit2`.
    pub nonce: String,
    /// A Permit2 payment (`upto`, `exact` by Permit2): its nonce is Permit2's, and the
    /// transfer goes through x402's proxy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub permit2: bool,
}

/// Written just before the payment leaves our hands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettlingNote {
    /// The transaction about to be broadcast; `None` when a remote facilitator submits it.
    pub transaction: Option<String>,
    /// The receipt the call will be given, so recovery issues the same one.
    pub receipt_id: String,
    pub request_sha256: String,
    pub result_sha256: String,
    pub x402_version: u8,
    pub marked_at_ms: u64,
    /// What the settlement moves, when it is not the sale's amount (a metered call's bill).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_units: Option<u64>,
}

/// What a nonce key holds, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stored {
    Claim(Box<ClaimRecord>),
    /// `pending/{claimId}`: no time, no sale.
    Legacy,
    /// Spent by this receipt.
    Spent(String),
    /// Burned after the handler ran and settlement failed; the receipt id it would have had.
    Failed(String),
}

impl Stored {
    /// Parses a stored value; a JSON value that is not a claim record is corrupt.
    pub fn parse(bytes: &[u8]) -> Result<Stored, StoreError> {
        if bytes.first() == Some(&b'{') {
            return serde_json::from_slice(bytes)
                .map(|record| Stored::Claim(Box::new(record)))
                .map_err(|e| StoreError::Corrupt(format!("nonce claim: {e}")));
        }
        if bytes.starts_with(LEGACY_PREFIX) {
            return Ok(Stored::Legacy);
        }
        if let Some(id) = bytes.strip_prefix(FAILED_PREFIX) {
            return Ok(Stored::Failed(String::from_utf8_lossy(id).into_owned()));
        }
        Ok(Stored::Spent(String::from_utf8_lossy(bytes).into_owned()))
    }
}

impl From<ClaimState> for NonceState {
    fn from(state: ClaimState) -> NonceState {
        match state {
            ClaimState::Claimed => NonceState::Claimed,
            ClaimState::Settling => NonceState::Settling,
        }
    }
}

/// The nonce as the store keeps it: `entry` under `key`, in `state`.
pub(crate) fn row(key: &str, state: NonceState, entry: Vec<u8>) -> NonceRow {
    NonceRow {
        key: key.to_owned(),
        state,
        entry,
    }
}

impl ClaimRecord {
    pub fn to_bytes(&self) -> Result<Vec<u8>, StoreError> {
        serde_json::to_vec(self).map_err(|e| StoreError::Corrupt(e.to_string()))
    }
}

/// A claim on one nonce held by a running call. Clones share the bytes last written, so the
/// claim guard releases the claim as it stands (claimed or settling).
#[derive(Debug, Clone)]
pub(crate) struct NonceClaim {
    pub(crate) key: String,
    record: Arc<Mutex<(ClaimRecord, Vec<u8>)>>,
}

/// The claim key of a payer's nonce for an asset: `{chainId}/{asset}/{payer}/{nonce}`, the
/// asset and payer in lower case (an EVM address in any case names one account).
pub fn key(chain_id: u64, asset: &str, payer: impl Display, nonce: impl Display) -> String {
    format!(
        "{chain_id}/{}/{}/{nonce}",
        asset.to_ascii_lowercase(),
        payer.to_string().to_ascii_lowercase()
    )
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Claims the nonce for `record`, or refuses with `invalid_exact_evm_nonce_already_used`.
/// `also` is written in the same atomic step (a `payment-identifier` reservation); when one of
/// its conditions fails, nothing is written and the answer is that `ConditionFailed`.
///
/// The claim is visible to every node at once but not waited on to be durable
/// ([`Store::apply_unsynced`]): a paid call then makes one durable write, its settlement,
/// instead of two. Nothing is lost with a claim a crash undoes: until the settlement (or, on
/// chain, the `settling` mark written before the transfer leaves) the payment has not left
/// the payer, no answer has left, and both of those writes are durable with the claim before
/// them. The payer may send the authorization again.
pub(crate) async fn claim(
    store: &dyn Store,
    key: String,
    record: ClaimRecord,
    also: Batch,
) -> Result<NonceClaim, PaymentError> {
    let bytes = record.to_bytes()?;
    let batch = Batch::new()
        .require_nonce(&key, None)
        .put_nonce(row(&key, record.state.into(), bytes.clone()))
        .extend(also);
    match store.apply_unsynced(batch).await {
        Ok(()) => Ok(NonceClaim {
            key,
            record: Arc::new(Mutex::new((record, bytes))),
        }),
        Err(StoreError::ConditionFailed(0)) => Err(PaymentError::refused(
            Reason::NonceAlreadyUsed,
            "this authorization's nonce was already used (or is being used by a request in flight)",
        )),
        Err(e) => Err(e.into()),
    }
}

impl NonceClaim {
    /// The bytes this claim last wrote.
    fn bytes(&self) -> Vec<u8> {
        self.record.lock().map(|r| r.1.clone()).unwrap_or_default()
    }

    /// Adds "the claim is still ours" and "now it is spent by `receipt_id`" to a settling batch.
    pub(crate) fn commit(&self, batch: Batch, receipt_id: &str) -> Batch {
        batch
            .require_nonce(&self.key, Some(self.bytes()))
            .put_nonce(row(
                &self.key,
                NonceState::Spent,
                receipt_id.as_bytes().to_vec(),
            ))
    }

    /// Turns the claim to `settling` with `note`, durably, before the payment leaves our hands.
    /// Fails, and nothing may be submitted, when the claim is no longer ours (recovery released
    /// or resolved it).
    pub(crate) async fn mark_settling(
        &self,
        store: &dyn Store,
        note: SettlingNote,
    ) -> Result<(), PaymentError> {
        let (old, mut record) = {
            let guard = self
                .record
                .lock()
                .map_err(|_| PaymentError::Facilitator("nonce claim lock poisoned".into()))?;
            (guard.1.clone(), guard.0.clone())
        };
        record.state = ClaimState::Settling;
        record.settling = Some(note);
        let new = record.to_bytes()?;
        let batch = Batch::new()
            .require_nonce(&self.key, Some(old))
            .put_nonce(row(&self.key, NonceState::Settling, new.clone()));
        match store.apply(batch).await {
            Ok(()) => {
                if let Ok(mut guard) = self.record.lock() {
                    *guard = (record, new);
                }
                Ok(())
            }
            Err(StoreError::ConditionFailed(_)) => Err(PaymentError::Store(StoreError::Engine(
                "the nonce claim was released before settlement; nothing was submitted".into(),
            ))),
            Err(e) => Err(e.into()),
        }
    }

    /// What the key holds now, when it no longer holds this claim's bytes (another writer, e.g.
    /// recovery, resolved it).
    pub(crate) async fn current(&self, store: &dyn Store) -> Result<Option<Stored>, StoreError> {
        store
            .nonce(&self.key)
            .await?
            .map(|b| Stored::parse(&b))
            .transpose()
    }

    /// Burns the nonce after the handler ran and settlement failed: it stays used, so the same
    /// authorization cannot run the handler again, and recovery leaves it alone. Only if the
    /// claim is still ours (`ConditionFailed` otherwise: someone else resolved it).
    pub(crate) async fn burn(&self, store: &dyn Store, receipt_id: &str) -> Result<(), StoreError> {
        let value = [FAILED_PREFIX, receipt_id.as_bytes()].concat();
        let batch = Batch::new()
            .require_nonce(&self.key, Some(self.bytes()))
            .put_nonce(row(&self.key, NonceState::Failed, value));
        store.apply(batch).await
    }

    /// Gives the nonce back after a failed call. A claim already committed is left alone.
    pub(crate) async fn release(&self, store: &dyn Store) {
        let batch = Batch::new()
            .require_nonce(&self.key, Some(self.bytes()))
            .delete_nonce(&self.key);
        match store.apply(batch).await {
            Ok(()) | Err(StoreError::ConditionFailed(_)) => {}
            Err(e) => tracing::error!(error = %e, "could not release a nonce claim"),
        }
    }
}

#[cfg(test)]
mod tests {
    use alloy_primitives::{Address, B256};

    use super::*;
    use crate::store::{NonceClaims, SledStore};

    fn record(claimed_at_ms: u64) -> ClaimRecord {
        ClaimRecord {
            claim_id: uuid::Uuid::new_v4().simple().to_string(),
            claimed_at_ms,
            node: "node_test".into(),
            state: ClaimState::Claimed,
            sale: SaleDraft {
                purpose: "invocation".into(),
                endpoint_slug: Some("e".into()),
                seller: Some("b".into()),
                amount_units: 1000,
                payer: Address::ZERO.to_checksum(None),
                network: "eip155:84532".into(),
                chain_id: 84532,
                asset: "0xAB".into(),
                pay_to: Address::ZERO.to_checksum(None),
                nonce: B256::ZERO.to_string(),
                permit2: false,
            },
            settling: None,
        }
    }

    #[tokio::test]
    async fn claims_once_and_releases_only_what_it_holds() {
        let store = SledStore::temporary().unwrap();
        let k = key(84532, "0xAB", Address::ZERO, B256::ZERO);
        let first = claim(&store, k.clone(), record(now_ms()), Batch::new())
            .await
            .unwrap();
        assert!(matches!(
            claim(&store, k.clone(), record(now_ms()), Batch::new()).await,
            Err(PaymentError::Refused {
                reason: Reason::NonceAlreadyUsed,
                ..
            })
        ));
        first.release(&store).await;
        let second = claim(&store, k.clone(), record(now_ms()), Batch::new())
            .await
            .unwrap();
        // Marked settling, the claim still commits (and releases) as what it now holds.
        let note = SettlingNote {
            transaction: Some(B256::repeat_byte(7).to_string()),
            receipt_id: "rcpt_1".into(),
            request_sha256: "00".into(),
            result_sha256: "11".into(),
            x402_version: 2,
            marked_at_ms: now_ms(),
            amount_units: None,
        };
        second.mark_settling(&store, note.clone()).await.unwrap();
        match second.current(&store).await.unwrap() {
            Some(Stored::Claim(r)) => {
                assert_eq!(r.state, ClaimState::Settling);
                assert_eq!(r.settling, Some(note.clone()));
            }
            other => panic!("expected a settling claim, got {other:?}"),
        }
        store
            .apply(second.commit(Batch::new(), "rcpt_1"))
            .await
            .unwrap();
        second.release(&store).await;
        assert_eq!(
            store.nonce(&k).await.unwrap().as_deref(),
            Some(&b"rcpt_1"[..])
        );
        assert!(claim(&store, k.clone(), record(now_ms()), Batch::new())
            .await
            .is_err());
        // Burned after a failed settlement: used for good, and release leaves it so.
        let k2 = key(84532, "0xAB", Address::ZERO, B256::repeat_byte(2));
        let burned = claim(&store, k2.clone(), record(now_ms()), Batch::new())
            .await
            .unwrap();
        burned.burn(&store, "rcpt_2").await.unwrap();
        burned.release(&store).await;
        assert_eq!(
            burned.current(&store).await.unwrap(),
            Some(Stored::Failed("rcpt_2".into()))
        );
        assert!(matches!(
            claim(&store, k2.clone(), record(now_ms()), Batch::new()).await,
            Err(PaymentError::Refused {
                reason: Reason::NonceAlreadyUsed,
                ..
            })
        ));
        // A claim resolved by someone else cannot be marked: nothing may be submitted.
        store.apply(Batch::new().delete_nonce(&k)).await.unwrap();
        let third = claim(&store, k.clone(), record(now_ms()), Batch::new())
            .await
            .unwrap();
        store.apply(Batch::new().delete_nonce(&k)).await.unwrap();
        assert!(third.mark_settling(&store, note).await.is_err());
    }

    #[test]
    fn parses_every_stored_form() {
        let r = record(5);
        assert_eq!(
            Stored::parse(&r.to_bytes().unwrap()).unwrap(),
            Stored::Claim(Box::new(r))
        );
        assert_eq!(Stored::parse(b"pending/abc").unwrap(), Stored::Legacy);
        assert_eq!(
            Stored::parse(b"rcpt_9").unwrap(),
            Stored::Spent("rcpt_9".into())
        );
        assert_eq!(
            Stored::parse(b"failed/rcpt_3").unwrap(),
            Stored::Failed("rcpt_3".into())
        );
        assert!(Stored::parse(b"{not json").is_err());
    }

    /// The state each stored form is written with is the one the store's byte check reads
    /// back (a key-value engine keeps the entry alone).
    #[test]
    fn every_form_is_open_exactly_when_its_state_is() {
        let claimed = record(5).to_bytes().unwrap();
        let forms: [(&[u8], NonceState); 4] = [
            (&claimed, ClaimState::Claimed.into()),
            (b"pending/abc", NonceState::Legacy),
            (b"rcpt_9", NonceState::Spent),
            (b"failed/rcpt_3", NonceState::Failed),
        ];
        for (entry, state) in forms {
            assert_eq!(
                crate::store::nonces::is_open(entry),
                state.is_open(),
                "{state:?}"
            );
        }
    }
}
