//! Refunds in a table of their own (`toolhost_refunds`, migration 12): written by batches'
//! typed members (see `transaction`), read here by receipt id, many in one statement.

use std::collections::HashMap;

use async_trait::async_trait;

use super::{column, query, PgStore};
use crate::refunds::RefundRecords;
use crate::StoreResult;

const SQL_GET_MANY: &str =
    "SELECT receipt_id, entry FROM toolhost_refunds WHERE receipt_id = ANY($1::TEXT[])";

#[async_trait]
impl RefundRecords for PgStore {
    async fn refunds(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        if receipt_ids.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let rows = query(&client, SQL_GET_MANY, &[&receipt_ids]).await?;
        let mut found = HashMap::with_capacity(rows.len());
        for row in rows {
            found.insert(column::<String>(&row, 0)?, column::<Vec<u8>>(&row, 1)?);
        }
        Ok((receipt_ids.iter())
            .map(|id| found.get(*id).cloned())
            .collect())
    }
}
