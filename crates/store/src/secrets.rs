//! Endpoints' secrets: each one sealed by the secrets domain (the store never sees a value),
//! kept under `{endpointId}/{NAME}` (which the seal binds as associated data, so the key is
//! part of the record), written by batches' typed members
//! ([`Batch::put_secret`](crate::Batch::put_secret),
//! [`Batch::delete_secret`](crate::Batch::delete_secret), guarded by
//! [`Batch::require_secret`](crate::Batch::require_secret)); a deleted endpoint's go all at
//! once ([`EndpointSecrets::delete_secrets`]).
//!
//! [`kv`] is the shape any key-value engine keeps (sled's: the `secrets` tree's
//! `{endpointId}/{NAME}`, as every release has stored them); PostgreSQL keeps a table
//! (`toolhost_secrets`, migration 24) found by endpoint id and name.

use async_trait::async_trait;

use crate::StoreResult;

/// One sealed secret, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretRow {
    /// `{endpointId}/{NAME}` ([`secret_key`]).
    pub key: String,
    pub endpoint_id: String,
    pub name: String,
    pub entry: Vec<u8>,
}

impl SecretRow {
    pub fn new(endpoint_id: &str, name: &str, entry: Vec<u8>) -> Self {
        Self {
            key: secret_key(endpoint_id, name),
            endpoint_id: endpoint_id.to_owned(),
            name: name.to_owned(),
            entry,
        }
    }
}

/// Where secret `name` of `owner` (an endpoint's id; an earlier release's slug) is kept.
pub fn secret_key(owner: &str, name: &str) -> String {
    format!("{owner}/{name}")
}

/// Where secrets are read. Every engine implements it (the conformance suite's `secrets_*`
/// case).
#[async_trait]
pub trait EndpointSecrets {
    /// The secrets of `owner`, by name, at most `limit`: names and sealed entries.
    async fn secrets(&self, owner: &str, limit: usize) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// Every owner's secrets whose key sorts after `after` (from the first when `None`), in
    /// key order, at most `limit`: keys (`{owner}/{NAME}`) and sealed entries.
    async fn all_secrets(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// Removes every secret of `owner` (a deleted endpoint's); durable when it returns.
    async fn delete_secrets(&self, owner: &str) -> StoreResult<()>;
}

/// Secrets over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use crate::paging::delete_prefix;
    use crate::prefixed::Prefixed;
    use crate::{Store, StoreResult, Tree};

    pub(crate) const TREE: Tree = Tree::Secrets;

    /// Every secret, under its key.
    pub(crate) const ALL: Prefixed = Prefixed {
        tree: TREE,
        prefix: b"",
    };

    fn prefix(owner: &str) -> String {
        format!("{owner}/")
    }

    pub(crate) async fn of<S: Store + ?Sized>(
        store: &S,
        owner: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let prefix = prefix(owner);
        let place = Prefixed {
            tree: TREE,
            prefix: prefix.as_bytes(),
        };
        place.page(store, None, limit).await
    }

    pub(crate) async fn delete_all<S: Store + ?Sized>(store: &S, owner: &str) -> StoreResult<()> {
        delete_prefix(store, TREE, prefix(owner).as_bytes()).await?;
        Ok(())
    }
}
