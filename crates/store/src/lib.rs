//! The storage seam: a small ordered key-value interface with atomic multi-key batches.
//!
//! Every domain (catalog, receipts, payments, sandbox kv) talks to `Arc<dyn Store>`, never to an
//! engine directly: sled embedded in one process (the default), or PostgreSQL shared by many
//! nodes. Money and receipts rely on [`Batch`]: all of its preconditions hold and all of its
//! writes land, or nothing changes.
//!
//! # Durability
//! Every write (`put`, `delete`, `apply`) returns only once it is durable: a 200 that reports a
//! receipt, a sale or a spent nonce is never answered before that record would survive a crash.
//! Engines keep that cheap by group commit: concurrent writers share one flush.
//!
//! One kind of write may skip the wait: a write whose loss in a crash loses nothing promised,
//! because nothing that depends on it can be durable before it is ([`Store::apply_unsynced`]).
//! A payment's nonce claim is the one: the call's settlement, the only thing that makes the
//! claim matter, is a durable write after it, and both engines make a write durable with
//! everything written before it (sled's one log, PostgreSQL's WAL).
//!
//! # Layout
//! - `batch`: the atomic write batch with preconditions.
//! - `sled_store`: the embedded default engine and its group commit.
//! - `postgres`: the shared engine for several nodes, with its polled change feed.
//! - `keys`: prefix-range arithmetic both engines scan with.
//! - `prefixed`: records a key-value engine keeps one a key, under a prefix and their id.
//! - `typed`: JSON helpers over raw bytes.
//! - `paging`: cursor pages over a tree's keys.
//! - `keyring`: the service's own keys, per data dir or shared by a cluster.
//! - `logs`, `events`, `quotes`, `sales`, `receipts`, `packets`, `paid_out`, `pending_settlements`,
//!   `nonces`, `payment_ids`, `refunds`, `refund_claims`, `debts`, `credits`, `receipt_log`,
//!   `endpoints`, `revisions`, `payout_settings`, `builders`, `handler_data`, `secrets`,
//!   `rollout_tallies`:
//!   endpoint logs,
//!   builder events, hosted-service quotes, the sale ledger, receipts (and free receipts'
//!   proofs), payout packets and the
//!   sales they paid, builders' payout settings, settlements not yet seen mined, payment nonces,
//!   payment identifiers, refunds and on-chain refunds in flight, builders' debts and payout
//!   versions, developer credits, the receipt log's records, endpoints' records and
//!   revisions, builders and their keys, handlers' kv entries and files with their usage, and
//!   endpoints' sealed secrets and rollout tallies:
//!   the domains the store keeps in a shape of their own (tables on PostgreSQL; trees on
//!   sled).
//!   All but logs, events and quotes are written by typed members of batches.
//!
//! The suite both engines must pass is `tests/conformance.rs`; throwaway PostgreSQL clusters
//! and the stores of tests that run on both engines are the test kit's (`toolhost-testkit`),
//! so none of it is in the shipped binary.

mod batch;
pub mod builders;
pub mod credits;
pub mod debts;
pub mod endpoints;
pub mod events;
pub mod handler_data;
pub mod keyring;
mod keys;
pub mod logs;
pub mod nonces;
pub mod packets;
pub mod paging;
pub mod paid_out;
pub mod payment_ids;
pub mod payout_settings;
pub mod pending_settlements;
mod postgres;
mod prefixed;
pub mod quotes;
pub mod receipt_log;
pub mod receipts;
pub mod refund_claims;
pub mod refunds;
pub mod revisions;
pub mod rollout_tallies;
pub mod sales;
pub mod secrets;
mod sled_store;
mod typed;

use std::future::Future;
use std::pin::Pin;

use axum::http::StatusCode;

use toolhost_values::error::{ApiError, ErrorCode};

pub use batch::{Batch, Condition, Write};
pub(crate) use batch::{KeyBatch, KeyCondition, KeyWrite};
pub use builders::{BuilderKeyRow, BuilderRecords, BuilderRow};
pub use credits::{CreditHoldRow, CreditListing, CreditRecords, CreditRow};
pub use debts::{BuilderDebts, DebtRow};
pub use endpoints::{EndpointRecords, EndpointRow};
pub use events::{BuilderEvents, EventPage, EventQuery, EventRow};
pub use handler_data::{
    BuilderUsageRow, HandlerData, HandlerEntryRow, HandlerSpace, HandlerUsageRow,
};
pub use logs::{EndpointLogs, LogRow};
pub use nonces::{NonceClaims, NonceRow, NonceState};
pub use packets::{PacketRow, PayoutPackets};
pub use paid_out::{PaidOutMarks, PaidOutRow};
pub use payment_ids::{PaymentIdRow, PaymentIds};
pub use payout_settings::{BuilderPayoutSettings, PayoutSettingsRow};
pub use pending_settlements::PendingSettlements;
pub use postgres::{PgOptions, PgStore};
pub use quotes::{HostedQuotes, QuoteRow};
pub use receipt_log::{LeafRow, LogState, ReceiptLogRecords};
pub use receipts::{ReceiptRecords, ReceiptRow};
pub use refund_claims::RefundClaims;
pub use refunds::{RefundRecords, RefundRow};
pub use revisions::{EndpointRevisions, RevisionRow};
pub use rollout_tallies::{RolloutTallies, RolloutTallyRow};
pub use sales::{SaleRow, SaleSum, SalesLedger};
pub use secrets::{EndpointSecrets, SecretRow};
pub use sled_store::{SledStore, DEFAULT_EMBEDDED_CACHE_BYTES};
pub use typed::{get_json, put_json};

/// The named key spaces ("trees"). Each domain owns its trees; keeping the names in one place
/// keeps them from colliding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tree {
    /// Catalog endpoints by slug: kept by a key-value engine ([`endpoints::kv`]; PostgreSQL
    /// keeps them in a table of their own), no domain writes it by key. Its changes are the
    /// change feed's, on every engine.
    Endpoints,
    /// Receipts by receipt id.
    Receipts,
    /// Service-wide metadata (the service's keys, start-up markers); on a key-value engine
    /// also records of the domains' kept there (deleted slugs' reservations and owed wipes:
    /// [`endpoints::kv`], handlers' usage, endpoint logs' counts, ...; PostgreSQL keeps those
    /// in tables of their own).
    Meta,
    /// Builders by id, and key-hash index entries: kept by a key-value engine
    /// ([`builders::kv`]; PostgreSQL keeps them in tables of their own).
    Builders,
    /// Claimed payment nonces (x402 replay protection).
    Nonces,
    /// The key-value shape's index of the open ones among `nonces` (claimed, settling, legacy),
    /// kept by the store with them ([`nonces::kv`]); no domain writes it.
    OpenNonces,
    /// Developer credit grants and balances.
    Credits,
    /// The revenue ledger: kept by a key-value engine for the typed records it holds there
    /// (sales, payout packets, refunds, debts, payout settings, ...); no domain writes it by key.
    Ledger,
    /// Per-endpoint handler key-value data (`ctx.kv`): kept by a key-value engine
    /// ([`handler_data::kv`]; PostgreSQL keeps them in a table of their own).
    HandlerKv,
    /// Per-endpoint handler files (`ctx.files`), kept as `HandlerKv` is.
    HandlerFiles,
    /// Per-endpoint logs and invocation records.
    Logs,
    /// Builder-visible events.
    Events,
    /// Encrypted endpoint secrets.
    Secrets,
    /// Hosted-service quotes by quote id.
    Quotes,
    /// x402 `payment-identifier` ids (by payer and id): the first answer of a paid call. Kept
    /// by a key-value engine ([`payment_ids::kv`]; PostgreSQL keeps them in a table of their
    /// own); no domain writes it by key.
    PaymentIds,
    /// Endpoint revisions by endpoint id and number (every deploy, immutable): kept by a
    /// key-value engine ([`revisions::kv`]; PostgreSQL keeps them in a table of their own).
    Revisions,
    /// The receipt log: its entries waiting to be appended, its leaves, its Merkle tree's
    /// stored interior nodes and its state (its origin, its signed checkpoint, ...): kept by a
    /// key-value engine ([`receipt_log::kv`]; PostgreSQL keeps them in tables of their own); no
    /// domain writes it by key.
    ReceiptLog,
    /// Free calls' receipts' proofs by receipt id: each one's place in the signed batch of
    /// receipts it was stored with (free receipts are not in the receipt log). Kept by a
    /// key-value engine ([`receipts::kv`]; PostgreSQL keeps them in a table of their own); no
    /// domain writes it by key.
    ReceiptProofs,
}

impl Tree {
    /// Every tree, so engines can open them up front.
    pub const ALL: [Tree; 18] = [
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
        Tree::PaymentIds,
        Tree::Revisions,
        Tree::ReceiptLog,
        Tree::ReceiptProofs,
        Tree::OpenNonces,
    ];

    /// Whether nodes cache this tree in memory, so its writes are published as [`Change`]s.
    pub fn is_watched(self) -> bool {
        matches!(self, Tree::Endpoints)
    }

    /// The tree of a stable on-disk name ([`Tree::name`]).
    pub fn named(name: &str) -> Option<Tree> {
        Tree::ALL.into_iter().find(|tree| tree.name() == name)
    }

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
            Tree::PaymentIds => "payment_ids",
            Tree::Revisions => "revisions",
            Tree::ReceiptLog => "receipt_log",
            Tree::ReceiptProofs => "receipt_proofs",
            Tree::OpenNonces => "open_nonces",
        }
    }
}

/// How many keys a caller of [`Store::get_many`] asks for at once, reading a long list: one
/// statement's worth on PostgreSQL, a bounded answer in memory.
pub const GET_MANY_KEYS: usize = 512;

/// A key and its value, as returned by scans.
pub type Entry = (Vec<u8>, Vec<u8>);

/// A committed write to a [watched](Tree::is_watched) tree, by this node or another: nodes drop
/// what they cache of `key` and read it again. An empty `key` means changes to the tree were
/// missed (a node fell behind the feed's retention): reload everything cached from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub tree: Tree,
    pub key: Vec<u8>,
}

#[derive(Clone, Debug, thiserror::Error)]
pub enum StoreError {
    /// A batch precondition did not hold; nothing was written. Carries the index of the
    /// condition that failed so callers can say which (e.g. "nonce already used").
    #[error("batch precondition {0} failed")]
    ConditionFailed(usize),
    #[error("stored value is corrupt: {0}")]
    Corrupt(String),
    #[error("storage engine error: {0}")]
    Engine(String),
    /// The engine cannot be reached (database down, connections exhausted). Nothing was written;
    /// the caller may retry. Answered 503 `store_unavailable`.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The engine went away while committing: the write may or may not have been applied.
    /// Also answered 503 `store_unavailable`, saying so; conditions (nonce claims, receipt ids)
    /// keep a retry from applying a change twice.
    #[error("store unavailable while committing; the write may or may not be applied: {0}")]
    InDoubt(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// What [`Store::snapshot`] gives each entry to: its tree, key and value.
pub type Visit<'a> = dyn FnMut(Tree, &[u8], &[u8]) -> StoreResult<()> + 'a;

/// A write applied and visible to readers; the future resolves once it is durable (see
/// [`Store::apply_staged`]).
pub type Durable<'a> = Pin<Box<dyn Future<Output = StoreResult<()>> + Send + 'a>>;

/// An ordered key-value store with atomic batches, shared across tasks and threads, that also
/// keeps the records of domains stored in their own shape (its supertraits: [`EndpointLogs`],
/// [`BuilderEvents`], [`HostedQuotes`], [`SalesLedger`], [`ReceiptRecords`], [`PayoutPackets`],
/// [`PaidOutMarks`], [`PendingSettlements`], [`NonceClaims`], [`PaymentIds`],
/// [`RefundRecords`], [`RefundClaims`], [`BuilderDebts`], [`CreditRecords`],
/// [`ReceiptLogRecords`], [`EndpointRecords`], [`EndpointRevisions`],
/// [`BuilderPayoutSettings`], [`BuilderRecords`], [`HandlerData`], [`EndpointSecrets`],
/// [`RolloutTallies`]).
/// Every write is durable when it returns (see the module docs).
#[async_trait::async_trait]
pub trait Store:
    EndpointLogs
    + BuilderEvents
    + HostedQuotes
    + SalesLedger
    + ReceiptRecords
    + PayoutPackets
    + PaidOutMarks
    + PendingSettlements
    + NonceClaims
    + PaymentIds
    + RefundRecords
    + RefundClaims
    + BuilderDebts
    + CreditRecords
    + ReceiptLogRecords
    + EndpointRecords
    + EndpointRevisions
    + BuilderPayoutSettings
    + BuilderRecords
    + HandlerData
    + EndpointSecrets
    + RolloutTallies
    + Send
    + Sync
    + 'static
{
    async fn get(&self, tree: Tree, key: &[u8]) -> StoreResult<Option<Vec<u8>>>;
    /// The values of `keys` (each `None` if absent), in their order: one read for many keys
    /// where the engine can (PostgreSQL: one statement, not a round trip per key). Callers
    /// bound how many keys they ask for at once ([`GET_MANY_KEYS`] is a good page).
    async fn get_many(&self, tree: Tree, keys: &[Vec<u8>]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        let mut values = Vec::with_capacity(keys.len());
        for key in keys {
            values.push(self.get(tree, key).await?);
        }
        Ok(values)
    }
    async fn put(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()>;
    /// Removes a key; returns whether it existed.
    async fn delete(&self, tree: Tree, key: &[u8]) -> StoreResult<bool>;
    /// Entries whose key starts with `prefix`, in key order, strictly after `after` when given,
    /// at most `limit` of them.
    async fn scan_prefix(
        &self,
        tree: Tree,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>>;
    /// Like `scan_prefix` but newest-first (descending key order), strictly before `before`.
    async fn scan_prefix_rev(
        &self,
        tree: Tree,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>>;
    /// Applies every write of the batch atomically, only if every condition holds.
    async fn apply(&self, batch: Batch) -> StoreResult<()>;
    /// [`Store::apply`] in two steps: returns once the batch is applied (all of it or none,
    /// visible to readers), with a future that resolves when it is durable; the write counts
    /// as done only then. A caller that queues its own writers (one endpoint's kv commits) lets
    /// the next one go while this one flushes, so queued writes still share a flush. Engines
    /// whose commit is the flush (PostgreSQL) answer once durable, with a ready future.
    async fn apply_staged(&self, batch: Batch) -> StoreResult<Durable<'_>> {
        self.apply(batch).await?;
        Ok(Box::pin(std::future::ready(Ok(()))))
    }
    /// [`Store::apply`] without waiting until the batch is durable: it is applied (all of it
    /// or none) and visible to every node sharing the store when this returns, and durable once
    /// any later write is (each engine makes a write durable with everything written before it:
    /// sled's one log, PostgreSQL's WAL) or the engine's background flush comes (sled's own
    /// within half a second, PostgreSQL's WAL writer within a fraction of a second); nothing
    /// flushes for it alone, since nothing waits for it. A crash before then loses
    /// it, so it is only for writes that promise nothing by themselves until a later durable
    /// write depends on them: a payment's nonce claim, which a settlement then replaces. A batch
    /// that writes a watched tree is applied durably, as [`Store::apply`] (its change is
    /// published once durable).
    async fn apply_unsynced(&self, batch: Batch) -> StoreResult<()> {
        self.apply(batch).await
    }
    /// Committed writes to watched trees, from every node sharing the store (a single-node engine
    /// reports its own). A receiver that lags behind gets `Lagged` and must reload what it caches.
    fn changes(&self) -> tokio::sync::broadcast::Receiver<Change>;
    /// Gives `visit` every entry of every tree as of one moment, while the store keeps serving
    /// (a backup of the embedded store). Blocking: call it off the async runtime. `None` for an
    /// engine that is backed up with its own tools (PostgreSQL: `pg_dump`).
    fn snapshot(&self, _visit: &mut Visit<'_>) -> Option<StoreResult<()>> {
        None
    }
    /// Lets go of the engine at shutdown (flushes, closes connections). Writes were durable
    /// already; this only releases resources and locks.
    async fn close(&self) -> StoreResult<()>;
}

/// Store failures as answers: an outage is retryable (503 with `Retry-After`), anything else
/// is internal.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            // Retryable: nothing was written, and the node reconnects by itself.
            StoreError::Unavailable(cause) => {
                tracing::warn!(error = %cause, "store unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::StoreUnavailable,
                    "storage is unavailable; nothing was changed, try again shortly",
                )
                .with_retry_after(2)
            }
            StoreError::InDoubt(cause) => {
                tracing::warn!(error = %cause, "store went away while committing");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::StoreUnavailable,
                    "storage went away while saving; the change may or may not have been made, \
                     try again shortly (payments are never taken twice)",
                )
                .with_retry_after(2)
            }
            other => ApiError::internal(other),
        }
    }
}
