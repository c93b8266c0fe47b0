//! Rollout tallies: how each node counted each revision of an endpoint in a gradual rollout
//! (the entry is the node's whole count as JSON, as the rollout domain reads it back), one
//! record per endpoint and node, replaced whole each recorder round
//! ([`Batch::put_rollout_tally`](crate::Batch::put_rollout_tally)); an endpoint's go all at
//! once when its rollout ends or it is deleted ([`RolloutTallies::delete_rollout_tallies`]).
//!
//! [`kv`] is the shape any key-value engine keeps (sled's: the `logs` tree's
//! `rollout/{endpointId}/{nodeId}`, as every release has stored them); PostgreSQL keeps a
//! table (`toolhost_rollout_tallies`, migration 25) with the rollout each count names as a
//! column, so a reader gets only the current rollout's counts.

use async_trait::async_trait;

use crate::StoreResult;

/// One node's count of an endpoint's rollout, as a batch writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RolloutTallyRow {
    /// `{endpointId}/{nodeId}` ([`tally_key`]).
    pub key: String,
    pub endpoint_id: String,
    pub node_id: String,
    /// The rollout counted.
    pub rollout: String,
    pub entry: Vec<u8>,
}

impl RolloutTallyRow {
    pub fn new(endpoint_id: &str, node_id: &str, rollout: &str, entry: Vec<u8>) -> Self {
        Self {
            key: tally_key(endpoint_id, node_id),
            endpoint_id: endpoint_id.to_owned(),
            node_id: node_id.to_owned(),
            rollout: rollout.to_owned(),
            entry,
        }
    }
}

/// Where `node_id`'s count of `endpoint_id`'s rollout is kept.
pub fn tally_key(endpoint_id: &str, node_id: &str) -> String {
    format!("{endpoint_id}/{node_id}")
}

/// Where rollout tallies are read. Every engine implements it (the conformance suite's
/// `rollout_tallies_*` case).
#[async_trait]
pub trait RolloutTallies {
    /// The counts of `endpoint_id`'s nodes, at most `limit`, in node order: node ids and
    /// entries. An engine may leave out counts of a rollout other than `rollout` (PostgreSQL
    /// does); a reader still checks each entry's own.
    async fn rollout_tallies(
        &self,
        endpoint_id: &str,
        rollout: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// Removes every node's count of `endpoint_id`; durable when it returns.
    async fn delete_rollout_tallies(&self, endpoint_id: &str) -> StoreResult<()>;
}

/// Rollout tallies over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub mod kv {
    use crate::paging::delete_prefix;
    use crate::prefixed::Prefixed;
    use crate::{Store, StoreResult, Tree};

    /// Every count, under `rollout/` and its key.
    pub(crate) const PLACE: Prefixed = Prefixed {
        tree: Tree::Logs,
        prefix: b"rollout/",
    };

    fn prefix(endpoint_id: &str) -> String {
        format!("rollout/{endpoint_id}/")
    }

    pub(crate) async fn of<S: Store + ?Sized>(
        store: &S,
        endpoint_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let prefix = prefix(endpoint_id);
        let place = Prefixed {
            tree: PLACE.tree,
            prefix: prefix.as_bytes(),
        };
        place.page(store, None, limit).await
    }

    pub(crate) async fn delete_all<S: Store + ?Sized>(
        store: &S,
        endpoint_id: &str,
    ) -> StoreResult<()> {
        delete_prefix(store, PLACE.tree, prefix(endpoint_id).as_bytes()).await?;
        Ok(())
    }
}
