//! Receipts: the public-safe, signed record of each paid (or free receipt-echo) call.
//!
//! A receipt names what was bought, what it cost, who paid and how, how settlement went, and
//! SHA-256 digests of the request and of the result (never the data itself). The service signs
//! a paid one with its Ed25519 key, whose public key `/ai/manifest` publishes, so anyone can
//! check it offline: remove `signature`, serialize the rest as canonical JSON (object keys
//! sorted, no whitespace; every value is a string, boolean, integer or null), and verify
//! `signature.value` (base64) over those bytes. It is also a leaf of the receipt log. A free
//! call's receipt has no signature of its own: the signed root of the batch it was stored in
//! proves it, one signature for many calls.
//!
//! # Layout
//! - `record`: the [`Receipt`] type, canonical JSON and the digests.
//! - `signing`: the service key (generated into the data dir, mode 0600), signing and checking.
//! - `log`: the receipt log, a Merkle tree of every paid receipt with signed checkpoints.
//! - `batch`: free calls' receipts, proven in signed batches instead (they expire).

pub mod batch;
pub mod log;
mod receipt;
mod signing;

pub use receipt::{
    canonical_json, sha256_hex, DigestSalt, PaymentMethod, Receipt, ReceiptMetering,
    ReceiptSettlement, ReceiptSignature, RECEIPT_SCHEMA,
};
pub use signing::{verify as verify_receipt, ReceiptSigner, SigningError};

use serde_json::Value;

use self::batch::ReceiptBatches;
use self::log::{Inclusion, LogError, ReceiptLog};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::store::{Batch, ReceiptRow, Store, StoreError};

/// The public-safe receipt record by id; shared with the MCP `receipt_lookup` tool.
pub async fn lookup(store: &dyn Store, receipt_id: &str) -> ApiResult<Value> {
    let stored: Option<Value> = read_as(store, receipt_id).await?;
    stored.ok_or_else(|| {
        ApiError::not_found(
            ErrorCode::ReceiptNotFound,
            format!("no receipt {receipt_id:?}"),
        )
    })
}

/// A receipt's proof: its place in the receipt log's tree of `size` leaves (the latest if
/// `None`), or, for a free call's receipt, in its batch (whose size `size` must then be).
pub async fn proof_of(
    log: &ReceiptLog,
    batches: &ReceiptBatches,
    receipt_id: &str,
    size: Option<u64>,
) -> Result<Inclusion, LogError> {
    let not_in_log = match log.inclusion_of(receipt_id, size).await {
        Err(LogError::NotInLog(why)) => why,
        found => return found,
    };
    match batches.proof_of(receipt_id).await? {
        Some(proof) if size.is_none_or(|size| size == proof.tree_size) => Ok(proof),
        Some(proof) => Err(LogError::NotInLog(format!(
            "receipt {receipt_id:?} is a free call's, proven in its batch of {} receipts, not in a tree of {}",
            proof.tree_size,
            size.unwrap_or_default()
        ))),
        None => Err(LogError::NotInLog(not_in_log)),
    }
}

/// Adds a new receipt to `batch`, and its entry pending in the receipt log; the batch fails if
/// a receipt with its id exists already.
pub fn store_receipt(batch: Batch, receipt: &Receipt) -> Result<Batch, StoreError> {
    let entry = log::entry_of(receipt);
    let batch = store_receipt_bare(batch, receipt, entry.clone())?;
    // Pending in the log, so it reaches it even if the node stops before asking
    // ([`ReceiptLog::include`](log::ReceiptLog::include)).
    Ok(batch.put_log_pending(&receipt.receipt_id, entry))
}

/// Adds a new receipt to `batch`, conditional on its id being new, and nothing else: no pending
/// entry, for a batch stored with the receipt's leaf
/// ([`ReceiptLog::commit`](log::ReceiptLog::commit)) or a free call's (not in the log).
/// `entry` is the receipt's canonical JSON ([`log::entry_of`]), made once for the row and
/// the leaf.
pub fn store_receipt_bare(
    batch: Batch,
    receipt: &Receipt,
    entry: Vec<u8>,
) -> Result<Batch, StoreError> {
    Ok(batch
        .require_receipt(&receipt.receipt_id, None)
        .put_receipt(row(receipt, entry)?))
}

/// Adds `receipt`, re-signed, to `batch` in place of its stored version, on condition that it
/// is still stored as `old`.
pub fn replace(batch: Batch, old: Vec<u8>, receipt: &Receipt) -> Result<Batch, StoreError> {
    Ok(batch
        .require_receipt(&receipt.receipt_id, Some(old))
        .put_receipt(row(receipt, log::entry_of(receipt))?))
}

/// A stored receipt, if there is one.
pub async fn read(store: &dyn Store, receipt_id: &str) -> Result<Option<Receipt>, StoreError> {
    read_as(store, receipt_id).await
}

/// A stored receipt read as `T` (a [`Receipt`], or the JSON as it is served).
async fn read_as<T: serde::de::DeserializeOwned>(
    store: &dyn Store,
    receipt_id: &str,
) -> Result<Option<T>, StoreError> {
    let stored = store.receipt(receipt_id).await?;
    (stored
        .map(|bytes| serde_json::from_slice(&bytes))
        .transpose())
    .map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The receipt as the store keeps it: its JSON (`entry`, its canonical form, the same bytes as
/// its leaf), and the columns it is found and swept by.
pub fn row(receipt: &Receipt, entry: Vec<u8>) -> Result<ReceiptRow, StoreError> {
    let issued_at = time::OffsetDateTime::parse(
        &receipt.issued_at,
        &time::format_description::well_known::Rfc3339,
    )
    .map_err(|e| StoreError::Corrupt(format!("a receipt's issuedAt: {e}")))?;
    Ok(ReceiptRow {
        receipt_id: receipt.receipt_id.clone(),
        endpoint: receipt.endpoint_slug.clone(),
        payer: receipt.payer.clone(),
        free: !receipt.charged && receipt.payment_method == PaymentMethod::Free,
        issued_at_ms: i64::try_from(issued_at.unix_timestamp_nanos() / 1_000_000)
            .map_err(|_| StoreError::Corrupt("a receipt's issuedAt is out of range".into()))?,
        entry,
    })
}
