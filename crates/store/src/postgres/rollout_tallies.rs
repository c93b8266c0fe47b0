//! Rollout tallies in a table of their own (`toolhost_rollout_tallies`, migration 25): written
//! by batches' typed members (see `transaction`), read here by endpoint and rollout; an
//! endpoint's removed in one statement.

use async_trait::async_trait;

use super::{limit_param, PgStore};
use crate::rollout_tallies::RolloutTallies;
use crate::StoreResult;

const SQL_OF: &str = "SELECT node_id, entry FROM toolhost_rollout_tallies \
     WHERE endpoint_id = $1 AND rollout = $2 ORDER BY node_id LIMIT $3";
const SQL_DELETE_ALL: &str = "DELETE FROM toolhost_rollout_tallies WHERE endpoint_id = $1";

#[async_trait]
impl RolloutTallies for PgStore {
    async fn rollout_tallies(
        &self,
        endpoint_id: &str,
        rollout: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&endpoint_id, &rollout, &limit_param(limit)];
        self.ids_and_entries(SQL_OF, &params).await
    }

    async fn delete_rollout_tallies(&self, endpoint_id: &str) -> StoreResult<()> {
        self.write_one(SQL_DELETE_ALL, &[&endpoint_id]).await?;
        Ok(())
    }
}
