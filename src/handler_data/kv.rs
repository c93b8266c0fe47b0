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
use sandbox::{HostError, KvAtomic, KvMutation, KvValue, KvVersioned, MAX_SAFE_INTEGER};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    host_error, now_secs, plan_read, read_entry, storage_error, EntryChange, Planning, Space,
    UsageRead,
};
use crate::config::Quotas;
use crate::store::{Batch, HandlerSpace, Store, StoreError};

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
        Ok(stored.exp.is_none_or(|exp| exp > now).then_some(stored))
    }
}

/// A stored entry read for a handler: the value's JSON text as stored, borrowed, not parsed
/// into a tree (it goes to the isolate as text, [`sandbox::KvValue`]).
#[derive(Deserialize)]
pub(crate) struct StoredText<'a> {
    #[serde(borrow)]
    v: &'a serde_json::value::RawValue,
    #[serde(default)]
    exp: Option<u64>,
    #[serde(default)]
    seq: u64,
}

impl<'a> StoredText<'a> {
    /// The entry in `bytes`, or `None` when it has expired by `now`.
    pub(crate) fn live(bytes: &'a [u8], now: u64) -> Result<Option<Self>, StoreError> {
        let stored: StoredText =
            serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(stored.exp.is_none_or(|exp| exp > now).then_some(stored))
    }

    /// The value's text, copied out of the stored bytes.
    pub(crate) fn value(&self) -> KvValue {
        KvValue::from_raw(self.v.to_owned())
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
/// (`storage_busy`). On one node commits of an endpoint take turns ([`KvWriters`]), so only
/// other nodes' commits (or uploads moving the usage record) can make it lose.
const MAX_ATTEMPTS: u32 = 64;

/// Commits `atomic` to the kv of the endpoint with id `endpoint` (counted toward `builder`'s totals), in its turn
/// among this node's commits of the endpoint. The sandbox has checked its shape and sizes; here
/// live the rules that need the stored state: checks, `sum` on what is stored, expiry and quotas.
pub async fn commit(
    store: &dyn Store,
    quotas: &Quotas,
    endpoint: &str,
    builder: Option<&str>,
    atomic: &KvAtomic,
    writers: &KvWriters,
) -> Result<Committed, HostError> {
    for attempt in 0..MAX_ATTEMPTS {
        let turn = writers.turn(endpoint).await;
        let (batch, outcome) = match plan_commit(store, quotas, endpoint, builder, atomic).await {
            Ok(Planned::Write(batch, outcome)) => (batch, outcome),
            Ok(Planned::CheckFailed) => return Ok(Committed::CheckFailed),
            Err(e) => return Err(e.into()),
        };
        let staged = store.apply_staged(batch).await;
        // Applied (or refused): the next commit may plan on it while this one flushes.
        drop(turn);
        match staged {
            Ok(durable) => {
                durable.await.map_err(storage_error)?;
                return Ok(outcome);
            }
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
    endpoint: &str,
    builder: Option<&str>,
    atomic: &KvAtomic,
) -> Result<Planned, Planning> {
    let now = now_secs();
    let usage = UsageRead::read(store, Space::Kv, endpoint).await?;
    let seq = (usage.seq() + 1).max(now_micros());
    // Every key touched, as stored (`raw`) and as readers see it now (`state`).
    let mut raw: BTreeMap<&str, Option<Vec<u8>>> = BTreeMap::new();
    let mut state: HashMap<&str, Option<Stored>> = HashMap::new();
    let mut keys: Vec<&str> = (atomic.checks.iter().map(|c| c.key.as_str()))
        .chain(atomic.mutations.iter().map(KvMutation::key))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    // One read for all of them (one statement on PostgreSQL, not one round trip per key).
    let values = store
        .handler_entries(HandlerSpace::Kv, endpoint, &keys)
        .await?;
    for (key, bytes) in keys.into_iter().zip(values) {
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
            batch = batch.require_handler_entry(HandlerSpace::Kv, endpoint, key, bytes);
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
            key,
            old: raw[key].clone(),
            new: new.as_deref(),
        })
        .collect();
    let mut batch = plan_read(store, Some(quotas), builder, usage, &changes, seq).await?;
    for (key, bytes) in raw.into_iter().filter(|(k, _)| !written.contains(k)) {
        batch = batch.require_handler_entry(HandlerSpace::Kv, endpoint, key, bytes);
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
    endpoint: &str,
    builder: Option<&str>,
    key: &str,
) -> Result<Option<KvVersioned>, HostError> {
    let read = read_entry(store, Space::Kv, endpoint, key).await;
    let Some(bytes) = read.map_err(storage_error)? else {
        return Ok(None);
    };
    match StoredText::live(&bytes, now_secs()).map_err(storage_error)? {
        Some(stored) => Ok(Some(KvVersioned {
            value: stored.value(),
            versionstamp: versionstamp(stored.seq),
        })),
        None => {
            remove_expired(store, quotas, endpoint, builder, key, bytes).await?;
            Ok(None)
        }
    }
}

/// Removes the entry at `key` if it still holds `bytes`. Losing a race is fine: whoever
/// changed it wrote something newer, or removed it.
async fn remove_expired(
    store: &dyn Store,
    quotas: &Quotas,
    endpoint: &str,
    builder: Option<&str>,
    key: &str,
    bytes: Vec<u8>,
) -> Result<(), HostError> {
    let usage = UsageRead::read(store, Space::Kv, endpoint)
        .await
        .map_err(storage_error)?;
    let seq = (usage.seq() + 1).max(now_micros());
    let change = [EntryChange {
        key,
        old: Some(bytes),
        new: None,
    }];
    let batch = plan_read(store, Some(quotas), builder, usage, &change, seq).await?;
    match store.apply(batch).await {
        Ok(()) | Err(StoreError::ConditionFailed(_)) => Ok(()),
        Err(e) => Err(storage_error(e)),
    }
}

/// One node's kv commits, taking turns per endpoint. Commits of one endpoint all rewrite its
/// usage record, so run together they would collide and retry; in turns, each plans on what the
/// one before applied and lands on its first try, and only other nodes' commits can make one
/// retry. A turn ends once its batch is applied, before it is durable
/// ([`Store::apply_staged`]), so commits in a row still share the engine's flushes.
#[derive(Default)]
pub struct KvWriters {
    queues: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl KvWriters {
    /// Waits for the endpoint's turn.
    async fn turn(&self, endpoint: &str) -> Turn<'_> {
        let queue = self.lock().entry(endpoint.to_owned()).or_default().clone();
        Turn {
            writers: self,
            endpoint: endpoint.to_owned(),
            guard: Some(queue.lock_owned().await),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<()>>>> {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An endpoint's turn; the next waiting commit goes when it drops.
struct Turn<'a> {
    writers: &'a KvWriters,
    endpoint: String,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut queues = self.writers.lock();
        if let Some(guard) = self.guard.take() {
            // Held by the map and this guard only: nobody waits, so the queue goes (an entry
            // per endpoint ever written would only grow).
            let idle = Arc::strong_count(tokio::sync::OwnedMutexGuard::mutex(&guard)) == 2;
            drop(guard);
            if idle {
                queues.remove(&self.endpoint);
            }
        }
    }
}

/// The kv rules on both engines: sled in process, and PostgreSQL on a throwaway cluster (two
/// stores on one database standing for two nodes).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::handler_data::Usage;
    use crate::store::HandlerEntryRow;
    use sandbox::KvCheck;
    use serde_json::json;
    use toolhost_testkit::on_both_engines;

    type Shared = Arc<dyn Store>;

    on_both_engines!(
        a_failed_check_writes_nothing,
        mixed_mutations_land_together_in_order,
        a_plain_write_moves_the_versionstamp,
        sums_are_exact_integers_or_refused,
        expired_entries_are_absent_to_checks_and_sums,
        an_atomic_over_quota_writes_nothing,
        concurrent_sums_lose_no_update_across_nodes,
    );

    const SLUG: &str = "ep";

    fn check(key: &str, versionstamp: Option<&str>) -> KvCheck {
        KvCheck {
            key: key.into(),
            versionstamp: versionstamp.map(str::to_owned),
        }
    }

    fn set(key: &str, value: Value) -> KvMutation {
        KvMutation::Set {
            key: key.into(),
            value,
            ttl_seconds: None,
        }
    }

    fn sum(key: &str, n: i64) -> KvMutation {
        KvMutation::Sum { key: key.into(), n }
    }

    fn del(key: &str) -> KvMutation {
        KvMutation::Delete { key: key.into() }
    }

    async fn run(
        s: &Shared,
        quotas: &Quotas,
        checks: Vec<KvCheck>,
        mutations: Vec<KvMutation>,
    ) -> Result<Committed, HostError> {
        let atomic = KvAtomic { checks, mutations };
        commit(
            s.as_ref(),
            quotas,
            SLUG,
            Some("b1"),
            &atomic,
            &KvWriters::default(),
        )
        .await
    }

    /// Commits without checks; its versionstamp.
    async fn write(s: &Shared, mutations: Vec<KvMutation>) -> String {
        match run(s, &Quotas::default(), vec![], mutations).await.unwrap() {
            Committed::Done { versionstamp, .. } => versionstamp,
            Committed::CheckFailed => panic!("no checks to fail"),
        }
    }

    async fn entry(s: &Shared, key: &str) -> Option<KvVersioned> {
        get_entry(s.as_ref(), &Quotas::default(), SLUG, Some("b1"), key)
            .await
            .unwrap()
    }

    async fn value(s: &Shared, key: &str) -> Option<Value> {
        entry(s, key).await.map(|e| e.value.to_value())
    }

    /// Everything stored for the endpoint: its entries and its usage record, raw.
    async fn snapshot(s: &Shared) -> (Vec<(String, Vec<u8>)>, Option<Vec<u8>>) {
        let entries = s.handler_entries_under(HandlerSpace::Kv, SLUG, "", None, 1000);
        let entries = entries.await.unwrap();
        let usage = s.handler_usage(HandlerSpace::Kv, SLUG).await.unwrap();
        (entries, usage)
    }

    /// Stores `bytes` under `key` as they are, around the kv rules.
    async fn put_raw(s: &Shared, key: &str, bytes: &[u8]) {
        let row = HandlerEntryRow::new(HandlerSpace::Kv, SLUG, key, bytes.to_vec());
        s.apply(Batch::new().put_handler_entry(row)).await.unwrap();
    }

    /// `key`'s bytes as stored.
    async fn raw(s: &Shared, key: &str) -> Option<Vec<u8>> {
        read_entry(s.as_ref(), Space::Kv, SLUG, key).await.unwrap()
    }

    async fn a_failed_check_writes_nothing(nodes: Vec<Shared>) {
        let s = &nodes[0];
        let first = write(s, vec![set("a", json!(1))]).await;
        let before = snapshot(s).await;
        let stale = "00000000000000000001";
        for checks in [
            vec![check("a", Some(stale))],
            vec![check("a", None)],
            vec![check("missing", Some(&first))],
            // The first holds, the second does not: still nothing.
            vec![check("a", Some(&first)), check("missing", Some(&first))],
        ] {
            let mutations = vec![set("b", json!(2)), sum("c", 5), del("a")];
            let outcome = run(s, &Quotas::default(), checks, mutations).await.unwrap();
            assert_eq!(outcome, Committed::CheckFailed);
            assert_eq!(snapshot(s).await, before, "a failed check wrote something");
        }
        assert_eq!(entry(s, "a").await.unwrap().versionstamp, first);
    }

    async fn mixed_mutations_land_together_in_order(nodes: Vec<Shared>) {
        let (s, other) = (&nodes[0], nodes.last().unwrap());
        let a = write(s, vec![set("a", json!({"n": 1}))]).await;
        let checks = vec![check("a", Some(&a)), check("fresh", None)];
        let mutations = vec![
            set("b", json!("x")),
            sum("c", 5),
            sum("c", -7),
            del("a"),
            set("d", json!(1)),
            del("d"),
        ];
        let Committed::Done {
            versionstamp,
            existed,
        } = run(other, &Quotas::default(), checks, mutations)
            .await
            .unwrap()
        else {
            panic!("the checks held")
        };
        assert!(versionstamp > a, "{versionstamp} after {a}");
        assert_eq!(existed, [false, false, false, true, false, false]);
        assert_eq!(value(s, "a").await, None);
        assert_eq!(value(s, "d").await, None);
        assert_eq!(value(s, "c").await, Some(json!(-2)));
        let b = entry(s, "b").await.unwrap();
        assert_eq!(
            (b.value.to_value(), b.versionstamp.clone()),
            (json!("x"), versionstamp.clone())
        );
        assert_eq!(entry(s, "c").await.unwrap().versionstamp, versionstamp);
        // The usage counts what is left: b and c.
        let usage = s.handler_usage(HandlerSpace::Kv, SLUG).await.unwrap();
        let usage: Usage = serde_json::from_slice(&usage.unwrap()).unwrap();
        assert_eq!(usage.count, 2);
        // Checks only: nothing written, the current versionstamp answered.
        let outcome = run(
            s,
            &Quotas::default(),
            vec![check("b", Some(&versionstamp))],
            vec![],
        )
        .await
        .unwrap();
        assert_eq!(
            outcome,
            Committed::Done {
                versionstamp: versionstamp.clone(),
                existed: vec![]
            }
        );
        // Versionstamps are 20 hex digits and increase with every commit, from either node.
        let mut last = versionstamp;
        for i in 0..10 {
            let next = write(&nodes[i % nodes.len()], vec![sum("c", 1)]).await;
            assert!(
                sandbox::is_versionstamp(&next) && next > last,
                "{next} after {last}"
            );
            last = next;
        }
    }

    async fn a_plain_write_moves_the_versionstamp(nodes: Vec<Shared>) {
        let s = &nodes[0];
        write(s, vec![set("k", json!(1))]).await;
        let seen = entry(s, "k").await.unwrap();
        // Rewritten with the same value by someone else: the check fails all the same.
        write(s, vec![set("k", json!(1))]).await;
        let outcome = run(
            s,
            &Quotas::default(),
            vec![check("k", Some(&seen.versionstamp))],
            vec![set("k", json!(2))],
        )
        .await
        .unwrap();
        assert_eq!(outcome, Committed::CheckFailed);
        assert_eq!(value(s, "k").await, Some(json!(1)));
        // Deleted: a check for absence holds.
        write(s, vec![del("k")]).await;
        assert!(entry(s, "k").await.is_none());
        let outcome = run(
            s,
            &Quotas::default(),
            vec![check("k", None)],
            vec![set("k", json!(3))],
        )
        .await
        .unwrap();
        assert!(matches!(outcome, Committed::Done { .. }));
        // An entry from before versionstamps reads as all zeros and can be checked.
        let legacy = serde_json::to_vec(&json!({"v": 7})).unwrap();
        put_raw(s, "old", &legacy).await;
        let old = entry(s, "old").await.unwrap();
        assert_eq!(old.versionstamp, "00000000000000000000");
        let outcome = run(
            s,
            &Quotas::default(),
            vec![check("old", Some(&old.versionstamp))],
            vec![sum("old", 1)],
        )
        .await
        .unwrap();
        assert!(matches!(outcome, Committed::Done { .. }));
        assert_eq!(value(s, "old").await, Some(json!(8)));
    }

    async fn sums_are_exact_integers_or_refused(nodes: Vec<Shared>) {
        let s = &nodes[0];
        let quotas = Quotas::default();
        write(s, vec![sum("n", MAX_SAFE_INTEGER - 1)]).await;
        write(s, vec![sum("n", 1)]).await;
        assert_eq!(value(s, "n").await, Some(json!(MAX_SAFE_INTEGER)));
        write(
            s,
            vec![
                set("text", json!("12")),
                set("half", json!(1.5)),
                set("big", json!(1u64 << 60)),
            ],
        )
        .await;
        write(
            s,
            vec![
                set("float", json!(3.0)),
                set("low", json!(-MAX_SAFE_INTEGER)),
            ],
        )
        .await;
        let before = snapshot(s).await;
        for (key, n) in [("n", 1), ("text", 1), ("half", 1), ("big", 1), ("low", -1)] {
            // In a commit with another mutation first: that one is not written either.
            let err = run(s, &quotas, vec![], vec![set("z", json!(0)), sum(key, n)])
                .await
                .unwrap_err();
            assert_eq!(err.code, "invalid_sum", "{key}: {}", err.message);
            assert!(err.message.contains(key), "{}", err.message);
            assert_eq!(snapshot(s).await, before);
        }
        // A float that is an integer sums; the result is stored as an integer.
        write(s, vec![sum("float", 2)]).await;
        assert_eq!(value(s, "float").await, Some(json!(5)));
        write(s, vec![sum("neg", -MAX_SAFE_INTEGER)]).await;
        assert_eq!(value(s, "neg").await, Some(json!(-MAX_SAFE_INTEGER)));
    }

    async fn expired_entries_are_absent_to_checks_and_sums(nodes: Vec<Shared>) {
        let s = &nodes[0];
        let quotas = Quotas::default();
        // Stored as a commit would have, with an expiry already past.
        let expired = Stored {
            v: json!(41),
            exp: Some(now_secs() - 1),
            seq: 5,
        };
        let bytes = serde_json::to_vec(&expired).unwrap();
        for key in ["gone", "counter"] {
            put_raw(s, key, &bytes).await;
        }
        // Absent to a check, and a sum starts from 0 without the old expiry.
        let outcome = run(
            s,
            &quotas,
            vec![check("counter", None)],
            vec![sum("counter", 2)],
        )
        .await
        .unwrap();
        assert!(matches!(outcome, Committed::Done { .. }));
        let stored: Stored = serde_json::from_slice(&raw(s, "counter").await.unwrap()).unwrap();
        assert_eq!((stored.v, stored.exp), (json!(2), None));
        // Reading an expired entry removes it.
        assert!(entry(s, "gone").await.is_none());
        assert!(raw(s, "gone").await.is_none());
        // A set with a TTL expires; a sum keeps a live entry's expiry.
        let atomic = vec![KvMutation::Set {
            key: "window".into(),
            value: json!(1),
            ttl_seconds: Some(60),
        }];
        write(s, atomic).await;
        write(s, vec![sum("window", 1)]).await;
        let stored: Stored = serde_json::from_slice(&raw(s, "window").await.unwrap()).unwrap();
        assert_eq!(stored.v, json!(2));
        let exp = stored.exp.expect("the expiry is kept");
        assert!(exp > now_secs() + 50 && exp <= now_secs() + 60, "{exp}");
    }

    async fn an_atomic_over_quota_writes_nothing(nodes: Vec<Shared>) {
        let s = &nodes[0];
        let quotas = Quotas {
            kv_keys: 2,
            kv_bytes: 100,
            ..Quotas::default()
        };
        run(s, &quotas, vec![], vec![set("a", json!(1))])
            .await
            .unwrap();
        let before = snapshot(s).await;
        // Three keys, or too many bytes: refused whole.
        for mutations in [
            vec![set("b", json!(2)), set("c", json!(3))],
            vec![set("b", json!("x".repeat(100)))],
        ] {
            let err = run(s, &quotas, vec![], mutations).await.unwrap_err();
            assert_eq!(err.code, "quota_exceeded", "{}", err.message);
            assert_eq!(snapshot(s).await, before);
        }
        // The totals after the whole commit count: removing one makes room for another.
        run(
            s,
            &quotas,
            vec![],
            vec![del("a"), set("b", json!(2)), set("c", json!(3))],
        )
        .await
        .unwrap();
        assert_eq!(value(s, "b").await, Some(json!(2)));
        // The builder's total across its endpoints holds too.
        let tight = Quotas {
            builder_kv_keys: 2,
            ..Quotas::default()
        };
        let err = run(s, &tight, vec![], vec![set("d", json!(4))])
            .await
            .unwrap_err();
        assert!(
            err.message.contains("builder's total kv quota"),
            "{}",
            err.message
        );
    }

    /// Many commits summing into one key at once, from both nodes, without this node's queue:
    /// the guarded batches and their retries alone keep the total exact.
    async fn concurrent_sums_lose_no_update_across_nodes(nodes: Vec<Shared>) {
        let tasks: Vec<_> = (0..40)
            .map(|i| {
                let s = nodes[i % nodes.len()].clone();
                tokio::spawn(async move {
                    let atomic = KvAtomic {
                        checks: vec![],
                        mutations: vec![sum("total", i as i64 + 1), sum(&format!("k{}", i % 4), 1)],
                    };
                    // A queue of its own: this node's turns do not order them.
                    let writers = KvWriters::default();
                    commit(
                        s.as_ref(),
                        &Quotas::default(),
                        SLUG,
                        Some("b1"),
                        &atomic,
                        &writers,
                    )
                    .await
                })
            })
            .collect();
        let mut stamps = Vec::new();
        for task in tasks {
            match task.await.unwrap().unwrap() {
                Committed::Done { versionstamp, .. } => stamps.push(versionstamp),
                Committed::CheckFailed => panic!("no checks"),
            }
        }
        let s = &nodes[0];
        assert_eq!(value(s, "total").await, Some(json!((1..=40).sum::<i64>())));
        for k in 0..4 {
            assert_eq!(value(s, &format!("k{k}")).await, Some(json!(10)));
        }
        stamps.sort();
        stamps.dedup();
        assert_eq!(stamps.len(), 40, "every commit has its own versionstamp");
    }
}
