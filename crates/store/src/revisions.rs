//! Endpoints' revisions: every deploy of an endpoint, numbered, immutable once written (the
//! entry is the revision's JSON, as the catalog reads it back).
//!
//! A revision is written in the batch that changes its endpoint
//! ([`Batch::put_revision`](crate::Batch::put_revision)), and one pushed out of the kept
//! window leaves in the same way ([`Batch::delete_revision`](crate::Batch::delete_revision));
//! a deleted endpoint's go all at once ([`EndpointRevisions::delete_revisions`]). [`kv`] is the
//! shape any key-value engine keeps (sled's: the `revisions` tree's
//! `{endpointId}/{number:020}`, as every release has stored it); PostgreSQL keeps a table
//! (`toolhost_revisions`, migration 18) found by endpoint id and number.

use async_trait::async_trait;

use crate::StoreResult;

/// One revision of an endpoint, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RevisionRow {
    /// `{endpointId}/{number:020}`: endpoint ids have no `/`, and numbers sort as written.
    pub key: String,
    pub endpoint_id: String,
    pub number: i64,
    pub entry: Vec<u8>,
}

impl RevisionRow {
    pub fn new(endpoint_id: &str, number: u64, entry: Vec<u8>) -> Self {
        Self {
            key: revision_key(endpoint_id, number),
            endpoint_id: endpoint_id.to_owned(),
            number: clamp(number),
            entry,
        }
    }
}

/// Where revision `number` of `endpoint_id` is kept.
pub fn revision_key(endpoint_id: &str, number: u64) -> String {
    format!("{endpoint_id}/{number:020}")
}

/// A revision number as a column holds it (no endpoint comes near 2^63 deploys).
fn clamp(number: u64) -> i64 {
    i64::try_from(number).unwrap_or(i64::MAX)
}

/// Where revisions are read. Every engine implements it (the conformance suite's
/// `revisions_*` case).
#[async_trait]
pub trait EndpointRevisions {
    /// Revision `number` of `endpoint_id`, if it is kept.
    async fn revision(&self, endpoint_id: &str, number: u64) -> StoreResult<Option<Vec<u8>>>;
    /// The newest `limit` revisions of `endpoint_id`, newest first: numbers and entries.
    async fn newest_revisions(
        &self,
        endpoint_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>>;
    /// Removes every revision of `endpoint_id` (a deleted endpoint's); durable when it returns.
    async fn delete_revisions(&self, endpoint_id: &str) -> StoreResult<()>;
}

/// Revisions over any [`Store`](crate::Store)'s trees, for engines without a shape of their
/// own.
pub mod kv {
    use super::revision_key;
    use crate::{Batch, Store, StoreError, StoreResult, Tree};

    pub(crate) const TREE: Tree = Tree::Revisions;

    pub(crate) fn key(endpoint_id: &str, number: u64) -> Vec<u8> {
        revision_key(endpoint_id, number).into_bytes()
    }

    fn prefix(endpoint_id: &str) -> Vec<u8> {
        format!("{endpoint_id}/").into_bytes()
    }

    /// The number a key of `endpoint_id`'s ends in.
    fn number(key: &[u8], prefix: &[u8]) -> StoreResult<u64> {
        let digits = key.strip_prefix(prefix).unwrap_or(key);
        (std::str::from_utf8(digits).ok())
            .and_then(|digits| digits.parse().ok())
            .ok_or_else(|| StoreError::Corrupt("a revision's key names no number".into()))
    }

    pub(crate) async fn newest<S: Store + ?Sized>(
        store: &S,
        endpoint_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        let prefix = prefix(endpoint_id);
        let rows = store.scan_prefix_rev(TREE, &prefix, None, limit).await?;
        (rows.into_iter())
            .map(|(key, entry)| Ok((number(&key, &prefix)?, entry)))
            .collect()
    }

    pub(crate) async fn delete_all<S: Store + ?Sized>(
        store: &S,
        endpoint_id: &str,
    ) -> StoreResult<()> {
        let prefix = prefix(endpoint_id);
        loop {
            let page = store.scan_prefix(TREE, &prefix, None, 256).await?;
            if page.is_empty() {
                return Ok(());
            }
            let batch = (page.into_iter()).fold(Batch::new(), |b, (k, _)| b.delete(TREE, k));
            store.apply(batch).await?;
        }
    }
}
