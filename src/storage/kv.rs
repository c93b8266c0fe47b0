//! `ctx.kv`'s entries, with versionstamps, and atomic commits, on any store engine.
//!
//! Every kv write is a commit: a plain `set` or `delete` is an atomic of one mutation. A commit
//! reads the endpoint's usage record and every key it touches, evaluates the checks and the
//! mutations against what it read, and writes the entries and the new usage record in one
//! [`Batch`] guarded by everything it read. A concurrent writer (on this node or another
//! sharing the database) makes the batch fail, and the commit runs again on fresh reads; so a
//! commit is all-or-nothing, checks hold at the moment it lands, and concurrent `sum`s never lose
//! an update. The quotas are enforced by the same planning as every counted write
//! ([`super::plan_read`]), on the totals after the whole commit.
//!
//! # Versionstamps
//! Monotonic per endpoint: an endpoint's kv is one database, the unit a check compares within,
//! and per-endpoint numbering needs no cross-endpoint coordination. The number sits in the
//! endpoint's usage record, which every kv write already guards and rewrites (for the quotas),
//! so numbering costs no extra read or contention. A commit takes `max(last + 1, now in µs)`:
//! unique and increasing in commit order whatever the nodes' clocks, and still increasing
//! after an endpoint's data is deleted and its record with it (the clock has moved past the
//! old numbers; nothing could have committed a million times a second). Shown as 20 lowercase
//! hex digits, Deno KV's width, so they compare as strings. An entry written before versionstamps
//! existed reads as `00000000000000000000` until it is next written.
//!
//! # Expiry
//! An expired entry is absent to every reader: `get` and `getEntry` give null (and remove it),
//! its versionstamp is null, a check for null passes, a `sum` starts again from 0. A `sum` keeps
//! a live entry's expiry (a counter for a time window ends with its window); an entry it
//! creates never expires.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand::Rng;
use sandbox::{HostError, KvAtomic, KvMutation, KvVersioned, MAX_SAFE_INTEGER};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    host_error, now_secs, plan_read, scoped_key, storage_error, EntryChange, Planning, Space,
    UsageRead,
};
use crate::config::Quotas;
use crate::store::{Batch, Store, StoreError, Tree};

/// A kv value as stored: the value, its expiry (unix seconds) and the number of the commit that
/// wrote it (0: before versionstamps).
#[derive(Serialize, Deserialize)]
pub(crate) struct Stored {
    pub(crate) v: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exp: Option<u64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    seq: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Stored {
    /// The entry in `bytes`, or `None` when it has expired by `now`.
    pub(crate) fn live(bytes: &[u8], now: u64) -> Result<Option<Stored>, StoreError> {
        let stored: Stored =
            serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok((!stored.exp.is_some_and(|exp| exp <= now)).then_some(stored))
    }
}

/// A versionstamp as handlers see it.
fn versionstamp(seq: u64) -> String {
    format!("{seq:020x}")
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// How a commit ended.
#[derive(Debug, PartialEq)]
pub enum Committed {
    /// Every check held and the mutations landed under this versionstamp; `existed` says, per
    /// mutation, whether its key held a live entry before the commit.
    Done {
        versionstamp: String,
        existed: Vec<bool>,
    },
    /// A check did not hold; nothing was written.
    CheckFailed,
}

/// How many times a commit is planned again after losing a race before it gives up
/// (`storage_busy`). On one node commits of an endpoint queue ([`KvWriters`]), so only other
/// nodes' commits (or uploads moving the usage record) can make it lose.
const MAX_ATTEMPTS: u32 = 64;

/// Commits `atomic` to endpoint `slug`'s kv (counted toward `builder`'s totals). The sandbox
/// has checked its shape and sizes; here live the rules that need the stored state: checks,
/// `sum` on what is stored, expiry and quotas.
pub async fn commit(
    store: &dyn Store,
    quotas: &Quotas,
    slug: &str,
    builder: Option<&str>,
    atomic: &KvAtomic,
) -> Result<Committed, HostError> {
    for attempt in 0..MAX_ATTEMPTS {
        let (batch, outcome) = match plan_commit(store, quotas, slug, builder, atomic).await {
            Ok(Planned::Write(batch, outcome)) => (batch, outcome),
            Ok(Planned::CheckFailed) => return Ok(Committed::CheckFailed),
            Err(e) => return Err(e.into()),
        };
        match store.apply(batch).await {
            Ok(()) => return Ok(outcome),
            Err(StoreError::ConditionFailed(_)) => {
                // Another node got there first: wait a little (growing, jittered) so two
                // nodes stop colliding, then read again.
                let cap = 1u64 << attempt.min(6);
                let ms = rand::thread_rng().gen_range(0..=cap);
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            Err(e) => return Err(storage_error(e)),
        }
    }
    Err(host_error(
        "storage_busy",
        "too many concurrent writes; nothing was written, try again",
    ))
}

enum Planned {
    Write(Batch, Committed),
    CheckFailed,
}

/// One attempt: the batch to apply and what it will have done, from one round of reads.
async fn plan_commit(
    store: &dyn Store,
    quotas: &Quotas,
    slug: &str,
    builder: Option<&str>,
    atomic: &KvAtomic,
) -> Result<Planned, Planning> {
    let now = now_secs();
    let usage = UsageRead::read(store, Space::Kv, slug).await?;
    let seq = (usage.seq() + 1).max(now_micros());
    // Every key touched, as stored (`raw`) and as readers see it now (`state`).
    let mut raw: BTreeMap<&str, Option<Vec<u8>>> = BTreeMap::new();
    let mut state: HashMap<&str, Option<Stored>> = HashMap::new();
    let keys = atomic
        .checks
        .iter()
        .map(|c| c.key.as_str())
        .chain(atomic.mutations.iter().map(KvMutation::key));
    for key in keys {
        if raw.contains_key(key) {
            continue;
        }
        let bytes = store.get(Tree::HandlerKv, &scoped_key(slug, key)).await?;
        let live = match &bytes {
            Some(b) => Stored::live(b, now)?,
            None => None,
        };
        raw.insert(key, bytes);
        state.insert(key, live);
    }
    for check in &atomic.checks {
        let current = state[check.key.as_str()]
            .as_ref()
            .map(|s| versionstamp(s.seq));
        if current != check.versionstamp {
            return Ok(Planned::CheckFailed);
        }
    }
    let existed = atomic
        .mutations
        .iter()
        .map(|m| state[m.key()].is_some())
        .collect();
    let mut written: Vec<&str> = Vec::new();
    for mutation in &atomic.mutations {
        let key = mutation.key();
        let entry = state.get_mut(key).expect("every key was read");
        *entry = match mutation {
            KvMutation::Set {
                value, ttl_seconds, ..
            } => Some(Stored {
                v: value.clone(),
                exp: ttl_seconds.map(|t| now.saturating_add(t)),
                seq,
            }),
            KvMutation::Delete { .. } => None,
            KvMutation::Sum { n, .. } => Some(summed(key, entry.take(), *n, seq)?),
        };
        if !written.contains(&key) {
            written.push(key);
        }
    }
    if written.is_empty() {
        // Checks only: nothing to write, but they must hold together, at the state whose
        // versionstamp is answered.
        let mut batch = usage.guard(Batch::new());
        for (key, bytes) in raw {
            batch = batch.require_equals(Tree::HandlerKv, scoped_key(slug, key), bytes);
        }
        let outcome = Committed::Done {
            versionstamp: versionstamp(usage.seq()),
            existed: Vec::new(),
        };
        return Ok(Planned::Write(batch, outcome));
    }
    let encoded: Vec<Option<Vec<u8>>> = written
        .iter()
        .map(|key| {
            state[key]
                .as_ref()
                .map(|s| serde_json::to_vec(s).unwrap_or_default())
        })
        .collect();
    let changes: Vec<EntryChange<'_>> = written
        .iter()
        .zip(&encoded)
        .map(|(key, new)| EntryChange {
            key: scoped_key(slug, key),
            old: raw[key].clone(),
            new: new.as_deref(),
        })
        .collect();
    let mut batch = plan_read(
        store,
        Some(quotas),
        Space::Kv,
        builder,
        usage,
        &changes,
        seq,
    )
    .await?;
    for (key, bytes) in raw.into_iter().filter(|(k, _)| !written.contains(k)) {
        batch = batch.require_equals(Tree::HandlerKv, scoped_key(slug, key), bytes);
    }
    let outcome = Committed::Done {
        versionstamp: versionstamp(seq),
        existed,
    };
    Ok(Planned::Write(batch, outcome))
}

/// `entry` (live, or `None`) with `n` added, keeping its expiry. Amount, stored value and result
/// must be integers within ±(2^53 - 1): every one is then exact as a JavaScript number, and a
/// money-like counter never rounds.
fn summed(key: &str, entry: Option<Stored>, n: i64, seq: u64) -> Result<Stored, Planning> {
    let (base, exp) = match entry {
        None => (0, None),
        Some(stored) => match safe_integer(&stored.v) {
            Some(base) => (base, stored.exp),
            None => {
                return Err(refused(format!(
                    "sum: the value at {key:?} is not an integer within ±(2^53 - 1); nothing was written"
                )))
            }
        },
    };
    match base.checked_add(n).filter(|t| t.abs() <= MAX_SAFE_INTEGER) {
        Some(total) => Ok(Stored {
            v: Value::from(total),
            exp,
            seq,
        }),
        None => Err(refused(format!(
            "sum: {base} + {n} at {key:?} is beyond ±(2^53 - 1); nothing was written"
        ))),
    }
}

fn refused(message: String) -> Planning {
    Planning::Refused(host_error("invalid_sum", message))
}

/// The integer a JSON number holds, when it is one within ±(2^53 - 1).
fn safe_integer(value: &Value) -> Option<i64> {
    let n = value.as_i64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER as f64)
            .map(|f| f as i64)
    })?;
    (n.abs() <= MAX_SAFE_INTEGER).then_some(n)
}

/// Reads a live entry with its versionstamp. An expired one reads as absent and is removed
/// (only if still the same bytes: a write that came meanwhile stays), giving its room back.
pub async fn get_entry(
    store: &dyn Store,
    quotas: &Quotas,
    slug: &str,
    builder: Option<&str>,
    key: &str,
) -> Result<Option<KvVersioned>, HostError> {
    let scoped = scoped_key(slug, key);
    let Some(bytes) = store
        .get(Tree::HandlerKv, &scoped)
        .await
        .map_err(storage_error)?
    else {
        return Ok(None);
    };
    match Stored::live(&bytes, now_secs()).map_err(storage_error)? {
        Some(stored) => Ok(Some(KvVersioned {
            value: stored.v,
            versionstamp: versionstamp(stored.seq),
        })),
        None => {
            remove_expired(store, quotas, slug, builder, scoped, bytes).await?;
            Ok(None)
        }
    }
}

/// Removes the entry at `scoped` if it still holds `bytes`. Losing a race is fine: whoever
/// changed it wrote something newer, or removed it.
async fn remove_expired(
    store: &dyn Store,
    quotas: &Quotas,
    slug: &str,
    builder: Option<&str>,
    scoped: Vec<u8>,
    bytes: Vec<u8>,
) -> Result<(), HostError> {
    let usage = UsageRead::read(store, Space::Kv, slug)
        .await
        .map_err(storage_error)?;
    let seq = (usage.seq() + 1).max(now_micros());
    let change = [EntryChange {
        key: scoped,
        old: Some(bytes),
        new: None,
    }];
    let batch = plan_read(store, Some(quotas), Space::Kv, builder, usage, &change, seq).await?;
    match store.apply(batch).await {
        Ok(()) | Err(StoreError::ConditionFailed(_)) => Ok(()),
        Err(e) => Err(storage_error(e)),
    }
}

/// One node's kv commits, queued per endpoint. Commits of one endpoint all rewrite its usage
/// record, so run together they would collide and retry; queued, each lands on its first try and
/// only other nodes' commits can make one retry.
#[derive(Default)]
pub struct KvWriters {
    queues: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl KvWriters {
    /// Runs `work` when the endpoint's earlier commits on this node are done.
    pub async fn queued<T>(&self, slug: &str, work: impl std::future::Future<Output = T>) -> T {
        let queue = self.lock().entry(slug.to_owned()).or_default().clone();
        let result = {
            let _turn = queue.lock().await;
            work.await
        };
        let mut queues = self.lock();
        // Ours and the map's: nobody else waits, so the queue goes (a map entry per endpoint
        // ever written would only grow).
        if Arc::strong_count(&queue) == 2 {
            queues.remove(slug);
        }
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
