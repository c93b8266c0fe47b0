//! The revenue ledger: one sale entry per charged receipt, written in the same atomic batch as
//! the receipt, so revenue reports and payout packets reconcile exactly with receipts.
//!
//! Keys in the ledger tree: `sale/{receiptId}`; receipt ids are UUIDv7, so key order is time
//! order.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::money::Usd;
use crate::receipts::PaymentMethod;
use crate::store::{Batch, StoreError, Tree};

/// One charged call.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Sale {
    pub receipt_id: String,
    pub endpoint_slug: Option<String>,
    /// The builder who owns the endpoint; `None` for the platform's own endpoints and fees.
    pub seller: Option<String>,
    pub amount: Usd,
    pub method: PaymentMethod,
    #[serde(with = "time::serde::rfc3339")]
    pub at: OffsetDateTime,
}

pub const SALE_PREFIX: &[u8] = b"sale/";

fn sale_key(receipt_id: &str) -> Vec<u8> {
    [SALE_PREFIX, receipt_id.as_bytes()].concat()
}

/// Adds the sale to a settling batch.
pub fn record(batch: Batch, sale: &Sale) -> Result<Batch, StoreError> {
    let bytes = serde_json::to_vec(sale).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(batch
        .require_absent(Tree::Ledger, sale_key(&sale.receipt_id))
        .put(Tree::Ledger, sale_key(&sale.receipt_id), bytes))
}
