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
//! move the same rows to the same places. All nodes of a cluster are upgraded together: a node
//! of an earlier release would keep writing under slugs.
//!
//! Slugs are lowercase letters, digits and hyphens and ids are `ep_` with hex digits, so no
//! slug's prefix is an id's.

use crate::store::{Batch, Store, StoreError, StoreResult, Tree};

use super::{scoped_key, usage_key, Space};

/// Set once every endpoint's data is under its id.
const DONE: &[u8] = b"migrations/handler-data-by-endpoint-id";

/// Rows moved per batch.
const PAGE: usize = 256;

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
        for tree in [Tree::HandlerKv, Tree::HandlerFiles, Tree::Logs] {
            moved += move_prefix(store, tree, &scoped_key(slug, ""), &scoped_key(id, "")).await?;
        }
        let mut keys: Vec<(Vec<u8>, Vec<u8>)> = [Space::Kv, Space::Files]
            .into_iter()
            .map(|space| (usage_key(space.name(), slug), usage_key(space.name(), id)))
            .collect();
        keys.push((crate::logs::count_key(slug), crate::logs::count_key(id)));
        for (from, to) in keys {
            moved += move_key(store, &from, &to).await?;
        }
    }
    store.put(Tree::Meta, DONE, b"1").await?;
    Ok(moved)
}

/// Moves every row of `tree` under `from` to the same key under `to`.
async fn move_prefix(store: &dyn Store, tree: Tree, from: &[u8], to: &[u8]) -> StoreResult<usize> {
    let mut moved = 0;
    loop {
        let page = store.scan_prefix(tree, from, None, PAGE).await?;
        if page.is_empty() {
            return Ok(moved);
        }
        moved += page.len();
        let batch = page.into_iter().fold(Batch::new(), |batch, (key, value)| {
            let new = [to, &key[from.len()..]].concat();
            batch.put(tree, new, value).delete(tree, key)
        });
        store.apply(batch).await?;
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
    use super::*;
    use crate::config::Quotas;
    use crate::storage::{write_counted, Usage};
    use crate::store::SledStore;

    /// Data written under slugs, as an earlier release did, is found under the ids after the
    /// migration, with its usage record and log count; another slug's data is untouched; a
    /// second run does nothing.
    #[tokio::test]
    async fn slug_keyed_data_moves_under_ids() {
        let store = SledStore::temporary().unwrap();
        let quotas = Quotas::default();
        for (slug, n) in [("tool", 300), ("tool-2", 1)] {
            for i in 0..n {
                let key = format!("k{i:03}");
                write_counted(
                    &store,
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
            &store,
            &quotas,
            Space::Files,
            "tool",
            None,
            "a.txt",
            Some(b"hi".to_vec()),
        )
        .await
        .unwrap();
        store.put(Tree::Logs, b"tool/0001", b"{}").await.unwrap();
        store
            .put(Tree::Meta, &crate::logs::count_key("tool"), b"1")
            .await
            .unwrap();

        let moved = key_by_endpoint_id(&store, [("tool", "ep_1"), ("tool-2", "ep_2")])
            .await
            .unwrap();
        // kv rows of both, the file, the log entry; then the usage records of tool (kv, files)
        // and tool-2 (kv), and tool's log count.
        assert_eq!(moved, 300 + 1 + 1 + 1 + 4, "rows and records moved");
        let under = |tree, prefix: &'static str| {
            let store = &store;
            async move {
                store
                    .scan_prefix(tree, prefix.as_bytes(), None, 1000)
                    .await
                    .unwrap()
            }
        };
        assert_eq!(under(Tree::HandlerKv, "ep_1/").await.len(), 300);
        assert_eq!(under(Tree::HandlerKv, "ep_2/").await.len(), 1);
        assert!(under(Tree::HandlerKv, "tool").await.is_empty());
        assert_eq!(under(Tree::HandlerFiles, "ep_1/").await[0].0, b"ep_1/a.txt");
        assert_eq!(under(Tree::Logs, "ep_1/").await[0].0, b"ep_1/0001");
        let usage: Usage = serde_json::from_slice(
            &store
                .get(Tree::Meta, &usage_key("kv", "ep_1"))
                .await
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(usage.count, 300);
        assert!(store
            .get(Tree::Meta, &usage_key("kv", "tool"))
            .await
            .unwrap()
            .is_none());
        assert!(store
            .get(Tree::Meta, &crate::logs::count_key("ep_1"))
            .await
            .unwrap()
            .is_some());

        // Done once: data written under a slug afterwards (by nothing of this release) stays.
        store
            .put(Tree::HandlerKv, b"tool/late", b"1")
            .await
            .unwrap();
        assert_eq!(
            key_by_endpoint_id(&store, [("tool", "ep_1")])
                .await
                .unwrap(),
            0
        );
        assert_eq!(under(Tree::HandlerKv, "tool/").await.len(), 1);
    }
}
