//! The receipt log: every paid receipt a leaf of one append-only Merkle tree (RFC 6962 hashing,
//! `toolhost-tlog`), whose heads are signed with the receipt key as C2SP checkpoints and whose
//! hashes and entries are kept as C2SP tiles. A receipt alone proves itself; the log lets
//! anyone check that the host showed every reader the same history and never dropped or
//! rewrote a receipt (docs/receipt-log.md).
//!
//! A paid call's receipt is stored with its leaf: the call hands the log its records (receipt,
//! sale, spent nonce: [`ReceiptLog::commit`]), and the sequencer writes them in the batch that
//! appends them, so a call's ledger and its place in the log are one durable write. Other
//! entries (a refund, a receipt's later version, a receipt recovery stored) are written with
//! their records as a *pending* entry ([`store_receipt`](crate::receipts::store_receipt)), and
//! appended later. The sequencer appends
//! in groups: it gives the group's entries consecutive leaf indexes and writes their hashes,
//! their entries, the records of the calls that handed theirs and the new signed checkpoint in
//! one batch, on two conditions: the checkpoint is still the one it started from (nodes sharing
//! a store never append at once: the loser reloads and tries again), and each pending entry is
//! still there (none is appended twice); each call's records bring their own. One signature
//! covers the group. Each call then gets its leaf index, its inclusion proof and the checkpoint
//! it is in. A call whose own condition fails is left out of the group (nothing of it is
//! written); records the log cannot append (other nodes kept appending, the store failed) go
//! back to their call, which stores them alone with a pending entry. A pending entry whose call
//! never asked (its node stopped between the two writes) is appended by the next sweep of any
//! node. Free calls' receipts are not here: they expire, and are proven in batches of their own
//! (`super::batch`).
//!
//! What the store keeps of it ([`toolhost_store::receipt_log`]'s records, its rows on
//! PostgreSQL):
//! - pending entries by name: `<receipt id>[/<status>]`, a receipt's entry until it is
//!   appended; a receipt re-signed when its pending on-chain settlement concluded is a new
//!   version, a new entry, pending under its new status. `<receipt id>/refund`: its refund's
//!   record (an entry of its own: the receipt is never rewritten).
//! - leaves by index: the entry (the canonical JSON of its record), its hash, and the name its
//!   place is asked by (the receipt id for every version of a receipt, the latest found; the
//!   refund's name for a refund).
//!
//! - interior nodes by level (1 and up) and index, 32 bytes each: level `L` holds the roots of
//!   the complete subtrees of `256^L` leaves (level 0 is the leaves' hashes), as the hash tiles
//!   do.
//! - the log's state ([`LogState`]): its origin (its checkpoints' first line, fixed when the
//!   log is created), its latest signed checkpoint (the note's text), while the receipts stored
//!   before the log existed (an upgraded data dir or database) are being made pending the last
//!   receipt id done (`backfill`), and the `waiting` mark of a node that lost an append.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};
use toolhost_tlog::tile::{self, TILE_HEIGHT, TILE_WIDTH};
use toolhost_tlog::{hash, tree, Checkpoint, Hash, Signer, Tile, Verifier};

use super::{canonical_json, Receipt, ReceiptSigner};
use crate::error::{ApiError, ErrorCode};
use crate::store::{Batch, LeafRow, LogState, Store, StoreError};

/// Receipts stored before the log made pending per batch at most (fewer while appends keep
/// moving the checkpoint: see [`ReceiptLog::backfill_page`]).
const BACKFILL_PAGE: usize = 256;
/// Entries appended in one batch at most; more wait for the next.
const MAX_GROUP: usize = 1024;
/// Full tiles kept in memory for proofs (8 KiB each); the cache is emptied when full.
const MAX_CACHED_TILES: usize = 512;
/// Interior nodes kept in memory (40 bytes each and the map's share); emptied when full.
const MAX_INTERIOR_NODES: usize = 1 << 16;
/// How often a node looks for pending entries no call is waiting for.
const SWEEP_EVERY: Duration = Duration::from_secs(30);
/// Attempts of one group against other nodes' appends before its calls are told to look later.
const MAX_ATTEMPTS: usize = 16;
/// How long a node that saw another waiting holds back its next append: about what an append
/// takes, so the waiting node's reload and append fit in.
const YIELD: Duration = Duration::from_millis(5);
/// The conditions every append starts with, by index: the checkpoint it builds on, and the
/// [`LogState::Waiting`] mark as its node last saw it. Then, job by job, each pending entry's
/// one, or each call's records' own.
const ON_CHECKPOINT: usize = 0;
const ON_WAITING: usize = 1;

/// Why the log could not answer.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the receipt log is corrupt: {0}")]
    Corrupt(String),
    #[error("the receipt log is busy: other nodes kept appending")]
    Contended,
    #[error("the receipt log has stopped")]
    Stopped,
    /// A tile past the log's end.
    #[error("{0}")]
    NoTile(String),
    /// A receipt not appended (yet), or a tree size past the log's end.
    #[error("{0}")]
    NotInLog(String),
    /// A request the log cannot answer as asked (sizes out of order).
    #[error("{0}")]
    Invalid(String),
}

/// Where a receipt is in the log: what a call's answer carries so its payer can check, offline,
/// that the receipt is in the tree the signed checkpoint commits to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Inclusion {
    pub leaf_index: u64,
    /// The size of the tree the proof and the checkpoint are of.
    pub tree_size: u64,
    /// Base64 of each hash of the inclusion proof (RFC 6962 audit path), from the leaf up.
    pub inclusion_proof: Vec<String>,
    /// The signed checkpoint (C2SP signed note text) of that tree.
    pub checkpoint: String,
}

/// The receipt log of a store. Cheap to clone.
#[derive(Clone)]
pub struct ReceiptLog {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    signer: Signer,
    /// The tree as this node last appended or loaded it.
    head: RwLock<Arc<Head>>,
    /// Full tiles by level and index: they never change.
    tiles: Mutex<Tiles>,
    /// Nodes between the stored heights computed so far, by height and index: complete
    /// subtrees, which never change either.
    interior: Mutex<Interior>,
    queue: mpsc::UnboundedSender<Message>,
    /// The [`LogState::Waiting`] mark as this node last saw it (`None`: none yet).
    waiting: Mutex<Option<Vec<u8>>>,
    /// Entries this node appended and checkpoints it signed for them (`/metrics`).
    appended: AtomicU64,
    checkpoints: AtomicU64,
}

/// What the sequencer is asked.
enum Message {
    Append(Job),
    Close(oneshot::Sender<()>),
}

/// The tree at one size: its signed checkpoint and its right edge, the hashes of each level's
/// partial tile (what the next appends combine with).
#[derive(Clone, Debug)]
struct Head {
    size: u64,
    root: Hash,
    note: String,
    edge: Vec<Vec<Hash>>,
}

/// A receipt waiting to be appended, and the calls waiting for it (none for one the sweep
/// found).
struct Job {
    /// The name its leaf is found by: a receipt id, or a refund's [`refund_name`].
    receipt_id: String,
    /// The name it is pending under ([`pending_name`]); none is stored for a job with
    /// `records`.
    pending: String,
    entry: Vec<u8>,
    /// The records of the call that made it, stored with its leaf ([`ReceiptLog::commit`]);
    /// `None` for a pending entry.
    records: Option<Records>,
    replies: Vec<oneshot::Sender<Result<Inclusion, LogError>>>,
}

/// A call's records, written in the batch that appends its entry, and where to say how that
/// went.
struct Records {
    batch: Batch,
    reply: oneshot::Sender<Committed>,
}

/// What became of records handed to [`ReceiptLog::commit`].
enum Committed {
    /// Stored with the entry's leaf; the entry's place (or why it cannot be said now).
    InLog(Result<Inclusion, LogError>),
    /// Not stored: a condition of the call's own batch failed (its index in that batch).
    Refused(StoreError),
    /// Not stored: the entry could not be appended (`LogError`); the records come back for
    /// their call to store alone.
    Returned(Batch, LogError),
}

impl Job {
    fn answer(self, answer: impl Fn() -> Result<Inclusion, LogError>) {
        if let Some(records) = self.records {
            let _ = records.reply.send(Committed::InLog(answer()));
        }
        for reply in self.replies {
            let _ = reply.send(answer());
        }
    }

    /// The answer to a failed append: the receipt is stored and will be appended later, or
    /// (records not stored yet) its records go back to their call.
    fn failed(mut self, error: &LogError) {
        if let Some(records) = self.records.take() {
            let returned = LogError::NotInLog(format!("the receipt log could not append: {error}"));
            let _ = records
                .reply
                .send(Committed::Returned(records.batch, returned));
        }
        self.answer(|| {
            Err(LogError::NotInLog(format!(
                "the receipt is stored but not in the log yet ({error}); ask for its inclusion later"
            )))
        })
    }

    /// How many conditions it adds to an append: its records' own, or its pending entry's.
    fn conditions(&self) -> usize {
        self.records
            .as_ref()
            .map_or(1, |records| records.batch.conditions.len())
    }
}

/// The signed note of a tree head: a C2SP checkpoint under the signer's name (size, root, and
/// a `timestamp <unix ms>` line for when it was signed). The log's checkpoints and the free
/// receipts' batches are both such notes.
pub(super) fn signed_head(signer: &Signer, size: u64, root: Hash) -> Result<String, LogError> {
    let now_ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
    let checkpoint = Checkpoint {
        origin: signer.verifier().name().to_owned(),
        size,
        root,
        extensions: vec![format!("timestamp {now_ms}")],
    };
    signer
        .sign(&checkpoint.text())
        .map_err(|e| LogError::Corrupt(format!("a tree head cannot be signed: {e}")))
}

/// The entry a record (a receipt, a refund) is in the log: its canonical JSON, signature
/// included, so a reader holding the record in any JSON form makes the same bytes.
pub fn entry_of<T: Serialize>(record: &T) -> Vec<u8> {
    let value = serde_json::to_value(record).unwrap_or(serde_json::Value::Null);
    canonical_json(&value).into_bytes()
}

/// The name a refund of `receipt_id` has in the log: its inclusion is asked by it
/// ([`ReceiptLog::inclusion_of`]).
pub fn refund_name(receipt_id: &str) -> String {
    format!("{receipt_id}/refund")
}

/// Adds the pending entry of a refund of `receipt_id` (`entry`: the canonical JSON of its
/// signed record) to the batch that stores it.
pub fn pending_refund(batch: Batch, receipt_id: &str, entry: Vec<u8>) -> Batch {
    batch.put_log_pending(&refund_name(receipt_id), entry)
}

/// Adds the pending entry of a new version of `receipt` (re-signed as its settlement
/// concluded) to the batch that stores it: appended by the next sweep, as an entry of its own;
/// the log keeps the version the call was answered with too.
pub fn pending_version(batch: Batch, receipt: &Receipt) -> Batch {
    let name = pending_name(&receipt.receipt_id, Some(&receipt.settlement.status));
    batch.put_log_pending(&name, entry_of(receipt))
}

impl ReceiptLog {
    /// Opens the store's log, creating it (empty, named `origin`) if there is none, and starts
    /// its sequencer. Its checkpoints are signed with the receipt key.
    pub async fn open(
        store: Arc<dyn Store>,
        key: &ReceiptSigner,
        origin: &str,
    ) -> Result<ReceiptLog, LogError> {
        let origin = match store.log_state(LogState::Origin).await? {
            Some(stored) => String::from_utf8(stored)
                .map_err(|_| LogError::Corrupt("its origin is not text".into()))?,
            None => {
                let batch = Batch::new()
                    .require_log_state(LogState::Origin, None)
                    .put_log_state(LogState::Origin, origin.as_bytes().to_vec());
                match store.apply(batch).await {
                    // Another node created it first: its name holds.
                    Ok(()) | Err(StoreError::ConditionFailed(_)) => {}
                    Err(e) => return Err(e.into()),
                }
                let stored = store.log_state(LogState::Origin).await?.unwrap_or_default();
                String::from_utf8(stored)
                    .map_err(|_| LogError::Corrupt("its origin is not text".into()))?
            }
        };
        let signer = key
            .note_signer(&origin)
            .map_err(|e| LogError::Corrupt(format!("its origin cannot name a key: {e}")))?;
        let (queue, jobs) = mpsc::unbounded_channel();
        let waiting = store.log_state(LogState::Waiting).await?;
        let empty = Head {
            size: 0,
            root: hash::empty_root(),
            note: String::new(),
            edge: Vec::new(),
        };
        let log = ReceiptLog {
            inner: Arc::new(Inner {
                store,
                signer,
                head: RwLock::new(Arc::new(empty)),
                tiles: Mutex::default(),
                interior: Mutex::default(),
                queue,
                waiting: Mutex::new(waiting),
                appended: AtomicU64::new(0),
                checkpoints: AtomicU64::new(0),
            }),
        };
        log.start_if_empty().await?;
        log.reload().await?;
        let sequencer = log.clone();
        let (started, swept) = oneshot::channel();
        tokio::spawn(async move {
            if let Some(done) = sequencer.sequence(jobs, started).await {
                let _ = done.send(());
            }
        });
        // What a stopped node left pending is appended before this one serves.
        let _ = swept.await;
        Ok(log)
    }

    /// The log's verifier key (C2SP signed-note vkey): what a reader trusts its checkpoints by.
    pub fn verifier_key(&self) -> String {
        self.inner.signer.verifier().key_text()
    }

    pub fn verifier(&self) -> Verifier {
        self.inner.signer.verifier()
    }

    /// Entries this node appended, and checkpoints it signed for them, since it started.
    pub fn totals(&self) -> (u64, u64) {
        (
            self.inner.appended.load(Ordering::Relaxed),
            self.inner.checkpoints.load(Ordering::Relaxed),
        )
    }

    /// Waits until `receipt` (stored with its pending entry:
    /// [`store_receipt`](crate::receipts::store_receipt)) is in the log, and says where.
    pub async fn include(&self, receipt: &Receipt) -> Result<Inclusion, LogError> {
        self.include_entry(&receipt.receipt_id, entry_of(receipt))
            .await
    }

    /// Waits until the entry stored pending under `name` (a receipt id, or a refund's
    /// [`refund_name`]) is in the log, and says where.
    pub async fn include_entry(&self, name: &str, entry: Vec<u8>) -> Result<Inclusion, LogError> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            receipt_id: name.to_string(),
            pending: name.to_string(),
            entry,
            records: None,
            replies: vec![reply],
        };
        (self.inner.queue)
            .send(Message::Append(job))
            .map_err(|_| LogError::Stopped)?;
        answer.await.map_err(|_| LogError::Stopped)?
    }

    /// Stores a call's records (`batch`, which stores `receipt` without a pending entry:
    /// [`store_receipt_bare`](crate::receipts::store_receipt_bare)) in the batch that
    /// appends `receipt` (`entry`: its canonical JSON, [`entry_of`]) to the log, and says where
    /// the receipt is (`None`: stored, its place to be asked for later). An error is the batch's own, and nothing of it was stored: a
    /// failed condition's index is its index in `batch`. When the log cannot append it (other
    /// nodes kept appending, the store failed), the batch is stored alone with the receipt's
    /// pending entry, for a later append.
    pub async fn commit(
        &self,
        batch: Batch,
        receipt: &Receipt,
        entry: Vec<u8>,
    ) -> Result<Option<Inclusion>, StoreError> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            receipt_id: receipt.receipt_id.clone(),
            pending: receipt.receipt_id.clone(),
            entry,
            records: Some(Records { batch, reply }),
            replies: Vec::new(),
        };
        let (batch, why) = match self.inner.queue.send(Message::Append(job)) {
            Err(mpsc::error::SendError(message)) => match message {
                Message::Append(Job {
                    records: Some(records),
                    ..
                }) => (records.batch, LogError::Stopped),
                _ => return Err(StoreError::Engine("the receipt log has stopped".into())),
            },
            Ok(()) => match answer.await {
                Ok(Committed::InLog(place)) => return Ok(place.ok()),
                Ok(Committed::Refused(e)) => return Err(e),
                Ok(Committed::Returned(batch, why)) => (batch, why),
                Err(_) => {
                    return Err(StoreError::Engine(
                        "the receipt log stopped with the call's records".into(),
                    ))
                }
            },
        };
        let receipt_id = &receipt.receipt_id;
        tracing::debug!(error = %why, receipt = %receipt_id, "records stored apart from the log");
        // The entry went with the job; made again on this rare path.
        let pending = batch.put_log_pending(receipt_id, entry_of(receipt));
        self.inner.store.apply(pending).await?;
        Ok(None)
    }

    /// The latest signed checkpoint in the store (another node's, if it appended since).
    pub async fn checkpoint(&self) -> Result<String, LogError> {
        let note = self
            .inner
            .store
            .log_state(LogState::Checkpoint)
            .await?
            .ok_or_else(|| LogError::Corrupt("it has no checkpoint".into()))?;
        String::from_utf8(note).map_err(|_| LogError::Corrupt("a checkpoint is not text".into()))
    }

    /// The bytes of a tile as C2SP `tlog-tiles` serves them: a hash tile's hashes, or an entry
    /// bundle. Only tiles of the tree up to the latest checkpoint exist.
    pub async fn tile(&self, tile: Tile) -> Result<Vec<u8>, LogError> {
        let size = self.latest().await?.size;
        let absent = || LogError::NoTile(format!("the log has no tile {}", tile.path()));
        let first = tile.index.checked_mul(TILE_WIDTH).ok_or_else(absent)?;
        match tile.level {
            Some(level) => {
                let count = nodes_at(size, level);
                if first + tile.width > count {
                    return Err(absent());
                }
                let hashes = self.read_hashes(level, first, tile.width).await?;
                Ok(hashes.concat())
            }
            None => {
                if first + tile.width > size {
                    return Err(absent());
                }
                let entries = self.read_entries(first, tile.width).await?;
                tile::encode_entries(entries.iter().map(Vec::as_slice))
                    .ok_or_else(|| LogError::Corrupt("an entry is too long for a bundle".into()))
            }
        }
    }

    /// The inclusion proof of a receipt in the tree of `size` leaves (the latest if `None`).
    pub async fn inclusion_of(
        &self,
        receipt_id: &str,
        size: Option<u64>,
    ) -> Result<Inclusion, LogError> {
        let leaf = self
            .inner
            .store
            .log_leaves(&[receipt_id])
            .await?
            .pop()
            .flatten();
        let index = leaf.ok_or_else(|| {
            LogError::NotInLog(format!(
                "receipt {receipt_id:?} is not in the log (yet: a receipt is appended within seconds of its call)"
            ))
        })?;
        let latest = self.latest().await?;
        let size = size.unwrap_or(latest.size);
        if size > latest.size || index >= size {
            return Err(LogError::NotInLog(format!(
                "the receipt's leaf {index} is not in a tree of {size} (the log has {})",
                latest.size
            )));
        }
        let proof = self
            .with_nodes(&latest, |nodes| {
                tree::inclusion_proof_of(nodes, index, size)
            })
            .await?
            .unwrap_or_default();
        // The checkpoint is only the latest one's: older heads are not kept.
        let checkpoint = if size == latest.size {
            latest.note.clone()
        } else {
            String::new()
        };
        Ok(Inclusion {
            leaf_index: index,
            tree_size: size,
            inclusion_proof: proof.iter().map(|h| BASE64.encode(h)).collect(),
            checkpoint,
        })
    }

    /// The consistency proof between the trees of `old` and `new` leaves (base64 hashes).
    pub async fn consistency(&self, old: u64, new: u64) -> Result<Vec<String>, LogError> {
        let latest = self.latest().await?;
        if old == 0 || old > new || new > latest.size {
            return Err(LogError::Invalid(format!(
                "a consistency proof is between sizes 0 < old <= new <= {} (asked {old} and {new})",
                latest.size
            )));
        }
        let proof = self
            .with_nodes(&latest, |nodes| tree::consistency_proof_of(nodes, old, new))
            .await?
            .unwrap_or_default();
        Ok(proof.iter().map(|h| BASE64.encode(h)).collect())
    }

    /// The tree at the store's latest checkpoint: this node's head, reloaded if another node
    /// appended since.
    async fn latest(&self) -> Result<Arc<Head>, LogError> {
        let note = self.checkpoint().await?;
        let head = self.head();
        if head.note == note {
            return Ok(head);
        }
        self.reload().await
    }

    fn head(&self) -> Arc<Head> {
        self.inner
            .head
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_head(&self, head: Head) -> Arc<Head> {
        let head = Arc::new(head);
        *self
            .inner
            .head
            .write()
            .unwrap_or_else(PoisonError::into_inner) = head.clone();
        head
    }

    /// Writes the empty tree's checkpoint if the log has none, and starts the backfill of the
    /// receipts stored before it.
    async fn start_if_empty(&self) -> Result<(), LogError> {
        let note = self.sign(0, hash::empty_root())?;
        let batch = Batch::new()
            .require_log_state(LogState::Checkpoint, None)
            .put_log_state(LogState::Checkpoint, note.into_bytes())
            .put_log_state(LogState::Backfill, Vec::new());
        match self.inner.store.apply(batch).await {
            Ok(()) | Err(StoreError::ConditionFailed(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads the tree at the stored checkpoint: its edge from the store, checked against the
    /// checkpoint's root.
    async fn reload(&self) -> Result<Arc<Head>, LogError> {
        let note = self.checkpoint().await?;
        let checkpoint = self.open_note(&note)?;
        let size = checkpoint.size;
        let mut edge = Vec::new();
        let mut level = 0u8;
        while nodes_at(size, level) > 0 {
            let count = nodes_at(size, level);
            let partial = count % TILE_WIDTH;
            let hashes = self.read_hashes(level, count - partial, partial).await?;
            edge.push(hashes);
            level += 1;
        }
        let head = Head {
            size,
            root: checkpoint.root,
            note,
            edge,
        };
        let root = self
            .with_nodes(&head, |nodes| tree::root_of(nodes, size))
            .await?;
        if root != checkpoint.root {
            return Err(LogError::Corrupt(format!(
                "its stored hashes do not make the root of its checkpoint at size {size}"
            )));
        }
        Ok(self.set_head(head))
    }

    fn open_note(&self, note: &str) -> Result<Checkpoint, LogError> {
        let text = self
            .inner
            .signer
            .verifier()
            .open(note)
            .map_err(|e| LogError::Corrupt(format!("its checkpoint does not verify: {e}")))?;
        Checkpoint::parse(text)
            .map_err(|e| LogError::Corrupt(format!("its checkpoint does not parse: {e}")))
    }

    fn sign(&self, size: u64, root: Hash) -> Result<String, LogError> {
        signed_head(&self.inner.signer, size, root)
    }

    /// Runs `compute` over the tree's stored nodes: the edge from `head`, full tiles from the
    /// cache or the store, fetching each tile the computation turns out to need.
    /// The interior nodes it computed are remembered: `head` is a tree in the store.
    async fn with_nodes<T>(
        &self,
        head: &Head,
        compute: impl Fn(&TreeNodes) -> Result<T, Missing>,
    ) -> Result<T, LogError> {
        let (value, fresh) = self.with_tiles(head, HashMap::new(), compute).await?;
        self.remember(fresh);
        Ok(value)
    }

    /// [`Self::with_nodes`] of a tree not stored yet (some of its full tiles given: those a
    /// group filled): the interior nodes computed are returned, to remember once it is.
    async fn with_tiles<T>(
        &self,
        head: &Head,
        fetched: Tiles,
        compute: impl Fn(&TreeNodes) -> Result<T, Missing>,
    ) -> Result<(T, Interior), LogError> {
        let mut nodes = TreeNodes {
            head,
            fetched,
            interior: &self.inner.interior,
            fresh: RefCell::default(),
        };
        // Each round fetches one more tile; a proof needs at most two a level.
        for _ in 0..64 {
            match compute(&nodes) {
                Ok(value) => return Ok((value, nodes.fresh.into_inner())),
                Err(Missing(level, index)) => {
                    let tile = self.full_tile(level, index).await?;
                    nodes.fetched.insert((level, index), tile);
                }
            }
        }
        Err(LogError::Corrupt(
            "a proof needs more tiles than a tree has".into(),
        ))
    }

    async fn full_tile(&self, level: u8, index: u64) -> Result<Arc<Vec<Hash>>, LogError> {
        if let Some(tile) = self.tiles().get(&(level, index)) {
            return Ok(tile.clone());
        }
        let hashes = self
            .read_hashes(level, index * TILE_WIDTH, TILE_WIDTH)
            .await?;
        let tile = Arc::new(hashes);
        self.cache_tile(level, index, tile.clone());
        Ok(tile)
    }

    fn tiles(&self) -> std::sync::MutexGuard<'_, Tiles> {
        lock(&self.inner.tiles)
    }

    /// Keeps interior nodes of the stored tree for the proofs to come.
    fn remember(&self, fresh: Interior) {
        if fresh.is_empty() {
            return;
        }
        let mut interior = lock(&self.inner.interior);
        if interior.len() + fresh.len() > MAX_INTERIOR_NODES {
            interior.clear();
        }
        interior.extend(fresh);
    }

    fn cache_tile(&self, level: u8, index: u64, tile: Arc<Vec<Hash>>) {
        let mut tiles = self.tiles();
        if tiles.len() >= MAX_CACHED_TILES {
            tiles.clear();
        }
        tiles.insert((level, index), tile);
    }

    /// The stored nodes `first..first + count` of `level`, all of them or an error.
    async fn read_hashes(&self, level: u8, first: u64, count: u64) -> Result<Vec<Hash>, LogError> {
        let rows = self.inner.store.log_nodes(level, first, count).await?;
        whole(rows, first, count)?
            .into_iter()
            .map(|value| {
                Hash::try_from(value)
                    .map_err(|_| LogError::Corrupt("a stored hash is not 32 bytes".into()))
            })
            .collect()
    }

    async fn read_entries(&self, first: u64, count: u64) -> Result<Vec<Vec<u8>>, LogError> {
        let rows = self.inner.store.log_entries(first, count).await?;
        whole(rows, first, count)
    }

    /// Stops the sequencer once the receipts queued so far are appended, and waits until it
    /// has let go of the store (at shutdown: sled's lock is released only then).
    pub async fn close(&self) {
        let (done, closed) = oneshot::channel();
        if self.inner.queue.send(Message::Close(done)).is_ok() {
            let _ = closed.await;
        }
    }

    /// The sequencer: sweeps once (and says so on `started`), then appends what calls queue,
    /// in groups, and sweeps for pending entries no call waits for, until told to close.
    /// Consumes its handle, so that the store is let go of when it returns the close's answer.
    async fn sequence(
        self,
        mut messages: mpsc::UnboundedReceiver<Message>,
        started: oneshot::Sender<()>,
    ) -> Option<oneshot::Sender<()>> {
        let mut sweep = tokio::time::interval(SWEEP_EVERY);
        // The first tick is now.
        sweep.tick().await;
        if let Some(found) = self.sweep(&mut sweep).await {
            self.append_group(found).await;
        }
        let _ = started.send(());
        loop {
            let mut group = tokio::select! {
                message = messages.recv() => match message? {
                    Message::Append(job) => vec![job],
                    Message::Close(done) => return Some(done),
                },
                _ = sweep.tick() => match self.sweep(&mut sweep).await {
                    Some(found) => found,
                    None => continue,
                },
            };
            let mut closing = None;
            while group.len() < MAX_GROUP && closing.is_none() {
                match messages.try_recv() {
                    Ok(Message::Append(job)) => group.push(job),
                    Ok(Message::Close(done)) => closing = Some(done),
                    Err(_) => break,
                }
            }
            self.append_group(group).await;
            if closing.is_some() {
                return closing;
            }
        }
    }

    /// One sweep: a page of the backfill, and the pending entries found (`None`: none). After
    /// a full page of either, the next sweep is at once, without waiting for the next tick.
    async fn sweep(&self, sweep: &mut tokio::time::Interval) -> Option<Vec<Job>> {
        let more = self.backfill_page().await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "backfilling the receipt log failed");
            false
        });
        match self.swept().await {
            Ok(found) => {
                if more || found.len() == MAX_GROUP {
                    sweep.reset_immediately();
                }
                (!found.is_empty()).then_some(found)
            }
            Err(e) => {
                tracing::warn!(error = %e, "sweeping the receipt log's pending entries failed");
                None
            }
        }
    }

    /// Makes one page of the receipts stored before the log pending, and says whether more
    /// are left. A receipt stored since has a pending entry or a leaf already (both are written
    /// atomically with what they follow): it is skipped, so none is appended twice. That it
    /// has no leaf is read before the page's batch, which therefore holds only if no append
    /// came between (on the checkpoint); one that did makes the page try again, halved, so a
    /// log that keeps appending lets a smaller page through.
    async fn backfill_page(&self) -> Result<bool, LogError> {
        let store = &self.inner.store;
        let Some(cursor) = store.log_state(LogState::Backfill).await? else {
            return Ok(false);
        };
        let after = String::from_utf8_lossy(&cursor);
        let after = (!after.is_empty()).then_some(&*after);
        let mut page = store.receipts_after(after, BACKFILL_PAGE).await?;
        if page.is_empty() {
            let done = Batch::new()
                .require_log_state(LogState::Backfill, Some(cursor))
                .delete_log_state(LogState::Backfill);
            return match store.apply(done).await {
                Ok(()) | Err(StoreError::ConditionFailed(_)) => Ok(false),
                Err(e) => Err(e.into()),
            };
        }
        // Receipts of the page found pending already (each gets its own append).
        let mut pending_already = std::collections::HashSet::new();
        loop {
            let Some((last, _)) = page.last() else {
                return Ok(true);
            };
            let checkpoint = self.checkpoint().await?;
            let mut batch = Batch::new()
                .require_log_state(LogState::Backfill, Some(cursor.clone()))
                .require_log_state(LogState::Checkpoint, Some(checkpoint.into_bytes()))
                .put_log_state(LogState::Backfill, last.clone().into_bytes());
            let mut made = Vec::new();
            let ids: Vec<&str> = page
                .iter()
                .map(|(receipt_id, _)| receipt_id.as_str())
                .collect();
            let leaves = store.log_leaves(&ids).await?;
            for ((receipt_id, stored), leaf) in page.iter().zip(leaves) {
                // Every receipt stored before the log is signed; one without a signature is
                // a free call's stored since, proven by its batch and kept out of the log.
                let receipt = serde_json::from_slice::<serde_json::Value>(stored)
                    .map_err(|e| LogError::Corrupt(format!("a stored receipt: {e}")))?;
                if receipt.get("signature").is_none()
                    || pending_already.contains(receipt_id)
                    || leaf.is_some()
                {
                    continue;
                }
                let entry = canonical_json(&receipt).into_bytes();
                batch = batch
                    .require_log_pending(receipt_id, None)
                    .put_log_pending(receipt_id, entry);
                made.push(receipt_id.clone());
            }
            match store.apply(batch).await {
                Ok(()) => return Ok(true),
                // Another node moved the cursor: it does this page.
                Err(StoreError::ConditionFailed(0)) => return Ok(true),
                // An append came between: again, with half the page (one receipt: at the
                // next sweep, which comes at once).
                Err(StoreError::ConditionFailed(1)) if page.len() == 1 => return Ok(true),
                Err(StoreError::ConditionFailed(1)) => page.truncate(page.len() / 2),
                // Receipt `n - 2` of those made pending is pending already.
                Err(StoreError::ConditionFailed(n)) => {
                    pending_already.insert(made.swap_remove(n - 2));
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Pending entries in the store, oldest receipts' names first.
    async fn swept(&self) -> Result<Vec<Job>, LogError> {
        let rows = self.inner.store.log_pending(None, MAX_GROUP).await?;
        Ok(rows
            .into_iter()
            .filter_map(|(name, entry)| {
                // A new version of a receipt is found under the receipt's name; a refund is
                // an entry (and a leaf) of its own.
                let receipt_id = match name.strip_suffix("/refund") {
                    Some(_) => name.clone(),
                    None => name.split('/').next()?.to_owned(),
                };
                Some(Job {
                    receipt_id,
                    pending: name,
                    entry,
                    records: None,
                    replies: Vec::new(),
                })
            })
            .collect())
    }

    /// Appends what was queued, in as few groups as it takes, and answers its calls.
    async fn append_group(&self, queued: Vec<Job>) {
        let mut next = queued;
        while !next.is_empty() {
            let (group, later) = merged(next);
            self.append_merged(group).await;
            next = later;
        }
    }

    /// Appends a group and answers its calls; an entry another node appended first is answered
    /// from where it is.
    async fn append_merged(&self, mut group: Vec<Job>) {
        let mut attempts = 0;
        while !group.is_empty() {
            let head = self.head();
            let appended = match self.appended(&head, &group).await {
                Ok(appended) => appended,
                Err(e) => return answer_all(group, &e),
            };
            match self.inner.store.apply(appended.batch).await {
                Ok(()) => {
                    self.remember(appended.interior);
                    let entries = group.len() as u64;
                    self.inner.appended.fetch_add(entries, Ordering::Relaxed);
                    self.inner.checkpoints.fetch_add(1, Ordering::Relaxed);
                    for (level, index, tile) in appended.full_tiles {
                        self.cache_tile(level, index, tile);
                    }
                    let head = self.set_head(appended.head);
                    self.answer(&head, group).await;
                    return;
                }
                // The checkpoint moved (another node appended), or another node waits for its
                // turn: take turns.
                Err(StoreError::ConditionFailed(at @ (ON_CHECKPOINT | ON_WAITING))) => {
                    attempts += 1;
                    if attempts == MAX_ATTEMPTS {
                        return self.leave_pending(group, &LogError::Contended);
                    }
                    let turn = match at {
                        ON_CHECKPOINT => self.wait_for_turn().await,
                        _ => self.give_turn().await,
                    };
                    if let Err(e) = turn {
                        return answer_all(group, &e);
                    }
                }
                Err(StoreError::ConditionFailed(at)) => match records_at(&group, at) {
                    // A call's own condition failed: it is left out, and the others go on.
                    Some((job, own)) => {
                        if let Some(records) = group.remove(job).records {
                            let refused = StoreError::ConditionFailed(own);
                            let _ = records.reply.send(Committed::Refused(refused));
                        }
                    }
                    // A pending entry is gone: appended already (a sweep found it), or never
                    // written. Those gone are answered from where they are; the rest go on.
                    None => match self.still_pending(group).await {
                        Ok(pending) => group = pending,
                        Err((group, e)) => return answer_all(group, &e),
                    },
                },
                Err(e) => return answer_all(group, &LogError::Store(e)),
            }
        }
    }

    /// After losing an append: marks [`LogState::Waiting`] with the time (the next append of
    /// the node that won fails its condition on the mark, and that node holds back), then
    /// reloads the tree. The mark is not waited on to be durable: one lost in a crash only
    /// loses a turn.
    async fn wait_for_turn(&self) -> Result<(), LogError> {
        let now_ms = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
        let mark = now_ms.to_string().into_bytes();
        let batch = Batch::new().put_log_state(LogState::Waiting, mark.clone());
        self.inner.store.apply_unsynced(batch).await?;
        self.saw_waiting(Some(mark));
        self.reload().await?;
        Ok(())
    }

    /// After another node's mark: remembers it and holds back [`YIELD`].
    async fn give_turn(&self) -> Result<(), LogError> {
        let mark = self.inner.store.log_state(LogState::Waiting).await?;
        self.saw_waiting(mark);
        tokio::time::sleep(YIELD).await;
        Ok(())
    }

    fn saw_waiting(&self, mark: Option<Vec<u8>>) {
        *self.waiting_seen() = mark;
    }

    fn waiting_seen(&self) -> std::sync::MutexGuard<'_, Option<Vec<u8>>> {
        self.inner
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers a group that could not be appended (`error`): its receipts are stored, their
    /// entries pending for a later append (the next group's or a sweep's), their place in the
    /// log to be asked for later.
    fn leave_pending(&self, group: Vec<Job>, error: &LogError) {
        tracing::warn!(%error, entries = group.len(), "receipts left pending in the receipt log");
        for job in group {
            job.failed(error);
        }
    }

    /// The jobs whose entries are still pending; the others are answered with their receipt's
    /// place in the log (or that it is not there).
    async fn still_pending(&self, group: Vec<Job>) -> Result<Vec<Job>, (Vec<Job>, LogError)> {
        let mut pending = Vec::with_capacity(group.len());
        let mut jobs = group.into_iter();
        while let Some(job) = jobs.next() {
            if job.records.is_some() {
                pending.push(job);
                continue;
            }
            match self.inner.store.log_pending_entry(&job.pending).await {
                Ok(Some(entry)) if entry == job.entry => pending.push(job),
                Ok(_) => {
                    let found = self.inclusion_of(&job.receipt_id, None).await;
                    job.answer(|| clone_result(&found));
                }
                Err(e) => {
                    pending.push(job);
                    pending.extend(jobs);
                    return Err((pending, e.into()));
                }
            }
        }
        Ok(pending)
    }

    /// The batch appending `group` to `head`, and the tree it makes.
    async fn appended(&self, head: &Head, group: &[Job]) -> Result<Appended, LogError> {
        let waiting = self.waiting_seen().clone();
        let mut batch = Batch::new()
            .require_log_state(LogState::Checkpoint, Some(head.note.clone().into_bytes()))
            .require_log_state(LogState::Waiting, waiting);
        for job in group {
            batch = match &job.records {
                Some(records) => batch.extend(records.batch.clone()),
                None => batch.require_log_pending(&job.pending, Some(job.entry.clone())),
            };
        }
        let mut edge = head.edge.clone();
        let mut full_tiles = Vec::new();
        let mut size = head.size;
        for job in group {
            // The leaf's hash joins level 0 (stored with its leaf); each tile it fills makes a
            // node of the level above.
            let mut node = hash::leaf(&job.entry);
            if job.records.is_none() {
                batch = batch.delete_log_pending(&job.pending);
            }
            batch = batch.put_log_leaf(LeafRow {
                leaf: size,
                name: job.receipt_id.clone(),
                hash: node,
                entry: job.entry.clone(),
            });
            let mut level = 0u8;
            loop {
                let position = nodes_at(size, level);
                if level > 0 {
                    batch = batch.put_log_node(level, position, node);
                }
                if edge.len() <= usize::from(level) {
                    edge.push(Vec::new());
                }
                let row = &mut edge[usize::from(level)];
                row.push(node);
                if (row.len() as u64) < TILE_WIDTH {
                    break;
                }
                let tile = std::mem::take(row);
                node = tree::root(&tile);
                full_tiles.push((level, position / TILE_WIDTH, Arc::new(tile)));
                level += 1;
            }
            size += 1;
        }
        // The edge of a level is empty when its last tile filled; the level stays.
        let mut computed = Head {
            size,
            root: hash::empty_root(),
            note: String::new(),
            edge,
        };
        let filled = full_tiles
            .iter()
            .map(|(level, index, tile)| ((*level, *index), tile.clone()))
            .collect();
        let (root, interior) = self
            .with_tiles(&computed, filled, |nodes| tree::root_of(nodes, size))
            .await?;
        computed.root = root;
        computed.note = self.sign(size, root)?;
        batch = batch.put_log_state(LogState::Checkpoint, computed.note.clone().into_bytes());
        Ok(Appended {
            batch,
            head: computed,
            full_tiles,
            interior,
        })
    }

    /// Answers each call of an appended group with its proof in the new tree.
    async fn answer(&self, head: &Head, group: Vec<Job>) {
        let first = head.size - group.len() as u64;
        for (offset, job) in group.into_iter().enumerate() {
            if job.replies.is_empty() && job.records.is_none() {
                continue;
            }
            let index = first + offset as u64;
            let proof = self
                .with_nodes(head, |nodes| {
                    tree::inclusion_proof_of(nodes, index, head.size)
                })
                .await
                .map(|proof| Inclusion {
                    leaf_index: index,
                    tree_size: head.size,
                    inclusion_proof: proof
                        .unwrap_or_default()
                        .iter()
                        .map(|h| BASE64.encode(h))
                        .collect(),
                    checkpoint: head.note.clone(),
                });
            job.answer(|| clone_result(&proof));
        }
    }
}

impl From<LogError> for ApiError {
    fn from(e: LogError) -> Self {
        match e {
            LogError::Store(e) => e.into(),
            LogError::NoTile(text) => ApiError::not_found(ErrorCode::TileNotFound, text),
            LogError::NotInLog(text) => ApiError::not_found(ErrorCode::NotInLog, text),
            LogError::Invalid(text) => ApiError::bad_request(ErrorCode::InvalidQuery, text),
            LogError::Contended | LogError::Stopped => ApiError::new(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::StoreUnavailable,
                format!("{e}; try again shortly"),
            )
            .with_retry_after(1),
            LogError::Corrupt(_) => ApiError::internal(e),
        }
    }
}

/// A group's batch, the head it makes and the tiles it fills.
struct Appended {
    batch: Batch,
    head: Head,
    full_tiles: Vec<(u8, u64, Arc<Vec<Hash>>)>,
    /// The interior nodes computed for its root, remembered once it is stored.
    interior: Interior,
}

fn answer_all(group: Vec<Job>, error: &LogError) {
    tracing::warn!(error = %error, entries = group.len(), "appending to the receipt log failed");
    for job in group {
        job.failed(error);
    }
}

/// One job a pending entry, its callers together (a sweep can find a receipt its call also
/// queued): a group never appends an entry twice. Records handed for a name already in the
/// group wait for the next one (`later`), where the first's writes are stored: a batch's
/// conditions hold against what was stored before it, so two in one group would both pass.
fn merged(queued: Vec<Job>) -> (Vec<Job>, Vec<Job>) {
    let mut merged: Vec<Job> = Vec::with_capacity(queued.len());
    let mut later = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for job in queued {
        match at.get(&job.pending) {
            None => {
                at.insert(job.pending.clone(), merged.len());
                merged.push(job);
            }
            Some(&i) if job.records.is_none() && merged[i].records.is_none() => {
                merged[i].replies.extend(job.replies)
            }
            Some(_) => later.push(job),
        }
    }
    (merged, later)
}

/// The job whose records hold condition `at` of the group's append, and that condition's
/// index in its records' batch (`None`: the append's own, or a pending entry's).
fn records_at(group: &[Job], at: usize) -> Option<(usize, usize)> {
    let mut first = ON_WAITING + 1;
    for (index, job) in group.iter().enumerate() {
        let count = job.conditions();
        if at < first + count {
            return job.records.is_some().then_some((index, at - first));
        }
        first += count;
    }
    None
}

/// An answer for each of a receipt's callers (errors are not `Clone`: their text is kept).
fn clone_result(result: &Result<Inclusion, LogError>) -> Result<Inclusion, LogError> {
    match result {
        Ok(inclusion) => Ok(inclusion.clone()),
        Err(LogError::NotInLog(text)) => Err(LogError::NotInLog(text.clone())),
        Err(other) => Err(LogError::NotInLog(format!(
            "the receipt is stored but not in the log yet ({other}); ask for its inclusion later"
        ))),
    }
}

/// Full hash tiles by level and index.
type Tiles = HashMap<(u8, u64), Arc<Vec<Hash>>>;

/// A tile the computation needs and does not have.
struct Missing(u8, u64);

/// The stored nodes of a tree: its edge, and the full tiles fetched so far; and the nodes
/// between stored heights computed so far.
struct TreeNodes<'h> {
    head: &'h Head,
    fetched: Tiles,
    /// Those of the stored tree, remembered.
    interior: &'h Mutex<Interior>,
    /// Those computed now.
    fresh: RefCell<Interior>,
}

/// Interior nodes by height and index.
type Interior = HashMap<(u32, u64), Hash>;

impl tree::Nodes for TreeNodes<'_> {
    type Error = Missing;

    /// A stored node is read from its tile; a node between two stored heights is the hash of
    /// its two children, remembered once its tree is stored ([`Inner::interior`]): a complete
    /// subtree never changes, and computing it from the stored nodes below each time cost up
    /// to 255 hashes a proof (most of a call's CPU in the log).
    fn node(&self, height: u32, index: u64) -> Result<Hash, Missing> {
        if height.is_multiple_of(TILE_HEIGHT) {
            return self.stored(height, index);
        }
        let key = (height, index);
        let known = self.fresh.borrow().get(&key).copied();
        if let Some(node) = known.or_else(|| lock(self.interior).get(&key).copied()) {
            return Ok(node);
        }
        let node = hash::node(
            &self.node(height - 1, index * 2)?,
            &self.node(height - 1, index * 2 + 1)?,
        );
        self.fresh.borrow_mut().insert(key, node);
        Ok(node)
    }
}

impl TreeNodes<'_> {
    /// A node of a stored height, from its tile.
    fn stored(&self, height: u32, index: u64) -> Result<Hash, Missing> {
        let (level, tile, range) = tile::locate(height, index);
        let edge_tile = nodes_at(self.head.size, level) / TILE_WIDTH;
        let hashes: &[Hash] = if tile == edge_tile {
            self.head
                .edge
                .get(usize::from(level))
                .map(Vec::as_slice)
                .unwrap_or_default()
        } else {
            match self.fetched.get(&(level, tile)) {
                Some(tile) => tile,
                None => return Err(Missing(level, tile)),
            }
        };
        // A node the tree has is in its tile; the tree functions only ask for those.
        Ok(hashes
            .get(range.start)
            .copied()
            .unwrap_or_else(hash::empty_root))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Stored nodes at `level` in a tree of `size` leaves.
fn nodes_at(size: u64, level: u8) -> u64 {
    size.checked_shr(TILE_HEIGHT * u32::from(level))
        .unwrap_or(0)
}

/// Rows `first..first + count` read by index, all of them in order, or an error.
fn whole(rows: Vec<(u64, Vec<u8>)>, first: u64, count: u64) -> Result<Vec<Vec<u8>>, LogError> {
    let whole =
        rows.len() as u64 == count && (first..).zip(&rows).all(|(index, (at, _))| *at == index);
    if !whole {
        return Err(LogError::Corrupt(format!(
            "stored rows {first}..{} are not all there",
            first + count
        )));
    }
    Ok(rows.into_iter().map(|(_, value)| value).collect())
}

/// `<receipt id>`, or for a later version `<receipt id>/<status>`.
fn pending_name(receipt_id: &str, version: Option<&str>) -> String {
    match version {
        Some(version) => format!("{receipt_id}/{version}"),
        None => receipt_id.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use toolhost_tlog::{tile, verify};

    use super::*;
    use crate::receipts::{store_receipt, store_receipt_bare};
    use crate::store::{SledStore, Tree};

    fn key() -> ReceiptSigner {
        ReceiptSigner::from_hex(&"07".repeat(32)).unwrap()
    }

    /// A log on a new store.
    async fn fresh_log() -> (Arc<dyn Store>, ReceiptLog) {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let log = reopened(&store).await;
        (store, log)
    }

    /// The log of `store`, opened as a node starting does.
    async fn reopened(store: &Arc<dyn Store>) -> ReceiptLog {
        ReceiptLog::open(store.clone(), &key(), "log.test/receipts")
            .await
            .unwrap()
    }

    async fn assert_nothing_pending(store: &Arc<dyn Store>) {
        let pending = store.log_pending(None, 10).await.unwrap();
        assert!(pending.is_empty());
    }

    fn receipt(n: usize) -> Receipt {
        Receipt {
            receipt_id: format!("rcpt_{n:05}"),
            ..Receipt::example()
        }
    }

    /// Stores receipts `range` as a call does (with their pending entries).
    async fn stored(store: &Arc<dyn Store>, range: std::ops::Range<usize>) -> Vec<Receipt> {
        let mut receipts = Vec::new();
        for n in range {
            let receipt = receipt(n);
            store
                .apply(store_receipt(Batch::new(), &receipt).unwrap())
                .await
                .unwrap();
            receipts.push(receipt);
        }
        receipts
    }

    fn decode(hashes: &[String]) -> Vec<Hash> {
        hashes
            .iter()
            .map(|h| Hash::try_from(BASE64.decode(h).unwrap()).unwrap())
            .collect()
    }

    /// The checkpoint an inclusion names, opened with the log's key.
    fn opened(log: &ReceiptLog, note: &str) -> Checkpoint {
        Checkpoint::parse(log.verifier().open(note).unwrap()).unwrap()
    }

    fn check_inclusion(log: &ReceiptLog, receipt: &Receipt, inclusion: &Inclusion) {
        let head = opened(log, &inclusion.checkpoint);
        assert_eq!(head.size, inclusion.tree_size);
        assert!(head.extensions[0].starts_with("timestamp "));
        verify::inclusion(
            &hash::leaf(&entry_of(receipt)),
            inclusion.leaf_index,
            inclusion.tree_size,
            &decode(&inclusion.inclusion_proof),
            &head.root,
        )
        .unwrap();
    }

    /// Every tile of the log's tree is what the tree's leaves make, and its entries are the
    /// receipts in leaf order; the checkpoint's root is theirs.
    async fn check_tiles(log: &ReceiptLog) -> Vec<Vec<u8>> {
        let head = opened(log, &log.checkpoint().await.unwrap());
        let mut entries = Vec::new();
        for bundle in Tile::all_of(head.size)
            .into_iter()
            .filter(|t| t.level.is_none())
        {
            let bytes = log.tile(bundle).await.unwrap();
            entries.extend(
                tile::decode_entries(&bytes)
                    .unwrap()
                    .into_iter()
                    .map(<[u8]>::to_vec),
            );
        }
        assert_eq!(entries.len() as u64, head.size);
        let leaves: Vec<Hash> = entries.iter().map(|e| hash::leaf(e)).collect();
        assert_eq!(tree::root(&leaves), head.root);
        for tile in Tile::all_of(head.size)
            .into_iter()
            .filter(|t| t.level.is_some())
        {
            assert_eq!(
                log.tile(tile).await.unwrap(),
                tile.hashes(&leaves).unwrap().concat(),
                "{}",
                tile.path()
            );
        }
        entries
    }

    #[tokio::test]
    async fn calls_get_proofs_that_verify_and_the_tiles_make_the_signed_root() {
        let (store, log) = fresh_log().await;
        let empty = opened(&log, &log.checkpoint().await.unwrap());
        assert_eq!((empty.size, empty.root), (0, hash::empty_root()));
        // Past a full tile of level 0, in groups of whatever is queued at once.
        let receipts = stored(&store, 0..600).await;
        let inclusions = futures::future::join_all(receipts.iter().map(|r| log.include(r))).await;
        let mut indexes: Vec<u64> = Vec::new();
        for (receipt, inclusion) in receipts.iter().zip(&inclusions) {
            let inclusion = inclusion.as_ref().unwrap();
            check_inclusion(&log, receipt, inclusion);
            indexes.push(inclusion.leaf_index);
        }
        indexes.sort_unstable();
        assert_eq!(indexes, (0..600).collect::<Vec<u64>>(), "each receipt once");
        let entries = check_tiles(&log).await;
        assert_eq!(entries.len(), 600);
        // Asked again, by id: the same leaf, proved in the latest tree.
        let again = log.inclusion_of("rcpt_00007", None).await.unwrap();
        let first = inclusions[7].as_ref().unwrap();
        assert_eq!(again.leaf_index, first.leaf_index);
        check_inclusion(&log, &receipts[7], &again);
        // In an older tree, too (without its checkpoint: only the latest is kept).
        let older = log
            .inclusion_of("rcpt_00007", Some(first.leaf_index + 1))
            .await
            .unwrap();
        let leaves: Vec<Hash> = entries.iter().map(|e| hash::leaf(e)).collect();
        verify::inclusion(
            &hash::leaf(&entry_of(&receipts[7])),
            first.leaf_index,
            first.leaf_index + 1,
            &decode(&older.inclusion_proof),
            &tree::root(&leaves[..first.leaf_index as usize + 1]),
        )
        .unwrap();
        // Consistency between any two sizes.
        for (old, new) in [
            (1, 600),
            (255, 256),
            (256, 257),
            (300, 511),
            (599, 600),
            (600, 600),
        ] {
            let proof = decode(&log.consistency(old, new).await.unwrap());
            verify::consistency(
                old,
                new,
                &tree::root(&leaves[..old as usize]),
                &tree::root(&leaves[..new as usize]),
                &proof,
            )
            .unwrap();
        }
        for (old, new) in [(0, 5), (6, 5), (5, 601)] {
            assert!(matches!(
                log.consistency(old, new).await,
                Err(LogError::Invalid(_))
            ));
        }
        assert!(matches!(
            log.inclusion_of("rcpt_nope", None).await,
            Err(LogError::NotInLog(_))
        ));
        assert!(matches!(
            log.inclusion_of("rcpt_00007", Some(601)).await,
            Err(LogError::NotInLog(_))
        ));
        // Tiles past the end are not there.
        for path in [
            "tile/0/002.p/89",
            "tile/0/002",
            "tile/1/000.p/3",
            "tile/entries/003",
        ] {
            let tile = Tile::parse(path).unwrap();
            assert!(
                matches!(log.tile(tile).await, Err(LogError::NoTile(_))),
                "{path}"
            );
        }
        // And nothing is left pending.
        assert_nothing_pending(&store).await;
    }

    #[tokio::test]
    async fn a_reopened_log_goes_on_and_appends_what_its_calls_left_pending() {
        let (store, log) = fresh_log().await;
        for receipt in stored(&store, 0..300).await {
            log.include(&receipt).await.unwrap();
        }
        let before = log.checkpoint().await.unwrap();
        // Stored with their pending entries, never asked for: the node stopped.
        stored(&store, 300..310).await;
        // A new node (the origin it asks for does not rename the log).
        let reopened = ReceiptLog::open(store.clone(), &key(), "other.test/receipts")
            .await
            .unwrap();
        assert_eq!(reopened.verifier().name(), "log.test/receipts");
        // Its first sweep runs at once.
        let mut found = None;
        for _ in 0..200 {
            if let Ok(inclusion) = reopened.inclusion_of("rcpt_00309", None).await {
                found = Some(inclusion);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let found = found.expect("the sweep appended the pending receipts");
        check_inclusion(&reopened, &receipt(309), &found);
        assert!(found.leaf_index >= 300);
        let after = opened(&reopened, &reopened.checkpoint().await.unwrap());
        assert_eq!(after.size, 310);
        let old = opened(&log, &before);
        let proof = decode(&reopened.consistency(old.size, after.size).await.unwrap());
        verify::consistency(old.size, after.size, &old.root, &after.root, &proof).unwrap();
        // A receipt already in the log, asked for again, is not appended twice.
        let twice = reopened.include(&receipt(5)).await.unwrap();
        assert_eq!(twice.leaf_index, 5);
        assert_eq!(check_tiles(&reopened).await.len(), 310);
    }

    /// Waits (up to 10 s) until `receipt_id` is in the log.
    async fn appended(log: &ReceiptLog, receipt_id: &str) -> Inclusion {
        for _ in 0..1000 {
            if let Ok(inclusion) = log.inclusion_of(receipt_id, None).await {
                return inclusion;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{receipt_id} was not appended");
    }

    #[tokio::test]
    async fn receipts_stored_before_the_log_and_later_versions_are_appended_once_each() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let signed = |n| {
            let mut receipt = receipt(n);
            key().sign(&mut receipt);
            receipt
        };
        // An upgraded store: receipts without pending entries (all signed, as every receipt
        // was then), more than a page of them; and free receipts stored since, unsigned,
        // proven by their batches: those stay out of the log.
        for n in (0..600).chain(700..705) {
            let receipt = if n < 600 { signed(n) } else { receipt(n) };
            let bytes = serde_json::to_vec(&receipt).unwrap();
            store
                .put(Tree::Receipts, receipt.receipt_id.as_bytes(), &bytes)
                .await
                .unwrap();
        }
        let log = reopened(&store).await;
        // Calls go on meanwhile.
        let fresh = stored(&store, 600..610).await;
        for receipt in &fresh {
            check_inclusion(&log, receipt, &log.include(receipt).await.unwrap());
        }
        let old = appended(&log, "rcpt_00599").await;
        check_inclusion(&log, &signed(599), &old);
        appended(&log, "rcpt_00000").await;
        // A receipt whose settlement concluded is re-signed: its new version is an entry too.
        let mut settled = signed(3);
        settled.settlement.status = "settled".into();
        key().sign(&mut settled);
        let batch =
            Batch::new().put_receipt(crate::receipts::row(&settled, entry_of(&settled)).unwrap());
        store.apply(pending_version(batch, &settled)).await.unwrap();
        let first = log.inclusion_of("rcpt_00003", None).await.unwrap();
        // Reopened, the sweep appends the new version at once.
        let log = reopened(&store).await;
        let mut latest = first.clone();
        for _ in 0..1000 {
            latest = log.inclusion_of("rcpt_00003", None).await.unwrap();
            if latest.leaf_index != first.leaf_index {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(latest.leaf_index, 610, "the new version is the last leaf");
        check_inclusion(&log, &settled, &latest);
        let entries = check_tiles(&log).await;
        assert_eq!(entries.len(), 611, "each receipt once, and the new version");
        let versions: std::collections::HashSet<(String, String)> = entries
            .iter()
            .map(|entry| {
                let receipt: Receipt = serde_json::from_slice(entry).unwrap();
                (receipt.receipt_id, receipt.settlement.status)
            })
            .collect();
        assert_eq!(versions.len(), 611);
        assert!(log.inclusion_of("rcpt_00700", None).await.is_err());
        let backfill = store.log_state(LogState::Backfill).await.unwrap();
        assert!(backfill.is_none(), "the backfill is done");
    }

    /// A group other nodes kept from appending: its calls answer without a place in the log
    /// (their receipts stay stored, their entries pending), and the next append puts them in.
    #[tokio::test]
    async fn receipts_a_busy_log_could_not_append_are_left_pending() {
        let (store, log) = fresh_log().await;
        let receipts = stored(&store, 0..2).await;
        let mut answers = Vec::new();
        let group = receipts
            .iter()
            .map(|r| {
                let (reply, answer) = oneshot::channel();
                answers.push(answer);
                Job {
                    receipt_id: r.receipt_id.clone(),
                    pending: r.receipt_id.clone(),
                    entry: entry_of(r),
                    records: None,
                    replies: vec![reply],
                }
            })
            .collect();
        log.leave_pending(group, &LogError::Contended);
        for answer in answers {
            let left = answer.await.unwrap();
            assert!(matches!(left, Err(LogError::NotInLog(_))), "{left:?}");
        }
        for receipt in &receipts {
            let id = receipt.receipt_id.as_bytes();
            assert!(store.get(Tree::Receipts, id).await.unwrap().is_some());
            // Pending (stored after the log's start sweep).
            let pending = store.log_pending_entry(&receipt.receipt_id).await;
            assert!(pending.unwrap().is_some());
            let inclusion = log.include(receipt).await.unwrap();
            check_inclusion(&log, receipt, &inclusion);
        }
        assert_nothing_pending(&store).await;
    }

    /// Calls hand their records to the log: each is stored with its receipt's leaf, nothing is
    /// left pending; a call whose own condition fails is left out of its group (nothing of it
    /// stored, the failed condition's index its batch's), and the others are stored. On
    /// PostgreSQL two nodes' logs share the database, and their calls' groups take turns.
    async fn calls_records_are_stored_with_their_leaves_and_a_refused_one_is_left_out(
        stores: Vec<Arc<dyn Store>>,
    ) {
        let mut nodes = Vec::new();
        for store in &stores {
            nodes.push(reopened(store).await);
        }
        let receipts: Vec<Receipt> = (0..300).map(receipt).collect();
        let taken = receipt(299);
        let unclaimed = receipt(1000);
        let records = |r: &Receipt| store_receipt_bare(Batch::new(), r, entry_of(r)).unwrap();
        let commits = receipts
            .iter()
            .map(|r| (r, records(r)))
            // Receipt 299's id again (its first condition), after it on the same node, and a
            // batch whose nonce is not held as it says (its second).
            .chain([
                (&taken, records(&taken)),
                (
                    &unclaimed,
                    records(&unclaimed).require_nonce("1/a/b/c", Some(b"x".to_vec())),
                ),
            ])
            .map(|(r, batch)| {
                let n: usize = r.receipt_id["rcpt_".len()..].parse().unwrap();
                nodes[n % nodes.len()].commit(batch, r, entry_of(r))
            });
        let mut answers = futures::future::join_all(commits).await;
        let refused = answers.split_off(300);
        let mut indexes = Vec::new();
        for (receipt, answer) in receipts.iter().zip(answers) {
            // A group that lost its turns too often stores its records alone, pending.
            let inclusion = match answer.unwrap() {
                Some(inclusion) => inclusion,
                None => nodes[0].include(receipt).await.unwrap(),
            };
            check_inclusion(&nodes[0], receipt, &inclusion);
            indexes.push(inclusion.leaf_index);
        }
        indexes.sort_unstable();
        assert_eq!(indexes, (0..300).collect::<Vec<u64>>(), "each receipt once");
        assert!(
            matches!(refused[0], Err(StoreError::ConditionFailed(0))),
            "{refused:?}"
        );
        assert!(
            matches!(refused[1], Err(StoreError::ConditionFailed(1))),
            "{refused:?}"
        );
        let store = &stores[0];
        let unstored = store.receipt(&unclaimed.receipt_id).await.unwrap();
        assert!(unstored.is_none(), "nothing of a refused batch is stored");
        assert_eq!(store.log_leaves(&["rcpt_01000"]).await.unwrap(), vec![None]);
        assert_nothing_pending(store).await;
        for node in &nodes {
            assert_eq!(check_tiles(node).await.len(), 300);
        }
    }

    mod engines {
        use toolhost_testkit::on_both_engines;

        use super::*;

        on_both_engines!(calls_records_are_stored_with_their_leaves_and_a_refused_one_is_left_out);
    }

    /// Records the log cannot append go back to their call, which stores them alone with the
    /// receipt's pending entry: a later append puts it in the log.
    #[tokio::test]
    async fn records_the_log_cannot_append_are_stored_alone_and_appended_later() {
        let (store, log) = fresh_log().await;
        let (reply, answer) = oneshot::channel();
        let first = receipt(0);
        let job = Job {
            receipt_id: first.receipt_id.clone(),
            pending: first.receipt_id.clone(),
            entry: entry_of(&first),
            records: Some(Records {
                batch: store_receipt_bare(Batch::new(), &first, entry_of(&first)).unwrap(),
                reply,
            }),
            replies: Vec::new(),
        };
        log.leave_pending(vec![job], &LogError::Contended);
        match answer.await.unwrap() {
            Committed::Returned(batch, LogError::NotInLog(_)) => {
                assert_eq!(batch.conditions.len(), 1, "the call's batch, whole")
            }
            _ => panic!("the records should come back to their call"),
        }
        // A log that has stopped: the call stores its records alone, pending.
        log.close().await;
        let second = receipt(1);
        let entry = entry_of(&second);
        let batch = store_receipt_bare(Batch::new(), &second, entry.clone()).unwrap();
        assert_eq!(log.commit(batch, &second, entry).await.unwrap(), None);
        assert!(store.receipt(&second.receipt_id).await.unwrap().is_some());
        let pending = store.log_pending_entry(&second.receipt_id).await.unwrap();
        assert_eq!(pending, Some(entry_of(&second)));
        // The next node to open the log appends it.
        let log = reopened(&store).await;
        let inclusion = log.inclusion_of(&second.receipt_id, None).await.unwrap();
        check_inclusion(&log, &second, &inclusion);
        assert_nothing_pending(&store).await;
    }

    #[tokio::test]
    async fn nodes_appending_to_one_store_at_once_make_one_tree() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let a = reopened(&store).await;
        let b = reopened(&store).await;
        let receipts = stored(&store, 0..400).await;
        let inclusions = futures::future::join_all(receipts.iter().enumerate().map(|(n, r)| {
            if n % 2 == 0 {
                a.include(r)
            } else {
                b.include(r)
            }
        }))
        .await;
        let mut indexes: Vec<u64> = inclusions
            .iter()
            .zip(&receipts)
            .map(|(inclusion, receipt)| {
                let inclusion = inclusion.as_ref().unwrap();
                check_inclusion(&a, receipt, inclusion);
                inclusion.leaf_index
            })
            .collect();
        indexes.sort_unstable();
        assert_eq!(indexes, (0..400).collect::<Vec<u64>>());
        assert_eq!(check_tiles(&a).await.len(), 400);
        assert_eq!(check_tiles(&b).await.len(), 400);
    }

    /// A node that lost an append marks itself waiting; the other node's next append fails on
    /// the mark, and it lets the waiting node go first, then appends too.
    #[tokio::test]
    async fn a_node_that_sees_another_waiting_holds_back_then_appends() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let a = reopened(&store).await;
        let b = reopened(&store).await;
        // Stored after both logs' start sweeps: no sweep appends them meanwhile.
        let receipts = stored(&store, 0..2).await;
        b.wait_for_turn().await.unwrap();
        let mark = store.log_state(LogState::Waiting).await.unwrap();
        assert!(mark.is_some());
        let first = a.include(&receipts[0]).await.unwrap();
        check_inclusion(&a, &receipts[0], &first);
        assert_eq!(
            *a.inner.waiting.lock().unwrap(),
            mark,
            "a has seen the mark"
        );
        // b's tree is behind now: it loses once, marks itself waiting again, and appends.
        let second = b.include(&receipts[1]).await.unwrap();
        check_inclusion(&b, &receipts[1], &second);
        assert_ne!(store.log_state(LogState::Waiting).await.unwrap(), mark);
        assert_eq!(check_tiles(&b).await.len(), 2);
    }

    #[tokio::test]
    async fn a_log_whose_hashes_were_changed_does_not_open() {
        let (store, log) = fresh_log().await;
        for receipt in stored(&store, 0..20).await {
            log.include(&receipt).await.unwrap();
        }
        // Leaf 19 kept with another hash than its entry's.
        let (_, entry) = store.log_entries(19, 1).await.unwrap().remove(0);
        let changed = LeafRow {
            leaf: 19,
            name: "rcpt_changed".into(),
            hash: [0; 32],
            entry,
        };
        store
            .apply(Batch::new().put_log_leaf(changed))
            .await
            .unwrap();
        assert!(matches!(
            ReceiptLog::open(store.clone(), &key(), "log.test/receipts").await,
            Err(LogError::Corrupt(_))
        ));
    }
}
