//! Statistics that keep up with a young database: a table that has outgrown the statistics its
//! statements were planned with is analyzed at once, not when autovacuum next comes by.
//!
//! Why: each connection plans a statement once and keeps the plan (`SQL_SESSION_PLANS`), and
//! PostgreSQL makes that plan from the table's statistics as they were. In a new database they
//! describe a table of a few rows, so the planner reads the few rows of a whole tree rather
//! than looking up each key: the receipt log's appends then locked and deleted their pending
//! keys by reading the whole `receipt_log` tree of `toolhost_kv` (4,708 rows for 13 keys, 1-3 ms
//! a statement where 0.05 ms is usual; `auto_explain` in `bench/store.sh`), and paid calls ran
//! at about half their rate. Autovacuum's first visit (its `naptime`, a minute by default)
//! put it right, so a new deployment's first minute, and every benchmark's first round, were
//! slow. An `ANALYZE` makes every connection plan again with the new statistics.
//!
//! So every [`CHECK_EVERY`], each node analyzes its tables whose live rows have at least
//! doubled since their last analysis (and number at least [`MIN_ROWS`]): a growing table is
//! analyzed at 1,000 rows, 2,000, 4,000 and so on until its statistics describe [`MAX_ROWS`];
//! from there, and once a table stops growing, autovacuum keeps them. Past that size the plans
//! do not change (every key is looked up by index), and an analysis samples 30,000 rows
//! whatever the table's size: the doublings past it cost a growing database tens of
//! milliseconds of its CPU each (80 ms for 64,000 receipts, bench/RESULTS.md) for plans it
//! already had. An `ANALYZE` waits at most half a second for its table
//! ([`LOCK_WAIT`]): one being vacuumed or analyzed by someone else (autovacuum, another node)
//! is left for the next check, and autovacuum, which gives way to a lock wait of
//! `deadlock_timeout` (a second), is not cancelled by it.

use std::time::Duration;

use deadpool_postgres::Pool;
use tokio::sync::watch;
use tokio_postgres::error::SqlState;

use super::{pool_error, read_error};

/// How often a node looks for tables that outgrew their statistics.
pub(super) const CHECK_EVERY: Duration = Duration::from_secs(5);
/// Live rows a table has at least before it is analyzed for its growth (smaller tables are
/// read whole at no cost whatever the plan).
const MIN_ROWS: i64 = 1000;
/// Rows a table's statistics describe from which it is left to autovacuum however it grows.
const MAX_ROWS: i64 = 10_000;

/// toolhost's tables (in the schema its connections work in) whose live rows number at least
/// `$1` and twice what their statistics say (`reltuples`: -1 for a table never analyzed),
/// and whose statistics say fewer than `$2`.
const SQL_OUTGROWN: &str = "SELECT s.relname::TEXT FROM pg_stat_user_tables s \
     JOIN pg_class c ON c.oid = s.relid \
     WHERE s.schemaname = current_schema() AND s.relname LIKE 'toolhost\\_%' \
     AND s.n_live_tup >= greatest($1::BIGINT, 2 * c.reltuples::BIGINT) \
     AND c.reltuples::BIGINT < $2::BIGINT \
     ORDER BY s.relname";

/// How long an `ANALYZE` waits for its table's lock (held by a vacuum or another analysis).
const LOCK_WAIT: &str = "SET LOCAL lock_timeout = '500ms'";

/// Analyzes the tables that outgrew their statistics; returns their names (not those whose
/// lock was not had within [`LOCK_WAIT`]).
pub(super) async fn analyze_outgrown(
    client: &mut deadpool_postgres::Client,
) -> Result<Vec<String>, tokio_postgres::Error> {
    let statement = client.prepare_cached(SQL_OUTGROWN).await?;
    let rows = client.query(&statement, &[&MIN_ROWS, &MAX_ROWS]).await?;
    let mut analyzed = Vec::with_capacity(rows.len());
    for row in rows {
        let table: String = row.try_get(0)?;
        let quoted = table.replace('"', "\"\"");
        // In a transaction of its own, so that the lock wait is its alone and a failure
        // leaves the connection as it was (the transaction rolls back when dropped).
        let transaction = client.transaction().await?;
        transaction.batch_execute(LOCK_WAIT).await?;
        let analyze = format!("ANALYZE \"{quoted}\"");
        match transaction.batch_execute(&analyze).await {
            Ok(()) => transaction.commit().await?,
            Err(e) if e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE) => continue,
            Err(e) => return Err(e),
        }
        analyzed.push(table);
    }
    Ok(analyzed)
}

/// Checks every [`CHECK_EVERY`] (`every`) until told to stop. A failed check (the database
/// away) is tried again at the next one.
pub(super) async fn keep_up(pool: Pool, every: Duration, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            () = tokio::time::sleep(every) => {}
        }
        let checked = async {
            let mut client = pool.get().await.map_err(pool_error)?;
            analyze_outgrown(&mut client).await.map_err(read_error)
        };
        match checked.await {
            Ok(analyzed) if !analyzed.is_empty() => {
                tracing::debug!(
                    ?analyzed,
                    "tables analyzed as they outgrew their statistics"
                );
            }
            Ok(_) => {}
            Err(why) => {
                tracing::debug!(%why, "looking for tables that outgrew their statistics failed")
            }
        }
    }
}
