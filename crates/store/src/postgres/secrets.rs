//! Endpoints' secrets in a table of their own (`toolhost_secrets`, migration 24): written by
//! batches' typed members (see `transaction`), read here by endpoint id in name order, or all
//! of them a page at a time; a deleted endpoint's removed in one statement.

use async_trait::async_trait;

use super::PgStore;
use crate::secrets::EndpointSecrets;
use crate::StoreResult;

const SQL_OF: &str = "SELECT name, entry FROM toolhost_secrets \
     WHERE endpoint_id = $1 AND name > $2 ORDER BY name LIMIT $3";
const SQL_AFTER: &str = "SELECT secret_key, entry FROM toolhost_secrets \
     WHERE secret_key > $1 ORDER BY secret_key LIMIT $2";
const SQL_DELETE_ALL: &str = "DELETE FROM toolhost_secrets WHERE endpoint_id = $1";

#[async_trait]
impl EndpointSecrets for PgStore {
    async fn secrets(&self, owner: &str, limit: usize) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_of(SQL_OF, owner, None, limit).await
    }

    async fn all_secrets(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_AFTER, after, limit).await
    }

    async fn delete_secrets(&self, owner: &str) -> StoreResult<()> {
        self.write_one(SQL_DELETE_ALL, &[&owner]).await?;
        Ok(())
    }
}
