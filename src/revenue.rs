//! Builders' money: the sale ledger, revenue reports, payout settings and payout packets.
//!
//! Every charged receipt writes one [`Sale`] in the same atomic batch as the receipt, so revenue
//! reports and payout packets reconcile exactly with receipts. The platform fee is computed per
//! sale (rounded down, in atomic units) and net = amount − fee per sale, so every total is a sum
//! of integers and `gross = fee + net` holds at every level.
//!
//! Keys in the ledger tree: `sale/{receiptId}` (receipt ids are UUIDv7, so key order is time
//! order), `by_seller/{builderId}/{receiptId}` (the same sale again, under its seller: a
//! builder's report or payout reads its own sales as one key range, not everyone's),
//! `settings/{builderId}`, `packet/{builderId}/{packetId}`, `paid/{receiptId}` → packet
//! id (a receipt is paid out at most once: packets claim their receipts with `require_absent`),
//! `pending/{receiptId}` → a settlement broadcast on-chain but not yet seen mined (written with
//! the sale, removed by the reconciler in `payments::recovery`).
//!
//! # Collected and uncollected money
//! Only collected money is paid out. Each sale records where its money stood when it was
//! written ([`Collection`]): `collected` (an x402 transfer seen mined, a remote facilitator's
//! settlement with its transaction, or a developer-credit debit: the platform holds that
//! credit's value), `recorded` (an x402 payment recorded in our ledger only, on a deployment
//! that cannot settle: nothing was transferred, nor ever will be by us) or `pending` (broadcast
//! on-chain, not yet seen mined). A pending sale becomes collected when the reconciler removes
//! its `pending/` entry (it deletes the sale instead when the transfer failed), so
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
//! - `report`: revenue by endpoint and by day.
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
use crate::store::{Batch, Store, StoreError, Tree, GET_MANY_KEYS};

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
}

pub const SALE_PREFIX: &[u8] = b"sale/";
pub const PENDING_PREFIX: &[u8] = b"pending/";
/// Sales again, under their sellers (see the module docs).
const BY_SELLER_PREFIX: &[u8] = b"by_seller/";
/// In `meta`, present once every sale stored before the copies under sellers existed has its
/// copy ([`index_by_seller`]); until then a seller's sales are found by reading all of them.
const INDEXED_BY_SELLER: &[u8] = b"ledger/sales_by_seller";
/// Sales copied per batch by [`index_by_seller`].
const INDEX_PAGE: usize = 256;

pub fn sale_key(receipt_id: &str) -> Vec<u8> {
    [SALE_PREFIX, receipt_id.as_bytes()].concat()
}

fn seller_prefix(seller: &str) -> Vec<u8> {
    [BY_SELLER_PREFIX, seller.as_bytes(), b"/"].concat()
}

fn seller_key(seller: &str, receipt_id: &str) -> Vec<u8> {
    [seller_prefix(seller).as_slice(), receipt_id.as_bytes()].concat()
}

/// The index entry of a sale whose on-chain transfer is not yet seen mined.
pub fn pending_key(receipt_id: &str) -> Vec<u8> {
    [PENDING_PREFIX, receipt_id.as_bytes()].concat()
}

/// Adds the sale (and its copy under its seller) to a settling batch.
pub fn record(batch: Batch, sale: &Sale) -> Result<Batch, StoreError> {
    let bytes = serde_json::to_vec(sale).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let batch = batch.require_absent(Tree::Ledger, sale_key(&sale.receipt_id));
    Ok(match &sale.seller {
        Some(seller) => batch
            .put(Tree::Ledger, sale_key(&sale.receipt_id), bytes.clone())
            .put(Tree::Ledger, seller_key(seller, &sale.receipt_id), bytes),
        None => batch.put(Tree::Ledger, sale_key(&sale.receipt_id), bytes),
    })
}

/// Adds the removal of a sale (its money never arrived) and of its copy under its seller to
/// `batch`, on condition that it is still `bytes`.
pub fn remove(batch: Batch, bytes: &[u8]) -> Result<Batch, StoreError> {
    let sale: Sale =
        serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let key = sale_key(&sale.receipt_id);
    let batch = (batch.require_equals(Tree::Ledger, key.clone(), Some(bytes.to_vec())))
        .delete(Tree::Ledger, key);
    Ok(match &sale.seller {
        Some(seller) => batch.delete(Tree::Ledger, seller_key(seller, &sale.receipt_id)),
        None => batch,
    })
}

/// Copies every sale stored before sales were kept under their sellers (an earlier release's
/// ledger) to its seller, then marks the ledger indexed. Each copy is conditioned on its sale
/// being unchanged, so a sale removed meanwhile is never copied back; run again after a crash,
/// it copies the same sales again. Runs at start-up; until it is done, a seller's sales are
/// read from everyone's.
pub async fn index_by_seller(store: &dyn Store) -> Result<u64, StoreError> {
    if store.get(Tree::Meta, INDEXED_BY_SELLER).await?.is_some() {
        return Ok(0);
    }
    let mut copied = 0;
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page =
            (store.scan_prefix(Tree::Ledger, SALE_PREFIX, after.as_deref(), INDEX_PAGE)).await?;
        let Some((last, _)) = page.last() else { break };
        let last = last.clone();
        let mut batch = Batch::new();
        let mut copies = 0;
        for (key, bytes) in page {
            let sale: Sale =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if let Some(seller) = &sale.seller {
                batch = batch
                    .require_equals(Tree::Ledger, key, Some(bytes.clone()))
                    .put(Tree::Ledger, seller_key(seller, &sale.receipt_id), bytes);
                copies += 1;
            }
        }
        match store.apply(batch).await {
            Ok(()) => {
                copied += copies;
                after = Some(last);
            }
            // A sale of the page was removed meanwhile: the page again, without it.
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(e),
        }
    }
    store.put(Tree::Meta, INDEXED_BY_SELLER, b"1").await?;
    Ok(copied)
}

/// Where `sale`'s money stands now: a sale written `pending` is collected once its `pending/`
/// entry is gone (the reconciler saw the transfer mined; a failed transfer deletes the sale
/// too). A sale from before [`Sale::collection`] existed is classified by the same entry and its
/// receipt's settlement status.
pub async fn standing(store: &dyn Store, sale: &Sale) -> Result<Collection, StoreError> {
    Ok(standings(store, std::slice::from_ref(sale)).await?[0])
}

/// [`standing`] of each of `sales` (at most [`GET_MANY_KEYS`] of them), their `pending/`
/// entries read together.
pub async fn standings(store: &dyn Store, sales: &[Sale]) -> Result<Vec<Collection>, StoreError> {
    let maybe_pending = |sale: &Sale| match sale.collection {
        Some(collection) => collection == Collection::Pending,
        None => sale.method == PaymentMethod::X402,
    };
    let asked: Vec<&Sale> = sales.iter().filter(|sale| maybe_pending(sale)).collect();
    let keys: Vec<Vec<u8>> = asked.iter().map(|s| pending_key(&s.receipt_id)).collect();
    let mut pending = store.get_many(Tree::Ledger, &keys).await?.into_iter();
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
                    let receipt: Option<crate::receipts::Receipt> =
                        crate::store::get_json(store, Tree::Receipts, sale.receipt_id.as_bytes())
                            .await?;
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

/// The first key under `prefix` of sales at or after `since`: receipt ids start with their
/// UUIDv7, whose first 48 bits are the unix time in milliseconds.
fn first_key_since(prefix: &[u8], since: OffsetDateTime) -> Vec<u8> {
    let millis = (since.unix_timestamp_nanos() / 1_000_000).max(0) as u64;
    [prefix, format!("rcpt_{millis:012x}").as_bytes()].concat()
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

/// Every sale since `since`, whoever sold it (the platform's own included), oldest first.
pub async fn all_sales(store: &dyn Store, since: OffsetDateTime) -> Result<Vec<Sale>, StoreError> {
    Ok(scan_sales(store, SALE_PREFIX, since, &|_| true)
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
    let mine = |sale: &Sale| sale.seller.as_deref() == Some(seller);
    match store.get(Tree::Meta, INDEXED_BY_SELLER).await? {
        Some(_) => scan_sales(store, &seller_prefix(seller), since, &mine).await,
        None => scan_sales(store, SALE_PREFIX, since, &mine).await,
    }
}

/// The sales under `prefix` (everyone's, or one seller's copies) at or after `since` that
/// `keep` keeps, oldest first.
async fn scan_sales(
    store: &dyn Store,
    prefix: &[u8],
    since: OffsetDateTime,
    keep: &(dyn Fn(&Sale) -> bool + Sync),
) -> Result<Vec<(Sale, Vec<u8>)>, StoreError> {
    let mut out = Vec::new();
    let start = first_key_since(prefix, since);
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = match &after {
            Some(key) => {
                store
                    .scan_prefix(Tree::Ledger, prefix, Some(key), 512)
                    .await?
            }
            // `scan_prefix` pages strictly after a key; start one byte before the first key.
            None => {
                let mut before = start.clone();
                before.pop();
                store
                    .scan_prefix(Tree::Ledger, prefix, Some(&before), 512)
                    .await?
            }
        };
        let Some((last, _)) = page.last() else { break };
        after = Some(last.clone());
        for (_, bytes) in page {
            let sale: Sale =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            if keep(&sale) && sale.at >= since {
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

    /// A ledger written before sales were copied under their sellers is read whole until it is
    /// indexed, then from the copies: a sale stored without a copy is no longer found, and
    /// `record` and `remove` keep each copy with its sale.
    #[tokio::test]
    async fn a_sellers_sales_are_read_from_their_copies_once_an_earlier_ledger_is_indexed() {
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
        let put_alone = |sale: Sale| async move {
            let bytes = serde_json::to_vec(&sale).unwrap();
            s.put(Tree::Ledger, &sale_key(&sale.receipt_id), &bytes)
                .await
                .unwrap();
            sale.receipt_id
        };
        let of = |seller: &'static str| async move {
            let sales = sales_of(s, seller, OffsetDateTime::UNIX_EPOCH)
                .await
                .unwrap();
            sales.into_iter().map(|s| s.receipt_id).collect::<Vec<_>>()
        };
        // An earlier release's ledger: sales without copies, the platform's one among them.
        let a1 = put_alone(sale(Some("a"))).await;
        let b1 = put_alone(sale(Some("b"))).await;
        put_alone(sale(None)).await;
        let a2 = put_alone(sale(Some("a"))).await;
        assert_eq!(of("a").await, [a1.clone(), a2.clone()]);

        assert_eq!(index_by_seller(s).await.unwrap(), 3);
        assert_eq!(index_by_seller(s).await.unwrap(), 0, "once");
        assert_eq!(of("a").await, [a1.clone(), a2.clone()]);
        assert_eq!(of("b").await, [b1]);
        // Read from the copies now: a sale stored without one is not found.
        put_alone(sale(Some("a"))).await;
        assert_eq!(of("a").await, [a1.clone(), a2.clone()]);
        let new = sale(Some("a"));
        store
            .apply(record(Batch::new(), &new).unwrap())
            .await
            .unwrap();
        assert_eq!(
            of("a").await,
            [a1.clone(), a2.clone(), new.receipt_id.clone()]
        );
        let bytes = (store.get(Tree::Ledger, &sale_key(&new.receipt_id)).await)
            .unwrap()
            .unwrap();
        store
            .apply(remove(Batch::new(), &bytes).unwrap())
            .await
            .unwrap();
        assert_eq!(of("a").await, [a1, a2]);
        // Everyone's sales are the sales, never their copies.
        let all = all_sales(s, OffsetDateTime::UNIX_EPOCH).await.unwrap();
        assert_eq!(all.len(), 5);
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
        store
            .put(Tree::Ledger, &pending_key("r2"), b"{}")
            .await
            .unwrap();
        let pending = sale("r2", PaymentMethod::X402, Some(Collection::Pending));
        assert_eq!(standing_of(pending.clone()).await, Collection::Pending);
        store
            .delete(Tree::Ledger, &pending_key("r2"))
            .await
            .unwrap();
        assert_eq!(standing_of(pending).await, Collection::Collected);
        // Legacy sales: credit is collected; x402 by the pending entry, then the receipt.
        assert_eq!(
            standing_of(sale("r3", PaymentMethod::DeveloperCredit, None)).await,
            Collection::Collected
        );
        let receipt = |status: &str| {
            serde_json::json!({
                "receiptId": "x", "schema": "s", "purpose": "invocation", "endpointSlug": "e",
                "priceUsd": "0.00001", "amount": "10", "asset": null, "network": null,
                "payer": null, "paymentMethod": "x402", "x402Version": 2, "charged": true,
                "settlement": {"status": status, "onChain": status == "settled",
                    "transaction": null, "facilitator": "local"},
                "requestSha256": "", "resultSha256": "", "issuedAt": "2026-01-01T00:00:00Z",
                "url": "u", "signature": {"alg": "ed25519", "publicKey": "", "value": ""}
            })
            .to_string()
        };
        for (id, status, expected) in [
            ("r4", "settled", Collection::Collected),
            ("r5", "recorded", Collection::Recorded),
        ] {
            store
                .put(Tree::Receipts, id.as_bytes(), receipt(status).as_bytes())
                .await
                .unwrap();
            assert_eq!(
                standing_of(sale(id, PaymentMethod::X402, None)).await,
                expected,
                "{id}"
            );
        }
        store
            .put(Tree::Ledger, &pending_key("r4"), b"{}")
            .await
            .unwrap();
        assert_eq!(
            standing_of(sale("r4", PaymentMethod::X402, None)).await,
            Collection::Pending
        );

        // Read together, a page at a time, each sale gets its own standing and its own refund.
        let refund = |id: &str, units: u64| refunds::Refund {
            refund_id: format!("rf_{id}"),
            receipt_id: id.into(),
            endpoint_slug: Some("e".into()),
            seller: Some("b".into()),
            charged: "10".into(),
            amount: units.to_string(),
            reason: "r".into(),
            refunded_by: "owner".into(),
            payment_method: PaymentMethod::X402,
            returned_to: "recorded".into(),
            transaction: None,
            after_payout: false,
            refunded_at: "2026-01-01T00:00:00Z".into(),
            signature: Signature {
                alg: "ed25519".into(),
                public_key: String::new(),
                value: String::new(),
            },
        };
        for (id, units) in [("r2", 3), ("r5", 7)] {
            let bytes = serde_json::to_vec(&refund(id, units)).unwrap();
            let key = refunds::refund_key(id);
            store.put(Tree::Ledger, &key, &bytes).await.unwrap();
        }
        store
            .put(Tree::Ledger, &pending_key("r6"), b"{}")
            .await
            .unwrap();
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
