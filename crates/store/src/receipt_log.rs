//! The receipt log's records as the store keeps them: the entries waiting to be appended
//! (*pending*, by name), the appended leaves (by index: the entry, its hash, and the name it is
//! found by), the tree's stored interior nodes (by level and index), and the log's own state
//! ([`LogState`]: its origin, its checkpoint, ...). The log's domain
//! (`toolhost::receipts::log`) builds the tree; this is where its rows live.
//!
//! A pending entry is written in the batch of the call that makes it (with its receipt) and
//! conditioned on ([`Batch::require_log_pending`](crate::Batch::require_log_pending)) by the
//! append that removes it and writes its leaf ([`Batch::put_log_leaf`](crate::Batch::put_log_leaf)),
//! in one batch with the log's new checkpoint. [`kv`] is the shape any key-value engine keeps
//! (sled's, the keys every release has written in the `receipt_log` tree: `pending/<name>`,
//! `entry/<index>`, `hash/<level><index>` and `leaf/<name>`, four keys a leaf); PostgreSQL keeps
//! a leaf as one row with its hash and name as columns (`toolhost_log_leaves`), and the pending
//! entries in a table of their own (`toolhost_log_pending`, both migration 9), so appending a
//! call's entry writes one row, not three keys and a delete in the shared key-value table.
//!
//! The tree's stored interior nodes (a node a level for every 256 nodes below it:
//! [`Batch::put_log_node`](crate::Batch::put_log_node)) and the log's state (one record a
//! [`LogState`], conditioned on with
//! [`Batch::require_log_state`](crate::Batch::require_log_state): an append is a
//! compare-and-swap of the checkpoint) are kept by sled as `hash/<level><index>` and under the
//! state's name in the same tree; PostgreSQL keeps them in tables of their own
//! (`toolhost_log_nodes`, with the level and the index as columns, and `toolhost_log_state`,
//! migration 27).

use async_trait::async_trait;

use crate::StoreResult;

/// A record of the log's own state, one of each for the whole log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogState {
    /// The log's name (its checkpoints' first line), fixed when the log is created.
    Origin,
    /// The latest signed checkpoint (the note's text): every append replaces it, conditioned
    /// on the one it built on.
    Checkpoint,
    /// While present, the receipts stored before the log existed are being made pending, in
    /// id order: the last receipt id done.
    Backfill,
    /// When a node that lost an append to another said so (the time, in ms): every append is
    /// conditioned on it, so a node that keeps winning notices and lets the other go first.
    Waiting,
}

impl LogState {
    /// Its stable name: the key sled keeps it under, the row PostgreSQL keeps it in. Never
    /// rename one: stored data is found by it.
    pub fn name(self) -> &'static str {
        match self {
            LogState::Origin => "origin",
            LogState::Checkpoint => "checkpoint",
            LogState::Backfill => "backfill",
            LogState::Waiting => "waiting",
        }
    }
}

/// One appended leaf.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafRow {
    /// Its index in the tree.
    pub leaf: u64,
    /// The name its place is asked by: a receipt id (every version of a receipt, the latest
    /// found), or a refund's name.
    pub name: String,
    /// Its hash in the tree (RFC 6962's leaf hash of the entry).
    pub hash: [u8; 32],
    /// The entry: the canonical JSON of its record.
    pub entry: Vec<u8>,
}

/// Where the receipt log's records are read. Every engine implements it (the conformance
/// suite's `receipt_log_*` case).
#[async_trait]
pub trait ReceiptLogRecords {
    /// Pending entries whose name sorts after `after` (from the first when `None`), in name
    /// order, at most `limit`: names and entries.
    async fn log_pending(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
    /// The entry pending under `name`, if it is still pending.
    async fn log_pending_entry(&self, name: &str) -> StoreResult<Option<Vec<u8>>>;
    /// The index of the latest leaf appended under each of `names`, in their order (one read
    /// for a page of names: the backfill asks it of every receipt it reads).
    async fn log_leaves(&self, names: &[&str]) -> StoreResult<Vec<Option<u64>>>;
    /// The entries of leaves `first..first + count` that are stored, in index order, with
    /// their indexes (a gap is the caller's to notice).
    async fn log_entries(&self, first: u64, count: u64) -> StoreResult<Vec<(u64, Vec<u8>)>>;
    /// The stored nodes `first..first + count` of `level` (0: the leaves' hashes) that are
    /// there, in index order, with their indexes.
    async fn log_nodes(
        &self,
        level: u8,
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>>;
    /// The log's `state` record, if there is one.
    async fn log_state(&self, state: LogState) -> StoreResult<Option<Vec<u8>>>;
}

/// The receipt log over any [`Store`](crate::Store)'s trees, for engines without a shape of
/// their own.
pub mod kv {
    use super::{LeafRow, LogState};
    use crate::prefixed::Prefixed;
    use crate::{KeyWrite, Store, StoreResult, Tree};

    /// The entries pending, by name.
    pub(crate) const PENDING: Prefixed = Prefixed {
        tree: Tree::ReceiptLog,
        prefix: b"pending/",
    };
    const ENTRY: &[u8] = b"entry/";
    const HASH: &[u8] = b"hash/";
    const LEAF: &[u8] = b"leaf/";

    fn leaf_key(name: &str) -> Vec<u8> {
        [LEAF, name.as_bytes()].concat()
    }

    fn indexed(prefix: &[u8], index: u64) -> Vec<u8> {
        [prefix, &index.to_be_bytes()].concat()
    }

    fn level_prefix(level: u8) -> Vec<u8> {
        [HASH, &[level]].concat()
    }

    /// Where the stored node `index` of `level` is kept: `hash/<level><index>` (level 0: a
    /// leaf's hash).
    pub(crate) fn node_key(level: u8, index: u64) -> Vec<u8> {
        indexed(&level_prefix(level), index)
    }

    /// Where a state record is kept: under its name.
    pub(crate) fn state_key(state: LogState) -> Vec<u8> {
        state.name().as_bytes().to_vec()
    }

    pub(crate) async fn state<S: Store + ?Sized>(
        store: &S,
        state: LogState,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(Tree::ReceiptLog, &state_key(state)).await
    }

    /// A leaf's keys: its entry, its hash and the index under its name.
    pub(crate) fn put_leaf(leaf: LeafRow) -> [KeyWrite; 3] {
        let put = |key, value| KeyWrite {
            tree: Tree::ReceiptLog,
            key,
            value: Some(value),
        };
        [
            put(indexed(ENTRY, leaf.leaf), leaf.entry),
            put(node_key(0, leaf.leaf), leaf.hash.to_vec()),
            put(leaf_key(&leaf.name), leaf.leaf.to_be_bytes().to_vec()),
        ]
    }

    pub(crate) async fn pending_entry<S: Store + ?Sized>(
        store: &S,
        name: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        store.get(PENDING.tree, &PENDING.key(name)).await
    }

    pub(crate) async fn leaves<S: Store + ?Sized>(
        store: &S,
        names: &[&str],
    ) -> StoreResult<Vec<Option<u64>>> {
        let keys: Vec<Vec<u8>> = names.iter().map(|name| leaf_key(name)).collect();
        let indexes = store.get_many(Tree::ReceiptLog, &keys).await?;
        (indexes.into_iter().zip(names))
            .map(|(index, name)| {
                let Some(index) = index else { return Ok(None) };
                let index = <[u8; 8]>::try_from(index.as_slice()).map_err(|_| {
                    crate::StoreError::Corrupt(format!(
                        "the log's leaf index of {name:?} is not 8 bytes"
                    ))
                })?;
                Ok(Some(u64::from_be_bytes(index)))
            })
            .collect()
    }

    pub(crate) async fn entries<S: Store + ?Sized>(
        store: &S,
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        range(store, ENTRY, first, count).await
    }

    pub(crate) async fn nodes<S: Store + ?Sized>(
        store: &S,
        level: u8,
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        range(store, &level_prefix(level), first, count).await
    }

    /// The values of keys `prefix` + `first..first + count` (big-endian) that are there.
    async fn range<S: Store + ?Sized>(
        store: &S,
        prefix: &[u8],
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let after = first.checked_sub(1).map(|before| indexed(prefix, before));
        let limit = usize::try_from(count).unwrap_or(usize::MAX);
        let rows = (store.scan_prefix(Tree::ReceiptLog, prefix, after.as_deref(), limit)).await?;
        Ok(rows
            .into_iter()
            .filter_map(|(key, value)| {
                let index = <[u8; 8]>::try_from(key.strip_prefix(prefix)?).ok()?;
                Some((u64::from_be_bytes(index), value))
            })
            .filter(|(index, _)| *index < first.saturating_add(count))
            .collect())
    }
}
