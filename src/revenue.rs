//! Builders' money: the sale ledger, revenue reports, payout settings and payout packets.
//!
//! Every charged receipt writes one [`Sale`] in the same atomic batch as the receipt, so revenue
//! reports and payout packets reconcile exactly with receipts. The platform fee is computed per
//! sale (rounded down, in atomic units) and net = amount − fee per sale, so every total is a sum
//! of integers and `gross = fee + net` holds at every level.
//!
//! Keys in the ledger tree: `sale/{receiptId}` (receipt ids are UUIDv7, so key order is time
//! order), `settings/{builderId}`, `packet/{builderId}/{packetId}`, `paid/{receiptId}` → packet
//! id (a receipt is paid out at most once: packets claim their receipts with `require_absent`),
//! `pending/{receiptId}` → a settlement broadcast on-chain but not yet seen mined (written with
//! the sale, removed by the reconciler in `payments::recovery`).
//!
//! # Pending settlements and exactness
//! A sale whose transfer is still pending counts in revenue (the call was served and the
//! transfer is on its way) but is not paid out: packets take only sales without a pending
//! entry. When the reconciler finds the transfer mined, it removes the entry and the sale
//! becomes payable; when it finds it reverted or dropped, it removes the sale and the entry in
//! one batch (conditioned on the sale not being in a packet, which it cannot be). So no signed
//! packet ever includes money that did not arrive, no packet needs a clawback, and every report
//! stays a sum over the sales that exist.
//!
//! # Layout
//! - `report`: revenue by endpoint and by day.
//! - `payouts`: payout settings and packets.

pub mod payouts;
pub mod report;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::money::Usd;
use crate::receipts::PaymentMethod;
use crate::store::{Batch, Store, StoreError, Tree};

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
pub const PENDING_PREFIX: &[u8] = b"pending/";

pub fn sale_key(receipt_id: &str) -> Vec<u8> {
    [SALE_PREFIX, receipt_id.as_bytes()].concat()
}

/// The index entry of a sale whose on-chain transfer is not yet seen mined.
pub fn pending_key(receipt_id: &str) -> Vec<u8> {
    [PENDING_PREFIX, receipt_id.as_bytes()].concat()
}

/// Adds the sale to a settling batch.
pub fn record(batch: Batch, sale: &Sale) -> Result<Batch, StoreError> {
    let bytes = serde_json::to_vec(sale).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(batch
        .require_absent(Tree::Ledger, sale_key(&sale.receipt_id))
        .put(Tree::Ledger, sale_key(&sale.receipt_id), bytes))
}

/// The first key of sales at or after `since`: receipt ids start with their UUIDv7, whose first
/// 48 bits are the unix time in milliseconds.
fn first_key_since(since: OffsetDateTime) -> Vec<u8> {
    let millis = (since.unix_timestamp_nanos() / 1_000_000).max(0) as u64;
    format!("sale/rcpt_{millis:012x}").into_bytes()
}

/// Every sale of `seller` since `since`, oldest first.
pub async fn sales_of(
    store: &dyn Store,
    seller: &str,
    since: OffsetDateTime,
) -> Result<Vec<Sale>, StoreError> {
    Ok(sale_entries_of(store, seller, since)
        .await?
        .into_iter()
        .map(|(sale, _)| sale)
        .collect())
}

/// Like [`sales_of`], with each sale's stored bytes (for batches conditioned on them).
pub(crate) async fn sale_entries_of(
    store: &dyn Store,
    seller: &str,
    since: OffsetDateTime,
) -> Result<Vec<(Sale, Vec<u8>)>, StoreError> {
    let mut out = Vec::new();
    let start = first_key_since(since);
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = match &after {
            Some(key) => {
                store
                    .scan_prefix(Tree::Ledger, SALE_PREFIX, Some(key), 512)
                    .await?
            }
            // `scan_prefix` pages strictly after a key; start one byte before the first key.
            None => {
                let mut before = start.clone();
                before.pop();
                store
                    .scan_prefix(Tree::Ledger, SALE_PREFIX, Some(&before), 512)
                    .await?
            }
        };
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        for (_, bytes) in page {
            let sale: Sale =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if sale.seller.as_deref() == Some(seller) && sale.at >= since {
                out.push((sale, bytes));
            }
        }
    }
    Ok(out)
}

/// The platform's cut of one sale, rounded down, and the builder's net.
pub fn split(amount: Usd, fee_bps: u64) -> (Usd, Usd) {
    let fee = Usd::from_units((u128::from(amount.units()) * u128::from(fee_bps) / 10_000) as u64);
    (fee, amount.checked_sub(fee).unwrap_or(Usd::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SledStore;

    #[tokio::test]
    async fn splits_reconcile_and_since_parses() {
        let (fee, net) = split(Usd::from_units(1001), 1000);
        assert_eq!((fee.units(), net.units()), (100, 901));
    }

    #[tokio::test]
    async fn sales_are_found_by_seller_and_time() {
        let store = SledStore::temporary().unwrap();
        let now = OffsetDateTime::now_utc();
        for (seller, age_days) in [("b1", 40), ("b1", 1), ("b2", 1), ("b1", 0)] {
            let at = now - time::Duration::days(age_days);
            let ts = uuid::Timestamp::from_unix(uuid::NoContext, at.unix_timestamp() as u64, 0);
            let sale = Sale {
                receipt_id: format!("rcpt_{}", uuid::Uuid::new_v7(ts).simple()),
                endpoint_slug: Some("e".into()),
                seller: Some(seller.into()),
                amount: Usd::from_units(10),
                method: PaymentMethod::X402,
                at,
            };
            store
                .apply(record(Batch::new(), &sale).unwrap())
                .await
                .unwrap();
        }
        assert_eq!(
            sales_of(&store, "b1", now - time::Duration::days(30))
                .await
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            sales_of(&store, "b1", now - time::Duration::days(60))
                .await
                .unwrap()
                .len(),
            3
        );
        assert_eq!(
            sales_of(&store, "b2", now - time::Duration::days(30))
                .await
                .unwrap()
                .len(),
            1
        );
    }
}
