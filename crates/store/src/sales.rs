//! The sale ledger as the store keeps it: one record per charged call, under its receipt id,
//! found by id, by seller and by time.
//!
//! A sale is written, changed and removed only inside batches (with the receipt that made it,
//! or conditioned on what was read: [`Batch::require_sale`](crate::Batch::require_sale),
//! [`Batch::put_sale`](crate::Batch::put_sale)); this trait is how it is read. [`kv`] is the
//! shape any key-value engine keeps (sled's: the entry in the `ledger` tree under
//! `sale/{receiptId}`, and again under `by_seller/{seller}/{receiptId}`, as the releases
//! before typed sales wrote it); PostgreSQL keeps a table with the seller, endpoint, time,
//! amount and collection as columns, indexed by seller (`toolhost_sales`, migration 5), so a
//! seller's sales are one index range and nothing is written twice.
//!
//! Revenue reports are sums of sales ([`SaleSum`]). PostgreSQL sums them in the database, one
//! statement however many sales there are; sled answers `None` and the ledger reads the sales
//! and sums them itself (an embedded store's reads are local). Both must agree to the unit:
//! toolhost's revenue tests sum the same ledger both ways on PostgreSQL.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored sale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaleRow {
    /// `rcpt_` and a UUIDv7: ids sort in time order.
    pub receipt_id: String,
    /// The builder who owns the endpoint; `None` for the platform's own.
    pub seller: Option<String>,
    pub endpoint: Option<String>,
    /// When it was sold, in Unix milliseconds.
    pub at_ms: i64,
    /// What was charged, in atomic units.
    pub amount: i64,
    /// How it was paid, as its JSON names it (`x402`, `developer_credit`, `free`).
    pub method: String,
    /// Where its money stood when written (`collected`, `recorded`, `pending`), if said.
    pub collection: Option<String>,
    /// The sale's JSON, as the ledger reads it back.
    pub entry: Vec<u8>,
}

/// Sales alike in everything a revenue report tells apart, summed: what a report adds up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SaleSum {
    /// Sold by the platform itself (no seller): no platform fee is taken from these.
    pub platform: bool,
    pub endpoint: Option<String>,
    /// The UTC day they were sold, in days since 1970-01-01.
    pub day: i64,
    /// How they were paid, as the sale's JSON names it (`x402`, `developer_credit`, `free`).
    pub method: String,
    /// Where their money stands now (`collected`, `recorded`, `pending`): the `collection`
    /// they were written with, a `pending` one collected once its `pending/{receiptId}` entry
    /// in the ledger is gone; a sale written before `collection` existed classified by that
    /// entry, its method and its receipt's settlement status.
    pub standing: String,
    /// What they were charged less what was refunded of each (`refund/{receiptId}`'s
    /// `amount`), in atomic units.
    pub gross: u64,
    /// The platform's fee: per sale, `gross × fee_bps / 10,000` rounded down (none on the
    /// platform's own).
    pub fee: u64,
    pub count: u64,
}

/// Where sales are read. Every engine implements it (the conformance suite's `sales_*` cases).
#[async_trait]
pub trait SalesLedger {
    /// The entry of the sale of `receipt_id`, if there is one.
    async fn sale(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Sales whose receipt id sorts after `after`, in id (time) order, of `seller` when given
    /// (everyone's otherwise, the platform's own included), at most `limit`: receipt ids and
    /// entries.
    async fn sales_after(
        &self,
        seller: Option<&str>,
        after: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// The sales of `seller` (everyone's when `None`) sold at or after `since_ms` (Unix
    /// milliseconds), only those not yet paid out (no [paid-out mark](crate::PaidOutMarks)) when
    /// `unpaid_only`, summed by the engine, the fee at `fee_bps` of each seller's sale; `None`
    /// from an engine that leaves summing to its caller.
    async fn sale_sums(
        &self,
        seller: Option<&str>,
        since_ms: i64,
        unpaid_only: bool,
        fee_bps: u64,
    ) -> StoreResult<Option<Vec<SaleSum>>>;
    /// Brings sales an earlier release stored into the shape this one reads, at start-up;
    /// returns how many it wrote. Safe to run again (after a crash, on every start).
    async fn upgrade_sales(&self) -> StoreResult<u64>;
}

/// Sales over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use serde::Deserialize;

    use crate::batch::KeyWrite;
    use crate::{Batch, Store, StoreError, StoreResult, Tree};

    use super::SaleRow;

    const SALE_PREFIX: &[u8] = b"sale/";
    /// Sales again, under their sellers: a builder's report or payout reads its own sales as
    /// one key range, not everyone's.
    const BY_SELLER_PREFIX: &[u8] = b"by_seller/";
    /// In `meta`, present once every sale stored before the copies under sellers existed has
    /// its copy ([`upgrade`]); until then a seller's sales are found by reading all of them.
    const INDEXED_BY_SELLER: &[u8] = b"ledger/sales_by_seller";
    /// Sales read per page, and copied per batch by [`upgrade`].
    const PAGE: usize = 256;

    /// What is read of an entry to find its seller.
    #[derive(Deserialize)]
    struct Seller {
        seller: Option<String>,
    }

    fn seller_of(entry: &[u8]) -> StoreResult<Option<String>> {
        let sale: Seller =
            serde_json::from_slice(entry).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(sale.seller)
    }

    pub(crate) fn sale_key(receipt_id: &str) -> Vec<u8> {
        [SALE_PREFIX, receipt_id.as_bytes()].concat()
    }

    fn seller_prefix(seller: &str) -> Vec<u8> {
        [BY_SELLER_PREFIX, seller.as_bytes(), b"/"].concat()
    }

    fn seller_key(seller: &str, receipt_id: &str) -> Vec<u8> {
        [seller_prefix(seller).as_slice(), receipt_id.as_bytes()].concat()
    }

    /// A sale's writes: its entry, and its copy under its seller.
    pub(crate) fn put(sale: SaleRow) -> Vec<KeyWrite> {
        let copy = sale.seller.as_deref().map(|seller| KeyWrite {
            tree: Tree::Ledger,
            key: seller_key(seller, &sale.receipt_id),
            value: Some(sale.entry.clone()),
        });
        let entry = KeyWrite {
            tree: Tree::Ledger,
            key: sale_key(&sale.receipt_id),
            value: Some(sale.entry),
        };
        std::iter::once(entry).chain(copy).collect()
    }

    /// A sale's removal: its entry, and its copy under `seller`.
    pub(crate) fn delete(receipt_id: &str, seller: Option<&str>) -> Vec<KeyWrite> {
        let copy = seller.map(|seller| KeyWrite {
            tree: Tree::Ledger,
            key: seller_key(seller, receipt_id),
            value: None,
        });
        let entry = KeyWrite {
            tree: Tree::Ledger,
            key: sale_key(receipt_id),
            value: None,
        };
        std::iter::once(entry).chain(copy).collect()
    }

    pub(crate) async fn get<S: Store + ?Sized>(
        store: &S,
        receipt_id: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(Tree::Ledger, &sale_key(receipt_id)).await
    }

    /// A seller's sales from their copies once the ledger is indexed by seller; before that
    /// (a data dir an earlier release wrote, not yet upgraded), from everyone's.
    pub(crate) async fn after<S: Store + ?Sized>(
        store: &S,
        seller: Option<&str>,
        after: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let indexed = match seller {
            Some(_) => store.get(Tree::Meta, INDEXED_BY_SELLER).await?.is_some(),
            None => false,
        };
        let prefix = match seller {
            Some(seller) if indexed => seller_prefix(seller),
            _ => SALE_PREFIX.to_vec(),
        };
        let mut from = [prefix.as_slice(), after.as_bytes()].concat();
        let mut out = Vec::new();
        while out.len() < limit {
            let page = (store.scan_prefix(Tree::Ledger, &prefix, Some(&from), PAGE)).await?;
            let Some((last, _)) = page.last() else { break };
            from = last.clone();
            let full = page.len() == PAGE;
            for (key, entry) in page {
                let keep = match seller {
                    Some(seller) if !indexed => seller_of(&entry)?.as_deref() == Some(seller),
                    _ => true,
                };
                if keep && out.len() < limit {
                    let id = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
                    out.push((id, entry));
                }
            }
            if !full {
                break;
            }
        }
        Ok(out)
    }

    /// Copies every sale stored before sales were kept under their sellers (an earlier
    /// release's ledger) to its seller, then marks the ledger indexed. Each copy is conditioned
    /// on its sale being unchanged, so a sale removed meanwhile is never copied back; run again
    /// after a crash, it copies the same sales again.
    pub(crate) async fn upgrade<S: Store + ?Sized>(store: &S) -> StoreResult<u64> {
        if store.get(Tree::Meta, INDEXED_BY_SELLER).await?.is_some() {
            return Ok(0);
        }
        let mut copied = 0;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page =
                (store.scan_prefix(Tree::Ledger, SALE_PREFIX, after.as_deref(), PAGE)).await?;
            let Some((last, _)) = page.last() else { break };
            let last = last.clone();
            let mut batch = Batch::new();
            let mut copies = 0;
            for (key, entry) in page {
                if let Some(seller) = seller_of(&entry)? {
                    let receipt_id = String::from_utf8_lossy(&key[SALE_PREFIX.len()..]);
                    let copy = seller_key(&seller, &receipt_id);
                    batch = batch
                        .require_equals(Tree::Ledger, key, Some(entry.clone()))
                        .put(Tree::Ledger, copy, entry);
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
}

#[cfg(test)]
mod tests {
    use super::{SaleRow, SalesLedger};
    use crate::{Batch, SledStore, Store, Tree};

    fn row(id: &str, seller: Option<&str>) -> SaleRow {
        SaleRow {
            receipt_id: id.to_owned(),
            seller: seller.map(str::to_owned),
            endpoint: None,
            at_ms: 0,
            amount: 10,
            collection: None,
            method: "x402".to_owned(),
            entry: serde_json::json!({"receiptId": id, "seller": seller})
                .to_string()
                .into_bytes(),
        }
    }

    /// A ledger an earlier release wrote (sales without copies under their sellers) is read
    /// whole until it is upgraded, then from the copies: a sale stored without one is no
    /// longer found by its seller, and typed writes keep each copy with its sale.
    #[tokio::test]
    async fn a_sellers_sales_are_read_from_their_copies_once_an_earlier_ledger_is_upgraded() {
        let store = SledStore::temporary().unwrap();
        let put_alone = |row: SaleRow| {
            let store = &store;
            async move {
                let key = super::kv::sale_key(&row.receipt_id);
                store.put(Tree::Ledger, &key, &row.entry).await.unwrap();
            }
        };
        let of = |seller: &'static str| {
            let store = &store;
            async move {
                let sales = store.sales_after(Some(seller), "", 100).await.unwrap();
                sales.into_iter().map(|(id, _)| id).collect::<Vec<_>>()
            }
        };
        put_alone(row("rcpt_1", Some("a"))).await;
        put_alone(row("rcpt_2", Some("b"))).await;
        put_alone(row("rcpt_3", None)).await;
        put_alone(row("rcpt_4", Some("a"))).await;
        assert_eq!(of("a").await, ["rcpt_1", "rcpt_4"]);

        assert_eq!(store.upgrade_sales().await.unwrap(), 3);
        assert_eq!(store.upgrade_sales().await.unwrap(), 0, "once");
        assert_eq!(of("a").await, ["rcpt_1", "rcpt_4"]);
        assert_eq!(of("b").await, ["rcpt_2"]);
        // Read from the copies now: a sale stored without one is not found by its seller.
        put_alone(row("rcpt_5", Some("a"))).await;
        assert_eq!(of("a").await, ["rcpt_1", "rcpt_4"]);
        let new = row("rcpt_6", Some("a"));
        store.apply(Batch::new().put_sale(new)).await.unwrap();
        assert_eq!(of("a").await, ["rcpt_1", "rcpt_4", "rcpt_6"]);
        let copy = store
            .get(Tree::Ledger, b"by_seller/a/rcpt_6")
            .await
            .unwrap();
        assert!(copy.is_some());
        store
            .apply(Batch::new().delete_sale("rcpt_6", Some("a")))
            .await
            .unwrap();
        assert_eq!(of("a").await, ["rcpt_1", "rcpt_4"]);
        let copy = store
            .get(Tree::Ledger, b"by_seller/a/rcpt_6")
            .await
            .unwrap();
        assert_eq!(copy, None);
        // Everyone's sales are the sales, never their copies.
        let all = store.sales_after(None, "", 100).await.unwrap();
        assert_eq!(all.len(), 5);
    }
}
