//! Sales in a table of their own (`toolhost_sales`, migration 5): written by batches' typed
//! members (see `transaction`), read here. A seller's sales are one range of the
//! `(seller, receipt_id)` index, and nothing is stored twice.
//!
//! A revenue report's sums are one statement ([`SQL_SUMS`]): the sales joined with what
//! changes where their money stands (their refunds and pending settlements, by receipt id;
//! and for a sale from before `collection` was written, its receipt's settlement), grouped as
//! a report groups them.

use async_trait::async_trait;

use tokio_postgres::types::ToSql;

use super::{column, limit_param, read_error, PgStore};
use crate::sales::{SaleSum, SalesLedger};
use crate::{StoreError, StoreResult};

const SQL_GET: &str = "SELECT entry FROM toolhost_sales WHERE receipt_id = $1";
const SQL_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_sales \
     WHERE receipt_id > $1 ORDER BY receipt_id LIMIT $2";
const SQL_SELLERS_AFTER: &str = "SELECT receipt_id, entry FROM toolhost_sales \
     WHERE seller = $1 AND receipt_id > $2 ORDER BY receipt_id LIMIT $3";

/// The sums of the sales `$filter` picks (`$1`: from this Unix millisecond; `$3`: the seller),
/// the fee at `$2` basis points of each seller's sale, rounded down (`⌊k × b / 10⁴⌋` as
/// `⌊k / 10⁴⌋ × b + ⌊(k mod 10⁴) × b / 10⁴⌋`, exact in 64 bits for any amount). Days are whole
/// UTC days since 1970 (a sale is never older). A sale's standing follows
/// `revenue::standings` and its amount `revenue::refunds::take_refund` in toolhost, which sum
/// the same sales this way on sled; toolhost's revenue tests hold the two to the same figures.
macro_rules! sums_sql {
    ($filter:expr) => {
        concat!(
            "WITH sold AS (
                 SELECT s.seller IS NULL AS platform, s.endpoint, s.at_ms / 86400000 AS day,
                        coalesce(s.method, '') AS method,
                        CASE WHEN s.collection = 'pending' THEN
                                 CASE WHEN p.receipt_id IS NULL THEN 'collected' ELSE 'pending' END
                             WHEN s.collection IS NOT NULL THEN s.collection
                             WHEN s.method = 'developer_credit' THEN 'collected'
                             WHEN s.method = 'free' THEN 'recorded'
                             WHEN p.receipt_id IS NOT NULL THEN 'pending'
                             WHEN (SELECT convert_from(t.entry, 'UTF8')::JSONB
                                          #>> '{settlement,status}'
                                   FROM toolhost_receipts t WHERE t.receipt_id = s.receipt_id)
                                  = 'settled' THEN 'collected'
                             ELSE 'recorded'
                        END AS standing,
                        greatest(s.amount - coalesce(r.amount, 0), 0) AS kept
                 FROM toolhost_sales s
                 LEFT JOIN toolhost_refunds r ON r.receipt_id = s.receipt_id
                 LEFT JOIN toolhost_pending_settlements p ON p.receipt_id = s.receipt_id
                 WHERE ",
            $filter,
            ")
             SELECT platform, endpoint, day, method, standing,
                    sum(kept)::TEXT,
                    sum(CASE WHEN platform THEN 0
                             ELSE kept / 10000 * $2::BIGINT + kept % 10000 * $2::BIGINT / 10000
                        END)::TEXT,
                    count(*)
             FROM sold
             GROUP BY 1, 2, 3, 4, 5"
        )
    };
}

/// How a sum is planned, for its transaction alone: as a report over a whole table, not as the
/// call path's index reads the connection is set for (`SQL_SESSION_PLANS`). A sequential scan
/// when it is the cheapest, and one hash table of the groups rather than a sort of every sale
/// (the planner guesses a group a sale and sorts; `bench/revenue.sh`, 100,000 sales in 12,040
/// groups: 354 ms sorted, 243 hashed, the hash table 7 MiB; it spills to disk past `work_mem`).
const SQL_REPORT_PLANS: &str =
    "SET LOCAL enable_seqscan = on; SET LOCAL enable_sort = off; SET LOCAL work_mem = '64MB'";

/// Whether a sale is not yet paid out: no paid-out mark of its receipt id.
macro_rules! unpaid {
    () => {
        " AND NOT EXISTS (SELECT 1 FROM toolhost_paid_out m WHERE m.receipt_id = s.receipt_id)"
    };
}

/// Everyone's sales summed.
const SQL_SUMS: &str = sums_sql!("s.at_ms >= $1");
/// Everyone's sales not yet paid out.
const SQL_UNPAID_SUMS: &str = sums_sql!(concat!("s.at_ms >= $1", unpaid!()));
/// One seller's sales summed: a range of its index.
const SQL_SELLERS_SUMS: &str = sums_sql!("s.seller = $3 AND s.at_ms >= $1");
/// One seller's sales not yet paid out: what its payout view sums.
const SQL_SELLERS_UNPAID_SUMS: &str =
    sums_sql!(concat!("s.seller = $3 AND s.at_ms >= $1", unpaid!()));

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
        unpaid_only: bool,
        fee_bps: u64,
    ) -> StoreResult<Option<Vec<SaleSum>>> {
        let fee_bps = i64::try_from(fee_bps).unwrap_or(i64::MAX);
        let mut client = self.client().await?;
        let tx = (client.build_transaction().read_only(true).start())
            .await
            .map_err(read_error)?;
        tx.batch_execute(SQL_REPORT_PLANS)
            .await
            .map_err(read_error)?;
        let (sql, params): (_, &[&(dyn ToSql + Sync)]) = match (&seller, unpaid_only) {
            (Some(seller), false) => (SQL_SELLERS_SUMS, &[&since_ms, &fee_bps, seller]),
            (Some(seller), true) => (SQL_SELLERS_UNPAID_SUMS, &[&since_ms, &fee_bps, seller]),
            (None, false) => (SQL_SUMS, &[&since_ms, &fee_bps]),
            (None, true) => (SQL_UNPAID_SUMS, &[&since_ms, &fee_bps]),
        };
        let statement = tx.prepare_cached(sql).await.map_err(read_error)?;
        let rows = tx.query(&statement, params).await.map_err(read_error)?;
        tx.commit().await.map_err(read_error)?;
        rows.iter()
            .map(sale_sum)
            .collect::<StoreResult<_>>()
            .map(Some)
    }

    /// Migration 5 moved every sale an earlier release stored.
    async fn upgrade_sales(&self) -> StoreResult<u64> {
        Ok(0)
    }
}
