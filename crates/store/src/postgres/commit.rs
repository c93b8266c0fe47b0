//! Group commit: a node's batches are committed by a few writers, and the batches that arrive
//! while every writer is busy are committed together, in one transaction, by the next free one.
//!
//! Why: a transaction costs PostgreSQL about a quarter of a millisecond of CPU however little
//! it holds (its begin and commit, the backend's wake-ups and the WAL flush it waits for;
//! `perf` in bench/RESULTS.md), and a paid call needs two of them (its nonce claim before the
//! handler, its settlement after). Committed one by one, the call's small transactions cost
//! the database more than the calls cost toolhost. Grouped, concurrent calls share them, as
//! sled's callers share its flushes: under load a transaction carries many calls' batches,
//! and alone a batch is committed at once (a free writer waits for nobody).
//!
//! Each batch stays all or nothing on its own: a group is one transaction of *members*
//! ([`Plan`]), and a member whose condition fails is left out of it (what it claimed is
//! deleted again) while the others commit. Members never share a key: a batch that touches a
//! key of the group waits for the next one, so it sees the earlier batch's writes as it would
//! have alone. A group that fails for another reason than a conflict (a write the server
//! refuses) is run again one batch at a time, so that failure is the batch's own.
//!
//! A batch that arrives while a transaction may start and nobody is waiting is committed at
//! once by its caller (as a batch alone always was): the queue, and a writer task's hop, are
//! for the batches that would otherwise wait. Callers and writers share the node's limit of
//! transactions in flight ([`PgOptions::writers`](super::PgOptions::writers)).
//!
//! A caller that stops waiting (its request gone) before its batch is picked up is dropped from
//! the group; a transaction whose callers have all gone is abandoned (rolled back), so a batch
//! stuck behind a row lock does not outlive everyone who asked for it.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinHandle;

use super::transaction::{condition_parts, write_parts, Place, Plan};
use super::{lock, Shared};
use crate::{Batch, StoreError, StoreResult};

/// Batches in one transaction at most.
const MAX_MEMBERS: usize = 64;
/// Bytes of keys and values in one transaction at most (a batch larger than this alone is
/// committed alone).
const MAX_BYTES: usize = 1 << 20;

/// What a batch became: the rows each of its writes affected (in first-write order).
type Outcome = StoreResult<Vec<u64>>;

/// A batch waiting for a writer.
struct Job {
    batch: Batch,
    /// Whether its commit must be durable before it is answered ([`Store::apply_unsynced`](crate::Store::apply_unsynced) is not).
    synced: bool,
    reply: oneshot::Sender<Outcome>,
}

impl Job {
    /// Hashes of the keys it holds or writes (two batches whose hashes meet are kept apart; a
    /// collision only delays one of them to the next group).
    fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        let conditions = (self.batch.conditions.iter()).map(|c| {
            let (place, key, _) = condition_parts(c);
            key_hash(place, key)
        });
        let writes = (self.batch.writes.iter()).map(|w| {
            let (place, key, _, _) = write_parts(w);
            key_hash(place, &key)
        });
        conditions.chain(writes)
    }

    fn bytes(&self) -> usize {
        let writes = self.batch.writes.iter().map(|w| {
            let (_, key, value, _) = write_parts(w);
            key.len() + value.map_or(0, <[u8]>::len)
        });
        writes.sum::<usize>() + self.batch.conditions.len() * 64
    }
}

fn key_hash(place: Place, key: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    (place, key).hash(&mut hasher);
    hasher.finish()
}

/// The node's writers: a queue of batches and the tasks that commit them.
pub(super) struct Writers {
    shared: Arc<Shared>,
    queue: Mutex<Option<mpsc::UnboundedSender<Job>>>,
    lanes: Arc<Lanes>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

/// What callers and writer tasks share: the transactions that may be in flight, and how many
/// batches wait in the queue.
struct Lanes {
    permits: Semaphore,
    waiting: AtomicUsize,
}

impl Writers {
    /// Starts `count` writers committing through `shared`; at most `count` transactions are
    /// in flight at once.
    pub(super) fn start(shared: Arc<Shared>, count: usize) -> Writers {
        let count = count.max(1);
        let (queue, jobs) = mpsc::unbounded_channel();
        let jobs = Arc::new(tokio::sync::Mutex::new(jobs));
        let lanes = Arc::new(Lanes {
            permits: Semaphore::new(count),
            waiting: AtomicUsize::new(0),
        });
        let tasks = (0..count)
            .map(|_| {
                let writer = write(Arc::clone(&shared), Arc::clone(&jobs), Arc::clone(&lanes));
                tokio::spawn(writer)
            })
            .collect();
        Writers {
            shared,
            queue: Mutex::new(Some(queue)),
            lanes,
            tasks: Mutex::new(tasks),
        }
    }

    /// Commits `batch` (alone or with others) and answers what each of its writes affected.
    pub(super) async fn commit(&self, batch: Batch, synced: bool) -> Outcome {
        let stopped = || StoreError::Unavailable("the store is closed".into());
        let queue = lock(&self.queue).clone().ok_or_else(stopped)?;
        if self.lanes.waiting.load(Ordering::Acquire) == 0 {
            if let Ok(_permit) = self.lanes.permits.try_acquire() {
                return commit_alone(&self.shared, &batch, synced).await;
            }
        }
        let (reply, answer) = oneshot::channel();
        let job = Job {
            batch,
            synced,
            reply,
        };
        self.lanes.waiting.fetch_add(1, Ordering::AcqRel);
        if queue.send(job).is_err() {
            self.lanes.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(stopped());
        }
        answer.await.map_err(|_| stopped())?
    }

    /// Stops taking batches and waits until those queued are committed.
    pub(super) async fn close(&self) {
        drop(lock(&self.queue).take());
        let tasks = std::mem::take(&mut *lock(&self.tasks));
        for task in tasks {
            // A writer only ends when the queue is closed and empty; a join error means one
            // panicked, which has been reported already.
            let _ = task.await;
        }
    }
}

/// One writer: waits for a queued batch, then for a transaction it may start, takes what queued
/// meanwhile and commits it as groups, until the queue is closed and empty. It holds the queue
/// while it waits for the transaction, so what arrives meanwhile joins its group rather than
/// spreading one batch to each writer.
async fn write(
    shared: Arc<Shared>,
    jobs: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Job>>>,
    lanes: Arc<Lanes>,
) {
    // Batches this writer took that did not fit in its last group, oldest first.
    let mut carried: VecDeque<Job> = VecDeque::new();
    loop {
        // With nothing carried, wait for a batch and keep the queue while waiting for a
        // transaction; with batches carried, take what is queued only if no other writer is
        // waiting on the queue (it holds it until a batch comes, and the carried ones must not
        // wait for that).
        let mut queue = if carried.is_empty() {
            let mut jobs = jobs.lock().await;
            match jobs.recv().await {
                Some(job) => carried.push_back(job),
                None => return,
            }
            Some(jobs)
        } else {
            jobs.try_lock().ok()
        };
        let Ok(_permit) = lanes.permits.acquire().await else {
            return;
        };
        if let Some(jobs) = &mut queue {
            take_queued(jobs, &mut carried);
        }
        drop(queue);
        let group = next_group(&mut carried, &lanes.waiting);
        if !group.is_empty() {
            commit_group(&shared, group).await;
        }
    }
}

fn take_queued(jobs: &mut mpsc::UnboundedReceiver<Job>, carried: &mut VecDeque<Job>) {
    while carried.len() < MAX_MEMBERS {
        match jobs.try_recv() {
            Ok(job) => carried.push_back(job),
            Err(_) => break,
        }
    }
}

/// Commits one batch in a transaction of its own.
async fn commit_alone(shared: &Shared, batch: &Batch, synced: bool) -> Outcome {
    let mut plan = Plan::new(&[batch]);
    plan.synced = synced || plan.writes_watched();
    let mut members = shared.transact(&plan).await?;
    members.remove(0).map_err(StoreError::ConditionFailed)
}

/// The next group from what a writer holds, oldest first: batches that share no key with an
/// earlier member, within the group's bounds. The rest stay for the next one; batches whose
/// callers have gone are dropped. `waiting` counts down what leaves the queue either way.
fn next_group(carried: &mut VecDeque<Job>, waiting: &AtomicUsize) -> Vec<Job> {
    let held = carried.len();
    let mut group = Vec::new();
    let mut keys = HashSet::new();
    let mut bytes = 0;
    let mut rest = VecDeque::new();
    while let Some(job) = carried.pop_front() {
        if job.reply.is_closed() {
            continue;
        }
        let fits = group.is_empty()
            || (group.len() < MAX_MEMBERS
                && bytes + job.bytes() <= MAX_BYTES
                && job.keys().all(|key| !keys.contains(&key)));
        if fits {
            keys.extend(job.keys());
            bytes += job.bytes();
            group.push(job);
        } else {
            rest.push_back(job);
        }
    }
    waiting.fetch_sub(held - rest.len(), Ordering::AcqRel);
    *carried = rest;
    group
}

/// Commits a group in one transaction and answers each member.
async fn commit_group(shared: &Shared, group: Vec<Job>) {
    let synced: Vec<bool> = group.iter().map(|job| job.synced).collect();
    let (batches, mut replies): (Vec<Batch>, Vec<oneshot::Sender<Outcome>>) =
        group.into_iter().map(|job| (job.batch, job.reply)).unzip();
    let members: Vec<&Batch> = batches.iter().collect();
    let mut plan = Plan::new(&members);
    plan.synced = synced.contains(&true) || plan.writes_watched();
    let everyone_gone = futures::future::join_all(replies.iter_mut().map(|r| r.closed()));
    let applied = tokio::select! {
        applied = shared.transact(&plan) => applied,
        // Dropping the transaction rolls it back (see `OpenTransaction`).
        _ = everyone_gone => return,
    };
    match applied {
        Ok(members) => {
            for (reply, outcome) in replies.into_iter().zip(members) {
                let _ = reply.send(outcome.map_err(StoreError::ConditionFailed));
            }
        }
        // Nothing was committed and the failure may be one member's: each alone says whose.
        Err(StoreError::Engine(_)) if replies.len() > 1 => {
            for ((batch, reply), synced) in members.into_iter().zip(replies).zip(synced) {
                let _ = reply.send(commit_alone(shared, batch, synced).await);
            }
        }
        Err(e) => {
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
        }
    }
}
