//! Start-up migration: handler data an earlier release kept under an endpoint's slug moves
//! under the endpoint's id.
//!
//! Releases before this one kept each endpoint's kv entries, files, usage records and logs
//! under its slug. A deleted endpoint frees its slug for anyone, so a call of the old endpoint
//! still running could reach the data of whoever claimed the slug next. Data now lives under
//! the endpoint's id, which is never used again. This moves what an earlier release wrote:
//! once per store (a marker in `Tree::Meta` says it is done), before the server serves, page by
//! page, each page moved in one atomic batch (put under the id, delete under the slug), so a
//! start that stops half-way is finished by the next. Nodes of a cluster that start together
//! each move a row at most once: a batch holds only if its rows are still under the slug as
//! read, so a node never writes a stale value over one another node moved (and served) first. All nodes of a cluster are upgraded together: a node
//! of an earlier release would keep writing under slugs.
//!
//! Slugs are lowercase letters, digits and hyphens and ids are `ep_` with hex digits, so no
//! slug's prefix is an id's.

use crate::store::logs::kv as logs_kv;
use crate::store::{Batch, HandlerEntryRow, HandlerSpace, Store, StoreError, StoreResult, Tree};

use super::{Space, Usage};

/// Set once every endpoint's data is under its id.
const DONE: &[u8] = b"migrations/handler-data-by-endpoint-id";

/// Rows moved per batch.
const PAGE: usize = 256;
/// Log entries copied per append ([`move_logs`]).
const LOG_PAGE: usize = 16;

/// Moves the data of every `(slug, id)` of the catalog from under its slug to under its id,
/// unless done before. Returns how many rows moved.
pub async fn key_by_endpoint_id<'a>(
    store: &dyn Store,
    endpoints: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> StoreResult<usize> {
    if store.get(Tree::Meta, DONE).await?.is_some() {
        return Ok(0);
    }
    let mut moved = 0;
    for (slug, id) in endpoints {
        for space in [Space::Kv, Space::Files] {
            moved += move_entries(store, space.stored(), slug, id).await?;
            moved += move_usage(store, space, slug, id).await?;
        }
        // Sled's log entries: `{owner}/{id}` in the logs tree.
        let (from, to) = (format!("{slug}/"), format!("{id}/"));
        moved += move_prefix(store, Tree::Logs, from.as_bytes(), to.as_bytes()).await?;
        let (from, to) = (logs_kv::count_key(slug), logs_kv::count_key(id));
        moved += move_key(store, &from, &to).await?;
        moved += move_logs(store, slug, id).await?;
    }
    store.put(Tree::Meta, DONE, b"1").await?;
    Ok(moved)
}

/// Moves an endpoint's log entries kept apart from the trees (PostgreSQL's table; the
/// engine's migration put an earlier release's entries there under the slug they were
/// written under) to its id. On sled the entries are rows of the logs tree and moved with the
/// other trees' rows above, so nothing is left under the slug here. Idempotent: a start that
/// stops between the append and the delete, or a node starting beside this one, appends the
/// same entries again (an append of an id the endpoint has replaces it); the entries count as
/// moved by whichever delete removed them.
async fn move_logs(store: &dyn Store, slug: &str, id: &str) -> StoreResult<usize> {
    // A page at a time (an entry may be near a megabyte): copied newest page first, each page
    // oldest first; the endpoint keeps at most what it kept under the slug, so nothing is
    // pruned on the way.
    let mut before: Option<String> = None;
    loop {
        let mut page = store.logs_before(slug, before.as_deref(), LOG_PAGE).await?;
        let Some(last) = page.last() else {
            break;
        };
        before = Some(last.id.clone());
        page.reverse();
        (store.append_logs(id, &page, crate::logs::KEEP_PER_ENDPOINT)).await?;
    }
    Ok(store.delete_logs(slug).await? as usize)
}

/// Moves every entry of endpoint `from`'s `space` to the same key of endpoint `to`'s, as
/// [`move_prefix`] moves a tree's rows.
async fn move_entries(
    store: &dyn Store,
    space: HandlerSpace,
    from: &str,
    to: &str,
) -> StoreResult<usize> {
    let mut moved = 0;
    loop {
        let page = (store.handler_entries_under(space, from, "", None, PAGE)).await?;
        if page.is_empty() {
            return Ok(moved);
        }
        let rows = page.len();
        let batch = page.into_iter().fold(Batch::new(), |batch, (key, entry)| {
            batch
                .require_handler_entry(space, from, &key, Some(entry.clone()))
                .put_handler_entry(HandlerEntryRow::new(space, to, &key, entry))
                .delete_handler_entry(space, from, &key)
        });
        match store.apply(batch).await {
            Ok(()) => moved += rows,
            Err(StoreError::ConditionFailed(_)) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Moves every row of `tree` under `from` to the same key under `to`.
async fn move_prefix(store: &dyn Store, tree: Tree, from: &[u8], to: &[u8]) -> StoreResult<usize> {
    let mut moved = 0;
    loop {
        let page = store.scan_prefix(tree, from, None, PAGE).await?;
        if page.is_empty() {
            return Ok(moved);
        }
        let rows = page.len();
        // Each row only if it is still there as read: a node that read a page another node
        // has moved since (and whose handlers may have written under the id already) writes
        // nothing, and looks again.
        let batch = page.into_iter().fold(Batch::new(), |batch, (key, value)| {
            let new = [to, &key[from.len()..]].concat();
            batch
                .require_equals(tree, key.clone(), Some(value.clone()))
                .put(tree, new, value)
                .delete(tree, key)
        });
        match store.apply(batch).await {
            Ok(()) => moved += rows,
            Err(StoreError::ConditionFailed(_)) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Moves endpoint `from`'s usage record in `space` to endpoint `to`, if there, unless another
/// node moved it first.
async fn move_usage(store: &dyn Store, space: Space, from: &str, to: &str) -> StoreResult<usize> {
    let Some(entry) = store.handler_usage(space.stored(), from).await? else {
        return Ok(0);
    };
    let usage: Usage = serde_json::from_slice(&entry).unwrap_or_default();
    let batch = Batch::new()
        .require_handler_usage(space.stored(), from, Some(entry.clone()))
        .put_handler_usage(usage.row(space, to, entry))
        .delete_handler_usage(space.stored(), from);
    match store.apply(batch).await {
        Ok(()) => Ok(1),
        Err(StoreError::ConditionFailed(_)) => Ok(0),
        Err(e) => Err(e),
    }
}

/// Moves one `Tree::Meta` record, if there, unless another node moved it first.
async fn move_key(store: &dyn Store, from: &[u8], to: &[u8]) -> StoreResult<usize> {
    let Some(value) = store.get(Tree::Meta, from).await? else {
        return Ok(0);
    };
    let batch = Batch::new()
        .require_equals(Tree::Meta, from.to_vec(), Some(value.clone()))
        .put(Tree::Meta, to.to_vec(), value)
        .delete(Tree::Meta, from.to_vec());
    match store.apply(batch).await {
        Ok(()) => Ok(1),
        Err(StoreError::ConditionFailed(_)) => Ok(0),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::Quotas;
    use crate::handler_data::{write_counted, Usage};
    use crate::store::LogRow;
    use toolhost_testkit::on_both_engines;
    use toolhost_testkit::test_stores::postgres;

    type Shared = Arc<dyn Store>;

    /// Writes what an earlier release kept under slugs: 300 kv rows of `tool` and one of
    /// `tool-2` (with their usage records), a file, a log entry and its count.
    async fn earlier_release(store: &dyn Store) {
        let quotas = Quotas::default();
        for (slug, n) in [("tool", 300), ("tool-2", 1)] {
            for i in 0..n {
                let key = format!("k{i:03}");
                write_counted(
                    store,
                    &quotas,
                    Space::Kv,
                    slug,
                    Some("b1"),
                    &key,
                    Some(b"1".to_vec()),
                )
                .await
                .unwrap();
            }
        }
        write_counted(
            store,
            &quotas,
            Space::Files,
            "tool",
            None,
            "a.txt",
            Some(b"hi".to_vec()),
        )
        .await
        .unwrap();
        // Where this engine keeps logs: sled, the logs tree and a count, as an earlier release
        // wrote them; PostgreSQL, the table its migration moved them to, under the slug.
        let log = LogRow {
            id: "0001".into(),
            entry: b"{}".to_vec(),
        };
        store.append_logs("tool", &[log], 1000).await.unwrap();
    }

    /// The rows and records [`earlier_release`] leaves: kv rows of both, the file, the log
    /// entry; the usage records of tool (kv, files) and tool-2 (kv); and tool's log count
    /// where the engine keeps one.
    async fn rows_to_move(store: &dyn Store) -> usize {
        let counted = store.get(Tree::Meta, &logs_kv::count_key("tool")).await;
        300 + 1 + 1 + 1 + 3 + usize::from(counted.unwrap().is_some())
    }

    const ENDPOINTS: [(&str, &str); 2] = [("tool", "ep_1"), ("tool-2", "ep_2")];

    /// Data written under slugs, as an earlier release did, is found under the ids after the
    /// migration, with its usage record and log count; another slug's data is untouched; a
    /// second run does nothing.
    async fn slug_keyed_data_moves_under_ids(nodes: Vec<Shared>) {
        let store = nodes[0].as_ref();
        earlier_release(store).await;
        let expected = rows_to_move(store).await;
        let moved = key_by_endpoint_id(store, ENDPOINTS).await.unwrap();
        assert_eq!(moved, expected, "rows and records moved");
        assert_moved(store).await;

        // Done once: data written under a slug afterwards (by nothing of this release) stays.
        let late = HandlerEntryRow::new(HandlerSpace::Kv, "tool", "late", b"1".to_vec());
        store
            .apply(Batch::new().put_handler_entry(late))
            .await
            .unwrap();
        assert_eq!(
            key_by_endpoint_id(store, [("tool", "ep_1")]).await.unwrap(),
            0
        );
        let left = store.handler_entries_under(HandlerSpace::Kv, "tool", "", None, 10);
        assert_eq!(left.await.unwrap().len(), 1);
    }

    /// Nodes that start together move every row and record once between them, and the data
    /// ends as one node alone would leave it.
    async fn nodes_starting_together_move_each_row_once(nodes: Vec<Shared>) {
        earlier_release(nodes[0].as_ref()).await;
        let expected = rows_to_move(nodes[0].as_ref()).await;
        let runs = nodes.iter().map(|node| {
            let node = node.clone();
            tokio::spawn(async move { key_by_endpoint_id(node.as_ref(), ENDPOINTS).await })
        });
        let mut moved = 0;
        for run in futures::future::join_all(runs).await {
            moved += run.unwrap().unwrap();
        }
        assert_eq!(moved, expected, "each row moved by one node");
        assert_moved(nodes[0].as_ref()).await;
    }

    async fn assert_moved(store: &dyn Store) {
        let under = |space, endpoint: &'static str| async move {
            (store.handler_entries_under(space, endpoint, "", None, 1000))
                .await
                .unwrap()
        };
        assert_eq!(under(HandlerSpace::Kv, "ep_1").await.len(), 300);
        assert_eq!(under(HandlerSpace::Kv, "ep_2").await.len(), 1);
        assert!(under(HandlerSpace::Kv, "tool").await.is_empty());
        assert!(under(HandlerSpace::Kv, "tool-2").await.is_empty());
        assert_eq!(under(HandlerSpace::Files, "ep_1").await[0].0, "a.txt");
        let logs = store.logs_before("ep_1", None, 10).await.unwrap();
        assert_eq!(
            logs.iter().map(|l| l.id.as_str()).collect::<Vec<_>>(),
            ["0001"]
        );
        assert!(store
            .logs_before("tool", None, 10)
            .await
            .unwrap()
            .is_empty());
        let usage = store.handler_usage(HandlerSpace::Kv, "ep_1").await.unwrap();
        let usage: Usage = serde_json::from_slice(&usage.unwrap()).unwrap();
        assert_eq!(usage.count, 300);
        let left = store.handler_usage(HandlerSpace::Kv, "tool").await.unwrap();
        assert!(left.is_none());
        // Sled's count moved with its entries (PostgreSQL keeps none).
        assert!(store
            .get(Tree::Meta, &logs_kv::count_key("tool"))
            .await
            .unwrap()
            .is_none());
    }

    on_both_engines!(slug_keyed_data_moves_under_ids);

    /// Takes two nodes: PostgreSQL only.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn nodes_starting_together_on_postgres_move_each_row_once() {
        nodes_starting_together_move_each_row_once(postgres().await).await;
    }
}
