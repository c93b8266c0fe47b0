//! Endpoints' records in a table of their own (`toolhost_endpoints`, migration 20): written by
//! batches' typed members (see `transaction`, which also publishes each change on the feed as
//! the `endpoints` tree's slug), read here by slug, or a page at a time. Deleted slugs'
//! reservations and the wipes deleted endpoints are owed in theirs (`toolhost_slug_reservations`,
//! `toolhost_owed_wipes`, migration 28).

use async_trait::async_trait;

use super::PgStore;
use crate::endpoints::EndpointRecords;
use crate::StoreResult;

const SQL_GET: &str = "SELECT entry FROM toolhost_endpoints WHERE slug = $1";
const SQL_AFTER: &str = "SELECT slug, entry FROM toolhost_endpoints \
     WHERE slug > $1 ORDER BY slug LIMIT $2";
const SQL_RESERVATION: &str = "SELECT entry FROM toolhost_slug_reservations WHERE slug = $1";
const SQL_RESERVATIONS: &str = "SELECT slug, entry FROM toolhost_slug_reservations \
     WHERE slug > $1 ORDER BY slug LIMIT $2";
const SQL_OWED_WIPES: &str = "SELECT endpoint_id, entry FROM toolhost_owed_wipes \
     WHERE endpoint_id > $1 ORDER BY endpoint_id LIMIT $2";

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

    async fn slug_reservation(&self, slug: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_RESERVATION, slug).await
    }

    async fn slug_reservations(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_after(SQL_RESERVATIONS, after, limit).await
    }

    async fn owed_wipes(&self, limit: usize) -> StoreResult<Vec<String>> {
        let page = self.page_after(SQL_OWED_WIPES, None, limit).await?;
        Ok(page
            .into_iter()
            .map(|(endpoint_id, _)| endpoint_id)
            .collect())
    }
}
