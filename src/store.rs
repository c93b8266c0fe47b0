//! The storage seam: a small ordered key-value interface with atomic multi-key batches.
//!
//! Every domain (catalog, receipts, payments, sandbox kv) talks to `Arc<dyn Store>`, never to sled
//! directly, so another engine can be added behind the same trait. Money and receipts rely on
//! [`Batch`]: all of its preconditions hold and all of its writes land, or nothing changes.
//!
//! # Layout
//! - `batch`: the atomic write batch with preconditions.
//! - `sled_store`: the embedded default engine.
//! - `typed`: JSON helpers over raw bytes.

mod batch;
mod sled_store;
mod typed;

pub use batch::{Batch, Condition, Write};
pub use sled_store::SledStore;
pub use typed::{get_json, put_json};

/// The named key spaces ("trees"). Each domain owns its trees; keeping the names in one place
/// keeps them from colliding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tree {
    /// Catalog endpoints by slug.
    Endpoints,
    /// Receipts by receipt id.
    Receipts,
    /// Service-wide metadata (seed markers, generated keys' fingerprints).
    Meta,
    /// Builders by id, and key-hash index entries.
    Builders,
    /// Claimed payment nonces (x402 replay protection).
    Nonces,
    /// Developer credit grants and balances.
    Credits,
    /// The revenue ledger and payout packets.
    Ledger,
    /// Per-endpoint handler key-value data (`ctx.kv`).
    HandlerKv,
    /// Per-endpoint handler files (`ctx.files`).
    HandlerFiles,
    /// Per-endpoint logs and invocation records.
    Logs,
    /// Builder-visible events.
    Events,
    /// Encrypted endpoint secrets.
    Secrets,
    /// Hosted-service quotes by quote id.
    Quotes,
}

impl Tree {
    /// Every tree, so engines can open them up front.
    pub const ALL: [Tree; 13] = [
        Tree::Endpoints,
        Tree::Receipts,
        Tree::Meta,
        Tree::Builders,
        Tree::Nonces,
        Tree::Credits,
        Tree::Ledger,
        Tree::HandlerKv,
        Tree::HandlerFiles,
        Tree::Logs,
        Tree::Events,
        Tree::Secrets,
        Tree::Quotes,
    ];

    /// The stable on-disk name. Never rename one: stored data is found by it.
    pub fn name(self) -> &'static str {
        match self {
            Tree::Endpoints => "endpoints",
            Tree::Receipts => "receipts",
            Tree::Meta => "meta",
            Tree::Builders => "builders",
            Tree::Nonces => "nonces",
            Tree::Credits => "credits",
            Tree::Ledger => "ledger",
            Tree::HandlerKv => "handler_kv",
            Tree::HandlerFiles => "handler_files",
            Tree::Logs => "logs",
            Tree::Events => "events",
            Tree::Secrets => "secrets",
            Tree::Quotes => "quotes",
        }
    }
}

/// A key and its value, as returned by scans.
pub type Entry = (Vec<u8>, Vec<u8>);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A batch precondition did not hold; nothing was written. Carries the index of the
    /// condition that failed so callers can say which (e.g. "nonce already used").
    #[error("batch precondition {0} failed")]
    ConditionFailed(usize),
    #[error("stored value is corrupt: {0}")]
    Corrupt(String),
    #[error("storage engine error: {0}")]
    Engine(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// An ordered key-value store with atomic batches. Implementations must be safe to share
/// across threads; calls are short and synchronous (the embedded engine never blocks long).
pub trait Store: Send + Sync + 'static {
    fn get(&self, tree: Tree, key: &[u8]) -> StoreResult<Option<Vec<u8>>>;
    fn put(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()>;
    /// Removes a key; returns whether it existed.
    fn delete(&self, tree: Tree, key: &[u8]) -> StoreResult<bool>;
    /// Entries whose key starts with `prefix`, in key order, strictly after `after` when given,
    /// at most `limit` of them.
    fn scan_prefix(
        &self,
        tree: Tree,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>>;
    /// Like `scan_prefix` but newest-first (descending key order), strictly before `before`.
    fn scan_prefix_rev(
        &self,
        tree: Tree,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>>;
    /// Applies every write of the batch atomically, only if every condition holds.
    fn apply(&self, batch: Batch) -> StoreResult<()>;
    /// Makes everything written so far durable.
    fn flush(&self) -> StoreResult<()>;
}
