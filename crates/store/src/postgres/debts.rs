//! Builders' debts and payout versions in tables of their own (migration 16):
//! `toolhost_debts` (by `{builderId}/{receiptId}`, with the builder a column, indexed) and
//! `toolhost_payout_versions` (by builder), written by batches' typed members (see
//! `transaction`), read here.

use async_trait::async_trait;

use super::PgStore;
use crate::debts::BuilderDebts;
use crate::StoreResult;

/// A builder's debts after a receipt id, as receipt ids and entries.
const SQL_DEBTS_OF: &str = "SELECT substring(debt_key FROM length($1) + 2), entry \
     FROM toolhost_debts WHERE builder = $1 AND debt_key > $1 || '/' || $2 \
     ORDER BY debt_key LIMIT $3";
const SQL_VERSION: &str = "SELECT entry FROM toolhost_payout_versions WHERE builder = $1";

#[async_trait]
impl BuilderDebts for PgStore {
    async fn debts(
        &self,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_of(SQL_DEBTS_OF, builder, after, limit).await
    }

    async fn payout_version(&self, builder: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_VERSION, builder).await
    }
}
