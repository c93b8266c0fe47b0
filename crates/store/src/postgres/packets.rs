//! Payout packets in a table of their own (`toolhost_packets`, migration 7): written by
//! batches' typed members (see `transaction`), read here, by id or by builder.

use async_trait::async_trait;

use super::{column, query, PgStore};
use crate::packets::PayoutPackets;
use crate::StoreResult;

const SQL_GET: &str = "SELECT builder, entry FROM toolhost_packets WHERE packet_id = $1";
const SQL_OF: &str = "SELECT packet_id, entry FROM toolhost_packets \
     WHERE builder = $1 AND packet_id > $2 ORDER BY packet_id LIMIT $3";

#[async_trait]
impl PayoutPackets for PgStore {
    async fn packet(&self, packet_id: &str) -> StoreResult<Option<(String, Vec<u8>)>> {
        let client = self.client().await?;
        let rows = query(&client, SQL_GET, &[&packet_id]).await?;
        rows.first()
            .map(|row| Ok((column(row, 0)?, column(row, 1)?)))
            .transpose()
    }

    async fn packets_of(
        &self,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.page_of(SQL_OF, builder, after, limit).await
    }
}
