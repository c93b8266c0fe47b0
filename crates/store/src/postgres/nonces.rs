//! Payment nonces in a table of their own (`toolhost_nonces`, migration 8): written by
//! batches' typed members (see `transaction`), read here. The open ones (claimed, settling,
//! legacy) are indexed apart (a partial index), so recovery's pass reads the claims in flight,
//! not every payment ever taken.

use async_trait::async_trait;

use super::PgStore;
use crate::nonces::NonceClaims;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_nonces WHERE nonce_key = $1";
/// The predicate is the partial index's, word for word, so the planner uses it.
const SQL_OPEN: &str = "SELECT nonce_key, entry FROM toolhost_nonces \
     WHERE state IN ('claimed', 'settling', 'legacy') AND nonce_key > $1 \
     ORDER BY nonce_key LIMIT $2";

#[async_trait]
impl NonceClaims for PgStore {
    async fn nonce(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, key).await
    }

    async fn open_nonces(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_OPEN, after, limit).await
    }

    /// Migration 8 moved them, their state read from their entries.
    async fn upgrade_nonces(&self) -> StoreResult<u64> {
        Ok(0)
    }
}
