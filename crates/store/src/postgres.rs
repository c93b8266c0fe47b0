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
//!   (see the `transaction` module), with the client retrying the whole transaction on SQLSTATE
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
//! # Layout
//! - `transaction`: a batch as one transaction, its conditions held by row locks.
//! - `feed`: the change feed (other nodes' writes to watched trees), polled and notified.
//! - `migrations`: the schema's versions, applied at start-up.
//! - `logs`, `events`, `quotes`, `sales`, `receipts`, `packets`: the domains kept in tables of
//!   their own; `tables`: the typed records' tables as transactions write them.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{
    Hook, HookError, Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime,
};
use rand::Rng;
use tokio::sync::{broadcast, watch, Notify};
use tokio::task::JoinHandle;
use tokio_postgres::NoTls;

mod builders;
mod commit;
mod credits;
mod debts;
mod endpoints;
mod events;
mod feed;
mod handler_data;
mod logs;
mod migrations;
mod nonces;
mod packets;
mod paid_out;
mod payment_ids;
mod payout_settings;
mod pending_settlements;
mod quotes;
mod receipt_log;
mod receipts;
mod refund_claims;
mod refunds;
mod revisions;
mod rollout_tallies;
mod sales;
mod secrets;
mod statistics;
mod tables;
mod transaction;

use commit::Writers;
use feed::{start_generations, ChangePoller, Listener, Published};
use migrations::migrate;
use transaction::{try_apply, Applied, Plan};

use super::{keys, Batch, Change, Entry, Store, StoreError, StoreResult, Tree};

/// How many unread [`Change`]s a subscriber may fall behind before it gets `Lagged`.
const CHANGE_CAPACITY: usize = 1024;
/// Attempts at a transaction that keeps meeting serialization conflicts before giving up.
const MAX_ATTEMPTS: u32 = 30;

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
    /// Transactions that write, in flight at once from this node; batches that arrive while
    /// all are busy are committed together by the next free one (see `commit`).
    pub writers: usize,
    /// How often this node looks for tables that outgrew their statistics and analyzes them
    /// (see `statistics`).
    pub statistics_every: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        Self {
            pool_size: 16,
            wait_timeout: Duration::from_secs(3),
            poll_interval: Duration::from_millis(200),
            listening_poll_interval: Duration::from_secs(5),
            change_retention: Duration::from_secs(600),
            writers: 4,
            statistics_every: statistics::CHECK_EVERY,
        }
    }
}

/// How each connection plans toolhost's statements, set once it connects. Every statement
/// toolhost sends reads by an index (a key, a key range, a partial index), and is prepared
/// once per connection. Left to itself, PostgreSQL planned some of them from statistics taken
/// while a table, or one tree of `toolhost_kv`, was still nearly empty, and kept those plans
/// while it grew: the receipt log's appends read its tree whole to find a few pending keys
/// (the tree was absent from `toolhost_kv`'s statistics, so estimated at one row), a nonce
/// claim's lock read `toolhost_nonces` whole (a plan cached when the table was small), each
/// growing with the table until autovacuum came. Measured with `bench/store.sh`
/// (`PG_STATEMENTS=1`, `auto_explain`): 8-11 ms for a statement that takes 0.05 ms, paid
/// calls at a quarter of their rate by the end of a 30 s run. So: a statement's plan is made
/// for any parameter (`force_generic_plan`: a tree's rows estimated as the table's average, not
/// from a value's stale frequency), and a sequential scan is the planner's last resort. And no
/// JIT compilation: a sequential scan's penalty puts any statement that has to make one (a
/// revenue report's sum of every sale) far above `jit_above_cost`, and compiling it took 680 ms
/// for a sum of 1,000 sales that runs in 10 (`bench/revenue.sh`, `auto_explain`).
const SQL_SESSION_PLANS: &str =
    "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; SET jit = off";
const SQL_GET: &str = "SELECT value FROM toolhost_kv WHERE tree = $1 AND key = $2";
const SQL_GET_MANY: &str =
    "SELECT key, value FROM toolhost_kv WHERE tree = $1 AND key = ANY($2::BYTEA[])";
const SQL_PUT: &str = "INSERT INTO toolhost_kv (tree, key, value) VALUES ($1, $2, $3) \
     ON CONFLICT (tree, key) DO UPDATE SET value = excluded.value";
const SQL_DELETE: &str = "DELETE FROM toolhost_kv WHERE tree = $1 AND key = $2";
const SQL_SCAN_TO: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 AND key < $3 ORDER BY key LIMIT $4";
const SQL_SCAN_TO_END: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 ORDER BY key LIMIT $3";
const SQL_SCAN_REV_TO: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 AND key < $3 ORDER BY key DESC LIMIT $4";
const SQL_SCAN_REV_TO_END: &str = "SELECT key, value FROM toolhost_kv \
     WHERE tree = $1 AND key >= $2 ORDER BY key DESC LIMIT $3";

/// The PostgreSQL engine; see the module docs.
pub struct PgStore {
    shared: Arc<Shared>,
    writers: Writers,
    /// Whether this node's listener is listening now.
    listening: Arc<AtomicBool>,
    /// Stops the background tasks: the poller, the listener and the statistics' keeper.
    stop_tasks: watch::Sender<bool>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Where this node's last prune of each endpoint's logs ended.
    log_floors: logs::PruneFloors,
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
            .post_create(Hook::async_fn(|client, _| {
                Box::pin(async move {
                    client
                        .batch_execute(SQL_SESSION_PLANS)
                        .await
                        .map_err(HookError::Backend)
                })
            }))
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
        let (stop_tasks, stop) = watch::channel(false);
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
        let poller = tokio::spawn(poller.run(stop.clone()));
        let statistics = tokio::spawn(statistics::keep_up(
            pool.clone(),
            options.statistics_every,
            stop,
        ));
        let shared = Arc::new(Shared {
            pool,
            changes,
            published,
            notify,
        });
        Ok(PgStore {
            writers: Writers::start(Arc::clone(&shared), options.writers),
            shared,
            listening,
            stop_tasks,
            tasks: Mutex::new(vec![poller, listener, statistics]),
            log_floors: logs::PruneFloors::default(),
        })
    }

    /// Whether this node hears of other nodes' changes as they commit (its listener is
    /// listening), rather than by polling alone.
    pub fn notified(&self) -> bool {
        self.listening.load(Ordering::Acquire)
    }

    async fn client(&self) -> StoreResult<deadpool_postgres::Client> {
        self.shared.client().await
    }

    /// The entry of the one record `sql` finds by its id (`$1`): a typed record's read.
    async fn entry_by_id(&self, sql: &str, id: &str) -> StoreResult<Option<Vec<u8>>> {
        let client = self.client().await?;
        let rows = query(&client, sql, &[&id]).await?;
        rows.first().map(|row| column(row, 0)).transpose()
    }

    /// The entries of the records `sql` finds by their ids (`$1`, an array; it reads id and
    /// entry), each `None` where there is none, in the order of `ids`.
    async fn entries_of(&self, sql: &str, ids: &[&str]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let found: HashMap<String, Vec<u8>> =
            (self.ids_and_entries(sql, &[&ids]).await?.into_iter()).collect();
        Ok(ids.iter().map(|id| found.get(*id).cloned()).collect())
    }

    /// The ids and entries `sql` reads: a page of typed records.
    async fn ids_and_entries(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let client = self.client().await?;
        let rows = query(&client, sql, params).await?;
        rows.iter()
            .map(|row| Ok((column(row, 0)?, column(row, 1)?)))
            .collect()
    }

    /// The page of typed records `sql` reads after an id (`$1`; from the first when `None`),
    /// at most `limit` (`$2`).
    async fn page_after(
        &self,
        sql: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 2] =
            [&after.unwrap_or(""), &limit_param(limit)];
        self.ids_and_entries(sql, &params).await
    }

    /// The page of one owner's typed records `sql` reads: the owner (`$1`), after an id (`$2`;
    /// from the first when `None`), at most `limit` (`$3`).
    async fn page_of(
        &self,
        sql: &str,
        owner: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
            [&owner, &after.unwrap_or(""), &limit_param(limit)];
        self.ids_and_entries(sql, &params).await
    }

    /// A single-statement write to an unwatched tree: one round trip, autocommitted, retried
    /// on conflicts. Returns the rows affected.
    async fn write_one(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<u64> {
        self.shared
            .retrying(|client| async move {
                let statement = prepared(&client, sql).await?;
                let written = client.execute(&statement, params).await;
                written.map_err(|e| classify(&e, Phase::Commit))
            })
            .await
    }

    /// [`PgStore::write_one`] for a statement that answers at most one row: that row.
    async fn write_one_returning(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<Option<tokio_postgres::Row>> {
        self.shared
            .retrying(|client| async move {
                let statement = prepared(&client, sql).await?;
                let written = client.query_opt(&statement, params).await;
                written.map_err(|e| classify(&e, Phase::Commit))
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
        let limit = limit_param(limit);
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

    async fn get_many(&self, tree: Tree, keys: &[Vec<u8>]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let statement = (client.prepare_cached(SQL_GET_MANY).await).map_err(read_error)?;
        let rows = (client.query(&statement, &[&tree.name(), &keys]).await).map_err(read_error)?;
        let mut found = HashMap::with_capacity(rows.len());
        for row in rows {
            found.insert(column::<Vec<u8>>(&row, 0)?, column::<Vec<u8>>(&row, 1)?);
        }
        Ok(keys.iter().map(|key| found.get(key).cloned()).collect())
    }

    async fn put(&self, tree: Tree, key: &[u8], value: &[u8]) -> StoreResult<()> {
        if tree.is_watched() {
            (self.writers)
                .commit(Batch::new().put(tree, key, value), true)
                .await?;
        } else {
            self.write_one(SQL_PUT, &[&tree.name(), &key, &value])
                .await?;
        }
        Ok(())
    }

    async fn delete(&self, tree: Tree, key: &[u8]) -> StoreResult<bool> {
        let deleted = if tree.is_watched() {
            let affected = (self.writers)
                .commit(Batch::new().delete(tree, key), true)
                .await?;
            affected.first().copied().unwrap_or(0)
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
        let from = keys::scan_start(prefix, after);
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
        self.writers.commit(batch, true).await?;
        Ok(())
    }

    /// Committed with `synchronous_commit` off for this transaction alone: visible to every
    /// node at its commit, in the WAL the next synchronous commit (or the WAL writer, within
    /// `wal_writer_delay`) flushes.
    async fn apply_unsynced(&self, batch: Batch) -> StoreResult<()> {
        if batch.conditions.is_empty() && batch.writes.is_empty() {
            return Ok(());
        }
        // A batch that writes a watched tree is committed durably by its writer.
        self.writers.commit(batch, false).await?;
        Ok(())
    }

    fn changes(&self) -> broadcast::Receiver<Change> {
        self.shared.changes.subscribe()
    }

    async fn close(&self) -> StoreResult<()> {
        let _ = self.stop_tasks.send(true);
        let tasks = std::mem::take(&mut *lock(&self.tasks));
        for task in tasks {
            // Each only ends by being told to; a join error means one panicked, which has
            // been reported already and leaves nothing to release here.
            let _ = task.await;
        }
        self.writers.close().await;
        self.shared.pool.close();
        Ok(())
    }
}

/// What the node's writers share with the store: the connections, and whom to tell of the
/// watched keys they write.
struct Shared {
    pool: Pool,
    changes: broadcast::Sender<Change>,
    /// Shared with the poller: which generations were published, by whom.
    published: Arc<Mutex<Published>>,
    /// Whether writes to watched trees send `NOTIFY`: set once `LISTEN` worked on this engine.
    notify: Arc<AtomicBool>,
}

impl Shared {
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

    /// Applies a plan in one transaction, re-running it on conflicts; answers each member's
    /// outcome (the rows its writes affected, or its condition that failed).
    pub(super) async fn transact(
        &self,
        plan: &Plan<'_>,
    ) -> StoreResult<Vec<Result<Vec<u64>, usize>>> {
        let applied = self
            .retrying(|client| async move {
                let notify = self.notify.load(Ordering::Acquire);
                try_apply(client, plan, notify).await
            })
            .await?;
        self.published(&applied);
        Ok(applied.members)
    }

    /// Publishes a committed plan's watched keys here and now, and remembers their
    /// generations so the poller does not publish them again; those the poller has read
    /// already (between the commit and now) it has published, and are not published twice.
    fn published(&self, applied: &Applied) {
        if applied.watched.is_empty() {
            return;
        }
        let mut published = lock(&self.published);
        for (tree, keys, last) in &applied.watched {
            let first = last - keys.len() as i64 + 1;
            let polled = published.polled.get(tree).copied().unwrap_or(i64::MIN);
            for (gen, key) in (first..).zip(keys) {
                if gen <= polled {
                    continue;
                }
                published.own.insert((*tree, gen));
                let _ = self.changes.send(Change {
                    tree: *tree,
                    key: key.clone(),
                });
            }
        }
    }
}

/// Why one attempt at a transaction did not commit.
enum TxError {
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

/// A page's size as the `LIMIT` parameter.
fn limit_param(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// `sql` prepared on `client` (once per connection), for a write that may be retried.
async fn prepared(
    client: &deadpool_postgres::Client,
    sql: &str,
) -> Result<tokio_postgres::Statement, TxError> {
    (client.prepare_cached(sql).await).map_err(|e| classify(&e, Phase::Before))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A store of its own in the test process's shared cluster.
    async fn fresh_store(options: PgOptions) -> PgStore {
        let cluster = tokio::task::spawn_blocking(toolhost_testkit::PgCluster::shared)
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("cannot run the PostgreSQL store tests: {e}"));
        let url = cluster.fresh_url().await.unwrap();
        PgStore::connect_with(&url, options).await.unwrap()
    }

    /// The plan a pooled connection keeps for `sql`, prepared as `name` (with `types`) and
    /// executed six times with `args` (so a plan of the small table is cached, as the server
    /// would have), shown for `args` once `grow` has run.
    async fn plan_after_growth(
        client: &deadpool_postgres::Client,
        (name, types, sql): (&str, &str, &str),
        args: &str,
        grow: &str,
    ) -> String {
        client
            .batch_execute(&format!("PREPARE {name} ({types}) AS {sql}"))
            .await
            .unwrap();
        for _ in 0..6 {
            client
                .batch_execute(&format!("EXECUTE {name}({args})"))
                .await
                .unwrap();
        }
        client.batch_execute(grow).await.unwrap();
        explain(client, &format!("EXECUTE {name}({args})")).await
    }

    /// The plan of `statement`, as `EXPLAIN` shows it.
    async fn explain(client: &deadpool_postgres::Client, statement: &str) -> String {
        let rows = client
            .simple_query(&format!("EXPLAIN {statement}"))
            .await
            .unwrap();
        let lines = rows.iter().filter_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        });
        lines.collect::<Vec<_>>().join("\n")
    }

    /// Statements read by their index however stale the statistics of their table: the
    /// receipt log's pending keys in a `toolhost_kv` analyzed before that tree had a row, and a
    /// nonce claim's lock in a `toolhost_nonces` planned while it held a few rows (each read its
    /// whole tree or table before `SQL_SESSION_PLANS`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn statements_keep_their_index_plans_as_tables_grow() {
        let store = fresh_store(PgOptions::default()).await;
        let client = store.shared.client().await.unwrap();
        client
            .batch_execute(
                "INSERT INTO toolhost_kv SELECT 'handler_kv', convert_to('k' || g, 'UTF8'), \
                 '\\x00' FROM generate_series(1, 2000) g; \
                 INSERT INTO toolhost_nonces SELECT 'n' || g, 'spent', '\\x00' \
                 FROM generate_series(1, 20) g; \
                 ANALYZE toolhost_kv; ANALYZE toolhost_nonces",
            )
            .await
            .unwrap();
        let kv = plan_after_growth(
            &client,
            ("lock_keys", "TEXT, BYTEA[]", transaction::SQL_LOCK_KEYS),
            "'receipt_log', ARRAY['\\x70656e64696e672f31'::BYTEA, '\\x636865636b706f696e74']",
            "INSERT INTO toolhost_kv SELECT 'receipt_log', convert_to('pending/' || g, 'UTF8'), \
             '\\x00' FROM generate_series(1, 30000) g",
        )
        .await;
        assert!(
            kv.contains("Index Cond: ((tree = $1) AND (key = ANY ($2)))"),
            "{kv}"
        );
        let nonces = plan_after_growth(
            &client,
            (
                "lock_nonces",
                "TEXT[]",
                &tables::Table::Nonces.statements().lock,
            ),
            "ARRAY['n1', 'n2']",
            "INSERT INTO toolhost_nonces SELECT 'm' || g, 'spent', '\\x00' \
             FROM generate_series(1, 30000) g",
        )
        .await;
        assert!(
            nonces.contains("Index Cond: (nonce_key = ANY ($1))"),
            "{nonces}"
        );
        drop(client);
        store.close().await.unwrap();
    }

    /// A statement planned while its table was small keeps that plan as the table grows until
    /// the table is analyzed (a whole tree read for two keys); the statistics' keeper analyzes
    /// a table that outgrew its statistics, once (not while another holds the table's lock),
    /// and the same connection then plans it by key.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_table_that_outgrew_its_statistics_is_analyzed_and_planned_again() {
        // The node's own keeper must not analyze behind the test's back.
        let store = fresh_store(PgOptions {
            statistics_every: Duration::from_secs(3600),
            ..PgOptions::default()
        })
        .await;
        let client = store.shared.client().await.unwrap();
        client
            .batch_execute(
                "INSERT INTO toolhost_kv SELECT 'handler_kv', convert_to('k' || g, 'UTF8'), \
                 '\\x00' FROM generate_series(1, 20) g; ANALYZE toolhost_kv",
            )
            .await
            .unwrap();
        let args =
            "'receipt_log', ARRAY['\\x70656e64696e672f31'::BYTEA, '\\x636865636b706f696e74']";
        let planned = plan_after_growth(
            &client,
            ("lock_keys", "TEXT, BYTEA[]", transaction::SQL_LOCK_KEYS),
            args,
            "INSERT INTO toolhost_kv SELECT 'receipt_log', convert_to('pending/' || g, 'UTF8'), \
             '\\x00' FROM generate_series(1, 30000) g; SELECT pg_stat_force_next_flush()",
        )
        .await;
        assert!(
            planned.contains("Index Cond: (tree = $1)") && planned.contains("Filter:"),
            "the plan of the small table reads the whole tree: {planned}"
        );
        // The insert's counts reach the statistics views when its session reports them.
        client.batch_execute("SELECT 1").await.unwrap();
        let mut other = store.shared.client().await.unwrap();
        // A table someone else is vacuuming or analyzing (its lock held here) is left for the
        // next check, promptly, and the connection stays usable.
        let mut locker = store.shared.client().await.unwrap();
        let vacuuming = locker.transaction().await.unwrap();
        vacuuming
            .batch_execute("LOCK TABLE toolhost_kv IN SHARE UPDATE EXCLUSIVE MODE")
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let skipped = statistics::analyze_outgrown(&mut other).await.unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        vacuuming.rollback().await.unwrap();
        let analyzed = statistics::analyze_outgrown(&mut other).await.unwrap();
        assert_eq!(analyzed, ["toolhost_kv"]);
        let replanned = explain(&client, &format!("EXECUTE lock_keys({args})")).await;
        assert!(
            replanned.contains("Index Cond: ((tree = $1) AND (key = ANY ($2)))"),
            "{replanned}"
        );
        // Analyzed once for its growth, not again until it doubles.
        assert!(statistics::analyze_outgrown(&mut other)
            .await
            .unwrap()
            .is_empty());
        // Statistics of 30,000 rows already plan by key: more than doubled, it is left to
        // autovacuum.
        client
            .batch_execute(
                "INSERT INTO toolhost_kv SELECT 'receipt_log', convert_to('more/' || g, 'UTF8'), \
                 '\\x00' FROM generate_series(1, 70000) g; SELECT pg_stat_force_next_flush()",
            )
            .await
            .unwrap();
        client.batch_execute("SELECT 1").await.unwrap();
        assert!(statistics::analyze_outgrown(&mut other)
            .await
            .unwrap()
            .is_empty());
        drop((client, other, locker));
        store.close().await.unwrap();
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
