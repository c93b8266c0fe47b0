//! Endpoints' records: each endpoint as it serves (the entry is its JSON, as the catalog reads
//! it back), under its slug, with its id and its owning builder beside it.
//!
//! A record is written only in batches, on condition it is as read
//! ([`Batch::require_endpoint`](crate::Batch::require_endpoint): `None` to claim a free slug,
//! the bytes read to change or delete it), so of two writers on any nodes one wins. Every
//! change is published on the change feed as the `endpoints` tree's slug, so each node sharing
//! the store reloads that endpoint. [`kv`] is the shape any key-value engine keeps (sled's: the
//! `endpoints` tree, keyed by slug, as every release has stored it); PostgreSQL keeps a table
//! (`toolhost_endpoints`, migration 20) with the id and the owning builder as columns.

use async_trait::async_trait;

use crate::StoreResult;

/// An endpoint's record, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointRow {
    pub slug: String,
    pub endpoint_id: String,
    /// The owning builder's id; `None` for the admin's and the seeded catalog's.
    pub builder: Option<String>,
    pub entry: Vec<u8>,
}

/// Where endpoints' records are read. Every engine implements it (the conformance suite's
/// `endpoints_*` case).
#[async_trait]
pub trait EndpointRecords {
    /// The record under `slug`, if the slug is taken.
    async fn endpoint(&self, slug: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Records whose slug sorts after `after` (from the first when `None`), in slug order, at
    /// most `limit`: slugs and records.
    async fn endpoints(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
}

/// Endpoints' records over any [`Store`](crate::Store)'s trees, for engines without a shape
/// of their own.
pub mod kv {
    use crate::prefixed::Prefixed;
    use crate::Tree;

    pub(crate) const PLACE: Prefixed = Prefixed {
        tree: Tree::Endpoints,
        prefix: b"",
    };
}
