//! A deleted endpoint's data goes with it, even when the node deleting it dies half-way.
//!
//! The delete that frees the slug also records, in the same atomic batch, that the endpoint's
//! data is owed a wipe: its secrets, kv entries, files, usage records and logs, all kept under
//! its id, and its revisions. The wipe then runs at once; should it fail or the node die
//! first, the record (the store's owed wipe) stays and the next maintenance pass of any node
//! finishes it. The slug's next owner never waits on the wipe and never sees the data
//! meanwhile: it gets a new id, and the old one's `ctx` operations are refused from the delete
//! on (the host checks each op's endpoint id).

use crate::store::{Batch, Store, StoreResult};

/// Wipes one maintenance pass finishes at most, so a pass stays short; the next goes on.
const MAX_PER_PASS: usize = 64;

/// The write recording that `endpoint`'s data is owed a wipe.
pub(super) fn owed(endpoint: &str) -> Batch {
    Batch::new().put_owed_wipe(endpoint)
}

/// Deletes everything kept under `endpoint`, then its owed record. Idempotent: a wipe that
/// stopped half-way is finished by running it again.
pub async fn wipe(store: &dyn Store, endpoint: &str) -> StoreResult<()> {
    crate::secrets::delete_all(store, endpoint).await?;
    crate::handler_data::forget_endpoint(store, endpoint).await?;
    crate::logs::delete_all(store, endpoint).await?;
    crate::tallies::delete_all(store, endpoint).await?;
    crate::catalog::revision::delete_all(store, endpoint).await?;
    store.apply(Batch::new().delete_owed_wipe(endpoint)).await
}

/// Finishes wipes that deletes left owed (a node that failed or died before its wipe was
/// done); returns how many. Nodes sharing a store may finish the same one: wipes are
/// idempotent.
pub async fn finish_owed(store: &dyn Store) -> StoreResult<usize> {
    let owed = store.owed_wipes(MAX_PER_PASS).await?;
    for endpoint in &owed {
        wipe(store, endpoint).await?;
    }
    Ok(owed.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Quotas;
    use crate::handler_data::{write_counted, Space};
    use crate::secrets::{SecretChanges, SecretsCipher};
    use crate::store::{SledStore, Tree};

    /// Writes a secret, a kv entry, a file and a log count under `endpoint`.
    async fn fill(store: &dyn Store, endpoint: &str) {
        let cipher = SecretsCipher::from_hex(&SecretsCipher::generate_hex()).unwrap();
        let changes = SecretChanges {
            set: [("TOKEN".to_string(), "v".to_string())].into(),
            delete: vec![],
        };
        crate::secrets::apply_changes(store, &cipher, endpoint, changes)
            .await
            .unwrap();
        for space in [Space::Kv, Space::Files] {
            let value = Some(b"1".to_vec());
            write_counted(
                store,
                &Quotas::default(),
                space,
                endpoint,
                Some("b1"),
                "k",
                value,
            )
            .await
            .unwrap();
        }
        let count = crate::store::logs::kv::count_key(endpoint);
        store.put(Tree::Meta, &count, b"1").await.unwrap();
    }

    /// Every row of every tree whose key names `endpoint`.
    async fn rows_of(store: &dyn Store, endpoint: &str) -> Vec<String> {
        let mut rows = Vec::new();
        for tree in Tree::ALL {
            for (key, _) in store.scan_prefix(tree, b"", None, 1000).await.unwrap() {
                let key = String::from_utf8_lossy(&key).into_owned();
                if key.contains(endpoint) {
                    rows.push(format!("{}:{key}", tree.name()));
                }
            }
        }
        rows
    }

    /// A delete that died after freeing the slug left its wipe owed: a maintenance pass
    /// finishes it, touching no other endpoint's data, and the next pass has nothing to do.
    #[tokio::test]
    async fn an_owed_wipe_is_finished_by_the_next_pass_and_touches_nothing_else() {
        let store = SledStore::temporary().unwrap();
        fill(&store, "ep_gone").await;
        fill(&store, "ep_kept").await;
        store.apply(owed("ep_gone")).await.unwrap();
        assert!(rows_of(&store, "ep_gone").await.len() > 4);
        let kept = rows_of(&store, "ep_kept").await;

        assert_eq!(finish_owed(&store).await.unwrap(), 1);
        assert_eq!(rows_of(&store, "ep_gone").await, Vec::<String>::new());
        assert_eq!(rows_of(&store, "ep_kept").await, kept);
        assert_eq!(finish_owed(&store).await.unwrap(), 0);
    }
}
