//! Builders' money: the sale ledger, revenue reports, payout settings and payout packets.
//!
//! Every charged receipt writes one [`Sale`] in the same atomic batch as the receipt, so revenue
//! reports and payout packets reconcile exactly with receipts. The platform fee is computed per
//! sale (rounded down, in atomic units) and net = amount − fee per sale, so every total is a sum
//! of integers and `gross = fee + net` holds at every level.
//!
//! Sales are the store's typed records ([`crate::store::sales`]: found by receipt id, by seller
//! and by time, as receipt ids are UUIDv7; a row of their own on PostgreSQL), as are payout
//! packets, the marks of the sales they paid (a receipt is paid out at most once: packets claim
//! their receipts' marks), refunds and pending settlements ([`crate::store::pending_settlements`]:
//! a settlement broadcast on-chain but not yet seen mined, written with the sale, removed by the
//! reconciler in `payments::recovery`), and each builder's payout settings
//! ([`crate::store::payout_settings`]). No domain here names a key of the ledger tree.
//!
//! # Collected and uncollected money
//! Only collected money is paid out. Each sale records where its money stood when it was
//! written ([`Collection`]): `collected` (an x402 transfer seen mined, a remote facilitator's
//! settlement with its transaction, or a developer-credit debit: the platform holds that
//! credit's value), `recorded` (an x402 payment recorded in our ledger only, on a deployment
//! that cannot settle: nothing was transferred, nor ever will be by us) or `pending` (broadcast
//! on-chain, not yet seen mined). A pending sale becomes collected when the reconciler removes
//! its pending settlement (it deletes the sale instead when the transfer failed), so
//! [`standing`] reads a sale's current state from the sale and that entry. Sales written before
//! the field existed are classified from their receipt. Reports show collected and uncollected
//! totals apart; payout packets take collected sales only.
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
//! - `report`: revenue by endpoint and by day, added up from sums of sales ([`sums`]: by the
//!   database on PostgreSQL, here on sled).
//! - `payouts`: payout settings and packets.
//! - `refunds`: refund records, and what a refund takes back from a sale and from whom.

pub mod payouts;
pub mod refunds;
pub mod report;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;

use crate::money::Usd;
use crate::receipts::{canonical_json, PaymentMethod, ReceiptSigner};
use crate::store::{Batch, SaleRow, Store, StoreError, GET_MANY_KEYS};

/// The service key's signature of a ledger record (payout packets, refunds), as of receipts.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[schema(as = PacketSignature)]
#[serde(rename_all = "camelCase")]
pub struct Signature {
    pub alg: String,
    pub public_key: String,
    pub value: String,
}

impl Signature {
    /// The service key's signature over the canonical JSON of `record` without its
    /// `signature` (payout packets, refunds).
    pub fn over<T: Serialize>(record: &T, signer: &ReceiptSigner) -> Signature {
        let mut value = serde_json::to_value(record).unwrap_or(Value::Null);
        if let Some(object) = value.as_object_mut() {
            object.remove("signature");
        }
        Signature {
            alg: "ed25519".into(),
            public_key: signer.public_key(),
            value: signer.sign_bytes(canonical_json(&value).as_bytes()),
        }
    }

    /// A placeholder until the record is signed.
    pub fn unsigned() -> Signature {
        Signature {
            alg: String::new(),
            public_key: String::new(),
            value: String::new(),
        }
    }
}

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
    /// Where the money stood when the sale was written; absent on sales written before this
    /// field existed (see [`standing`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<Collection>,
    /// The developer credit that paid (so a refund can go back to it); absent on x402 sales
    /// and on credit sales written before this field existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credit_id: Option<String>,
    /// What was refunded of `amount`, which [`with_standing`] has already taken off it: in
    /// memory only, for reports (the refund record is the ledger's).
    #[serde(skip)]
    pub refunded: Usd,
}

/// Where a sale's money is.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Collection {
    /// Reached `payTo` (a transfer seen mined; a remote facilitator that settled with a
    /// transaction), or debited from a developer credit.
    Collected,
    /// Recorded in our ledger only: a deployment that cannot settle took an authorization and
    /// transferred nothing. Never collectable by us.
    Recorded,
    /// Broadcast on-chain and not yet seen mined.
    Pending,
}

impl Collection {
    pub fn is_collected(self) -> bool {
        self == Collection::Collected
    }

    /// As the sale's JSON says it (the store's `collection` column).
    pub fn name(self) -> &'static str {
        match self {
            Collection::Collected => "collected",
            Collection::Recorded => "recorded",
            Collection::Pending => "pending",
        }
    }
}

/// Sales read per page.
const PAGE: usize = 512;

/// The sale as the store keeps it: its JSON, and the columns it is found and summed by.
fn row(sale: &Sale) -> Result<SaleRow, StoreError> {
    let out_of_range = |what: &str| StoreError::Corrupt(format!("a sale's {what} is out of range"));
    Ok(SaleRow {
        receipt_id: sale.receipt_id.clone(),
        seller: sale.seller.clone(),
        endpoint: sale.endpoint_slug.clone(),
        at_ms: i64::try_from(sale.at.unix_timestamp_nanos() / 1_000_000)
            .map_err(|_| out_of_range("time"))?,
        amount: i64::try_from(sale.amount.units()).map_err(|_| out_of_range("amount"))?,
        collection: sale.collection.map(|c| c.name().to_owned()),
        method: sale.method.name().to_owned(),
        entry: serde_json::to_vec(sale).map_err(|e| StoreError::Corrupt(e.to_string()))?,
    })
}

/// Adds the sale to a settling batch, on condition that its receipt has none yet.
pub fn record(batch: Batch, sale: &Sale) -> Result<Batch, StoreError> {
    Ok(batch
        .require_sale(&sale.receipt_id, None)
        .put_sale(row(sale)?))
}

/// Adds the removal of a sale (its money never arrived) to `batch`, on condition that it is
/// still stored as `bytes`.
pub fn remove(batch: Batch, bytes: &[u8]) -> Result<Batch, StoreError> {
    let sale: Sale =
        serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(batch
        .require_sale(&sale.receipt_id, Some(bytes.to_vec()))
        .delete_sale(&sale.receipt_id, sale.seller.as_deref()))
}

/// Where `sale`'s money stands now: a sale written `pending` is collected once its pending
/// settlement is gone (the reconciler saw the transfer mined; a failed transfer deletes the sale
/// too). A sale from before [`Sale::collection`] existed is classified by the same entry and its
/// receipt's settlement status.
pub async fn standing(store: &dyn Store, sale: &Sale) -> Result<Collection, StoreError> {
    Ok(standings(store, std::slice::from_ref(sale)).await?[0])
}

/// [`standing`] of each of `sales` (at most [`GET_MANY_KEYS`] of them), their pending
/// settlements read together.
pub async fn standings(store: &dyn Store, sales: &[Sale]) -> Result<Vec<Collection>, StoreError> {
    let maybe_pending = |sale: &Sale| match sale.collection {
        Some(collection) => collection == Collection::Pending,
        None => sale.method == PaymentMethod::X402,
    };
    let asked: Vec<&Sale> = sales.iter().filter(|sale| maybe_pending(sale)).collect();
    let ids: Vec<&str> = asked.iter().map(|s| s.receipt_id.as_str()).collect();
    let mut pending = store.pending_settlements_of(&ids).await?.into_iter();
    let mut out = Vec::with_capacity(sales.len());
    for sale in sales {
        let pending = maybe_pending(sale) && pending.next().flatten().is_some();
        out.push(match sale.collection {
            Some(Collection::Pending) if !pending => Collection::Collected,
            Some(collection) => collection,
            None => match sale.method {
                PaymentMethod::DeveloperCredit => Collection::Collected,
                PaymentMethod::Free => Collection::Recorded,
                PaymentMethod::X402 if pending => Collection::Pending,
                // Sales from before `collection` was written, read one at a time.
                PaymentMethod::X402 => {
                    let receipt = crate::receipts::read(store, &sale.receipt_id).await?;
                    match receipt {
                        Some(r) if r.settlement.status == "settled" => Collection::Collected,
                        _ => Collection::Recorded,
                    }
                }
            },
        });
    }
    Ok(out)
}

/// Each sale with where its money stands now, and its amount less what was refunded of it
/// (see [`refunds`]), read a page of sales at a time.
pub async fn with_standing(
    store: &dyn Store,
    sales: Vec<Sale>,
) -> Result<Vec<(Sale, Collection)>, StoreError> {
    let mut out = Vec::with_capacity(sales.len());
    let mut sales = sales.into_iter();
    loop {
        let page: Vec<Sale> = sales.by_ref().take(GET_MANY_KEYS).collect();
        if page.is_empty() {
            return Ok(out);
        }
        let standings = standings(store, &page).await?;
        let refunds = refunds::refunds_of(store, &page).await?;
        for ((mut sale, standing), refund) in page.into_iter().zip(standings).zip(refunds) {
            refunds::take_refund(&mut sale, refund.as_ref().map(|(r, _)| r))?;
            out.push((sale, standing));
        }
    }
}

/// The sales of `seller` (everyone's when `None`) since `since` (to the millisecond), summed
/// as reports add them up, the fee at `fee_bps` of each seller's sale: by the store when it
/// sums (PostgreSQL: one statement however many sales), otherwise by [`sums_read`].
pub async fn sums(
    store: &dyn Store,
    seller: Option<&str>,
    since: OffsetDateTime,
    fee_bps: u64,
) -> Result<Vec<report::Group>, StoreError> {
    // Sales are kept to the millisecond; a cutoff within one counts from the next.
    let nanos = since.unix_timestamp_nanos();
    let since_ms = nanos / 1_000_000 + i128::from(nanos % 1_000_000 > 0);
    let since_ms = i64::try_from(since_ms.max(0)).unwrap_or(i64::MAX);
    match store.sale_sums(seller, since_ms, false, fee_bps).await? {
        Some(sums) => sums.into_iter().map(report::Group::summed).collect(),
        None => sums_read(store, seller, since_ms, fee_bps).await,
    }
}

/// [`sums`] by reading each sale from `since_ms` on with its standing and refund here, one
/// group a sale: for an engine that leaves summing to its caller (sled), and for the tests that
/// hold the store's sums to the same figures.
pub(crate) async fn sums_read(
    store: &dyn Store,
    seller: Option<&str>,
    since_ms: i64,
    fee_bps: u64,
) -> Result<Vec<report::Group>, StoreError> {
    let since = OffsetDateTime::from_unix_timestamp_nanos(i128::from(since_ms) * 1_000_000)
        .map_err(|_| StoreError::Corrupt(format!("a cutoff of {since_ms} ms")))?;
    let sales = read_sales(store, seller, since).await?;
    let sales = with_standing(store, sales.into_iter().map(|(sale, _)| sale).collect()).await?;
    Ok((sales.iter())
        .map(|(sale, standing)| report::Group::of(sale, *standing, fee_bps))
        .collect())
}

/// Every sale of `seller` since `since`, oldest first (what tests look for in the ledger).
#[cfg(test)]
pub(crate) async fn sales_of(
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
    read_sales(store, Some(seller), since).await
}

/// The sales of `seller` (everyone's when `None`) at or after `since`, oldest first. Receipt
/// ids start with their UUIDv7, whose first 48 bits are the Unix time in milliseconds, so the
/// first page starts just before the first id of that millisecond.
async fn read_sales(
    store: &dyn Store,
    seller: Option<&str>,
    since: OffsetDateTime,
) -> Result<Vec<(Sale, Vec<u8>)>, StoreError> {
    let millis = (since.unix_timestamp_nanos() / 1_000_000).max(0) as u64;
    let mut after = format!("rcpt_{millis:012x}");
    after.pop();
    let mut out = Vec::new();
    loop {
        let page = store.sales_after(seller, &after, PAGE).await?;
        let Some((last, _)) = page.last() else { break };
        after = last.clone();
        let full = page.len() == PAGE;
        for (_, bytes) in page {
            let sale: Sale =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if sale.at >= since {
                out.push((sale, bytes));
            }
        }
        if !full {
            break;
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
    use crate::store::{SledStore, Tree};

    /// The receipt of a 10-unit x402 call settled as `status`, as the ledger stores it.
    fn receipt_entry(id: &str, status: &str) -> Vec<u8> {
        serde_json::json!({
            "receiptId": id, "schema": "s", "purpose": "invocation", "endpointSlug": "e",
            "priceUsd": "0.00001", "amount": "10", "asset": null, "network": null,
            "payer": null, "paymentMethod": "x402", "x402Version": 2, "charged": true,
            "settlement": {"status": status, "onChain": status == "settled",
                "transaction": null, "facilitator": "local"},
            "requestSha256": "", "resultSha256": "", "issuedAt": "2026-01-01T00:00:00Z",
            "url": "u", "signature": {"alg": "ed25519", "publicKey": "", "value": ""}
        })
        .to_string()
        .into_bytes()
    }

    /// Marks the settlement of receipt `id`'s sale pending, as a settlement not yet mined does.
    async fn set_pending(store: &dyn Store, id: &str) {
        let pending = Batch::new().put_pending_settlement(id, b"{}".to_vec());
        store.apply(pending).await.unwrap();
    }

    /// Stores a refund of `units` of receipt `id`'s sale (of builder `b`), as a refund does.
    async fn store_refund(store: &dyn Store, id: &str, units: u64) {
        let refund = refunds::Refund {
            refund_id: format!("rf_{id}"),
            receipt_id: id.into(),
            endpoint_slug: Some("e".into()),
            seller: Some("b".into()),
            charged: units.to_string(),
            amount: units.to_string(),
            reason: "r".into(),
            refunded_by: "owner".into(),
            payment_method: PaymentMethod::X402,
            returned_to: "recorded".into(),
            transaction: None,
            after_payout: false,
            refunded_at: "2026-01-01T00:00:00Z".into(),
            signature: Signature::unsigned(),
        };
        store
            .apply(Batch::new().put_refund(refund.row().unwrap()))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn splits_reconcile_and_since_parses() {
        let (fee, net) = split(Usd::from_units(1001), 1000);
        assert_eq!((fee.units(), net.units()), (100, 901));
    }

    /// `record` keeps a sale once per receipt, found by its seller and with everyone's;
    /// `remove` takes it only as it was read.
    #[tokio::test]
    async fn recorded_sales_are_found_by_seller_and_removed_as_read() {
        let store = SledStore::temporary().unwrap();
        let s: &dyn Store = &store;
        let sale = |seller: Option<&str>| Sale {
            receipt_id: format!("rcpt_{}", uuid::Uuid::now_v7().simple()),
            endpoint_slug: Some("e".into()),
            seller: seller.map(Into::into),
            amount: Usd::from_units(10),
            method: PaymentMethod::DeveloperCredit,
            at: OffsetDateTime::now_utc(),
            collection: Some(Collection::Collected),
            credit_id: None,
            refunded: Usd::ZERO,
        };
        let of = |seller: &'static str| async move {
            let sales = sales_of(s, seller, OffsetDateTime::UNIX_EPOCH)
                .await
                .unwrap();
            sales.into_iter().map(|s| s.receipt_id).collect::<Vec<_>>()
        };
        let sales = [
            sale(Some("a")),
            sale(Some("b")),
            sale(None),
            sale(Some("a")),
        ];
        for sale in &sales {
            s.apply(record(Batch::new(), sale).unwrap()).await.unwrap();
        }
        let again = s.apply(record(Batch::new(), &sales[0]).unwrap()).await;
        assert!(
            matches!(again, Err(StoreError::ConditionFailed(0))),
            "{again:?}"
        );
        let ids = |picked: &[usize]| -> Vec<String> {
            picked
                .iter()
                .map(|&i| sales[i].receipt_id.clone())
                .collect()
        };
        assert_eq!(of("a").await, ids(&[0, 3]));
        assert_eq!(of("b").await, ids(&[1]));
        let all = read_sales(s, None, OffsetDateTime::UNIX_EPOCH)
            .await
            .unwrap();
        assert_eq!(all.len(), 4);

        let bytes = s.sale(&sales[3].receipt_id).await.unwrap().unwrap();
        let mut changed: Sale = serde_json::from_slice(&bytes).unwrap();
        changed.amount = Usd::from_units(11);
        let stale = serde_json::to_vec(&changed).unwrap();
        let refused = s.apply(remove(Batch::new(), &stale).unwrap()).await;
        assert!(
            matches!(refused, Err(StoreError::ConditionFailed(0))),
            "{refused:?}"
        );
        s.apply(remove(Batch::new(), &bytes).unwrap())
            .await
            .unwrap();
        assert_eq!(of("a").await, ids(&[0]));
        assert_eq!(s.sale(&sales[3].receipt_id).await.unwrap(), None);
    }

    #[test]
    fn collections_and_methods_are_named_as_the_sales_json_says() {
        for c in [
            Collection::Collected,
            Collection::Recorded,
            Collection::Pending,
        ] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.name());
        }
        for m in [
            PaymentMethod::X402,
            PaymentMethod::DeveloperCredit,
            PaymentMethod::Free,
        ] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.name());
        }
    }

    #[tokio::test]
    async fn standing_follows_the_pending_entry_and_classifies_legacy_sales_by_receipt() {
        let store = SledStore::temporary().unwrap();
        let sale = |id: &str, method, collection| Sale {
            receipt_id: id.into(),
            endpoint_slug: Some("e".into()),
            seller: Some("b".into()),
            amount: Usd::from_units(10),
            method,
            at: OffsetDateTime::now_utc(),
            collection,
            credit_id: None,
            refunded: Usd::ZERO,
        };
        let s = &store;
        let standing_of = |sale: Sale| async move { standing(s, &sale).await.unwrap() };
        // Written with their state.
        for c in [Collection::Collected, Collection::Recorded] {
            assert_eq!(
                standing_of(sale("r1", PaymentMethod::X402, Some(c))).await,
                c
            );
        }
        // Pending while its entry exists, collected once the reconciler removed it.
        set_pending(s, "r2").await;
        let pending = sale("r2", PaymentMethod::X402, Some(Collection::Pending));
        assert_eq!(standing_of(pending.clone()).await, Collection::Pending);
        let concluded = Batch::new().delete_pending_settlement("r2");
        store.apply(concluded).await.unwrap();
        assert_eq!(standing_of(pending).await, Collection::Collected);
        // Legacy sales: credit is collected; x402 by the pending entry, then the receipt.
        assert_eq!(
            standing_of(sale("r3", PaymentMethod::DeveloperCredit, None)).await,
            Collection::Collected
        );
        for (id, status, expected) in [
            ("r4", "settled", Collection::Collected),
            ("r5", "recorded", Collection::Recorded),
        ] {
            store
                .put(Tree::Receipts, id.as_bytes(), &receipt_entry(id, status))
                .await
                .unwrap();
            assert_eq!(
                standing_of(sale(id, PaymentMethod::X402, None)).await,
                expected,
                "{id}"
            );
        }
        set_pending(s, "r4").await;
        assert_eq!(
            standing_of(sale("r4", PaymentMethod::X402, None)).await,
            Collection::Pending
        );

        // Read together, a page at a time, each sale gets its own standing and its own refund.
        for (id, units) in [("r2", 3), ("r5", 7)] {
            store_refund(s, id, units).await;
        }
        set_pending(s, "r6").await;
        let sales = vec![
            sale("r1", PaymentMethod::X402, Some(Collection::Recorded)),
            sale("r2", PaymentMethod::X402, Some(Collection::Pending)),
            sale("r3", PaymentMethod::DeveloperCredit, None),
            sale("r4", PaymentMethod::X402, None),
            sale("r5", PaymentMethod::X402, None),
            sale("r6", PaymentMethod::X402, Some(Collection::Pending)),
        ];
        let mut one_at_a_time = Vec::new();
        for sale in &sales {
            one_at_a_time.push(standing_of(sale.clone()).await);
        }
        let together = with_standing(s, sales).await.unwrap();
        let read: Vec<(&str, Collection, u64, u64)> = (together.iter())
            .map(|(sale, c)| {
                (
                    &*sale.receipt_id,
                    *c,
                    sale.amount.units(),
                    sale.refunded.units(),
                )
            })
            .collect();
        assert_eq!(
            read,
            vec![
                ("r1", Collection::Recorded, 10, 0),
                ("r2", Collection::Collected, 7, 3),
                ("r3", Collection::Collected, 10, 0),
                ("r4", Collection::Pending, 10, 0),
                ("r5", Collection::Recorded, 3, 7),
                ("r6", Collection::Pending, 10, 0),
            ]
        );
        let standings: Vec<Collection> = together.iter().map(|(_, c)| *c).collect();
        assert_eq!(standings, one_at_a_time);
    }

    /// Revenue sums, by PostgreSQL's statement and by reading the sales here, on one ledger of
    /// every kind of sale: the same report from both, and the figures worked out by hand.
    mod summed {
        use std::sync::Arc;

        use time::macros::datetime;
        use toolhost_testkit::on_both_engines;

        use super::super::report::{report, Group};
        use super::super::*;
        use super::{receipt_entry, set_pending, store_refund};
        use crate::store::ReceiptRow;

        const FEE_BPS: u64 = 1000;
        const SINCE: OffsetDateTime = datetime!(2026-11-01 00:00:00.0005 UTC);

        /// A receipt id of the time `at`, as the ledger's are (UUIDv7).
        fn id_at(at: OffsetDateTime) -> String {
            let nanos = at.unix_timestamp_nanos();
            let ts = uuid::Timestamp::from_unix(
                uuid::NoContext,
                (nanos / 1_000_000_000) as u64,
                (nanos % 1_000_000_000) as u32,
            );
            format!("rcpt_{}", uuid::Uuid::new_v7(ts).simple())
        }

        struct Ledger<'a>(&'a dyn Store);

        impl Ledger<'_> {
            async fn sale(
                &self,
                seller: Option<&str>,
                endpoint: Option<&str>,
                method: PaymentMethod,
                collection: Option<Collection>,
                units: u64,
                at: OffsetDateTime,
            ) -> String {
                let sale = Sale {
                    receipt_id: id_at(at),
                    endpoint_slug: endpoint.map(Into::into),
                    seller: seller.map(Into::into),
                    amount: Usd::from_units(units),
                    method,
                    at,
                    collection,
                    credit_id: None,
                    refunded: Usd::ZERO,
                };
                self.0
                    .apply(record(Batch::new(), &sale).unwrap())
                    .await
                    .unwrap();
                sale.receipt_id
            }

            async fn x402(&self, collection: Option<Collection>, units: u64) -> String {
                let at = datetime!(2026-11-02 10:00 UTC);
                (self.sale(
                    Some("b"),
                    Some("e"),
                    PaymentMethod::X402,
                    collection,
                    units,
                    at,
                ))
                .await
            }

            async fn pending(&self, id: &str) {
                set_pending(self.0, id).await;
            }

            async fn receipt(&self, id: &str, status: &str) {
                let row = ReceiptRow {
                    receipt_id: id.into(),
                    endpoint: Some("e".into()),
                    payer: None,
                    free: false,
                    issued_at_ms: 0,
                    entry: receipt_entry(id, status),
                };
                self.0.apply(Batch::new().put_receipt(row)).await.unwrap();
            }
        }

        /// The groups of reading every sale since [`SINCE`] (to the millisecond) here.
        async fn read_and_summed(store: &dyn Store, seller: Option<&str>) -> Vec<Group> {
            let since_ms = (SINCE.unix_timestamp_nanos() / 1_000_000 + 1) as i64;
            sums_read(store, seller, since_ms, FEE_BPS).await.unwrap()
        }

        fn figures(part: &report::Part) -> (u64, u64, u64, u64) {
            (part.gross_units, part.fee_units, part.net_units, part.count)
        }

        async fn every_kind_of_sale_sums_the_same_both_ways(stores: Vec<Arc<dyn Store>>) {
            let store = stores[0].as_ref();
            let ledger = Ledger(store);
            let collected = Some(Collection::Collected);
            let pending = Some(Collection::Pending);
            let recorded = Some(Collection::Recorded);
            let paid_out = ledger.x402(collected, 1001).await;
            let mark = crate::store::PaidOutRow {
                receipt_id: paid_out,
                packet_id: "pay_1".into(),
            };
            store.apply(Batch::new().put_paid_out(mark)).await.unwrap();
            ledger.x402(recorded, 1001).await;
            let still_pending = ledger.x402(pending, 1000).await;
            ledger.pending(&still_pending).await;
            ledger.x402(pending, 1000).await; // its transfer since seen mined
            let credit = PaymentMethod::DeveloperCredit;
            let (b, e) = (Some("b"), Some("e"));
            let nov3 = datetime!(2026-11-03 08:00 UTC);
            ledger.sale(b, e, credit, None, 1000, nov3).await;
            let free = PaymentMethod::Free;
            ledger
                .sale(b, e, free, None, 1000, nov3 - time::Duration::days(1))
                .await;
            // Sales from before `collection` was written: by their pending entry and receipt.
            let legacy_pending = ledger.x402(None, 1000).await;
            ledger.pending(&legacy_pending).await;
            let settled = ledger.x402(None, 1000).await;
            ledger.receipt(&settled, "settled").await;
            let recorded_only = ledger.x402(None, 1000).await;
            ledger.receipt(&recorded_only, "recorded").await;
            ledger.x402(None, 1000).await; // without its receipt
            let partly = ledger.x402(collected, 1000).await;
            store_refund(store, &partly, 300).await;
            let wholly = ledger.x402(collected, 1000).await;
            store_refund(store, &wholly, 1000).await;
            // A UTC day is the day: 02:00 at +05:00 on the 4th is the 3rd in UTC.
            let x402 = PaymentMethod::X402;
            let east = datetime!(2026-11-04 02:00 +05:00);
            ledger.sale(b, e, x402, collected, 1000, east).await;
            // The cutoff within a millisecond counts from the next one.
            let within = datetime!(2026-11-01 00:00:00.0002 UTC);
            ledger.sale(b, e, x402, collected, 1000, within).await;
            let after = datetime!(2026-11-01 00:00:00.0013 UTC);
            ledger.sale(b, e, x402, collected, 1000, after).await;
            let before = datetime!(2026-10-31 23:00 UTC);
            ledger.sale(b, e, x402, collected, 1000, before).await;
            // Another builder's, the platform's own endpoint's and a registration fee.
            let nov2 = datetime!(2026-11-02 12:00 UTC);
            ledger.sale(Some("c"), e, x402, collected, 555, nov2).await;
            ledger
                .sale(None, Some("p"), x402, collected, 999, nov2)
                .await;
            ledger.sale(None, None, x402, recorded, 5000, nov2).await;

            for node in &stores {
                let node = node.as_ref();
                let summed = sums(node, Some("b"), SINCE, FEE_BPS).await.unwrap();
                let builder = report(&summed, FEE_BPS);
                assert_eq!(
                    builder,
                    report(&read_and_summed(node, Some("b")).await, FEE_BPS)
                );
                assert_eq!(figures(&builder.totals.collected), (6701, 670, 6031, 8));
                assert_eq!(figures(&builder.totals.uncollected), (6001, 600, 5401, 6));
                let by_state = builder.uncollected_by_state;
                assert_eq!(figures(&by_state.recorded), (4001, 400, 3601, 4));
                assert_eq!(figures(&by_state.pending), (2000, 200, 1800, 2));
                let day_counts: Vec<(&str, u64)> = (builder.by_day.iter())
                    .map(|(day, totals)| (day.as_str(), totals.count))
                    .collect();
                assert_eq!(
                    day_counts,
                    [("2026-11-01", 1), ("2026-11-02", 11), ("2026-11-03", 2)]
                );
                let by_method = &builder.by_payment_method;
                assert_eq!(figures(&by_method["developerCredit"]), (1000, 100, 900, 1));
                assert_eq!(by_method["free"].count, 1);

                let everyone = sums(node, None, SINCE, FEE_BPS).await.unwrap();
                let read = read_and_summed(node, None).await;
                let kinds = |groups: Vec<Group>| {
                    let (platform, sellers): (Vec<_>, Vec<_>) =
                        groups.into_iter().partition(|g| g.platform);
                    let (endpoints, fees): (Vec<_>, Vec<_>) = platform
                        .into_iter()
                        .partition(|g| g.endpoint_slug.is_some());
                    [sellers, endpoints, fees].map(|groups| report(&groups, FEE_BPS))
                };
                let [sellers, endpoints, fees] = kinds(everyone);
                assert_eq!(
                    [sellers.clone(), endpoints.clone(), fees.clone()],
                    kinds(read)
                );
                assert_eq!(figures(&sellers.totals.collected), (7256, 725, 6531, 9));
                assert_eq!(figures(&endpoints.totals.collected), (999, 0, 999, 1));
                assert_eq!(figures(&fees.totals.uncollected), (5000, 0, 5000, 1));

                // What a payout would take: every sale of the builder's not paid out, of any
                // day (the one before the cutoff and the one within its millisecond too).
                let unpaid = payouts::unpaid_sums(node, "b", FEE_BPS).await.unwrap();
                let unpaid = report(&unpaid, FEE_BPS);
                let read = payouts::unpaid_sums_read(node, "b", FEE_BPS).await.unwrap();
                assert_eq!(unpaid, report(&read, FEE_BPS));
                assert_eq!(figures(&unpaid.totals.collected), (7700, 770, 6930, 9));
                assert_eq!(figures(&unpaid.totals.uncollected), (6001, 600, 5401, 6));
            }
        }

        on_both_engines!(every_kind_of_sale_sums_the_same_both_ways);
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
                collection: Some(Collection::Collected),
                credit_id: None,
                refunded: Usd::ZERO,
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
