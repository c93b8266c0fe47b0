//! Endpoints' records in a table of their own (`toolhost_endpoints`, migration 20): written by
//! batches' typed members (see `transaction`, which also publishes each change on the feed as
//! the `endpoints` tree's slug), read here by slug, or a page at a time.

use async_trait::async_trait;

use super::PgStore;
use crate::endpoints::EndpointRecords;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_endpoints WHERE slug = $1";
const SQL_AFTER: &str = "SELECT slug, entry FROM toolhost_endpoints \
     WHERE slug > $1 ORDER BY slug LIMIT $2";

#[async_trait]
impl EndpointRecords for PgStore {
    async fn endpoint(&self, slug: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_GET, slug).await
    }

    async fn endpoints(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_AFTER, after, limit).await
    }
}
