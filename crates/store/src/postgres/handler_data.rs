//! Handlers' kv entries and files in a table per space (`toolhost_handler_kv`,
//! `toolhost_handler_files`, migration 22), and their usage records in two
//! (`toolhost_handler_usage`, `toolhost_builder_usage`, migration 23): written by batches'
//! typed members (see `transaction`), read here: entries many keys in one statement, or a key
//! range in key order; a usage record by its key.

use std::collections::HashMap;

use async_trait::async_trait;

use super::{column, keys, limit_param, query, PgStore};
use crate::handler_data::{entry_key, keyed, usage_key, HandlerData, HandlerSpace};
use crate::StoreResult;

/// A space's reads: many entries by key, and a key range (`[$1, $2)`, at most `$3`).
struct Reads {
    many: &'static str,
    range: &'static str,
}

const KV: Reads = Reads {
    many: "SELECT entry_key, entry FROM toolhost_handler_kv WHERE entry_key = ANY($1::BYTEA[])",
    range: "SELECT entry_key, entry FROM toolhost_handler_kv \
         WHERE entry_key >= $1 AND entry_key < $2 ORDER BY entry_key LIMIT $3",
};

const FILES: Reads = Reads {
    many: "SELECT entry_key, entry FROM toolhost_handler_files WHERE entry_key = ANY($1::BYTEA[])",
    range: "SELECT entry_key, entry FROM toolhost_handler_files \
         WHERE entry_key >= $1 AND entry_key < $2 ORDER BY entry_key LIMIT $3",
};

const SQL_USAGE: &str = "SELECT entry FROM toolhost_handler_usage WHERE usage_key = $1";
const SQL_BUILDER_USAGE: &str = "SELECT entry FROM toolhost_builder_usage WHERE usage_key = $1";

fn reads(space: HandlerSpace) -> &'static Reads {
    match space {
        HandlerSpace::Kv => &KV,
        HandlerSpace::Files => &FILES,
    }
}

#[async_trait]
impl HandlerData for PgStore {
    async fn handler_entries(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
        keys: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let wanted: Vec<Vec<u8>> = keys.iter().map(|k| entry_key(endpoint_id, k)).collect();
        let client = self.client().await?;
        let rows = query(&client, reads(space).many, &[&wanted]).await?;
        let mut found = HashMap::with_capacity(rows.len());
        for row in &rows {
            found.insert(column::<Vec<u8>>(row, 0)?, column::<Vec<u8>>(row, 1)?);
        }
        Ok(wanted.iter().map(|key| found.remove(key)).collect())
    }

    async fn handler_entries_under(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let prefix = entry_key(endpoint_id, prefix);
        let after = after.map(|key| entry_key(endpoint_id, key));
        let from = keys::scan_start(&prefix, after.as_deref());
        // A prefix ends in `/` at least, so it has an end.
        let to = keys::prefix_end(&prefix).unwrap_or_default();
        if limit == 0 || to <= from {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&from, &to, &limit_param(limit)];
        let rows = query(&client, reads(space).range, &params).await?;
        let rows: Vec<(Vec<u8>, Vec<u8>)> = (rows.iter())
            .map(|row| Ok((column(row, 0)?, column(row, 1)?)))
            .collect::<StoreResult<_>>()?;
        Ok(keyed(endpoint_id, rows))
    }

    async fn handler_usage(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        (self.entry_by_id(SQL_USAGE, &usage_key(space, endpoint_id))).await
    }

    async fn builder_usage(
        &self,
        space: HandlerSpace,
        builder: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        (self.entry_by_id(SQL_BUILDER_USAGE, &usage_key(space, builder))).await
    }
}
