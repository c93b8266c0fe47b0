//! Quotes in a table of their own (`toolhost_quotes`, migration 4): the expiry is a column with
//! an index, so a sweep is one bounded delete of what expired, whatever order quotes were
//! issued in.

use async_trait::async_trait;

use super::{limit_param, PgStore};
use crate::quotes::{HostedQuotes, QuoteRow};
use crate::{StoreError, StoreResult};

const SQL_SAVE: &str =
    "INSERT INTO toolhost_quotes (id, expires_at_ms, entry) VALUES ($1, $2, $3) \
     ON CONFLICT (id) DO UPDATE SET expires_at_ms = excluded.expires_at_ms, entry = excluded.entry";
const SQL_GET: &str = "SELECT entry FROM toolhost_quotes WHERE id = $1";
const SQL_SWEEP: &str = "DELETE FROM toolhost_quotes WHERE id IN ( \
     SELECT id FROM toolhost_quotes WHERE expires_at_ms < $1 LIMIT $2)";

fn millis(ms: u64) -> StoreResult<i64> {
    i64::try_from(ms)
        .map_err(|_| StoreError::Engine(format!("{ms} ms is past the year 292 million")))
}

#[async_trait]
impl HostedQuotes for PgStore {
    async fn save_quote(&self, quote: &QuoteRow) -> StoreResult<()> {
        let expires = millis(quote.expires_at_ms)?;
        self.write_one(SQL_SAVE, &[&quote.id, &expires, &quote.entry])
            .await
            .map(drop)
    }

    async fn quote(&self, id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, id).await
    }

    async fn sweep_quotes(&self, before_ms: u64, limit: usize) -> StoreResult<u64> {
        let before = millis(before_ms)?;
        self.write_one(SQL_SWEEP, &[&before, &limit_param(limit)])
            .await
    }
}
