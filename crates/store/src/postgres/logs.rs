//! Endpoint logs in a table of their own (`toolhost_logs`, migration 2): an append is one
//! statement that inserts the new entries and prunes the oldest beyond what is kept, with no
//! count to read; a page is an index range read.
//!
//! Why a prune starts where this node's last one ended: the entries an append prunes stay in
//! the table's index, dead, until autovacuum comes (a minute apart by default), and a delete
//! of "everything of this endpoint up to the edge" walks every one of them again, with its
//! heap page. Measured with `bench/store.sh` (`PG_STATEMENTS=1` and `auto_explain`): 67,191
//! index entries and 2,582 heap pages visited to delete 819 rows, 7 ms an append, the most
//! costly statement of a free call. So each node remembers, per endpoint, the edge of its
//! last prune ([`PruneFloors`]) and the next prune reads from there. An entry older than that
//! edge stored after it (a node whose clock is behind, or another writer's append that the
//! prune could not see yet) escapes those prunes; every [`FULL_PRUNE_EVERY`]th append of an
//! endpoint on a node, and its first, prunes from the start.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;

use super::{column, limit_param, query, PgStore};
use crate::logs::{EndpointLogs, LogRow, FULL_PRUNE_EVERY};
use crate::StoreResult;

/// Inserts the new entries and deletes the endpoint's stored entries after `$5` up to the
/// newest beyond the newest `$4`, and answers that edge (no row when nothing is pruned). The
/// delete sees the table as it was before the insert (one statement, one snapshot), so it
/// counts only entries stored before: `$4` is what is kept minus the new ones, and each new
/// one that replaced a stored entry (an append again) counts back in. Two nodes
/// appending at once may each keep a few more than that for a while; the next append prunes
/// them.
const SQL_APPEND: &str = "WITH added AS (
         INSERT INTO toolhost_logs (endpoint, id, entry)
         SELECT $1, id, entry FROM unnest($2::TEXT[], $3::BYTEA[]) AS new(id, entry)
         ON CONFLICT (endpoint, id) DO UPDATE SET entry = excluded.entry
         RETURNING xmax = 0 AS inserted
     ),
     edge AS (
         SELECT id FROM toolhost_logs WHERE endpoint = $1 ORDER BY id DESC
         OFFSET $4 + (SELECT count(*) FROM added WHERE NOT inserted) LIMIT 1
     ),
     pruned AS (
         DELETE FROM toolhost_logs WHERE endpoint = $1 AND id > $5 AND id <= (SELECT id FROM edge)
     )
     SELECT id FROM edge";
const SQL_NEWEST: &str = "SELECT id, entry FROM toolhost_logs WHERE endpoint = $1 \
     ORDER BY id DESC LIMIT $2";
const SQL_BEFORE: &str = "SELECT id, entry FROM toolhost_logs WHERE endpoint = $1 AND id < $2 \
     ORDER BY id DESC LIMIT $3";
const SQL_DELETE_ALL: &str = "DELETE FROM toolhost_logs WHERE endpoint = $1";

/// Endpoints whose prune edge a node remembers; past it, it forgets them all (each then
/// prunes from the start once).
const MAX_FLOORS: usize = 100_000;

/// Where this node's last prune of each endpoint's entries ended.
#[derive(Default)]
pub(super) struct PruneFloors(Mutex<HashMap<String, Floor>>);

struct Floor {
    /// Every entry up to this id was pruned (as of that prune's snapshot).
    edge: String,
    /// Appends since the last prune from the start.
    appends: u32,
}

impl PruneFloors {
    /// Where the next prune of `endpoint` starts: after its last edge, or from the start
    /// (the empty id, below every other) when there is none or it is time for a full one.
    fn start(&self, endpoint: &str) -> String {
        let mut floors = self.lock();
        match floors.get_mut(endpoint) {
            Some(floor) if floor.appends + 1 < FULL_PRUNE_EVERY as u32 => {
                floor.appends += 1;
                floor.edge.clone()
            }
            Some(floor) => {
                floor.appends = 0;
                String::new()
            }
            None => String::new(),
        }
    }

    /// Remembers that a prune of `endpoint` reached `edge`.
    fn reached(&self, endpoint: &str, edge: String) {
        let mut floors = self.lock();
        if floors.len() >= MAX_FLOORS && !floors.contains_key(endpoint) {
            floors.clear();
        }
        let floor = floors.entry(endpoint.to_owned()).or_insert(Floor {
            edge: String::new(),
            appends: 0,
        });
        // Two appends at once: the later edge wins.
        if edge > floor.edge {
            floor.edge = edge;
        }
    }

    fn forget(&self, endpoint: &str) {
        self.lock().remove(endpoint);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Floor>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl EndpointLogs for PgStore {
    async fn append_logs(&self, endpoint: &str, rows: &[LogRow], keep: u64) -> StoreResult<()> {
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        let rows = &rows[rows.len().saturating_sub(keep as usize)..];
        if rows.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
        let entries: Vec<&[u8]> = rows.iter().map(|row| row.entry.as_slice()).collect();
        let kept_before = keep - rows.len() as i64;
        let after = self.log_floors.start(endpoint);
        let edge = self
            .write_one_returning(
                SQL_APPEND,
                &[&endpoint, &ids, &entries, &kept_before, &after],
            )
            .await?
            .map(|row| column::<String>(&row, 0))
            .transpose()?;
        if let Some(edge) = edge {
            self.log_floors.reached(endpoint, edge);
        }
        Ok(())
    }

    async fn logs_before(
        &self,
        endpoint: &str,
        before: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<LogRow>> {
        let limit = limit_param(limit);
        let client = self.client().await?;
        let rows = match before {
            Some(before) => query(&client, SQL_BEFORE, &[&endpoint, &before, &limit]).await,
            None => query(&client, SQL_NEWEST, &[&endpoint, &limit]).await,
        }?;
        rows.iter()
            .map(|row| {
                Ok(LogRow {
                    id: column(row, 0)?,
                    entry: column(row, 1)?,
                })
            })
            .collect()
    }

    async fn delete_logs(&self, endpoint: &str) -> StoreResult<u64> {
        self.log_floors.forget(endpoint);
        self.write_one(SQL_DELETE_ALL, &[&endpoint]).await
    }
}
