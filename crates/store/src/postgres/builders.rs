//! Builders and their keys in tables of their own (`toolhost_builders`,
//! `toolhost_builder_keys`, migration 21): written by batches' typed members (see
//! `transaction`), read here; a request's key and its builder in one statement.

use async_trait::async_trait;

use super::{column, query, PgStore};
use crate::builders::{BuilderRecords, KeyAndBuilder};
use crate::StoreResult;

const SQL_BUILDER: &str = "SELECT entry FROM toolhost_builders WHERE builder_id = $1";
const SQL_KEY: &str = "SELECT entry FROM toolhost_builder_keys WHERE key_sha256 = $1";
const SQL_BY_KEY: &str = "SELECT k.entry, b.entry FROM toolhost_builder_keys k \
     LEFT JOIN toolhost_builders b ON b.builder_id = k.builder_id WHERE k.key_sha256 = $1";

#[async_trait]
impl BuilderRecords for PgStore {
    async fn builder(&self, builder_id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_BUILDER, builder_id).await
    }

    async fn builder_key(&self, key_sha256: &str) -> StoreResult<Option<Vec<u8>>> {
        self.entry_by_id(SQL_KEY, key_sha256).await
    }

    async fn builder_by_key(&self, key_sha256: &str) -> StoreResult<Option<KeyAndBuilder>> {
        let client = self.client().await?;
        let rows = query(&client, SQL_BY_KEY, &[&key_sha256]).await?;
        rows.first()
            .map(|row| Ok((column(row, 0)?, column(row, 1)?)))
            .transpose()
    }
}
