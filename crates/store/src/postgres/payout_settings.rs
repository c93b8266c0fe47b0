//! Builders' payout settings in a table of their own (`toolhost_payout_settings`, migration
//! 19): written by batches' typed members (see `transaction`), read here by builder.

use async_trait::async_trait;

use super::PgStore;
use crate::payout_settings::BuilderPayoutSettings;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_payout_settings WHERE builder = $1";

#[async_trait]
impl BuilderPayoutSettings for PgStore {
    async fn payout_settings(&self, builder: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, builder).await
    }
}
