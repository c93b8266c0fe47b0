//! Handlers' stored data: each endpoint's `ctx.kv` entries and `ctx.files` files, one record a
//! key, kept under the endpoint's id (never its slug: ids are never reused), and the usage
//! records that count them (each endpoint's in each space, and each builder's totals across
//! its endpoints). All are written by batches' typed members
//! ([`Batch::put_handler_entry`](crate::Batch::put_handler_entry),
//! [`Batch::put_handler_usage`](crate::Batch::put_handler_usage),
//! [`Batch::put_builder_usage`](crate::Batch::put_builder_usage), each guarded by its
//! `require_`), so a handler's commit is one atomic batch with the totals that count it.
//!
//! [`kv`] is the shape any key-value engine keeps (sled's: the `handler_kv` and
//! `handler_files` trees' `{endpointId}/{key}`, and the `meta` tree's
//! `usage/{space}/{endpointId}` and `builder-usage/{space}/{builderId}`, as every release has
//! stored them); PostgreSQL keeps a table per space (`toolhost_handler_kv`,
//! `toolhost_handler_files`, migration 22) with the endpoint id as a column, and the usage
//! records in two (`toolhost_handler_usage`, `toolhost_builder_usage`, migration 23) with
//! their counts as columns. Keys compare as bytes on every engine, so a listing's order and
//! its cursor mean the same everywhere.

use async_trait::async_trait;

use crate::StoreResult;

/// An endpoint's two storage spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HandlerSpace {
    /// `ctx.kv`'s entries.
    Kv,
    /// `ctx.files`' files.
    Files,
}

impl HandlerSpace {
    /// Its name in usage records' keys and columns.
    pub fn name(self) -> &'static str {
        match self {
            HandlerSpace::Kv => "kv",
            HandlerSpace::Files => "files",
        }
    }
}

/// An endpoint's usage record in one space, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerUsageRow {
    /// `{space}/{endpointId}` ([`usage_key`]).
    pub key: String,
    pub space: HandlerSpace,
    pub endpoint_id: String,
    /// The builder whose totals count this record, if any.
    pub builder: Option<String>,
    pub count: i64,
    pub bytes: i64,
    /// The record as the domain reads it back.
    pub entry: Vec<u8>,
}

impl HandlerUsageRow {
    pub fn new(
        space: HandlerSpace,
        endpoint_id: &str,
        builder: Option<&str>,
        (count, bytes): (u64, u64),
        entry: Vec<u8>,
    ) -> Self {
        Self {
            key: usage_key(space, endpoint_id),
            space,
            endpoint_id: endpoint_id.to_owned(),
            builder: builder.map(str::to_owned),
            count: clamp(count),
            bytes: clamp(bytes),
            entry,
        }
    }
}

/// A builder's totals in one space, as a batch writes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuilderUsageRow {
    /// `{space}/{builderId}` ([`usage_key`]).
    pub key: String,
    pub space: HandlerSpace,
    pub builder: String,
    pub count: i64,
    pub bytes: i64,
    /// The totals as the domain reads them back.
    pub entry: Vec<u8>,
}

impl BuilderUsageRow {
    pub fn new(
        space: HandlerSpace,
        builder: &str,
        (count, bytes): (u64, u64),
        entry: Vec<u8>,
    ) -> Self {
        Self {
            key: usage_key(space, builder),
            space,
            builder: builder.to_owned(),
            count: clamp(count),
            bytes: clamp(bytes),
            entry,
        }
    }
}

/// Where the usage record of `owner` (an endpoint's id, or a builder's) in `space` is kept.
pub fn usage_key(space: HandlerSpace, owner: &str) -> String {
    format!("{}/{owner}", space.name())
}

/// A count as a column holds it (no quota comes near 2^63).
fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// One entry of an endpoint's space, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerEntryRow {
    pub space: HandlerSpace,
    pub endpoint_id: String,
    /// `{endpointId}/{key}` ([`entry_key`]).
    pub entry_key: Vec<u8>,
    pub entry: Vec<u8>,
}

impl HandlerEntryRow {
    pub fn new(space: HandlerSpace, endpoint_id: &str, key: &str, entry: Vec<u8>) -> Self {
        Self {
            space,
            endpoint_id: endpoint_id.to_owned(),
            entry_key: entry_key(endpoint_id, key),
            entry,
        }
    }
}

/// Where `key` of `endpoint_id`'s space is kept: endpoint ids have no `/`, so no endpoint's
/// keys share a prefix with another's.
pub fn entry_key(endpoint_id: &str, key: &str) -> Vec<u8> {
    format!("{endpoint_id}/{key}").into_bytes()
}

/// Where handlers' entries are read. Every engine implements it (the conformance suite's
/// `handler_entries_*` case).
#[async_trait]
pub trait HandlerData {
    /// The entries of `keys` in `endpoint_id`'s `space` (`None` where there is none), in
    /// their order, in one read.
    async fn handler_entries(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
        keys: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>>;
    /// The entries of `endpoint_id`'s `space` whose key starts with `prefix` and sorts after
    /// `after` (as bytes; from the first when `None`), in key order, at most `limit`: keys and
    /// entries.
    async fn handler_entries_under(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// The usage record of `endpoint_id` in `space`, if it has one.
    async fn handler_usage(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
    ) -> StoreResult<Option<Vec<u8>>>;
    /// `builder`'s totals in `space`, if it has any.
    async fn builder_usage(
        &self,
        space: HandlerSpace,
        builder: &str,
    ) -> StoreResult<Option<Vec<u8>>>;
}

/// Handlers' entries over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub mod kv {
    use super::{entry_key, HandlerSpace};
    use crate::prefixed::Prefixed;
    use crate::{Store, StoreResult, Tree};

    /// Endpoints' usage records, under their [`usage_key`](super::usage_key).
    pub(crate) const USAGE: Prefixed = Prefixed {
        tree: Tree::Meta,
        prefix: b"usage/",
    };

    /// Builders' totals, under their [`usage_key`](super::usage_key).
    pub(crate) const BUILDER_USAGE: Prefixed = Prefixed {
        tree: Tree::Meta,
        prefix: b"builder-usage/",
    };

    pub(crate) fn tree(space: HandlerSpace) -> Tree {
        match space {
            HandlerSpace::Kv => Tree::HandlerKv,
            HandlerSpace::Files => Tree::HandlerFiles,
        }
    }

    pub(crate) async fn get_many<S: Store + ?Sized>(
        store: &S,
        space: HandlerSpace,
        endpoint_id: &str,
        keys: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>> {
        let keys: Vec<Vec<u8>> = keys.iter().map(|k| entry_key(endpoint_id, k)).collect();
        store.get_many(tree(space), &keys).await
    }

    pub(crate) async fn under<S: Store + ?Sized>(
        store: &S,
        space: HandlerSpace,
        endpoint_id: &str,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let scan = entry_key(endpoint_id, prefix);
        let after = after.map(|key| entry_key(endpoint_id, key));
        let rows = store
            .scan_prefix(tree(space), &scan, after.as_deref(), limit)
            .await?;
        Ok(super::keyed(endpoint_id, rows))
    }
}

/// Rows of `endpoint_id`'s space as the engine keeps them (`{endpointId}/{key}`) with their
/// keys as handlers name them; a key that is not UTF-8 (none is written) reads lossily.
pub(crate) fn keyed(endpoint_id: &str, rows: Vec<(Vec<u8>, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    let skip = endpoint_id.len() + 1;
    (rows.into_iter())
        .map(|(key, entry)| {
            let key = key.get(skip..).unwrap_or_default();
            (String::from_utf8_lossy(key).into_owned(), entry)
        })
        .collect()
}
