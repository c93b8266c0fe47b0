//! The shared engine: PostgreSQL (or a wire-compatible database), so several nodes serve one
//! store. Client: `tokio-postgres` pooled by `deadpool-postgres`, a small async stack on the tokio
//! runtime we already run, with no compile-time query checking, macros or database-at-build-time
//! to pay for; sqlx would bring its own runtime layer, more crates and more compile time for
//! features (migrate macros, many backends) this one table does not need.
//!
//! # Portable SQL
//! Meant to run unchanged on PostgreSQL, CockroachDB and YugabyteDB, so it uses only:
//! - plain tables with composite primary keys, `bytea` keys (compared bytewise like `memcmp`,
//!   which is sled's order too), `text`, `bigint`, `timestamptz DEFAULT now()`;
//! - `READ COMMITTED` transactions that hold what their conditions read until they commit
//!   (see [Conditions](#conditions)), with the client retrying the whole transaction on SQLSTATE
//!   40001/40P01/23505, the retry protocol all three document (CockroachDB has `READ COMMITTED`
//!   since 23.2, YugabyteDB behind a flag; where it is off they run the transaction at a stricter
//!   level, which only adds retries);
//! - `SELECT ... FOR UPDATE`;
//! - `INSERT ... ON CONFLICT (tree, key) DO UPDATE` and `ON CONFLICT DO NOTHING`, `UPDATE ...
//!   RETURNING`, `INSERT ... SELECT`, range predicates with `ORDER BY ... LIMIT`;
//! - no advisory locks, no `LOCK TABLE`, no stored procedures: the change feed is an ordinary
//!   table every node reads; `LISTEN/NOTIFY` only tells a node when to read it, where the engine
//!   has it (PostgreSQL does; CockroachDB does not).
//!
//! # Conditions
//! A batch's conditions are its only reads, so a transaction is correct when each condition
//! still holds at its commit. The transaction makes sure of that with row locks, not with
//! `SERIALIZABLE`'s predicate locks: every concurrent call inserts its time-ordered keys
//! (receipt ids, sale keys) next to the others', and a serializable check of their absence
//! locked the index page they all share, so any two concurrent calls conflicted and one rolled
//! back (2.2-2.8 rollbacks per request, bench/RESULTS.md). So each key a condition names is
//! held, in key order (concurrent batches lock in the same order), before anything is written:
//! - a key that must hold a value is read `FOR UPDATE`: nobody changes it until this commits;
//! - a key that must be absent is *claimed*: inserted with `ON CONFLICT DO NOTHING`, with the
//!   value the batch puts there, or an empty placeholder deleted again before commit when the
//!   batch does not put it. One row inserted means it was absent, and anyone else inserting it
//!   waits for this transaction; none means it is there and the condition fails.
//!
//! Consecutive keys held the same way are held by one statement (claims: one `INSERT ...
//! SELECT FROM unnest(...)` whatever their trees; reads: one `= ANY(...) FOR UPDATE` per tree,
//! which a btree visits in key order), and a batch's puts and each tree's deletes are one
//! statement each, so a transaction costs the database a few statements, not one per key.
//!
//! A failed condition rolls the transaction back. The hot path (a nonce claimed, a receipt
//! written where none may be, a balance swapped) then needs no retries: a claim loses by its
//! row count, a swap waits for the row. Deadlocks (two batches holding keys the other then
//! writes) are retried like conflicts.
//!
//! # Change feed
//! A write to a [watched](Tree::is_watched) tree also bumps that tree's row in
//! `toolhost_generations` by the number of keys written and inserts one `toolhost_changes` row
//! per key, numbered by those generations, in the same transaction. The generation row's lock
//! orders such commits, so generations become visible in order, and each node's poller reads
//! `gen > last`. A node publishes its own writes on commit (and skips them when its poller reads
//! them back). Rows older than [`PgOptions::change_retention`] are pruned by whichever node's
//! poller gets there.
//!
//! When to read: each node holds one connection of its own that `LISTEN`s on
//! `toolhost_changes` ([`SQL_LISTEN`]), and a transaction that writes a watched tree also sends `NOTIFY` (delivered at
//! its commit, pipelined with its other statements: no extra round trip). A notified poller
//! reads at once, so another node's change arrives in about a round trip instead of half a
//! poll interval on average; it still reads every [`PgOptions::listening_poll_interval`], and once
//! whenever its listener (re)connects, so a notification lost with a connection costs seconds,
//! not the change. An engine that refuses `LISTEN` (or a listener that cannot connect) leaves
//! the poller reading every [`PgOptions::poll_interval`], as before.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use rand::Rng;
use tokio::sync::{broadcast, watch, Notify};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, IsolationLevel, NoTls};

mod events;
mod logs;

use super::{keys, Batch, Change, Condition, Entry, Store, StoreError, StoreResult, Tree, Write};

/// How many unread [`Change`]s a subscriber may fall behind before it gets `Lagged`.
const CHANGE_CAPACITY: usize = 1024;
/// Attempts at a transaction that keeps meeting serialization conflicts before giving up.
const MAX_ATTEMPTS: u32 = 30;
/// How often a poller prunes old change rows.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// The change feed's notification channel (see the module docs): listened to by every node ...
const SQL_LISTEN: &str = "LISTEN toolhost_changes";
/// ... and notified by each transaction that writes a watched tree.
const SQL_NOTIFY: &str = "NOTIFY toolhost_changes";
/// How long a listener whose connection failed waits before it connects again.
const LISTEN_RETRY: Duration = Duration::from_secs(1);

/// Tuning for [`PgStore::connect_with`]; [`Default`] suits production.
#[derive(Clone, Debug)]
pub struct PgOptions {
    /// Connections in the pool.
    pub pool_size: usize,
    /// How long an operation waits for a free (or new) connection before failing with
    /// [`StoreError::Unavailable`]: short, so callers get a prompt 503 rather than a hang.
    pub wait_timeout: Duration,
    /// How often the change feed polls for other nodes' writes when the engine cannot notify
    /// (no `LISTEN`, or the listener's connection is down).
    pub poll_interval: Duration,
    /// How often it polls anyway while notifications arrive (a notification lost with its
    /// connection is then late by at most this much).
    pub listening_poll_interval: Duration,
    /// How long change rows are kept for nodes that are behind.
    pub change_retention: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            wait_timeout: Duration::from_secs(3),
            poll_interval: Duration::from_millis(200),
            listening_poll_interval: Duration::from_secs(5),
            change_retention: Duration::from_secs(600),
        }
    }
}

/// Schema versions, applied in order at start-up; each runs once, in its own transaction.
/// Never edit a released one: add another.
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "CREATE TABLE toolhost_kv (
         tree TEXT NOT NULL,
         key BYTEA NOT NULL,
         value BYTEA NOT NULL,
         PRIMARY KEY (tree, key)
     );
     CREATE TABLE toolhost_generations (
         tree TEXT PRIMARY KEY,
         gen BIGINT NOT NULL
     );
     CREATE TABLE toolhost_changes (
         tree TEXT NOT NULL,
         gen BIGINT NOT NULL,
         key BYTEA NOT NULL,
         at TIMESTAMPTZ NOT NULL DEFAULT now(),
         PRIMARY KEY (tree, gen)
     );",
    ),
    (
        2,
        // Endpoint logs leave the key-value table for their own ([`logs`]): every entry the
        // `logs` tree kept under `{endpoint}/{id}` moves (rollout tallies, under `rollout/`,
        // stay), and the per-endpoint counts in `meta` go.
        "CREATE TABLE toolhost_logs (
             endpoint TEXT COLLATE \"C\" NOT NULL,
             id TEXT COLLATE \"C\" NOT NULL,
             entry BYTEA NOT NULL,
             PRIMARY KEY (endpoint, id)
         );
         INSERT INTO toolhost_logs (endpoint, id, entry)
         SELECT convert_from(substring(key FROM 1 FOR position('/'::BYTEA IN key) - 1), 'UTF8'),
                convert_from(substring(key FROM position('/'::BYTEA IN key) + 1), 'UTF8'),
                value
         FROM toolhost_kv
         WHERE tree = 'logs' AND position('/'::BYTEA IN key) > 1
           AND substring(key FROM 1 FOR 8) <> 'rollout/'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'logs' AND position('/'::BYTEA IN key) > 1
           AND substring(key FROM 1 FOR 8) <> 'rollout/'::BYTEA;
         DELETE FROM toolhost_kv
         WHERE tree = 'meta' AND substring(key FROM 1 FOR 10) = 'log_count/'::BYTEA;",
    ),
    (
        3,
        // Builder events leave the key-value table for their own ([`events`]): every event the
        // `events` tree kept under `{builder}/{id}` moves, its endpoint read from its JSON.
        "CREATE TABLE toolhost_events (
             builder TEXT COLLATE \"C\" NOT NULL,
             id TEXT COLLATE \"C\" NOT NULL,
             endpoint TEXT COLLATE \"C\",
             entry BYTEA NOT NULL,
             PRIMARY KEY (builder, id)
         );
         CREATE INDEX toolhost_events_by_endpoint ON toolhost_events (builder, endpoint, id);
         CREATE INDEX toolhost_events_by_id ON toolhost_events (id);
         INSERT INTO toolhost_events (builder, id, endpoint, entry)
         SELECT convert_from(substring(key FROM 1 FOR position('/'::BYTEA IN key) - 1), 'UTF8'),
                convert_from(substring(key FROM position('/'::BYTEA IN key) + 1), 'UTF8'),
                convert_from(value, 'UTF8')::JSONB ->> 'endpointSlug',
                value
         FROM toolhost_kv
         WHERE tree = 'events' AND position('/'::BYTEA IN key) > 1;
         DELETE FROM toolhost_kv WHERE tree = 'events' AND position('/'::BYTEA IN key) > 1;",
    ),
];

const CREATE_MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS toolhost_migrations (
     version INT PRIMARY KEY,
     applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
 )";

const SQL_GET: &str = "SELECT value FROM toolhost_kv WHERE tree = $1 AND key = $2";
const SQL_PUT: &str = "INSERT INTO toolhost_kv (tree, key, value) VALUES ($1, $2, $3) \
     ON CONFLICT (tree, key) DO UPDATE SET value = excluded.value";
const SQL_DELETE: &str = "DELETE FROM toolhost_kv WHERE tree = $1 AND key = $2";
const SQL_BEGIN: &str = "BEGIN ISOLATION LEVEL READ COMMITTED";
/// A transaction whose commit does not wait for its flush ([`Store::apply_unsynced`]).
const SQL_BEGIN_UNSYNCED: &str =
    "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL synchronous_commit TO OFF";
/// Holds the present keys of one tree a run of conditions names, in key order (a btree scan
/// of `= ANY` visits the array's keys sorted), until commit (see [Conditions](self#conditions)).
const SQL_LOCK_KEYS: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key = ANY($2::BYTEA[]) ORDER BY key FOR UPDATE";
/// Claims a run of conditions' absent keys, in the arrays' order: each key returned was absent
/// and is now this transaction's; a key not returned is present.
const SQL_CLAIM_KEYS: &str = "INSERT INTO toolhost_kv (tree, key, value) \
     SELECT * FROM unnest($1::TEXT[], $2::BYTEA[], $3::BYTEA[]) \
     ON CONFLICT (tree, key) DO NOTHING RETURNING tree, key";
/// Puts every key a batch writes (and did not put by claiming it), in the arrays' order.
const SQL_PUT_KEYS: &str = "INSERT INTO toolhost_kv (tree, key, value) \
     SELECT * FROM unnest($1::TEXT[], $2::BYTEA[], $3::BYTEA[]) \
     ON CONFLICT (tree, key) DO UPDATE SET value = excluded.value";
/// Deletes keys of one tree; returns those that were there.
const SQL_DELETE_KEYS: &str =
    "DELETE FROM toolhost_kv WHERE tree = $1 AND key = ANY($2::BYTEA[]) RETURNING key";
const SQL_SCAN_TO: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 AND key < $3 ORDER BY key LIMIT $4";
const SQL_SCAN_TO_END: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 ORDER BY key LIMIT $3";
const SQL_SCAN_REV_TO: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 AND key < $3 ORDER BY key DESC LIMIT $4";
const SQL_SCAN_REV_TO_END: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 ORDER BY key DESC LIMIT $3";
/// Takes `$2` generations for a watched tree; the row lock is held to commit.
const SQL_BUMP_GENERATION: &str =
    "UPDATE toolhost_generations SET gen = gen + $2 WHERE tree = $1 RETURNING gen";
/// One change row, numbered `$2` below the tree's (just bumped) generation.
const SQL_RECORD_CHANGE: &str = "INSERT INTO toolhost_changes (tree, gen, key) \
     SELECT tree, gen - $2, $3 FROM toolhost_generations WHERE tree = $1";
const SQL_ENSURE_GENERATION: &str =
    "INSERT INTO toolhost_generations (tree, gen) VALUES ($1, 0) ON CONFLICT (tree) DO NOTHING";
const SQL_CURRENT_GENERATION: &str = "SELECT gen FROM toolhost_generations WHERE tree = $1";
const SQL_CHANGES_SINCE: &str =
    "SELECT gen, key FROM toolhost_changes WHERE tree = $1 AND gen > $2 ORDER BY gen";
const SQL_PRUNE_CHANGES: &str =
    "DELETE FROM toolhost_changes WHERE at < now() - $1::FLOAT8 * INTERVAL '1 second'";

/// The PostgreSQL engine; see the module docs.
pub struct PgStore {
    pool: Pool,
    changes: broadcast::Sender<Change>,
    /// Shared with the poller: which generations were published, by whom.
    published: Arc<Mutex<Published>>,
    /// Whether writes to watched trees send `NOTIFY`: set once `LISTEN` worked on this engine.
    notify: Arc<AtomicBool>,
    /// Whether this node's listener is listening now.
    listening: Arc<AtomicBool>,
    /// Stops the poller and the listener.
    stop_poller: watch::Sender<bool>,
    poller: Mutex<Option<JoinHandle<()>>>,
    listener: Mutex<Option<JoinHandle<()>>>,
}

impl PgStore {
    /// Connects with the default [`PgOptions`]. `url` is a libpq-style URL
    /// (`postgres://user:pass@host:port/db`) or key-value string.
    pub async fn connect(url: &str) -> StoreResult<PgStore> {
        Self::connect_with(url, PgOptions::default()).await
    }

    /// Connects, applies pending migrations and starts the change-feed poller.
    pub async fn connect_with(url: &str, options: PgOptions) -> StoreResult<PgStore> {
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Engine(format!("invalid PostgreSQL URL: {e}")))?;
        if config.get_application_name().is_none() {
            config.application_name("toolhost");
        }
        config.connect_timeout(options.wait_timeout);
        // Notice a peer that vanished without closing the connection within about half a
        // minute, not TCP's default two hours.
        config
            .keepalives_idle(Duration::from_secs(15))
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3)
            .tcp_user_timeout(Duration::from_secs(30));
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .wait_timeout(Some(options.wait_timeout))
            .create_timeout(Some(options.wait_timeout))
            .recycle_timeout(Some(options.wait_timeout))
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError::Engine(format!("connection pool: {e}")))?;

        migrate(&pool).await?;
        let start = start_generations(&pool).await?;

        let (changes, _) = broadcast::channel(CHANGE_CAPACITY);
        let published = Arc::new(Mutex::new(Published {
            own: HashSet::new(),
            polled: start.iter().copied().collect(),
        }));
        let (stop_poller, stop) = watch::channel(false);
        let wake = Arc::new(Notify::new());
        let (listening, notify) = (Arc::new(AtomicBool::new(false)), Arc::default());
        let listener = Listener {
            config,
            wake: Arc::clone(&wake),
            listening: Arc::clone(&listening),
            notify: Arc::clone(&notify),
        };
        let listener = tokio::spawn(listener.run(stop.clone()));
        let poller = ChangePoller {
            pool: pool.clone(),
            changes: changes.clone(),
            published: Arc::clone(&published),
            interval: options.poll_interval,
            listening_interval: options.listening_poll_interval,
            wake,
            listening: Arc::clone(&listening),
            retention: options.change_retention,
            last: start,
        };
        let poller = tokio::spawn(poller.run(stop));
        Ok(PgStore {
            pool,
            changes,
            published,
            notify,
            listening,
            stop_poller,
            poller: Mutex::new(Some(poller)),
            listener: Mutex::new(Some(listener)),
        })
    }

    /// Whether this node hears of other nodes' changes as they commit (its listener is
    /// listening), rather than by polling alone.
    pub fn notified(&self) -> bool {
        self.listening.load(Ordering::Acquire)
    }

    async fn client(&self) -> StoreResult<deadpool_postgres::Client> {
        self.pool.get().await.map_err(pool_error)
    }

    /// Runs `attempt` on a pooled connection until it neither commits nor fails for good:
    /// conflicts are retried (a bounded number of times, with jittered backoff, on a fresh
    /// connection from the pool each time).
    async fn retrying<T, F, Fut>(&self, mut attempt: F) -> StoreResult<T>
    where
        F: FnMut(deadpool_postgres::Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, TxError>>,
    {
        let mut attempts = 0;
        loop {
            attempts += 1;
            match attempt(self.client().await?).await {
                Ok(done) => return Ok(done),
                Err(TxError::Condition(i)) => return Err(StoreError::ConditionFailed(i)),
                Err(TxError::Store(e)) => return Err(e),
                Err(TxError::Conflict(why)) if attempts >= MAX_ATTEMPTS => {
                    return Err(StoreError::Unavailable(format!(
                        "gave up after {attempts} conflicting attempts: {why}"
                    )))
                }
                Err(TxError::Conflict(_)) => tokio::time::sleep(backoff(attempts)).await,
            }
        }
    }

    /// Applies a plan in one transaction, re-running it on conflicts.
    async fn transact(&self, plan: &Plan<'_>) -> StoreResult<Applied> {
        let applied = self
            .retrying(|client| async move {
                let notify = self.notify.load(Ordering::Acquire);
                try_apply(client, plan, notify).await
            })
            .await?;
        self.published(plan, &applied);
        Ok(applied)
    }

    /// Publishes a committed plan's watched keys here and now, and remembers their
    /// generations so the poller does not publish them again; those the poller has read
    /// already (between the commit and now) it has published, and are not published twice.
    fn published(&self, plan: &Plan<'_>, applied: &Applied) {
        if plan.watched.is_empty() {
            return;
        }
        let mut published = lock(&self.published);
        for ((tree, keys), last) in plan.watched.iter().zip(&applied.generations) {
            let first = last - keys.len() as i64 + 1;
            let polled = published.polled.get(tree).copied().unwrap_or(i64::MIN);
            for (gen, key) in (first..).zip(keys) {
                if gen <= polled {
                    continue;
                }
                published.own.insert((*tree, gen));
                let _ = self.changes.send(Change {
                    tree: *tree,
                    key: key.to_vec(),
                });
            }
        }
    }

    /// A single-statement write to an unwatched tree: one round trip, autocommitted, retried
    /// on conflicts. Returns the rows affected.
    async fn write_one(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<u64> {
        self.retrying(|client| async move {
            let statement = client
                .prepare_cached(sql)
                .await
                .map_err(|e| classify(&e, Phase::Before))?;
            client
                .execute(&statement, params)
                .await
                .map_err(|e| classify(&e, Phase::Commit))
        })
        .await
    }

    async fn scan(
        &self,
        tree: Tree,
        from: &[u8],
        to: Option<&[u8]>,
        limit: usize,
        descending: bool,
    ) -> StoreResult<Vec<Entry>> {
        if limit == 0 || to.is_some_and(|to| to <= from) {
            return Ok(Vec::new());
        }
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.client().await?;
        let name = tree.name();
        let rows = match (to, descending) {
            (Some(to), false) => query(&client, SQL_SCAN_TO, &[&name, &from, &to, &limit]).await,
            (None, false) => query(&client, SQL_SCAN_TO_END, &[&name, &from, &limit]).await,
            (Some(to), true) => query(&client, SQL_SCAN_REV_TO, &[&name, &from, &to, &limit]).await,
            (None, true) => query(&client, SQL_SCAN_REV_TO_END, &[&name, &from, &limit]).await,
        }?;
        rows.iter()
            .map(|row| Ok((column(row, 0)?, column(row, 1)?)))
            .collect()
    }
}

#[async_trait]
impl Store for PgStore {
    async fn get(&self, tree: Tree, key: &[u8]) -> StoreResult<Option<Vec<u8>>> {
        let client = self.client().await?;
        let statement = client.prepare_cached(SQL_GET).await.map_err(read_error)?;
        let row = client
            .query_opt(&statement, &[&tree.name(), &key])
            .await
            .map_err(read_error)?;
        row.map(|row| column(&row, 0)).transpose()
    }

    async fn put(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()> {
        if tree.is_watched() {
            let batch = Batch::new().put(tree, key, value);
            self.transact(&Plan::new(&batch)).await?;
        } else {
            self.write_one(SQL_PUT, &[&tree.name(), &key, &value])
                .await?;
        }
        Ok(())
    }

    async fn delete(&self, tree: Tree, key: &[u8]) -> StoreResult<bool> {
        let deleted = if tree.is_watched() {
            let batch = Batch::new().delete(tree, key);
            let applied = self.transact(&Plan::new(&batch)).await?;
            applied.affected.first().copied().unwrap_or(0)
        } else {
            self.write_one(SQL_DELETE, &[&tree.name(), &key]).await?
        };
        Ok(deleted > 0)
    }

    async fn scan_prefix(
        &self,
        tree: Tree,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        let from = match after {
            Some(after) if after >= prefix => keys::successor(after),
            _ => prefix.to_vec(),
        };
        let to = keys::prefix_end(prefix);
        self.scan(tree, &from, to.as_deref(), limit, false).await
    }

    async fn scan_prefix_rev(
        &self,
        tree: Tree,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> StoreResult<Vec<Entry>> {
        let to = match (keys::prefix_end(prefix), before) {
            (Some(end), Some(before)) => Some(end.min(before.to_vec())),
            (end, None) => end,
            (None, Some(before)) => Some(before.to_vec()),
        };
        self.scan(tree, prefix, to.as_deref(), limit, true).await
    }

    async fn apply(&self, batch: Batch) -> StoreResult<()> {
        if batch.conditions.is_empty() && batch.writes.is_empty() {
            return Ok(());
        }
        self.transact(&Plan::new(&batch)).await?;
        Ok(())
    }

    /// Committed with `synchronous_commit` off for this transaction alone: visible to every
    /// node at its commit, in the WAL the next synchronous commit (or the WAL writer, within
    /// `wal_writer_delay`) flushes.
    async fn apply_unsynced(&self, batch: Batch) -> StoreResult<()> {
        if batch.conditions.is_empty() && batch.writes.is_empty() {
            return Ok(());
        }
        let mut plan = Plan::new(&batch);
        plan.synced = plan.watched.is_empty();
        self.transact(&plan).await?;
        Ok(())
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    async fn close(&self) -> StoreResult<()> {
        let _ = self.stop_poller.send(true);
        let tasks = [lock(&self.poller).take(), lock(&self.listener).take()];
        for task in tasks.into_iter().flatten() {
            // Both only end by being told to; a join error means one panicked, which has
            // been reported already and leaves nothing to release here.
            let _ = task.await;
        }
        self.pool.close();
        Ok(())
    }
}

/// A batch as the transaction runs it: the keys its conditions hold, its conditions, and its
/// writes reduced to the final effect on each key (a later write to a key replaces an earlier
/// one, as in sled), so the writes can be sent together in any order.
struct Plan<'b> {
    conditions: &'b [Condition],
    /// The keys the conditions name, each once, in the order they are locked.
    holds: Vec<Hold<'b>>,
    /// For each condition, the index of its key in `holds`.
    held_by: Vec<usize>,
    /// In first-write order.
    writes: Vec<KeyWrite<'b>>,
    /// The keys written to each watched tree.
    watched: Vec<(Tree, Vec<&'b [u8]>)>,
    /// Whether the commit waits until it is durable ([`Store::apply_unsynced`] does not).
    synced: bool,
}

impl<'b> Plan<'b> {
    fn new(batch: &'b Batch) -> Self {
        let mut writes: Vec<KeyWrite<'b>> = Vec::new();
        let mut index: HashMap<(Tree, &[u8]), usize> = HashMap::new();
        for write in &batch.writes {
            let (tree, key, value) = match write {
                Write::Put { tree, key, value } => (*tree, key.as_slice(), Some(value.as_slice())),
                Write::Delete { tree, key } => (*tree, key.as_slice(), None),
            };
            match index.get(&(tree, key)) {
                Some(&i) => writes[i].value = value,
                None => {
                    index.insert((tree, key), writes.len());
                    writes.push(KeyWrite {
                        tree,
                        key,
                        value,
                        claimed: false,
                    });
                }
            }
        }
        let mut watched: Vec<(Tree, Vec<&[u8]>)> = Vec::new();
        for write in writes.iter().filter(|w| w.tree.is_watched()) {
            match watched.iter_mut().find(|(t, _)| *t == write.tree) {
                Some((_, keys)) => keys.push(write.key),
                None => watched.push((write.tree, vec![write.key])),
            }
        }
        // Each key once: read if any condition wants a value there, claimed otherwise.
        let mut holds: Vec<Hold<'b>> = Vec::new();
        for condition in &batch.conditions {
            let (tree, key, wants_value) = match condition {
                Condition::Absent { tree, key } => (*tree, key.as_slice(), false),
                Condition::Equals { tree, key, value } => (*tree, key.as_slice(), value.is_some()),
            };
            match holds.iter_mut().find(|h| h.tree == tree && h.key == key) {
                Some(hold) => hold.read |= wants_value,
                None => holds.push(Hold {
                    tree,
                    key,
                    read: wants_value,
                    write: index.get(&(tree, key)).copied(),
                }),
            }
        }
        holds.sort_by(|a, b| (a.tree.name(), a.key).cmp(&(b.tree.name(), b.key)));
        let held_by = batch
            .conditions
            .iter()
            .map(|condition| {
                let (Condition::Absent { tree, key } | Condition::Equals { tree, key, .. }) =
                    condition;
                holds
                    .iter()
                    .position(|h| h.tree == *tree && h.key == key.as_slice())
                    .expect("every condition's key is held")
            })
            .collect();
        // A claimed key the batch puts is inserted with its value by the claim.
        for hold in holds.iter().filter(|h| !h.read) {
            if let Some(write) = hold.write.map(|i| &mut writes[i]) {
                write.claimed = write.value.is_some();
            }
        }
        Plan {
            conditions: &batch.conditions,
            holds,
            held_by,
            writes,
            watched,
            synced: true,
        }
    }
}

/// A key a batch's conditions name, held from its condition to the commit.
struct Hold<'b> {
    tree: Tree,
    key: &'b [u8],
    /// Read `FOR UPDATE` (a condition wants a value there); otherwise claimed.
    read: bool,
    /// The batch's write to this key, if any (an index in [`Plan::writes`]).
    write: Option<usize>,
}

/// The final write to one key.
struct KeyWrite<'b> {
    tree: Tree,
    key: &'b [u8],
    /// `Some(value)` to put, `None` to delete.
    value: Option<&'b [u8]>,
    /// Put by its condition's claim already (the key was absent, and is now this value).
    claimed: bool,
}

/// What a committed transaction did.
struct Applied {
    /// Rows affected by each of the plan's writes.
    affected: Vec<u64>,
    /// For each of the plan's watched trees, the last generation it took.
    generations: Vec<i64>,
}

/// Why one attempt at a transaction did not commit.
enum TxError {
    /// Condition `i` does not hold: final.
    Condition(usize),
    /// Serialization failure, deadlock or a unique violation from a concurrent insert: run the
    /// whole transaction again.
    Conflict(String),
    /// Anything else: final.
    Store(StoreError),
}

/// Where an error struck, which decides what a lost connection means.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before anything could have been committed: a lost connection rolled it all back.
    Before,
    /// While a commit (or an autocommitted write) was in flight: a lost connection leaves the
    /// outcome unknown, so it must not be reported as "nothing was written".
    Commit,
}

/// The statements a transaction may send, prepared (or found in the connection's cache) before
/// it begins, so nothing it sends waits for a reply to be sent: its statements go out in the
/// order they are written, and the commit after the writes (see [`try_apply`]).
struct Prepared {
    lock: tokio_postgres::Statement,
    claim: tokio_postgres::Statement,
    put: tokio_postgres::Statement,
    delete: tokio_postgres::Statement,
    bump: tokio_postgres::Statement,
    record: tokio_postgres::Statement,
}

impl Prepared {
    async fn on(client: &deadpool_postgres::Client) -> Result<Prepared, tokio_postgres::Error> {
        // Each found in the connection's cache but once per connection and statement.
        let lock = client.prepare_cached(SQL_LOCK_KEYS).await?;
        let claim = client.prepare_cached(SQL_CLAIM_KEYS).await?;
        let put = client.prepare_cached(SQL_PUT_KEYS).await?;
        let delete = client.prepare_cached(SQL_DELETE_KEYS).await?;
        let bump = client.prepare_cached(SQL_BUMP_GENERATION).await?;
        let record = client.prepare_cached(SQL_RECORD_CHANGE).await?;
        Ok(Prepared {
            lock,
            claim,
            put,
            delete,
            bump,
            record,
        })
    }
}

/// A pooled connection while a transaction may be open on it. Dropped open (an error mid-way,
/// or the caller gone while it waited), the connection leaves the pool and closes, which rolls
/// the transaction back: it is never handed to another caller inside one.
struct OpenTransaction(Option<deadpool_postgres::Client>);

impl OpenTransaction {
    fn client(&self) -> &deadpool_postgres::Client {
        self.0.as_ref().expect("taken only by drop")
    }

    /// The transaction ended (committed or rolled back): the connection may serve others.
    fn ended(mut self) {
        drop(self.0.take());
    }
}

impl Drop for OpenTransaction {
    fn drop(&mut self) {
        if let Some(client) = self.0.take() {
            drop(deadpool_postgres::Object::take(client));
        }
    }
}

/// Runs `plan` in one transaction that holds its conditions' keys (see
/// [Conditions](self#conditions)); with `notify`, one that writes a watched tree also notifies
/// the other nodes' listeners (at its commit).
///
/// Two round trips when the batch has conditions, one when it has none: `BEGIN` goes with the
/// holds (or, without conditions, with the writes), and `COMMIT` with the writes, all
/// pipelined. A write that fails aborts the transaction, so the `COMMIT` behind it rolls
/// back: nothing of the batch lands, as with a commit sent after the writes' replies.
async fn try_apply(
    client: deadpool_postgres::Client,
    plan: &Plan<'_>,
    notify: bool,
) -> Result<Applied, TxError> {
    let before = |e: tokio_postgres::Error| classify(&e, Phase::Before);
    let statements = Prepared::on(&client).await.map_err(before)?;
    let open = OpenTransaction(Some(client));
    let client = open.client();
    let begin = match plan.synced {
        true => SQL_BEGIN,
        false => SQL_BEGIN_UNSYNCED,
    };

    let began = !plan.holds.is_empty();
    if began {
        let (began, states) = futures::future::join(
            client.batch_execute(begin),
            hold_keys(client, &statements, plan),
        )
        .await;
        let states = began.and(states).map_err(before)?;
        if let Some(i) = failed_condition(plan, &states) {
            client.batch_execute("ROLLBACK").await.map_err(before)?;
            open.ended();
            return Err(TxError::Condition(i));
        }
    }

    // Placeholders the batch did not write over are deleted with its deletes: those keys
    // stay absent.
    let placeholders = (plan.holds.iter())
        .filter(|h| !h.read && h.write.is_none())
        .map(|h| (h.tree, h.key));
    let deletes = (plan.writes.iter())
        .filter(|w| w.value.is_none())
        .map(|w| (w.tree, w.key));
    let mut deleted_keys: Vec<(Tree, &[u8])> = deletes.chain(placeholders).collect();
    deleted_keys.sort_unstable_by(|a, b| (a.0.name(), a.1).cmp(&(b.0.name(), b.1)));
    // The batch's puts its claims did not make, in key order (concurrent batches lock the
    // rows they overwrite in the same order).
    let mut puts: Vec<&KeyWrite> = (plan.writes.iter())
        .filter(|w| w.value.is_some() && !w.claimed)
        .collect();
    puts.sort_unstable_by(|a, b| (a.tree.name(), a.key).cmp(&(b.tree.name(), b.key)));

    // Every statement below is sent when first polled, in this order, and `join` polls them in
    // order: `BEGIN` (unless sent with the holds), the writes, the feed, `NOTIFY`, `COMMIT`.
    let begin = async {
        match began {
            true => Ok(()),
            false => client.batch_execute(begin).await,
        }
    };
    let put = async {
        if puts.is_empty() {
            return Ok(());
        }
        let trees: Vec<&str> = puts.iter().map(|w| w.tree.name()).collect();
        let keys: Vec<&[u8]> = puts.iter().map(|w| w.key).collect();
        let values: Vec<&[u8]> = puts.iter().map(|w| w.value.unwrap_or_default()).collect();
        client
            .execute(&statements.put, &[&trees, &keys, &values])
            .await
            .map(drop)
    };
    let delete =
        futures::future::try_join_all(deleted_keys.chunk_by(|a, b| a.0 == b.0).map(|run| {
            let statement = &statements.delete;
            async move {
                let keys: Vec<&[u8]> = run.iter().map(|(_, key)| *key).collect();
                let rows = client.query(statement, &[&run[0].0.name(), &keys]).await?;
                rows.iter()
                    .map(|row| Ok((run[0].0, row.try_get::<_, Vec<u8>>(0)?)))
                    .collect::<Result<Vec<_>, tokio_postgres::Error>>()
            }
        }));
    // Watched trees: take one generation per key, and record each key under its own (the
    // records read the generation the bump before them took).
    let statements = &statements;
    let feed = futures::future::try_join_all(plan.watched.iter().map(|(tree, keys)| async move {
        let name = tree.name();
        let count = keys.len() as i64;
        let records = keys.iter().enumerate().map(|(i, key)| {
            let below = count - 1 - i as i64;
            async move { (client.execute(&statements.record, &[&name, &below, key])).await }
        });
        let (row, _) = futures::future::try_join(
            client.query_opt(&statements.bump, &[&name, &count]),
            futures::future::try_join_all(records),
        )
        .await?;
        Ok::<_, tokio_postgres::Error>((*tree, row))
    }));
    let notified = async {
        match notify && !plan.watched.is_empty() {
            true => client.batch_execute(SQL_NOTIFY).await,
            false => Ok(()),
        }
    };
    let (began, put, found, bumped, notified, committed) = futures::join!(
        begin,
        put,
        delete,
        feed,
        notified,
        client.batch_execute("COMMIT")
    );
    // A statement the server refused aborted the transaction, and the `COMMIT` rolled it
    // back; a connection lost on the way leaves the commit's outcome unknown.
    let written = began
        .and(put)
        .and(notified)
        .and(found)
        .and_then(|found| Ok((found, bumped?)));
    committed.map_err(|e| classify(&e, Phase::Commit))?;
    open.ended();
    let (found, bumped) = written.map_err(|e| classify(&e, Phase::Commit))?;

    let mut affected = vec![1; plan.writes.len()];
    let found: HashSet<(Tree, Vec<u8>)> = found.into_iter().flatten().collect();
    for (write, affected) in plan.writes.iter().zip(&mut affected) {
        if write.value.is_none() && !found.contains(&(write.tree, write.key.to_vec())) {
            *affected = 0;
        }
    }
    // A key claimed with a placeholder and deleted by the batch was absent before.
    for hold in plan.holds.iter().filter(|h| !h.read) {
        if let Some(i) = hold.write.filter(|&i| plan.writes[i].value.is_none()) {
            affected[i] = 0;
        }
    }
    let mut generations = Vec::new();
    for (tree, row) in bumped {
        let row = row.ok_or_else(|| {
            TxError::Store(StoreError::Engine(format!(
                "no generation row for watched tree {}",
                tree.name()
            )))
        })?;
        generations.push(column::<i64>(&row, 0).map_err(TxError::Store)?);
    }
    Ok(Applied {
        affected,
        generations,
    })
}

/// The index of the first of the plan's conditions that does not hold, given what holding
/// their keys found.
fn failed_condition(plan: &Plan<'_>, states: &[Held]) -> Option<usize> {
    plan.conditions
        .iter()
        .zip(&plan.held_by)
        .position(|(c, &h)| {
            let holds = match (c, &states[h]) {
                (
                    Condition::Equals {
                        value: Some(want), ..
                    },
                    Held::Value(value),
                ) => value.as_deref() == Some(want.as_slice()),
                (Condition::Equals { value: Some(_), .. }, _) => false,
                (_, Held::Value(value)) => value.is_none(),
                (_, Held::Claimed) => true,
                (_, Held::Present) => false,
            };
            !holds
        })
}

/// What a transaction holds of a condition's key.
enum Held {
    /// Read `FOR UPDATE`: its value (`None`: absent), unchanged by others until commit.
    Value(Option<Vec<u8>>),
    /// Claimed: it was absent, and now only this transaction may insert it.
    Claimed,
    /// A claim found it present (its value is not read: every condition on it asks for
    /// absence).
    Present,
}

/// Holds every key the plan's conditions name, in the plan's lock order. Each run of
/// consecutive holds of one kind is one statement (claims: one insert whatever their trees;
/// reads: one `FOR UPDATE` select per tree), the statements sent together (tokio-postgres
/// pipelines queries awaited concurrently, in the order they are polled) and run in order, so
/// the keys are locked in the plan's order with a statement per run rather than per key.
async fn hold_keys(
    client: &deadpool_postgres::Client,
    statements: &Prepared,
    plan: &Plan<'_>,
) -> Result<Vec<Held>, tokio_postgres::Error> {
    let (read, claim) = (&statements.lock, &statements.claim);
    let runs = plan
        .holds
        .chunk_by(|a, b| a.read == b.read && (!a.read || a.tree == b.tree))
        .map(|run| {
            async move {
                let keys: Vec<&[u8]> = run.iter().map(|hold| hold.key).collect();
                if run[0].read {
                    let rows = client.query(read, &[&run[0].tree.name(), &keys]).await?;
                    let mut values: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
                    for row in rows {
                        values.insert(row.try_get(0)?, row.try_get(1)?);
                    }
                    return Ok(run
                        .iter()
                        .map(|hold| Held::Value(values.remove(hold.key)))
                        .collect::<Vec<_>>());
                }
                let trees: Vec<&str> = run.iter().map(|hold| hold.tree.name()).collect();
                // The batch's value when the claim puts it, else an empty placeholder.
                let values: Vec<&[u8]> = run
                    .iter()
                    .map(|hold| match hold.write.map(|i| &plan.writes[i]) {
                        Some(write) if write.claimed => write.value.unwrap_or_default(),
                        _ => &[],
                    })
                    .collect();
                let rows = client.query(claim, &[&trees, &keys, &values]).await?;
                let mut claimed: HashSet<(String, Vec<u8>)> = HashSet::new();
                for row in rows {
                    claimed.insert((row.try_get(0)?, row.try_get(1)?));
                }
                Ok(run
                    .iter()
                    .map(|hold| {
                        match claimed.contains(&(hold.tree.name().to_owned(), hold.key.to_vec())) {
                            true => Held::Claimed,
                            false => Held::Present,
                        }
                    })
                    .collect())
            }
        });
    let held = futures::future::try_join_all(runs).await?;
    Ok(held.into_iter().flatten().collect())
}

/// Sorts a driver error into retry, unavailable or final.
fn classify(e: &tokio_postgres::Error, phase: Phase) -> TxError {
    if let Some(code) = e.code() {
        // The server answered, so nothing it refused was committed.
        return match code.code() {
            "40001" | "40P01" | "23505" => TxError::Conflict(describe(e)),
            code if is_unavailable_code(code) => {
                TxError::Store(StoreError::Unavailable(describe(e)))
            }
            _ => TxError::Store(StoreError::Engine(describe(e))),
        };
    }
    if is_connection_lost(e) {
        return TxError::Store(match phase {
            Phase::Before => StoreError::Unavailable(describe(e)),
            Phase::Commit => StoreError::InDoubt(describe(e)),
        });
    }
    TxError::Store(StoreError::Engine(describe(e)))
}

/// A read's error: a read changes nothing, so a lost connection is simply unavailability.
fn read_error(e: tokio_postgres::Error) -> StoreError {
    let unreachable = match e.code() {
        Some(code) => is_unavailable_code(code.code()),
        None => is_connection_lost(&e),
    };
    if unreachable {
        StoreError::Unavailable(describe(&e))
    } else {
        StoreError::Engine(describe(&e))
    }
}

/// SQLSTATEs saying the server cannot serve us right now: class 08 (connection exceptions),
/// 57P01-57P03 (shutting down, crashed, starting up), 53300 (too many connections).
fn is_unavailable_code(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03" | "53300")
}

/// Whether the connection failed or went away (no answer from the server).
fn is_connection_lost(e: &tokio_postgres::Error) -> bool {
    e.is_closed()
        || std::error::Error::source(e)
            .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
}

fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        None => match std::error::Error::source(e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    }
}

fn pool_error(e: PoolError) -> StoreError {
    match e {
        PoolError::Timeout(kind) => StoreError::Unavailable(format!(
            "no database connection available in time ({kind:?})"
        )),
        PoolError::Backend(e) => read_error(e),
        PoolError::Closed => StoreError::Unavailable("the store is closed".into()),
        other => StoreError::Engine(format!("connection pool: {other}")),
    }
}

async fn query(
    client: &deadpool_postgres::Client,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> StoreResult<Vec<tokio_postgres::Row>> {
    let statement = client.prepare_cached(sql).await.map_err(read_error)?;
    client.query(&statement, params).await.map_err(read_error)
}

fn column<T>(row: &tokio_postgres::Row, index: usize) -> StoreResult<T>
where
    T: for<'a> tokio_postgres::types::FromSql<'a>,
{
    row.try_get(index)
        .map_err(|e| StoreError::Corrupt(format!("unexpected column {index}: {e}")))
}

/// Jittered exponential backoff before attempt `attempt + 1`: 1, 2, 4 ... capped at 100 ms,
/// each scaled by a random factor in [0.5, 1) so conflicting writers spread out.
fn backoff(attempt: u32) -> Duration {
    let cap_ms = (1u64 << attempt.min(7)).min(100);
    let jitter = rand::thread_rng().gen_range(0.5..1.0);
    Duration::from_secs_f64(cap_ms as f64 * jitter / 1000.0)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Creates the migrations table and applies every migration not yet recorded there. Nodes
/// starting together race harmlessly: each migration's DDL and its record commit together, and
/// a node that loses (duplicate table, duplicate record or serialization failure) rolls back,
/// looks again and finds it applied.
async fn migrate(pool: &Pool) -> StoreResult<()> {
    let mut client = pool.get().await.map_err(pool_error)?;
    retry_ddl(|| client.batch_execute(CREATE_MIGRATIONS_TABLE)).await?;
    for &(version, sql) in MIGRATIONS {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match apply_migration(&mut client, version, sql).await {
                Ok(()) => break,
                Err(e) if is_ddl_race(&e) && attempt < MAX_ATTEMPTS => {
                    tokio::time::sleep(backoff(attempt)).await;
                }
                Err(e) => {
                    return Err(match read_error(e) {
                        StoreError::Engine(why) => {
                            StoreError::Engine(format!("migration {version}: {why}"))
                        }
                        other => other,
                    })
                }
            }
        }
    }
    let newest: Option<i32> = client
        .query_one("SELECT max(version) FROM toolhost_migrations", &[])
        .await
        .map_err(read_error)
        .and_then(|row| column(&row, 0))?;
    let known = MIGRATIONS.last().map(|m| m.0).unwrap_or(0);
    if newest.is_some_and(|v| v > known) {
        tracing::warn!(
            schema = newest,
            known,
            "the database schema is newer than this build knows; an older node is running \
             against a migrated database"
        );
    }
    Ok(())
}

async fn apply_migration(
    client: &mut deadpool_postgres::Client,
    version: i32,
    sql: &str,
) -> Result<(), tokio_postgres::Error> {
    let tx = client
        .build_transaction()
        .isolation_level(IsolationLevel::Serializable)
        .start()
        .await?;
    let applied = tx
        .query_opt(
            "SELECT 1 FROM toolhost_migrations WHERE version = $1",
            &[&version],
        )
        .await?
        .is_some();
    if applied {
        return tx.commit().await;
    }
    tx.batch_execute(sql).await?;
    tx.execute(
        "INSERT INTO toolhost_migrations (version) VALUES ($1)",
        &[&version],
    )
    .await?;
    tx.commit().await?;
    tracing::info!(version, "applied store migration");
    Ok(())
}

/// Concurrent DDL by another node: duplicate table/object/key or a serialization failure.
fn is_ddl_race(e: &tokio_postgres::Error) -> bool {
    e.code()
        .is_some_and(|c| matches!(c.code(), "23505" | "42P07" | "42710" | "40001" | "40P01"))
}

async fn retry_ddl<F, Fut>(mut run: F) -> StoreResult<()>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), tokio_postgres::Error>>,
{
    let mut attempt = 0;
    loop {
        attempt += 1;
        match run().await {
            Ok(()) => return Ok(()),
            Err(e) if is_ddl_race(&e) && attempt < MAX_ATTEMPTS => {
                tokio::time::sleep(backoff(attempt)).await;
            }
            Err(e) => return Err(read_error(e)),
        }
    }
}

/// Makes sure every watched tree has its generation row, and returns where each stands now:
/// the change feed starts there.
async fn start_generations(pool: &Pool) -> StoreResult<Vec<(Tree, i64)>> {
    let client = pool.get().await.map_err(pool_error)?;
    let mut start = Vec::new();
    for tree in Tree::ALL.into_iter().filter(|t| t.is_watched()) {
        client
            .execute(SQL_ENSURE_GENERATION, &[&tree.name()])
            .await
            .map_err(read_error)?;
        let row = client
            .query_one(SQL_CURRENT_GENERATION, &[&tree.name()])
            .await
            .map_err(read_error)?;
        start.push((tree, column(&row, 0)?));
    }
    Ok(start)
}

/// What a node's writers and its poller know of the generations published, under one lock: a
/// generation is published once, by whichever side sees it first (the poller can read a commit
/// back before its writer has published it).
struct Published {
    /// Generations this node wrote and published that the poller has not read yet.
    own: HashSet<(Tree, i64)>,
    /// The last generation the poller has read (and published, when not its own), per tree.
    polled: HashMap<Tree, i64>,
}

/// The background task that turns other nodes' change rows into [`Change`]s.
/// A node's own connection that `LISTEN`s ([`SQL_LISTEN`]) and wakes the poller at each
/// notification; reconnects after [`LISTEN_RETRY`] when its connection fails, and gives up for
/// good on an engine that refuses `LISTEN` (the poller then polls as often as it did before).
struct Listener {
    config: tokio_postgres::Config,
    wake: Arc<Notify>,
    listening: Arc<AtomicBool>,
    notify: Arc<AtomicBool>,
}

/// How a listening connection ended.
enum Unheard {
    /// The engine answered `LISTEN` with an error: it has no notifications.
    Unsupported(String),
    /// The connection could not be made, or was lost.
    Lost(String),
}

impl Listener {
    async fn run(self, mut stop: watch::Receiver<bool>) {
        // One warning per outage, not one per attempt.
        let mut failing = false;
        loop {
            let unheard = tokio::select! {
                _ = stop.wait_for(|stop| *stop) => return,
                unheard = self.listen() => unheard,
            };
            self.listening.store(false, Ordering::Release);
            match unheard {
                Unheard::Unsupported(why) => {
                    tracing::info!(
                        %why,
                        "the store has no LISTEN/NOTIFY: other nodes' changes are polled for"
                    );
                    return;
                }
                Unheard::Lost(why) if !failing => {
                    failing = true;
                    tracing::warn!(%why, "store change listener lost; polling until it is back");
                }
                Unheard::Lost(_) => {}
            }
            tokio::select! {
                _ = stop.wait_for(|stop| *stop) => return,
                () = tokio::time::sleep(LISTEN_RETRY) => {}
            }
        }
    }

    /// Connects, listens, and wakes the poller at every notification until the connection
    /// ends.
    async fn listen(&self) -> Unheard {
        let (client, mut connection) = match self.config.connect(NoTls).await {
            Ok(connected) => connected,
            Err(e) => return Unheard::Lost(describe(&e)),
        };
        let wake = Arc::clone(&self.wake);
        // The connection's messages: the answers to this client's statements are delivered
        // to it, notifications come out here.
        let messages = async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(AsyncMessage::Notification(_))) => wake.notify_one(),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return describe(&e),
                    None => return "the connection closed".to_owned(),
                }
            }
        };
        let mut messages = std::pin::pin!(messages);
        tokio::select! {
            lost = &mut messages => return Unheard::Lost(lost),
            listened = client.batch_execute(SQL_LISTEN) => match listened {
                Ok(()) => {}
                Err(e) if e.code().is_some() => return Unheard::Unsupported(describe(&e)),
                Err(e) => return Unheard::Lost(describe(&e)),
            },
        }
        self.notify.store(true, Ordering::Release);
        self.listening.store(true, Ordering::Release);
        // Whatever was committed while nobody listened is read now.
        self.wake.notify_one();
        let lost = messages.await;
        drop(client);
        Unheard::Lost(lost)
    }
}

struct ChangePoller {
    pool: Pool,
    changes: broadcast::Sender<Change>,
    published: Arc<Mutex<Published>>,
    /// How often to read without notifications, and with them.
    interval: Duration,
    listening_interval: Duration,
    /// Woken by the listener: a change was committed, or it (re)connected.
    wake: Arc<Notify>,
    /// Whether the listener is listening now.
    listening: Arc<AtomicBool>,
    retention: Duration,
    /// The last generation read, per watched tree.
    last: Vec<(Tree, i64)>,
}

impl ChangePoller {
    async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut next_prune = Instant::now();
        // One warning per outage, not one per poll.
        let mut failing = false;
        loop {
            let result = tokio::select! {
                _ = stop.wait_for(|stop| *stop) => return,
                result = async {
                    let every = match self.listening.load(Ordering::Acquire) {
                        true => self.listening_interval,
                        false => self.interval,
                    };
                    tokio::select! {
                        () = tokio::time::sleep(every) => {}
                        () = self.wake.notified() => {}
                    }
                    self.poll().await?;
                    if Instant::now() >= next_prune {
                        next_prune = Instant::now() + PRUNE_EVERY;
                        self.prune().await?;
                    }
                    Ok::<_, StoreError>(())
                } => result,
            };
            match result {
                Ok(()) if failing => {
                    failing = false;
                    tracing::info!("store change feed is polling again");
                }
                Ok(()) => {}
                Err(e) if !failing => {
                    failing = true;
                    tracing::warn!(error = %e, "store change feed cannot poll; retrying quietly");
                }
                Err(_) => {}
            }
        }
    }

    async fn poll(&mut self) -> StoreResult<()> {
        let client = self.pool.get().await.map_err(pool_error)?;
        let statement = client
            .prepare_cached(SQL_CHANGES_SINCE)
            .await
            .map_err(read_error)?;
        for (tree, last) in &mut self.last {
            let rows = client
                .query(&statement, &[&tree.name(), &*last])
                .await
                .map_err(read_error)?;
            let mut published = lock(&self.published);
            for row in rows {
                let gen: i64 = column(&row, 0)?;
                let key: Vec<u8> = column(&row, 1)?;
                if gen != *last + 1 {
                    tracing::warn!(
                        tree = tree.name(),
                        missed = gen - *last - 1,
                        "store change feed fell behind the retention window; reloading the tree"
                    );
                    let _ = self.changes.send(Change {
                        tree: *tree,
                        key: Vec::new(),
                    });
                }
                *last = gen;
                if published.own.remove(&(*tree, gen)) {
                    continue;
                }
                let _ = self.changes.send(Change { tree: *tree, key });
            }
            published.polled.insert(*tree, *last);
            // Own generations the poller went past without reading (pruned before it came)
            // will not come back.
            let (tree, last) = (*tree, *last);
            published.own.retain(|(t, gen)| *t != tree || *gen > last);
        }
        Ok(())
    }

    async fn prune(&self) -> StoreResult<()> {
        let client = self.pool.get().await.map_err(pool_error)?;
        client
            .execute(SQL_PRUNE_CHANGES, &[&self.retention.as_secs_f64()])
            .await
            .map_err(read_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(plan: &Plan<'_>) -> Vec<(Tree, Vec<u8>, Option<Vec<u8>>)> {
        plan.writes
            .iter()
            .map(|w| (w.tree, w.key.to_vec(), w.value.map(<[u8]>::to_vec)))
            .collect()
    }

    #[test]
    fn plan_keeps_the_last_write_to_each_key() {
        let batch = Batch::new()
            .put(Tree::Endpoints, b"a".to_vec(), b"1".to_vec())
            .put(Tree::Logs, b"a".to_vec(), b"x".to_vec())
            .delete(Tree::Endpoints, b"a".to_vec())
            .put(Tree::Endpoints, b"b".to_vec(), b"2".to_vec())
            .put(Tree::Endpoints, b"a".to_vec(), b"3".to_vec());
        let plan = Plan::new(&batch);
        assert_eq!(
            keys_of(&plan),
            [
                (Tree::Endpoints, b"a".to_vec(), Some(b"3".to_vec())),
                (Tree::Logs, b"a".to_vec(), Some(b"x".to_vec())),
                (Tree::Endpoints, b"b".to_vec(), Some(b"2".to_vec())),
            ]
        );
        assert_eq!(
            plan.watched,
            [(Tree::Endpoints, vec![&b"a"[..], &b"b"[..]])]
        );
    }

    #[test]
    fn backoff_grows_and_stays_short() {
        for attempt in 1..=MAX_ATTEMPTS {
            let wait = backoff(attempt);
            assert!(wait <= Duration::from_millis(100), "{wait:?}");
            assert!(wait >= Duration::from_micros(1000 / 2), "{wait:?}");
        }
        assert!(backoff(MAX_ATTEMPTS) > backoff(1));
    }
}
