//! The change feed: other nodes' writes to watched trees, as [`Change`]s.
//!
//! A write to a [watched](Tree::is_watched) tree also bumps that tree's row in
//! `toolhost_generations` by the number of keys written and inserts one `toolhost_changes` row
//! per key, numbered by those generations, in the same transaction. The generation row's lock
//! orders such commits, so generations become visible in order, and each node's poller reads
//! `gen > last`. A node publishes its own writes on commit (and skips them when its poller reads
//! them back). Rows older than [`PgOptions::change_retention`](super::PgOptions::change_retention) are pruned by whichever node's
//! poller gets there.
//!
//! When to read: each node holds one connection of its own that `LISTEN`s on
//! `toolhost_changes` ([`SQL_LISTEN`]), and a transaction that writes a watched tree also sends
//! `NOTIFY` (delivered at its commit, pipelined with its other statements: no extra round trip). A notified poller
//! reads at once, so another node's change arrives in about a round trip instead of half a
//! poll interval on average; it still reads every [`PgOptions::listening_poll_interval`](super::PgOptions::listening_poll_interval), and once
//! whenever its listener (re)connects, so a notification lost with a connection costs seconds,
//! not the change. An engine that refuses `LISTEN` (or a listener that cannot connect) leaves
//! the poller reading every [`PgOptions::poll_interval`](super::PgOptions::poll_interval), as before.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_postgres::Pool;
use tokio::sync::{broadcast, watch, Notify};
use tokio_postgres::{AsyncMessage, NoTls};

use super::{column, describe, lock, pool_error, read_error};
use crate::{Change, StoreError, StoreResult, Tree};

/// How often a poller prunes old change rows.
const PRUNE_EVERY: Duration = Duration::from_secs(60);
/// The change feed's notification channel (see the module docs): listened to by every node ...
const SQL_LISTEN: &str = "LISTEN toolhost_changes";
/// ... and notified by each transaction that writes a watched tree.
pub(super) const SQL_NOTIFY: &str = "NOTIFY toolhost_changes";
/// How long a listener whose connection failed waits before it connects again.
const LISTEN_RETRY: Duration = Duration::from_secs(1);

/// Takes `$2` generations for a watched tree; the row lock is held to commit.
pub(super) const SQL_BUMP_GENERATION: &str =
    "UPDATE toolhost_generations SET gen = gen + $2 WHERE tree = $1 RETURNING gen";
/// One change row, numbered `$2` below the tree's (just bumped) generation.
pub(super) const SQL_RECORD_CHANGE: &str = "INSERT INTO toolhost_changes (tree, gen, key) \
     SELECT tree, gen - $2, $3 FROM toolhost_generations WHERE tree = $1";
const SQL_ENSURE_GENERATION: &str =
    "INSERT INTO toolhost_generations (tree, gen) VALUES ($1, 0) ON CONFLICT (tree) DO NOTHING";
const SQL_CURRENT_GENERATION: &str = "SELECT gen FROM toolhost_generations WHERE tree = $1";
const SQL_CHANGES_SINCE: &str =
    "SELECT gen, key FROM toolhost_changes WHERE tree = $1 AND gen > $2 ORDER BY gen";
const SQL_PRUNE_CHANGES: &str =
    "DELETE FROM toolhost_changes WHERE at < now() - $1::FLOAT8 * INTERVAL '1 second'";

/// Makes sure every watched tree has its generation row, and returns where each stands now:
/// the change feed starts there.
pub(super) async fn start_generations(pool: &Pool) -> StoreResult<Vec<(Tree, i64)>> {
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
pub(super) struct Published {
    /// Generations this node wrote and published that the poller has not read yet.
    pub(super) own: HashSet<(Tree, i64)>,
    /// The last generation the poller has read (and published, when not its own), per tree.
    pub(super) polled: HashMap<Tree, i64>,
}

/// A node's own connection that `LISTEN`s ([`SQL_LISTEN`]) and wakes the poller at each
/// notification; reconnects after [`LISTEN_RETRY`] when its connection fails, and gives up for
/// good on an engine that refuses `LISTEN` (the poller then polls as often as it did before).
pub(super) struct Listener {
    pub(super) config: tokio_postgres::Config,
    pub(super) wake: Arc<Notify>,
    pub(super) listening: Arc<AtomicBool>,
    pub(super) notify: Arc<AtomicBool>,
}

/// How a listening connection ended.
enum Unheard {
    /// The engine answered `LISTEN` with an error: it has no notifications.
    Unsupported(String),
    /// The connection could not be made, or was lost.
    Lost(String),
}

impl Listener {
    pub(super) async fn run(self, mut stop: watch::Receiver<bool>) {
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

/// The background task that turns other nodes' change rows into [`Change`]s.
pub(super) struct ChangePoller {
    pub(super) pool: Pool,
    pub(super) changes: broadcast::Sender<Change>,
    pub(super) published: Arc<Mutex<Published>>,
    /// How often to read without notifications, and with them.
    pub(super) interval: Duration,
    pub(super) listening_interval: Duration,
    /// Woken by the listener: a change was committed, or it (re)connected.
    pub(super) wake: Arc<Notify>,
    /// Whether the listener is listening now.
    pub(super) listening: Arc<AtomicBool>,
    pub(super) retention: Duration,
    /// The last generation read, per watched tree.
    pub(super) last: Vec<(Tree, i64)>,
}

impl ChangePoller {
    pub(super) async fn run(mut self, mut stop: watch::Receiver<bool>) {
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
