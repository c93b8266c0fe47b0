//! The embedded default engine: sled, one sled tree per [`Tree`].
//!
//! Writes land in sled's memory first and are made durable by group commit: each writer takes a
//! sequence number and waits for one dedicated flusher thread to fsync past it, so concurrent
//! writers share one `fsync` instead of paying for one each (see [`GroupCommit`]).
//!
//! A batch of more than one write is journaled rather than run as a sled transaction: under an
//! exclusive lock its conditions are checked, the whole batch is written as one record of the
//! journal tree, its writes are applied as plain inserts and removes, and the record is removed.
//! sled recovers a prefix of its log (it stops at the first tear), so after a crash either the
//! record is gone and every write before its removal is there, or it is still there and opening
//! the store applies it again ([`SledStore::complete_journal`]); no later write to the batch's
//! keys can come back without the record's removal, because the lock orders them after it (a
//! batch that fails part-way while running stops all writes until the store is reopened, for
//! the same reason). Reads take the lock shared, so none sees a batch in part, as none saw a
//! sled transaction in part. A sled transaction is atomic too, but it rolls sled's I/O buffer
//! twice, waking sled's whole I/O thread pool; a paid call's settlement (receipt, sale, spent
//! nonce) spent more CPU there than in the rest of its writes (bench/RESULTS.md, issue 15).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, RwLockReadGuard};
use std::thread::JoinHandle;

use async_trait::async_trait;
use tokio::sync::{broadcast, watch};

use super::builders::{self, BuilderRecords, KeyAndBuilder};
use super::credits::{CreditListing, CreditRecords};
use super::debts::BuilderDebts;
use super::endpoints::{self, EndpointRecords};
use super::handler_data::{self, HandlerData, HandlerSpace};
use super::payout_settings::{self, BuilderPayoutSettings};
use super::refund_claims::{self, RefundClaims};
use super::revisions::{self, EndpointRevisions};
use super::rollout_tallies::{self, RolloutTallies};
use super::secrets::{self, EndpointSecrets};
use super::{
    credits, debts, events, keys, logs, nonces, packets, paid_out, payment_ids,
    pending_settlements, quotes, receipt_log, receipts, refunds, sales, Batch, BuilderEvents,
    Change, Durable, EndpointLogs, Entry, EventPage, EventQuery, EventRow, HostedQuotes, KeyBatch,
    KeyCondition, KeyWrite, LogRow, LogState, NonceClaims, PaidOutMarks, PaymentIds, PayoutPackets,
    PendingSettlements, QuoteRow, ReceiptLogRecords, ReceiptRecords, RefundRecords, SaleSum,
    SalesLedger, Store, StoreError, StoreResult, Tree,
};

/// How many unread [`Change`]s a subscriber may fall behind before it gets `Lagged`.
const CHANGE_CAPACITY: usize = 1024;

/// How long the flusher waits for more writers before a flush, when the last flush covered
/// more than one write (so more are probably on their way): PostgreSQL's `commit_delay`, for
/// the same reason. Each flush (`sync_file_range`, `fdatasync`, and the job it hands sled's I/O
/// pool, which wakes all its idle threads) costs the same however many writes it covers; under
/// load this cut the flushes per free call from 0.23 to 0.10 and added about a fifth to its
/// throughput (bench/RESULTS.md). A lone writer never waits.
const GROUP_WAIT: std::time::Duration = std::time::Duration::from_micros(250);

/// The sled tree of journaled batches (not a [`Tree`]: nothing else reads or writes it).
const JOURNAL_TREE: &str = "batch_journal";

/// The page cache the embedded store gets unless told otherwise. sled's own default is 1 GiB,
/// which it fills with everything written: measured, the server's RSS then grew by the size of
/// what it wrote for as long as a soak ran.
pub const DEFAULT_EMBEDDED_CACHE_BYTES: u64 = 32 * 1024 * 1024;

pub struct SledStore {
    db: sled::Db,
    trees: HashMap<Tree, sled::Tree>,
    journal: sled::Tree,
    /// Batches hold it exclusively from their conditions' check to their record's removal;
    /// reads and single-key writes hold it shared (sled's compare-and-swap orders those writes
    /// among themselves).
    batches: RwLock<Batches>,
    /// Every write holds it shared (taken before `batches`); a [snapshot](Store::snapshot)
    /// holds it exclusively, so no write lands while it reads, and reads go on.
    writes: RwLock<()>,
    /// Makes the next journaled batch fail after its record is written, as a storage error
    /// there would.
    #[cfg(test)]
    fail_after_record: AtomicBool,
    commit: Arc<GroupCommit>,
    flusher: Mutex<Option<JoinHandle<()>>>,
    changes: broadcast::Sender<Change>,
}

/// What the batches' lock guards.
#[derive(Default)]
struct Batches {
    /// The last journal record's number.
    last_record: u64,
    /// A batch failed between writing its record and removing it: its writes may be there in
    /// part, and only reopening the store completes it. Until then every write is refused, so
    /// none can land after the batch's and be overwritten when it is completed.
    cut_short: bool,
}

/// The group-commit state shared by writers and the flusher thread.
///
/// Writers: apply in memory, then `written += 1` (after the write, so a flush that read
/// `written >= n` covers write `n`), then wait until `durable >= n`. The flusher: sleep until
/// `written > durable`, wait [`GROUP_WAIT`] if the last group had company, read `written`,
/// `db.flush()`, publish what it read as `durable`. Writers that arrive while a flush runs are
/// all covered by the next one.
///
/// A writer wakes the flusher only when it is asleep (`asleep`): under load it almost never is,
/// and taking its lock to notify it on every write cost each call a contended mutex and a
/// `futex` wake or two (bench/RESULTS.md). The flusher sets `asleep` before it checks
/// `written` and a writer bumps `written` before it checks `asleep`, both sequentially
/// consistent: either the flusher sees the write, or the writer sees it asleep and notifies it
/// under the lock it sleeps on (so the notice cannot fall between its check and its wait).
struct GroupCommit {
    /// Sequence numbers handed out to completed in-memory writes.
    written: AtomicU64,
    /// What the flusher has made durable, and whether it still runs.
    state: watch::Sender<Durability>,
    /// Wakes the flusher; the `bool` is "stop requested".
    wake: Mutex<bool>,
    wake_signal: Condvar,
    /// The flusher is (about to be) waiting on `wake_signal`.
    asleep: AtomicBool,
    /// Completed `db.flush()` calls, for tests and metrics.
    flushes: AtomicU64,
}

#[derive(Clone, Debug, Default)]
struct Durability {
    /// Every write numbered up to this is on disk.
    durable: u64,
    /// The last failed flush: writes numbered up to `.0` are not known durable (`.1` says why).
    failed: Option<(u64, String)>,
    /// The flusher has exited (after `close`); later writers flush for themselves.
    stopped: bool,
}

impl GroupCommit {
    fn new() -> Self {
        Self {
            written: AtomicU64::new(0),
            state: watch::Sender::new(Durability::default()),
            wake: Mutex::new(false),
            wake_signal: Condvar::new(),
            asleep: AtomicBool::new(false),
            flushes: AtomicU64::new(0),
        }
    }

    /// Takes the next sequence number for a write that has just been applied in memory and
    /// wakes the flusher if it sleeps.
    fn written(&self) -> u64 {
        let seq = self.written.fetch_add(1, Ordering::SeqCst) + 1;
        if self.asleep.load(Ordering::SeqCst) {
            // Under the lock the flusher checks its condition under, so the wake-up cannot
            // fall between its check and its wait.
            let _guard = self.wake.lock().unwrap_or_else(|p| p.into_inner());
            self.wake_signal.notify_one();
        }
        seq
    }

    fn request_stop(&self) {
        let mut stop = self.wake.lock().unwrap_or_else(|p| p.into_inner());
        *stop = true;
        self.wake_signal.notify_one();
    }

    /// The flusher thread's loop: returns after a stop request, once everything written before
    /// it is flushed.
    fn run_flusher(&self, db: &sled::Db, log: Option<&std::fs::File>) {
        // How many writes the last flush covered: more than one means writers are concurrent.
        let mut last_group = 0u64;
        loop {
            let stop = {
                let mut stop = self.wake.lock().unwrap_or_else(|p| p.into_inner());
                self.asleep.store(true, Ordering::SeqCst);
                while !*stop && self.written.load(Ordering::SeqCst) <= self.state.borrow().durable {
                    stop = self
                        .wake_signal
                        .wait(stop)
                        .unwrap_or_else(|p| p.into_inner());
                }
                self.asleep.store(false, Ordering::SeqCst);
                *stop
            };
            if last_group >= 2 && !stop {
                std::thread::sleep(GROUP_WAIT);
            }
            let target = self.written.load(Ordering::SeqCst);
            last_group = target.saturating_sub(self.state.borrow().durable);
            if target > self.state.borrow().durable {
                // sled 0.34 ends a flush with `sync_file_range`, which survives a killed process
                // but not a power cut (the drive's cache, the file's size): `fdatasync` its log
                // file too, once for the whole group.
                let result = db
                    .flush()
                    .map_err(|e| e.to_string())
                    .and_then(|_| match log {
                        Some(file) => file.sync_data().map_err(|e| e.to_string()),
                        None => Ok(()),
                    });
                self.flushes.fetch_add(1, Ordering::SeqCst);
                match result {
                    Ok(_) => self.state.send_modify(|s| s.durable = target),
                    Err(e) => {
                        tracing::error!(error = %e, "sled flush failed");
                        self.state
                            .send_modify(|s| s.failed = Some((target, e.to_string())));
                        // Let a failing disk breathe; the next writer wakes us again.
                        std::thread::sleep(std::time::Duration::from_millis(50));
                    }
                }
            }
            if stop && self.written.load(Ordering::SeqCst) <= self.state.borrow().durable {
                self.state.send_modify(|s| s.stopped = true);
                return;
            }
        }
    }
}

impl SledStore {
    /// Opens (or creates) the store. sled holds an exclusive file lock that a previous owner in
    /// this process, or a process just restarted by a supervisor, releases a moment after it
    /// drops the database; wait briefly for it rather than failing the start.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        Self::open_with_cache(dir, DEFAULT_EMBEDDED_CACHE_BYTES)
    }

    /// [`SledStore::open`] with a page cache of `cache_bytes`.
    pub fn open_with_cache(dir: &Path, cache_bytes: u64) -> StoreResult<Self> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match sled::Config::new()
                .path(dir)
                .cache_capacity(cache_bytes)
                .open()
            {
                Ok(db) => {
                    let log = std::fs::File::open(dir.join("db")).map_err(engine)?;
                    return Self::from_db(db, Some(log));
                }
                Err(sled::Error::Io(e))
                    if is_held_lock(&e) && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(engine(e)),
            }
        }
    }

    /// A throwaway store for unit tests; removed when dropped.
    pub fn temporary() -> StoreResult<Self> {
        let db = sled::Config::new().temporary(true).open().map_err(engine)?;
        Self::from_db(db, None)
    }

    /// `log`: sled's log file (`DIR/db`), synced after each group flush; `None` for temporary
    /// stores, which need not survive anything.
    fn from_db(db: sled::Db, log: Option<std::fs::File>) -> StoreResult<Self> {
        let mut trees = HashMap::new();
        for tree in Tree::ALL {
            trees.insert(tree, db.open_tree(tree.name()).map_err(engine)?);
        }
        let journal = db.open_tree(JOURNAL_TREE).map_err(engine)?;
        Self::complete_journal(&db, &trees, &journal)?;
        let commit = Arc::new(GroupCommit::new());
        let flusher = {
            let commit = Arc::clone(&commit);
            let db = db.clone();
            std::thread::Builder::new()
                .name("sled-flusher".into())
                .spawn(move || commit.run_flusher(&db, log.as_ref()))
                .map_err(engine)?
        };
        let (changes, _) = broadcast::channel(CHANGE_CAPACITY);
        Ok(Self {
            db,
            trees,
            journal,
            batches: RwLock::default(),
            writes: RwLock::default(),
            #[cfg(test)]
            fail_after_record: Default::default(),
            commit,
            flusher: Mutex::new(Some(flusher)),
            changes,
        })
    }

    fn tree(&self, tree: Tree) -> &sled::Tree {
        // Every variant is opened in `from_db`.
        &self.trees[&tree]
    }

    /// Writes an entry of a backup into this store, which is being restored and serves nothing
    /// yet: no lock, no flush, no change published; [`Store::close`] makes it durable.
    pub fn restore_entry(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()> {
        self.tree(tree).insert(key, value).map_err(engine)?;
        Ok(())
    }

    /// Whether every tree is empty (a store a backup may be restored into).
    pub fn is_empty(&self) -> bool {
        Tree::ALL.iter().all(|tree| self.tree(*tree).is_empty())
    }

    /// How many times the flusher has called `fsync` (`db.flush()`): with group commit, far
    /// fewer than the writes when writers are concurrent.
    pub fn flushes(&self) -> u64 {
        self.commit.flushes.load(Ordering::SeqCst)
    }

    /// Returns once write `seq` (from [`GroupCommit::written`]) is durable.
    async fn wait_durable(&self, seq: u64) -> StoreResult<()> {
        let mut state = self.commit.state.subscribe();
        let reached = state
            .wait_for(|s| {
                s.durable >= seq || s.failed.as_ref().is_some_and(|f| f.0 >= seq) || s.stopped
            })
            .await
            .map_err(engine)?
            .clone();
        if reached.durable >= seq {
            return Ok(());
        }
        if let Some((through, why)) = reached.failed.filter(|f| f.0 >= seq) {
            debug_assert!(through >= seq);
            return Err(StoreError::Engine(format!("flush failed: {why}")));
        }
        // The flusher has stopped (the store is closing): flush this write ourselves.
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || db.flush())
            .await
            .map_err(engine)?
            .map_err(engine)?;
        Ok(())
    }

    /// Durability of the write just applied: the future waits for it, then publishes the
    /// write's watched keys (each key once, however often the batch wrote it). The flusher is
    /// woken now, so writes staged meanwhile share its flush.
    fn commit_write<'k>(&self, changed: impl Iterator<Item = (Tree, &'k [u8])>) -> Durable<'_> {
        let seq = self.commit.written();
        let mut published: Vec<(Tree, Vec<u8>)> = Vec::new();
        for (tree, key) in changed.filter(|(tree, _)| tree.is_watched()) {
            if !published.iter().any(|(t, k)| *t == tree && k == key) {
                published.push((tree, key.to_vec()));
            }
        }
        Box::pin(async move {
            self.wait_durable(seq).await?;
            for (tree, key) in published {
                // No subscriber is not an error.
                let _ = self.changes.send(Change { tree, key });
            }
            Ok(())
        })
    }

    /// [`Store::apply_staged`] of a batch in keys.
    fn apply_keys_staged(&self, batch: KeyBatch) -> StoreResult<Durable<'_>> {
        self.apply_keys(&batch)?;
        if batch.writes.is_empty() {
            return Ok(Box::pin(std::future::ready(Ok(()))));
        }
        Ok(self.commit_write(batch.writes.iter().map(|w| (w.tree, w.key.as_slice()))))
    }

    /// A batch in keys applied in memory, with no sequence number of the group commit: nothing
    /// waits for it, and the flusher is not woken for it. It is made durable by the next flush
    /// for any writer after it (sled flushes its whole log, and recovers a prefix of it).
    fn apply_keys(&self, batch: &KeyBatch) -> StoreResult<()> {
        for write in &batch.ahead {
            self.apply_single_key(None, write)?;
        }
        match single_key(batch) {
            Some((condition, write)) => self.apply_single_key(condition, write),
            None if batch.trees().is_empty() => Ok(()),
            None => self.apply_journaled(batch),
        }
    }

    /// A batch of one write, conditioned (if at all) on the key it writes, as one
    /// compare-and-swap: all-or-nothing by itself, with no journal record. A free call's
    /// receipt and a payment's nonce claim are such batches, one per call.
    fn apply_single_key(
        &self,
        condition: Option<&KeyCondition>,
        write: &KeyWrite,
    ) -> StoreResult<()> {
        let (key, new) = (&write.key, write.value.as_deref());
        let tree = self.tree(write.tree);
        let _shared = self.shared()?;
        let expected = match condition {
            None => {
                match new {
                    Some(value) => tree.insert(key.as_slice(), value).map_err(engine)?,
                    None => tree.remove(key.as_slice()).map_err(engine)?,
                };
                return Ok(());
            }
            Some(condition) => condition.expected.as_deref(),
        };
        tree.compare_and_swap(key.as_slice(), expected, new)
            .map_err(engine)?
            .map_err(|_| StoreError::ConditionFailed(0))
    }

    /// The writes' gate and the batches' lock, shared, for a write of one key.
    fn shared(&self) -> StoreResult<(RwLockReadGuard<'_, ()>, RwLockReadGuard<'_, Batches>)> {
        let gate = self.writing();
        let batches = self.reading();
        if batches.cut_short {
            return Err(cut_short());
        }
        Ok((gate, batches))
    }

    /// The writes' gate, shared: no snapshot is being read.
    fn writing(&self) -> RwLockReadGuard<'_, ()> {
        self.writes.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The batches' lock, shared, for a read: reads go on after a batch failed part-way.
    fn reading(&self) -> RwLockReadGuard<'_, Batches> {
        self.batches.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Any other batch, journaled (see the module's header).
    fn apply_journaled(&self, batch: &KeyBatch) -> StoreResult<()> {
        let _gate = self.writing();
        let mut batches = self.batches.write().unwrap_or_else(|p| p.into_inner());
        if batches.cut_short {
            return Err(cut_short());
        }
        for (i, condition) in batch.conditions.iter().enumerate() {
            let current = self.tree(condition.tree).get(&condition.key);
            if current.map_err(engine)?.as_deref() != condition.expected.as_deref() {
                return Err(StoreError::ConditionFailed(i));
            }
        }
        if batch.writes.is_empty() {
            return Ok(());
        }
        batches.last_record += 1;
        let record = batches.last_record.to_be_bytes();
        self.journal
            .insert(record, journal::encode(&batch.writes))
            .map_err(engine)?;
        #[cfg(test)]
        if self.fail_after_record.swap(false, Ordering::SeqCst) {
            batches.cut_short = true;
            return Err(engine("injected failure after the journal record"));
        }
        let applied = apply_writes(&self.trees, &batch.writes)
            .and_then(|()| self.journal.remove(record).map(drop).map_err(engine));
        if let Err(e) = applied {
            batches.cut_short = true;
            tracing::error!(error = %e, "a batch failed part-way; writes are refused until the store is reopened");
            return Err(e);
        }
        Ok(())
    }

    /// Applies again every batch whose journal record survived a crash (its writes may be
    /// there in part), then removes the records and flushes, before the store serves anything.
    fn complete_journal(
        db: &sled::Db,
        trees: &HashMap<Tree, sled::Tree>,
        journal: &sled::Tree,
    ) -> StoreResult<()> {
        let mut completed = 0usize;
        for record in journal.iter() {
            let (id, bytes) = record.map_err(engine)?;
            let writes = journal::decode(&bytes).ok_or_else(|| {
                StoreError::Engine(format!(
                    "the batch journal's record {} is unreadable; the store needs repair",
                    hex::encode(&id)
                ))
            })?;
            apply_writes(trees, &writes)?;
            journal.remove(id).map_err(engine)?;
            completed += 1;
        }
        if completed > 0 {
            db.flush().map_err(engine)?;
            tracing::warn!(
                batches = completed,
                "completed batches a crash had cut short"
            );
        }
        Ok(())
    }

    fn stop_flusher(&self) -> Option<JoinHandle<()>> {
        self.commit.request_stop();
        self.flusher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

impl Drop for SledStore {
    fn drop(&mut self) {
        // The flusher holds a handle on the database (and so its file lock): stop it, so a
        // store reopened on the same directory right after this one does not wait for it.
        if let Some(flusher) = self.stop_flusher() {
            let _ = flusher.join();
        }
    }
}

/// Whether opening failed because another handle holds the database's file lock. sled 0.34
/// reports it as `ErrorKind::Other` with the lock's `WouldBlock` only in the message.
fn is_held_lock(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::WouldBlock
        || e.to_string().starts_with("could not acquire lock on")
}

/// The write and its condition when a batch is one write conditioned at most on its own key.
fn single_key(batch: &KeyBatch) -> Option<(Option<&KeyCondition>, &KeyWrite)> {
    let [write] = batch.writes.as_slice() else {
        return None;
    };
    match batch.conditions.as_slice() {
        [] => Some((None, write)),
        [c] => (c.tree == write.tree && c.key == write.key).then_some((Some(c), write)),
        _ => None,
    }
}

/// A batch's writes as plain inserts and removes, in order.
fn apply_writes(trees: &HashMap<Tree, sled::Tree>, writes: &[KeyWrite]) -> StoreResult<()> {
    for write in writes {
        let tree = &trees[&write.tree];
        match &write.value {
            Some(value) => tree.insert(write.key.as_slice(), value.as_slice()),
            None => tree.remove(write.key.as_slice()),
        }
        .map_err(engine)?;
    }
    Ok(())
}

/// A journal record: a batch's writes, each `[kind][tree name length][tree name][key length
/// u32 LE][key]` and, for a put, `[value length u32 LE][value]`, after a format byte.
mod journal {
    use super::{KeyWrite, Tree};

    const FORMAT: u8 = 1;
    const PUT: u8 = 1;
    const DELETE: u8 = 2;

    pub(super) fn encode(writes: &[KeyWrite]) -> Vec<u8> {
        let mut out = vec![FORMAT];
        for write in writes {
            out.push(match write.value {
                Some(_) => PUT,
                None => DELETE,
            });
            let name = write.tree.name().as_bytes();
            out.push(name.len() as u8);
            out.extend_from_slice(name);
            for bytes in std::iter::once(&write.key).chain(&write.value) {
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
            }
        }
        out
    }

    /// `None` for anything [`encode`] cannot have written.
    pub(super) fn decode(bytes: &[u8]) -> Option<Vec<KeyWrite>> {
        let mut reader = Reader(bytes);
        if reader.take(1)? != [FORMAT] {
            return None;
        }
        let mut writes = Vec::new();
        while let Some(kind) = reader.take(1) {
            let name_len = reader.take(1)?[0] as usize;
            let name = reader.take(name_len)?;
            let tree = Tree::named(std::str::from_utf8(name).ok()?)?;
            let key = reader.sized()?;
            let value = match kind[0] {
                PUT => Some(reader.sized()?),
                DELETE => None,
                _ => return None,
            };
            writes.push(KeyWrite { tree, key, value });
        }
        Some(writes)
    }

    struct Reader<'a>(&'a [u8]);

    impl<'a> Reader<'a> {
        fn take(&mut self, n: usize) -> Option<&'a [u8]> {
            let (head, rest) = self.0.split_at_checked(n)?;
            self.0 = rest;
            Some(head)
        }

        fn sized(&mut self) -> Option<Vec<u8>> {
            let len = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
            Some(self.take(len)?.to_vec())
        }
    }
}

fn cut_short() -> StoreError {
    StoreError::Engine(
        "a batch failed part-way; writes are refused until the store is reopened, which \
         completes it"
            .into(),
    )
}

fn engine(e: impl std::fmt::Display) -> StoreError {
    StoreError::Engine(e.to_string())
}

#[async_trait]
impl EndpointLogs for SledStore {
    async fn append_logs(&self, endpoint: &str, rows: &[LogRow], keep: u64) -> StoreResult<()> {
        logs::kv::append(self, endpoint, rows, keep).await
    }

    async fn logs_before(
        &self,
        endpoint: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<LogRow>> {
        logs::kv::before(self, endpoint, before, limit).await
    }

    async fn delete_logs(&self, endpoint: &str) -> StoreResult<u64> {
        logs::kv::delete(self, endpoint).await
    }
}

#[async_trait]
impl BuilderEvents for SledStore {
    async fn record_events(&self, events: &[(&str, EventRow)]) -> StoreResult<()> {
        events::kv::record(self, events).await
    }

    async fn events_page(&self, builder: &str, query: &EventQuery<'_>) -> StoreResult<EventPage> {
        events::kv::page(self, builder, query).await
    }

    async fn sweep_events(&self, before: &str) -> StoreResult<usize> {
        events::kv::sweep(self, before).await
    }
}

#[async_trait]
impl HostedQuotes for SledStore {
    async fn save_quote(&self, quote: &QuoteRow) -> StoreResult<()> {
        quotes::kv::save(self, quote).await
    }

    async fn quote(&self, id: &str) -> StoreResult<Option<Vec<u8>>> {
        quotes::kv::get(self, id).await
    }

    async fn sweep_quotes(&self, before_ms: u64, limit: usize) -> StoreResult<u64> {
        quotes::kv::sweep(self, before_ms, limit).await
    }
}

#[async_trait]
impl SalesLedger for SledStore {
    async fn sale(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        sales::kv::get(self, receipt_id).await
    }

    async fn sales_after(
        &self,
        seller: Option<&str>,
        after: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        sales::kv::after(self, seller, after, limit).await
    }

    /// An embedded store's reads are local: the ledger reads the sales and sums them.
    async fn sale_sums(
        &self,
        _seller: Option<&str>,
        _since_ms: i64,
        _unpaid_only: bool,
        _fee_bps: u64,
    ) -> StoreResult<Option<Vec<SaleSum>>> {
        Ok(None)
    }

    async fn upgrade_sales(&self) -> StoreResult<u64> {
        sales::kv::upgrade(self).await
    }
}

#[async_trait]
impl ReceiptRecords for SledStore {
    async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        receipts::kv::get(self, receipt_id).await
    }

    async fn receipt_proof(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        receipts::kv::proof(self, receipt_id).await
    }

    async fn receipts_after(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        receipts::kv::after(self, after, limit).await
    }

    async fn sweep_free_receipts(&self, before_ms: i64, limit: usize) -> StoreResult<u64> {
        receipts::kv::sweep(self, before_ms, limit).await
    }
}

#[async_trait]
impl PayoutPackets for SledStore {
    async fn packet(&self, packet_id: &str) -> StoreResult<Option<(String, Vec<u8>)>> {
        packets::kv::get(self, packet_id).await
    }

    async fn packets_of(
        &self,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        packets::kv::of(self, builder, after, limit).await
    }
}

#[async_trait]
impl PaymentIds for SledStore {
    async fn payment_id(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
        payment_ids::kv::get(self, key).await
    }
}

#[async_trait]
impl PaidOutMarks for SledStore {
    async fn paid_out(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        paid_out::kv::PLACE.get_many(self, receipt_ids).await
    }
}

#[async_trait]
impl PendingSettlements for SledStore {
    async fn pending_settlements(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        pending_settlements::kv::PLACE
            .page(self, after, limit)
            .await
    }

    async fn pending_settlements_of(
        &self,
        receipt_ids: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>> {
        pending_settlements::kv::PLACE
            .get_many(self, receipt_ids)
            .await
    }
}

#[async_trait]
impl RefundClaims for SledStore {
    async fn refund_claim(&self, receipt_id: &str) -> StoreResult<Option<Vec<u8>>> {
        let place = refund_claims::kv::PLACE;
        self.get(place.tree, &place.key(receipt_id)).await
    }

    async fn refund_claims(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        refund_claims::kv::PLACE.page(self, after, limit).await
    }
}

#[async_trait]
impl BuilderRecords for SledStore {
    async fn builder(&self, builder_id: &str) -> StoreResult<Option<Vec<u8>>> {
        let place = builders::kv::BUILDERS;
        self.get(place.tree, &place.key(builder_id)).await
    }

    async fn builder_key(&self, key_sha256: &str) -> StoreResult<Option<Vec<u8>>> {
        let place = builders::kv::KEYS;
        self.get(place.tree, &place.key(key_sha256)).await
    }

    async fn builder_by_key(&self, key_sha256: &str) -> StoreResult<Option<KeyAndBuilder>> {
        builders::kv::by_key(self, key_sha256).await
    }
}

#[async_trait]
impl EndpointRecords for SledStore {
    async fn endpoint(&self, slug: &str) -> StoreResult<Option<Vec<u8>>> {
        let place = endpoints::kv::PLACE;
        self.get(place.tree, &place.key(slug)).await
    }

    async fn endpoints(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        endpoints::kv::PLACE.page(self, after, limit).await
    }

    async fn slug_reservation(&self, slug: &str) -> StoreResult<Option<Vec<u8>>> {
        let place = endpoints::kv::RESERVATIONS;
        self.get(place.tree, &place.key(slug)).await
    }

    async fn slug_reservations(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        endpoints::kv::RESERVATIONS.page(self, after, limit).await
    }

    async fn owed_wipes(&self, limit: usize) -> StoreResult<Vec<String>> {
        let page = endpoints::kv::OWED_WIPES.page(self, None, limit).await?;
        Ok(page
            .into_iter()
            .map(|(endpoint_id, _)| endpoint_id)
            .collect())
    }
}

#[async_trait]
impl HandlerData for SledStore {
    async fn handler_entries(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
        keys: &[&str],
    ) -> StoreResult<Vec<Option<Vec<u8>>>> {
        handler_data::kv::get_many(self, space, endpoint_id, keys).await
    }

    async fn handler_entries_under(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
        prefix: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        handler_data::kv::under(self, space, endpoint_id, prefix, after, limit).await
    }

    async fn handler_usage(
        &self,
        space: HandlerSpace,
        endpoint_id: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        let place = handler_data::kv::USAGE;
        let key = place.key(&handler_data::usage_key(space, endpoint_id));
        self.get(place.tree, &key).await
    }

    async fn builder_usage(
        &self,
        space: HandlerSpace,
        builder: &str,
    ) -> StoreResult<Option<Vec<u8>>> {
        let place = handler_data::kv::BUILDER_USAGE;
        let key = place.key(&handler_data::usage_key(space, builder));
        self.get(place.tree, &key).await
    }
}

#[async_trait]
impl EndpointSecrets for SledStore {
    async fn secrets(&self, owner: &str, limit: usize) -> StoreResult<Vec<(String, Vec<u8>)>> {
        secrets::kv::of(self, owner, limit).await
    }

    async fn all_secrets(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        secrets::kv::ALL.page(self, after, limit).await
    }

    async fn delete_secrets(&self, owner: &str) -> StoreResult<()> {
        secrets::kv::delete_all(self, owner).await
    }
}

#[async_trait]
impl RolloutTallies for SledStore {
    async fn rollout_tallies(
        &self,
        endpoint_id: &str,
        _rollout: &str,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        rollout_tallies::kv::of(self, endpoint_id, limit).await
    }

    async fn delete_rollout_tallies(&self, endpoint_id: &str) -> StoreResult<()> {
        rollout_tallies::kv::delete_all(self, endpoint_id).await
    }
}

#[async_trait]
impl BuilderPayoutSettings for SledStore {
    async fn payout_settings(&self, builder: &str) -> StoreResult<Option<Vec<u8>>> {
        let place = payout_settings::kv::PLACE;
        self.get(place.tree, &place.key(builder)).await
    }
}

#[async_trait]
impl EndpointRevisions for SledStore {
    async fn revision(&self, endpoint_id: &str, number: u64) -> StoreResult<Option<Vec<u8>>> {
        (self.get(
            revisions::kv::TREE,
            &revisions::kv::key(endpoint_id, number),
        ))
        .await
    }

    async fn newest_revisions(
        &self,
        endpoint_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        revisions::kv::newest(self, endpoint_id, limit).await
    }

    async fn delete_revisions(&self, endpoint_id: &str) -> StoreResult<()> {
        revisions::kv::delete_all(self, endpoint_id).await
    }
}

#[async_trait]
impl BuilderDebts for SledStore {
    async fn debts(
        &self,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        debts::kv::of(self, builder, after, limit).await
    }

    async fn payout_version(&self, builder: &str) -> StoreResult<Option<Vec<u8>>> {
        let key = debts::kv::VERSIONS.key(builder);
        self.get(debts::kv::VERSIONS.tree, &key).await
    }
}

#[async_trait]
impl CreditRecords for SledStore {
    async fn credit_by_token(&self, token_sha256: &str) -> StoreResult<Option<(String, Vec<u8>)>> {
        credits::kv::by_token(self, token_sha256).await
    }

    async fn credit_balance(&self, credit_id: &str) -> StoreResult<Option<Vec<u8>>> {
        let key = credits::kv::BALANCES.key(credit_id);
        self.get(credits::kv::BALANCES.tree, &key).await
    }

    async fn credits(&self, after: Option<&str>, limit: usize) -> StoreResult<Vec<CreditListing>> {
        credits::kv::listing(self, after, limit).await
    }

    async fn credit_holds(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        credits::kv::HOLDS.page(self, after, limit).await
    }
}

#[async_trait]
impl RefundRecords for SledStore {
    async fn refunds(&self, receipt_ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        refunds::kv::PLACE.get_many(self, receipt_ids).await
    }
}

#[async_trait]
impl NonceClaims for SledStore {
    async fn nonce(&self, key: &str) -> StoreResult<Option<Vec<u8>>> {
        nonces::kv::get(self, key).await
    }

    async fn open_nonces(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        nonces::kv::open(self, after, limit).await
    }

    async fn upgrade_nonces(&self) -> StoreResult<u64> {
        nonces::kv::upgrade(self).await
    }
}

#[async_trait]
impl ReceiptLogRecords for SledStore {
    async fn log_pending(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        receipt_log::kv::PENDING.page(self, after, limit).await
    }

    async fn log_pending_entry(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        receipt_log::kv::pending_entry(self, name).await
    }

    async fn log_leaves(&self, names: &[&str]) -> StoreResult<Vec<Option<u64>>> {
        receipt_log::kv::leaves(self, names).await
    }

    async fn log_entries(&self, first: u64, count: u64) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        receipt_log::kv::entries(self, first, count).await
    }

    async fn log_nodes(
        &self,
        level: u8,
        first: u64,
        count: u64,
    ) -> StoreResult<Vec<(u64, Vec<u8>)>> {
        receipt_log::kv::nodes(self, level, first, count).await
    }

    async fn log_state(&self, state: LogState) -> StoreResult<Option<Vec<u8>>> {
        receipt_log::kv::state(self, state).await
    }
}

#[async_trait]
impl Store for SledStore {
    async fn get(&self, tree: Tree, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        let _shared = self.reading();
        Ok(self
            .tree(tree)
            .get(key)
            .map_err(engine)?
            .map(|v| v.to_vec()))
    }

    async fn put(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()> {
        {
            let _shared = self.shared()?;
            self.tree(tree).insert(key, value).map_err(engine)?;
        }
        self.commit_write(std::iter::once((tree, key))).await
    }

    async fn delete(&self, tree: Tree, key: &[u8]) -> StoreResult<bool> {
        let existed = {
            let _shared = self.shared()?;
            self.tree(tree).remove(key).map_err(engine)?.is_some()
        };
        self.commit_write(std::iter::once((tree, key))).await?;
        Ok(existed)
    }

    async fn scan_prefix(
        &self,
        tree: Tree,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        let t = self.tree(tree);
        let _shared = self.reading();
        // Start at the prefix, or just past `after` when that is further on.
        let start = match after {
            Some(after) if after >= prefix => keys::successor(after),
            _ => prefix.to_vec(),
        };
        let mut out = Vec::new();
        for item in t.range(start..) {
            if out.len() >= limit {
                break;
            }
            let (k, v) = item.map_err(engine)?;
            if !k.starts_with(prefix) {
                break;
            }
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    async fn scan_prefix_rev(
        &self,
        tree: Tree,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        let t = self.tree(tree);
        let _shared = self.reading();
        // The prefix's range, cut short at `before`.
        let end = match (keys::prefix_end(prefix), before) {
            (Some(end), Some(before)) => Some(end.min(before.to_vec())),
            (end, None) => end,
            (None, Some(before)) => Some(before.to_vec()),
        };
        let iter = match end {
            Some(end) if end.as_slice() <= prefix => return Ok(Vec::new()),
            Some(end) => t.range(prefix.to_vec()..end),
            None => t.range(prefix.to_vec()..),
        };
        let mut out = Vec::new();
        for item in iter.rev() {
            if out.len() >= limit {
                break;
            }
            let (k, v) = item.map_err(engine)?;
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    async fn apply(&self, batch: Batch) -> StoreResult<()> {
        self.apply_staged(batch).await?.await
    }

    async fn apply_staged(&self, batch: Batch) -> StoreResult<Durable<'_>> {
        self.apply_keys_staged(batch.into_keys())
    }

    /// Applied in memory without waking the flusher: a flush for it alone would be one no
    /// caller waits for (a paid call's nonce claim, then its settlement's flush, was two
    /// flushes where one covers both). A batch of a watched tree is published once durable,
    /// so it is waited for as [`Store::apply`] is.
    async fn apply_unsynced(&self, batch: Batch) -> StoreResult<()> {
        let batch = batch.into_keys();
        if batch.trees().iter().any(|tree| tree.is_watched()) {
            return self.apply_keys_staged(batch)?.await;
        }
        self.apply_keys(&batch)
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// Holds every write back (reads go on) while it flushes what was written before it and
    /// reads every tree: the store as of one moment, all of it durable.
    fn snapshot(&self, visit: &mut crate::Visit<'_>) -> Option<StoreResult<()>> {
        let _no_writes = self.writes.write().unwrap_or_else(|p| p.into_inner());
        let mut read = || {
            if self.reading().cut_short {
                return Err(cut_short());
            }
            self.db.flush().map_err(engine)?;
            for tree in Tree::ALL {
                for item in self.tree(tree).iter() {
                    let (key, value) = item.map_err(engine)?;
                    visit(tree, &key, &value)?;
                }
            }
            Ok(())
        };
        Some(read())
    }

    async fn close(&self) -> StoreResult<()> {
        if let Some(flusher) = self.stop_flusher() {
            tokio::task::spawn_blocking(move || flusher.join())
                .await
                .map_err(engine)?
                .map_err(|_| StoreError::Engine("the sled flusher thread panicked".into()))?;
        }
        // Whatever was written after the flusher stopped was flushed by its writer; one more
        // flush covers writes in flight right now.
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || db.flush())
            .await
            .map_err(engine)?
            .map_err(engine)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Snapshots taken while writers go on are each the store as of one moment: a batch's two
    /// keys both or neither, and one writer's keys written in turn a prefix of them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 3)]
    async fn a_snapshot_while_writes_go_on_is_one_moment_of_the_store() {
        let store = Arc::new(SledStore::temporary().unwrap());
        let writer = |pairs: bool| {
            let store = store.clone();
            tokio::spawn(async move {
                for i in 0u32..300 {
                    let key = i.to_be_bytes().to_vec();
                    if pairs {
                        let batch = Batch::new()
                            .put(
                                Tree::Ledger,
                                [b"a".as_slice(), &key].concat(),
                                b"1".to_vec(),
                            )
                            .put(
                                Tree::Receipts,
                                [b"b".as_slice(), &key].concat(),
                                b"1".to_vec(),
                            );
                        store.apply(batch).await.unwrap();
                    } else {
                        store.put(Tree::Meta, &key, b"1").await.unwrap();
                    }
                }
            })
        };
        let writers = [writer(true), writer(false)];
        let mut seen = Vec::new();
        while seen.len() < 3 || !writers.iter().all(|w| w.is_finished()) {
            let store = store.clone();
            let snapshot = tokio::task::spawn_blocking(move || {
                let mut entries = Vec::new();
                store
                    .snapshot(&mut |tree, key, _| {
                        entries.push((tree, key.to_vec()));
                        Ok(())
                    })
                    .expect("sled takes snapshots")
                    .unwrap();
                entries
            })
            .await
            .unwrap();
            seen.push(snapshot);
        }
        for writer in writers {
            writer.await.unwrap();
        }
        for entries in &seen {
            let keys = |tree: Tree, prefix: &[u8]| -> Vec<Vec<u8>> {
                (entries.iter())
                    .filter(|(t, k)| *t == tree && k.starts_with(prefix))
                    .map(|(_, k)| k[prefix.len()..].to_vec())
                    .collect()
            };
            assert_eq!(
                keys(Tree::Ledger, b"a"),
                keys(Tree::Receipts, b"b"),
                "a batch in part"
            );
            let singles = keys(Tree::Meta, b"");
            let prefix: Vec<Vec<u8>> = (0u32..singles.len() as u32)
                .map(|i| i.to_be_bytes().to_vec())
                .collect();
            assert_eq!(singles, prefix, "a later write without an earlier one");
        }
    }

    #[tokio::test]
    async fn batch_is_all_or_nothing() {
        let s = SledStore::temporary().unwrap();
        s.put(Tree::Nonces, b"n1", b"used").await.unwrap();
        let err = s
            .apply(
                Batch::new()
                    .put(Tree::Receipts, b"r1".to_vec(), b"x".to_vec())
                    .require_absent(Tree::Nonces, b"n1".to_vec()),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::ConditionFailed(0)));
        assert_eq!(s.get(Tree::Receipts, b"r1").await.unwrap(), None);

        s.apply(
            Batch::new()
                .require_absent(Tree::Nonces, b"n2".to_vec())
                .put(Tree::Nonces, b"n2".to_vec(), b"used".to_vec())
                .put(Tree::Receipts, b"r2".to_vec(), b"y".to_vec()),
        )
        .await
        .unwrap();
        assert_eq!(
            s.get(Tree::Receipts, b"r2").await.unwrap().as_deref(),
            Some(&b"y"[..])
        );
    }

    #[tokio::test]
    async fn compare_and_swap_detects_change() {
        let s = SledStore::temporary().unwrap();
        s.put(Tree::Credits, b"c", b"100").await.unwrap();
        let stale = Batch::new()
            .require_equals(Tree::Credits, b"c".to_vec(), Some(b"90".to_vec()))
            .put(Tree::Credits, b"c".to_vec(), b"80".to_vec());
        assert!(s.apply(stale).await.is_err());
        let fresh = Batch::new()
            .require_equals(Tree::Credits, b"c".to_vec(), Some(b"100".to_vec()))
            .put(Tree::Credits, b"c".to_vec(), b"80".to_vec());
        s.apply(fresh).await.unwrap();
        assert_eq!(
            s.get(Tree::Credits, b"c").await.unwrap().as_deref(),
            Some(&b"80"[..])
        );
    }

    #[tokio::test]
    async fn scans_page_in_both_directions() {
        let s = SledStore::temporary().unwrap();
        for k in ["a/1", "a/2", "a/3", "b/1"] {
            s.put(Tree::Logs, k.as_bytes(), b"v").await.unwrap();
        }
        let keys = |v: Vec<Entry>| {
            v.into_iter()
                .map(|(k, _)| String::from_utf8(k).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(s.scan_prefix(Tree::Logs, b"a/", None, 2).await.unwrap()),
            ["a/1", "a/2"]
        );
        assert_eq!(
            keys(
                s.scan_prefix(Tree::Logs, b"a/", Some(b"a/2"), 10)
                    .await
                    .unwrap()
            ),
            ["a/3"]
        );
        assert_eq!(
            keys(s.scan_prefix_rev(Tree::Logs, b"a/", None, 2).await.unwrap()),
            ["a/3", "a/2"]
        );
        assert_eq!(
            keys(
                s.scan_prefix_rev(Tree::Logs, b"a/", Some(b"a/2"), 10)
                    .await
                    .unwrap()
            ),
            ["a/1"]
        );
    }

    /// Group commit: 64 writers each doing 8 writes at once share flushes. Run on disk (not
    /// sled's temporary mode) so a flush costs a real fsync, as in production.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writers_share_flushes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(SledStore::open(dir.path()).unwrap());
        const WRITERS: usize = 64;
        const WRITES_EACH: usize = 8;
        let tasks: Vec<_> = (0..WRITERS)
            .map(|w| {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    for i in 0..WRITES_EACH {
                        let key = format!("w{w}/{i}");
                        store.put(Tree::Logs, key.as_bytes(), b"v").await.unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        let writes = (WRITERS * WRITES_EACH) as u64;
        let flushes = store.flushes();
        assert!(flushes >= 1, "nothing was flushed");
        assert!(
            flushes * 4 <= writes,
            "{flushes} flushes for {writes} concurrent writes: group commit is not grouping"
        );
        // Every acknowledged write is there.
        let all = store
            .scan_prefix(Tree::Logs, b"w", None, usize::MAX)
            .await
            .unwrap();
        assert_eq!(all.len() as u64, writes);
        store.close().await.unwrap();
    }

    /// A writer wakes the flusher only when it sleeps: writes that land just as it goes to
    /// sleep (a fast flush, writers pausing a random few microseconds, some alone and some
    /// together) must each still be flushed. A lost wake-up leaves its write waiting for the
    /// next writer, which for the last writes never comes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_write_waits_for_a_wake_up_the_flusher_missed() {
        let store = Arc::new(SledStore::temporary().unwrap());
        let tasks: Vec<_> = (0..4u64)
            .map(|w| {
                let store = Arc::clone(&store);
                tokio::spawn(async move {
                    for i in 0..500u64 {
                        let pause = (w * 7919 + i * 104_729) % 150;
                        if pause > 100 {
                            tokio::task::yield_now().await;
                        } else {
                            std::thread::sleep(std::time::Duration::from_micros(pause));
                        }
                        let key = format!("w{w}/{i}");
                        let put = store.put(Tree::Logs, key.as_bytes(), b"v");
                        tokio::time::timeout(std::time::Duration::from_secs(20), put)
                            .await
                            .unwrap_or_else(|_| panic!("write {key} was never flushed"))
                            .unwrap();
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        store.close().await.unwrap();
    }

    /// A write returns only after a flush that covers it: with no concurrency at all, every
    /// write has its own flush.
    #[tokio::test]
    async fn each_sequential_write_is_flushed_before_it_returns() {
        let s = SledStore::temporary().unwrap();
        for i in 0..5u64 {
            s.put(Tree::Meta, b"k", &i.to_be_bytes()).await.unwrap();
            assert_eq!(s.flushes(), i + 1);
        }
        // Reads and failed conditions do not flush.
        s.get(Tree::Meta, b"k").await.unwrap();
        assert!(s
            .apply(Batch::new().require_absent(Tree::Meta, b"k".to_vec()))
            .await
            .is_err());
        assert_eq!(s.flushes(), 5);
    }

    /// An unsynced write returns before any flush and wakes no flush of its own: the next
    /// durable write's flush covers it (one flush for both, where the flusher woken by the
    /// unsynced write made two). One to a watched tree is flushed before it returns.
    #[tokio::test]
    async fn an_unsynced_write_is_flushed_with_the_next_durable_one() {
        let s = SledStore::temporary().unwrap();
        s.apply_unsynced(Batch::new().put(Tree::Nonces, b"n".to_vec(), b"1".to_vec()))
            .await
            .unwrap();
        assert_eq!(
            s.get(Tree::Nonces, b"n").await.unwrap().as_deref(),
            Some(&b"1"[..])
        );
        // Time for a flusher woken by it to have flushed (it never is).
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert_eq!(s.flushes(), 0);
        s.apply(Batch::new().put(Tree::Meta, b"k".to_vec(), b"1".to_vec()))
            .await
            .unwrap();
        assert_eq!(s.flushes(), 1);
        s.apply_unsynced(Batch::new().put(Tree::Endpoints, b"e".to_vec(), b"1".to_vec()))
            .await
            .unwrap();
        assert_eq!(s.flushes(), 2);
    }

    #[tokio::test]
    async fn writes_after_close_are_still_durable_and_do_not_hang() {
        let dir = tempfile::tempdir().unwrap();
        let s = SledStore::open(dir.path()).unwrap();
        s.put(Tree::Meta, b"before", b"1").await.unwrap();
        s.close().await.unwrap();
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            s.put(Tree::Meta, b"after", b"2"),
        )
        .await
        .expect("a write after close hung")
        .unwrap();
        drop(s);
        let reopened = SledStore::open(dir.path()).unwrap();
        assert_eq!(
            reopened.get(Tree::Meta, b"after").await.unwrap().as_deref(),
            Some(&b"2"[..])
        );
    }

    /// What a crash between a batch's journal record and its last write leaves on disk (the
    /// record, one write of two): opening the store applies the rest and clears the record.
    #[tokio::test]
    async fn a_batch_cut_short_by_a_crash_is_completed_when_the_store_opens() {
        let dir = tempfile::tempdir().unwrap();
        let writes = vec![
            KeyWrite {
                tree: Tree::Receipts,
                key: b"r1".to_vec(),
                value: Some(b"receipt".to_vec()),
            },
            KeyWrite {
                tree: Tree::Ledger,
                key: b"s1".to_vec(),
                value: Some(b"sale".to_vec()),
            },
            KeyWrite {
                tree: Tree::Nonces,
                key: b"claim".to_vec(),
                value: None,
            },
        ];
        {
            let db = sled::open(dir.path()).unwrap();
            db.open_tree("nonces")
                .unwrap()
                .insert(b"claim", b"held")
                .unwrap();
            let journal = db.open_tree(JOURNAL_TREE).unwrap();
            journal
                .insert(7u64.to_be_bytes(), journal::encode(&writes))
                .unwrap();
            db.open_tree("receipts")
                .unwrap()
                .insert(b"r1", b"receipt")
                .unwrap();
            db.flush().unwrap();
        }
        let store = SledStore::open(dir.path()).unwrap();
        let get = |tree, key: &'static [u8]| {
            let store = &store;
            async move { store.get(tree, key).await.unwrap() }
        };
        assert_eq!(
            get(Tree::Receipts, b"r1").await.as_deref(),
            Some(&b"receipt"[..])
        );
        assert_eq!(
            get(Tree::Ledger, b"s1").await.as_deref(),
            Some(&b"sale"[..])
        );
        assert_eq!(get(Tree::Nonces, b"claim").await, None);
        assert!(store.journal.is_empty(), "the record is cleared");
        // Numbering starts again after recovery; the next batch journals as usual.
        store
            .apply(
                Batch::new()
                    .put(Tree::Meta, b"a".to_vec(), b"1".to_vec())
                    .put(Tree::Meta, b"b".to_vec(), b"1".to_vec()),
            )
            .await
            .unwrap();
        assert!(store.journal.is_empty());
        assert_eq!(get(Tree::Meta, b"b").await.as_deref(), Some(&b"1"[..]));
    }

    /// The real thing: a child process (this test binary, re-run as [`hammer_batches`]) keeps
    /// four tasks applying three-tree batches, and is killed with SIGKILL at a random moment,
    /// eight times over. Every reopen finds each task's three keys equal (no batch in part) and
    /// at least at the last value the child was answered (nothing acknowledged lost). How many
    /// reopens had journal records to complete is printed: the crash landed mid-batch on disk.
    #[test]
    fn kill_9_mid_batch_never_leaves_a_batch_in_part() {
        if let Some(dir) = std::env::var_os(HAMMER_DIR) {
            return hammer_batches(Path::new(&dir));
        }
        let dir = tempfile::tempdir().unwrap();
        let mut completed_opens = 0;
        for round in 0..8u64 {
            let mut child = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "store::sled_store::tests::kill_9_mid_batch_never_leaves_a_batch_in_part",
                    "--nocapture",
                ])
                .env(HAMMER_DIR, dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut stdout = child.stdout.take().unwrap();
            // Let it get going, then kill it somewhere in the middle of its work.
            std::thread::sleep(std::time::Duration::from_millis(300 + round * 37));
            child.kill().unwrap();
            child.wait().unwrap();
            let mut acknowledged = String::new();
            std::io::Read::read_to_string(&mut stdout, &mut acknowledged).unwrap();

            let pending = {
                let db = sled::open(dir.path()).unwrap();
                db.open_tree(JOURNAL_TREE).unwrap().len()
            };
            completed_opens += usize::from(pending > 0);
            let store = SledStore::open(dir.path()).unwrap();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            for task in 0..HAMMER_TASKS {
                let key = format!("task{task}").into_bytes();
                let read = |tree| {
                    let value = runtime.block_on(store.get(tree, &key)).unwrap();
                    value.map(|v| u64::from_be_bytes(v[..8].try_into().unwrap()))
                };
                let (a, b, c) = (read(Tree::Meta), read(Tree::Ledger), read(Tree::Receipts));
                assert!(
                    a == b && b == c,
                    "round {round}, task {task}: {a:?} {b:?} {c:?}"
                );
                let last_answered = acknowledged
                    .lines()
                    .filter_map(|l| l.strip_prefix(&format!("task{task} ")))
                    .filter_map(|n| n.parse::<u64>().ok())
                    .max();
                assert!(
                    a >= last_answered,
                    "round {round}, task {task}: answered {last_answered:?}, found {a:?}"
                );
            }
            assert!(store.journal.is_empty());
        }
        eprintln!(
            "kill -9 mid-batch: 8 rounds, {completed_opens} reopened with batches to complete"
        );
    }

    const HAMMER_DIR: &str = "TOOLHOST_TEST_SLED_HAMMER_DIR";
    const HAMMER_TASKS: usize = 4;

    /// The child of [`kill_9_mid_batch_never_leaves_a_batch_in_part`]: until killed, each task
    /// writes its next number to three trees in one batch (one value padded, so sled's buffers
    /// fill mid-batch) and prints it once the batch is durable.
    fn hammer_batches(dir: &Path) {
        let store = Arc::new(SledStore::open(dir).unwrap());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(HAMMER_TASKS)
            .build()
            .unwrap();
        runtime.block_on(async {
            let tasks: Vec<_> = (0..HAMMER_TASKS)
                .map(|task| {
                    let store = Arc::clone(&store);
                    tokio::spawn(async move {
                        let key = format!("task{task}").into_bytes();
                        let start = store
                            .get(Tree::Meta, &key)
                            .await
                            .unwrap()
                            .map_or(0, |v| u64::from_be_bytes(v[..8].try_into().unwrap()));
                        for n in start + 1.. {
                            let value = n.to_be_bytes().to_vec();
                            let mut padded = value.clone();
                            padded.resize(20_000, b'.');
                            store
                                .apply(
                                    Batch::new()
                                        .put(Tree::Meta, key.clone(), value.clone())
                                        .put(Tree::Ledger, key.clone(), padded)
                                        .put(Tree::Receipts, key.clone(), value),
                                )
                                .await
                                .unwrap();
                            println!("task{task} {n}");
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
    }

    /// A storage error after a batch's record is written: that batch and every later write
    /// fail (a later write could otherwise be overwritten when the batch is completed), and
    /// reopening completes the batch.
    #[tokio::test]
    async fn a_batch_that_fails_part_way_stops_writes_until_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let store = SledStore::open(dir.path()).unwrap();
        store
            .fail_after_record
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let batch = Batch::new()
            .put(Tree::Meta, b"a".to_vec(), b"1".to_vec())
            .put(Tree::Ledger, b"b".to_vec(), b"1".to_vec());
        assert!(store.apply(batch.clone()).await.is_err());
        for refused in [
            store.put(Tree::Meta, b"a", b"2").await.err(),
            store.delete(Tree::Meta, b"a").await.err(),
            store.apply(batch.clone()).await.err(),
            store
                .apply(Batch::new().put(Tree::Meta, b"c".to_vec(), b"2".to_vec()))
                .await
                .err(),
        ] {
            let error = refused.expect("refused");
            assert!(error.to_string().contains("reopened"), "{error}");
        }
        store.close().await.unwrap();
        drop(store);
        let store = SledStore::open(dir.path()).unwrap();
        assert_eq!(
            store.get(Tree::Ledger, b"b").await.unwrap().as_deref(),
            Some(&b"1"[..])
        );
        assert_eq!(
            store.get(Tree::Meta, b"a").await.unwrap().as_deref(),
            Some(&b"1"[..])
        );
        assert_eq!(store.get(Tree::Meta, b"c").await.unwrap(), None);
        store.put(Tree::Meta, b"a", b"3").await.unwrap();
    }

    /// A scan racing batches never sees one in part (as with sled transactions before).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_scan_never_sees_a_batch_in_part() {
        let store = Arc::new(SledStore::temporary().unwrap());
        let writer = {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                for n in 0u32..2_000 {
                    let value = n.to_be_bytes().to_vec();
                    // Not waiting for each flush keeps the batches coming back to back.
                    let _durable = store
                        .apply_staged(
                            Batch::new()
                                .put(Tree::Meta, b"pair/a".to_vec(), value.clone())
                                .put(Tree::Meta, b"pair/b".to_vec(), value),
                        )
                        .await
                        .unwrap();
                }
            })
        };
        let mut scans = 0;
        while !writer.is_finished() {
            let pair = store
                .scan_prefix(Tree::Meta, b"pair/", None, 10)
                .await
                .unwrap();
            if let [(_, a), (_, b)] = pair.as_slice() {
                assert_eq!(a, b, "a batch seen in part after {scans} scans");
            }
            scans += 1;
            tokio::task::yield_now().await;
        }
        writer.await.unwrap();
    }

    /// A record that cannot be read stops the start with a clear error: applying part of it,
    /// or dropping it, could leave money half recorded.
    #[test]
    fn an_unreadable_journal_record_refuses_to_open() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            let journal = db.open_tree(JOURNAL_TREE).unwrap();
            let mut record = journal::encode(&[KeyWrite {
                tree: Tree::Receipts,
                key: b"r1".to_vec(),
                value: Some(b"receipt".to_vec()),
            }]);
            record.truncate(record.len() - 2);
            journal.insert(1u64.to_be_bytes(), record).unwrap();
            db.flush().unwrap();
        }
        let error = SledStore::open(dir.path()).err().expect("refused");
        assert!(error.to_string().contains("batch journal"), "{error}");
    }

    #[test]
    fn journal_records_read_back_as_written() {
        let writes = vec![
            KeyWrite {
                tree: Tree::PaymentIds,
                key: vec![],
                value: Some(vec![0; 70_000]),
            },
            KeyWrite {
                tree: Tree::HandlerKv,
                key: b"k".to_vec(),
                value: None,
            },
        ];
        let decoded = journal::decode(&journal::encode(&writes)).unwrap();
        assert_eq!(format!("{decoded:?}"), format!("{writes:?}"));
        assert!(journal::decode(&[]).is_none());
        assert!(journal::decode(&[1, 3, 1, b'x']).is_none());
    }

    /// The lock of a store still open (here: in this process; in production: a process that
    /// has just been killed or is ending) is waited for, not a failed start.
    #[test]
    fn opening_a_locked_store_waits_for_its_owner_to_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = SledStore::open(dir.path()).unwrap();
        let owner = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(500));
            drop(first);
        });
        let second = SledStore::open(dir.path());
        owner.join().unwrap();
        assert!(second.is_ok(), "{:?}", second.err());
    }
}
