//! Developer credits in tables of their own (migration 15): grants (`toolhost_credits`, the
//! token's digest a unique column), balances (`toolhost_credit_balances`) and holds
//! (`toolhost_credit_holds`), written by batches' typed members (see `transaction`), read
//! here; a page of grants comes with their balances in one statement.

use async_trait::async_trait;

use super::{column, limit_param, query, PgStore};
use crate::credits::{CreditListing, CreditRecords};
use crate::StoreResult;

const SQL_BY_TOKEN: &str = "SELECT credit_id, entry FROM toolhost_credits WHERE token_sha256 = $1";
const SQL_BALANCE: &str = "SELECT entry FROM toolhost_credit_balances WHERE credit_id = $1";
const SQL_CREDITS_AFTER: &str = "SELECT c.credit_id, c.entry, b.entry \
     FROM toolhost_credits c LEFT JOIN toolhost_credit_balances b ON b.credit_id = c.credit_id \
     WHERE c.credit_id > $1 ORDER BY c.credit_id LIMIT $2";
const SQL_HOLDS_AFTER: &str = "SELECT hold_id, entry FROM toolhost_credit_holds \
     WHERE hold_id > $1 ORDER BY hold_id LIMIT $2";

#[async_trait]
impl CreditRecords for PgStore {
    async fn credit_by_token(&self, token_sha256: &str) -> StoreResult<Option<(String, Vec<u8>)>> {
        let found = self.ids_and_entries(SQL_BY_TOKEN, &[&token_sha256]).await?;
        Ok(found.into_iter().next())
    }

    async fn credit_balance(&self, credit_id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_BALANCE, credit_id).await
    }

    async fn credits(&self, after: Option<&str>, limit: usize) -> StoreResult<Vec<CreditListing>> {
        let client = self.client().await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
            [&after.unwrap_or(""), &limit_param(limit)];
        let rows = query(&client, SQL_CREDITS_AFTER, &params).await?;
        rows.iter()
            .map(|row| Ok((column(row, 0)?, column(row, 1)?, column(row, 2)?)))
            .collect()
    }

    async fn credit_holds(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_HOLDS_AFTER, after, limit).await
    }
}
