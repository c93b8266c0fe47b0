//! Payment identifiers in a table of their own (`toolhost_payment_ids`, migration 11): written
//! by batches' typed members (see `transaction`), read here by key.

use async_trait::async_trait;

use super::PgStore;
use crate::payment_ids::PaymentIds;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_payment_ids WHERE payment_key = $1";

#[async_trait]
impl PaymentIds for PgStore {
    async fn payment_id(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, key).await
    }
}
