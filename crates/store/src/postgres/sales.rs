//! Sales in a table of their own (`toolhost_sales`, migration 5): written by batches' typed
//! members (see `transaction`), read here. A seller's sales are one range of the
//! `(seller, receipt_id)` index, and nothing is stored twice.
//!
//! A revenue report's sums are one statement ([`SQL_SUMS`]): the sales joined with what
//! changes where their money stands, still kept in the ledger's keys (a refund's
//! `refund/{receiptId}`, a pending settlement's `pending/{receiptId}`, and for a sale from
//! before `collection` was written its receipt's settlement), grouped as a report groups them.

use async_trait::async_trait;

use super::{column, limit_param, query, PgStore};
use crate::sales::{SaleSum, SalesLedger};
use crate::{StoreError, StoreResult};

const SQL_GET: &str = "SELECT entry FROM toolhost_sales WHERE receipt_id = $1";
const SQL_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_sales \
     WHERE receipt_id > $1 ORDER BY receipt_id LIMIT $2";
const SQL_SELLERS_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_sales \
     WHERE seller = $1 AND receipt_id > $2 ORDER BY receipt_id LIMIT $3";

/// The sums of the sales `$filter` picks (`$1`: from this Unix millisecond; `$3`: the seller),
/// the fee at `$2` basis points of each seller's sale. A sale's standing follows
/// `revenue::standings` and its amount `revenue::refunds::take_refund` in toolhost, which sum
/// the same sales this way on sled; toolhost's revenue tests hold the two to the same figures.
macro_rules! sums_sql {
    ($filter:literal) => {
        concat!(
            "WITH sold AS (
                 SELECT s.receipt_id, s.seller IS NULL AS platform, s.endpoint,
                        floor(s.at_ms::NUMERIC / 86400000)::BIGINT AS day,
                        convert_from(s.entry, 'UTF8')::JSONB ->> 'method' AS method,
                        s.collection,
                        greatest(s.amount - coalesce(
                            (convert_from(r.value, 'UTF8')::JSONB ->> 'amount')::NUMERIC, 0), 0)
                            AS kept,
                        p.key IS NOT NULL AS pending
                 FROM toolhost_sales s
                 LEFT JOIN toolhost_kv r
                     ON r.tree = 'ledger' AND r.key = convert_to('refund/' || s.receipt_id, 'UTF8')
                 LEFT JOIN toolhost_kv p
                     ON p.tree = 'ledger' AND p.key = convert_to('pending/' || s.receipt_id, 'UTF8')
                 WHERE ",
            $filter,
            ")
             SELECT platform, endpoint, day, coalesce(method, ''),
                    CASE WHEN collection = 'pending' THEN
                             CASE WHEN pending THEN 'pending' ELSE 'collected' END
                         WHEN collection IS NOT NULL THEN collection
                         WHEN method = 'developer_credit' THEN 'collected'
                         WHEN method = 'free' THEN 'recorded'
                         WHEN pending THEN 'pending'
                         WHEN (SELECT convert_from(t.entry, 'UTF8')::JSONB #>> '{settlement,status}'
                               FROM toolhost_receipts t WHERE t.receipt_id = sold.receipt_id)
                              = 'settled' THEN 'collected'
                         ELSE 'recorded'
                    END,
                    sum(kept)::TEXT,
                    sum(CASE WHEN platform THEN 0 ELSE div(kept * $2::BIGINT, 10000) END)::TEXT,
                    count(*)
             FROM sold
             GROUP BY 1, 2, 3, 4, 5"
        )
    };
}

/// Everyone's sales summed.
const SQL_SUMS: &str = sums_sql!("s.at_ms >= $1");
/// One seller's sales summed: a range of its index.
const SQL_SELLERS_SUMS: &str = sums_sql!("s.seller = $3 AND s.at_ms >= $1");

/// A sum as the database wrote it (a decimal integer); a sum beyond `u64` (never reached by
/// real sales) is held at its largest, as toolhost's own sums saturate.
fn units(text: &str) -> StoreResult<u64> {
    match text.parse::<u64>() {
        Ok(units) => Ok(units),
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => Ok(u64::MAX),
        Err(_) => Err(StoreError::Corrupt(format!("a sum of sales: {text:?}"))),
    }
}

fn sale_sum(row: &tokio_postgres::Row) -> StoreResult<SaleSum> {
    let gross: String = column(row, 5)?;
    let fee: String = column(row, 6)?;
    let count: i64 = column(row, 7)?;
    Ok(SaleSum {
        platform: column(row, 0)?,
        endpoint: column(row, 1)?,
        day: column(row, 2)?,
        method: column(row, 3)?,
        standing: column(row, 4)?,
        gross: units(&gross)?,
        fee: units(&fee)?,
        count: u64::try_from(count).unwrap_or(0),
    })
}

#[async_trait]
impl SalesLedger for PgStore {
    async fn sale(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, receipt_id).await
    }

    async fn sales_after(
        &self,
        seller: Option<&str>,
        after: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let limit = limit_param(limit);
        match seller {
            Some(seller) => {
                (self.ids_and_entries(SQL_SELLERS_AFTER, &[&seller, &after, &limit])).await
            }
            None => self.ids_and_entries(SQL_AFTER, &[&after, &limit]).await,
        }
    }

    async fn sale_sums(
        &self,
        seller: Option<&str>,
        since_ms: i64,
        fee_bps: u64,
    ) -> StoreResult<Option<Vec<SaleSum>>> {
        let fee_bps = i64::try_from(fee_bps).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let rows = match seller {
            Some(seller) => {
                (query(&client, SQL_SELLERS_SUMS, &[&since_ms, &fee_bps, &seller])).await?
            }
            None => query(&client, SQL_SUMS, &[&since_ms, &fee_bps]).await?,
        };
        rows.iter().map(sale_sum).collect::<StoreResult<_>>().map(Some)
    }

    /// Migration 5 moved every sale an earlier release stored.
    async fn upgrade_sales(&self) -> StoreResult<u64> {
        Ok(0)
    }
}
