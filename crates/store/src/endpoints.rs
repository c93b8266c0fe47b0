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
//!
//! Two more records follow an endpoint's delete, written in its batch: the reservation of the
//! slug it freed for its former owner (by slug, conditioned on by the create that claims the
//! slug: [`Batch::require_slug_reservation`](crate::Batch::require_slug_reservation)), and the
//! wipe its data is owed (by endpoint id, removed once the wipe is done). sled keeps them in the
//! `meta` tree (`slug-reserved/{slug}`, `wipe-owed/{endpointId}`, as every release has);
//! PostgreSQL in `toolhost_slug_reservations` and `toolhost_owed_wipes` (migration 28).

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
    /// The reservation of a deleted endpoint's `slug`, if one is kept.
    async fn slug_reservation(&self, slug: &str) -> StoreResult<Option<Vec<u8>>>;
    /// Reservations whose slug sorts after `after` (from the first when `None`), in slug
    /// order, at most `limit`: slugs and reservations.
    async fn slug_reservations(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// The ids of deleted endpoints whose data is owed a wipe, in id order, at most `limit`.
    async fn owed_wipes(&self, limit: usize) -> StoreResult<Vec<String>>;
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

    /// Deleted slugs' reservations, by slug.
    pub(crate) const RESERVATIONS: Prefixed = Prefixed {
        tree: Tree::Meta,
        prefix: b"slug-reserved/",
    };

    /// Wipes owed, by deleted endpoint id (the value is `1`).
    pub(crate) const OWED_WIPES: Prefixed = Prefixed {
        tree: Tree::Meta,
        prefix: b"wipe-owed/",
    };
}
