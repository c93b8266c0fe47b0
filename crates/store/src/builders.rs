//! Builders and their keys: each builder's record (the entry is its JSON, as the builders
//! domain reads it back) under its id, and each key it has held under the key's SHA-256 (hex),
//! naming the builder and, once a rotation replaced it, when it was revoked.
//!
//! Both are written only in batches, on condition they are as read
//! ([`Batch::require_builder`](crate::Batch::require_builder),
//! [`Batch::require_builder_key`](crate::Batch::require_builder_key): `None` to claim a new
//! one), so a key is issued once and of two rotations one wins. A builder's request is
//! authenticated by its key's digest in one read of both ([`BuilderRecords::builder_by_key`]).
//! [`kv`] is the shape any key-value engine keeps (sled's: the `builders` tree's
//! `builder/{builderId}` and `key/{sha256}`, as every release has stored them); PostgreSQL keeps
//! `toolhost_builders` and `toolhost_builder_keys` (migration 21), a key's builder and whether
//! it is revoked as columns.

use async_trait::async_trait;

use crate::StoreResult;

/// A builder's record, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuilderRow {
    pub builder_id: String,
    pub entry: Vec<u8>,
}

/// One key a builder holds or held, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuilderKeyRow {
    /// The key's SHA-256, lowercase hex (the key itself is never stored).
    pub key_sha256: String,
    pub builder_id: String,
    /// Replaced by a rotation: a caller presenting it is told it was revoked.
    pub revoked: bool,
    pub entry: Vec<u8>,
}

/// A key's index entry and the record of the builder it names (`None` if there is none).
pub type KeyAndBuilder = (Vec<u8>, Option<Vec<u8>>);

/// Where builders and keys are read. Every engine implements it (the conformance suite's
/// `builders_*` case).
#[async_trait]
pub trait BuilderRecords {
    /// The record of builder `builder_id`, if there is one.
    async fn builder(&self, builder_id: &str) -> StoreResult<Option<Vec<u8>>>;
    /// The key entry under `key_sha256`, if that key was ever issued.
    async fn builder_key(&self, key_sha256: &str) -> StoreResult<Option<Vec<u8>>>;
    /// The key entry under `key_sha256` and the record of the builder it names, in one read:
    /// what authenticating a request needs.
    async fn builder_by_key(&self, key_sha256: &str) -> StoreResult<Option<KeyAndBuilder>>;
}

/// Builders and keys over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub mod kv {
    use serde::Deserialize;

    use super::KeyAndBuilder;
    use crate::prefixed::Prefixed;
    use crate::{Store, StoreError, StoreResult, Tree};

    pub(crate) const BUILDERS: Prefixed = Prefixed {
        tree: Tree::Builders,
        prefix: b"builder/",
    };
    pub(crate) const KEYS: Prefixed = Prefixed {
        tree: Tree::Builders,
        prefix: b"key/",
    };

    /// The one field of a key's entry this shape reads: the builder it names.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Names {
        builder_id: String,
    }

    pub(crate) async fn by_key<S: Store + ?Sized>(
        store: &S,
        key_sha256: &str,
    ) -> StoreResult<Option<KeyAndBuilder>> {
        let Some(entry) = store.get(KEYS.tree, &KEYS.key(key_sha256)).await? else {
            return Ok(None);
        };
        let names: Names = serde_json::from_slice(&entry)
            .map_err(|e| StoreError::Corrupt(format!("builder key entry: {e}")))?;
        let builder = store
            .get(BUILDERS.tree, &BUILDERS.key(&names.builder_id))
            .await?;
        Ok(Some((entry, builder)))
    }
}
