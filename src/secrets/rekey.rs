//! Start-up migration: secrets an earlier release kept under an endpoint's slug move under the
//! endpoint's id.
//!
//! Releases before this one keyed secrets `<slug>/<NAME>` and sealed each value with that key
//! as associated data. A deleted endpoint frees its slug, so the slug's next owner could meet
//! secrets a failed or late wipe left behind. Each secret is now opened with its old key and
//! sealed anew under `<id>/<NAME>` (timestamps kept), in one atomic batch per endpoint that
//! holds only if the old rows are still as read, so a start that stops half-way is finished by
//! the next and nodes starting together move each secret once. What is left under a slug after
//! that belongs to no endpoint in the catalog (a delete that stopped before its wipe) and is
//! dropped: no one can inherit it. Once per store; a marker in `Tree::Meta` says it is done.
//!
//! Slugs are lowercase letters, digits and hyphens; ids are `ep_` and hex digits.

use super::cipher::SecretsCipher;
use super::vault::{key, Sealed, SecretsError, MAX_SECRETS};
use crate::store::{Batch, SecretRow, Store, StoreError, Tree};

/// Set once every secret is under its endpoint's id.
const DONE: &[u8] = b"migrations/secrets-by-endpoint-id";

/// Rows looked at per page when dropping what no endpoint holds.
const PAGE: usize = 256;

/// How many secrets moved, and how many were dropped as no endpoint's.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Rekeyed {
    pub moved: usize,
    pub dropped: usize,
}

/// Moves the secrets of every `(slug, id)` of the catalog from under its slug to under its
/// id, then drops what is left under slugs, unless done before.
pub async fn key_by_endpoint_id<'a>(
    store: &dyn Store,
    cipher: &SecretsCipher,
    endpoints: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Rekeyed, SecretsError> {
    if store.get(Tree::Meta, DONE).await?.is_some() {
        return Ok(Rekeyed::default());
    }
    let mut done = Rekeyed::default();
    for (slug, id) in endpoints {
        done.moved += move_endpoint(store, cipher, slug, id).await?;
    }
    done.dropped = drop_slug_keyed(store).await?;
    store.put(Tree::Meta, DONE, b"1").await?;
    Ok(done)
}

/// Re-seals one endpoint's secrets under its id.
async fn move_endpoint(
    store: &dyn Store,
    cipher: &SecretsCipher,
    slug: &str,
    id: &str,
) -> Result<usize, SecretsError> {
    loop {
        let rows = store.secrets(slug, MAX_SECRETS * 2).await?;
        if rows.is_empty() {
            return Ok(0);
        }
        let mut batch = Batch::new();
        for (name, bytes) in &rows {
            let old_key = key(slug, name);
            let sealed = Sealed::parse(&old_key, bytes)?;
            let value = sealed.open(cipher, &old_key)?;
            let new_key = key(id, name);
            let resealed = Sealed::seal(
                cipher,
                &new_key,
                &value,
                sealed.created_at,
                sealed.updated_at,
            )?;
            batch = batch
                .require_secret(slug, name, Some(bytes.clone()))
                .put_secret(SecretRow::new(id, name, resealed))
                .delete_secret(slug, name);
        }
        match store.apply(batch).await {
            Ok(()) => return Ok(rows.len()),
            // Another node moved some of them first: look again.
            Err(StoreError::ConditionFailed(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Deletes every secret not under an endpoint id; returns how many.
async fn drop_slug_keyed(store: &dyn Store) -> Result<usize, SecretsError> {
    let mut dropped = 0;
    let mut after: Option<String> = None;
    loop {
        let page = store.all_secrets(after.as_deref(), PAGE).await?;
        let Some((last, _)) = page.last() else {
            return Ok(dropped);
        };
        after = Some(last.clone());
        let orphans: Vec<(&str, &str)> = (page.iter())
            .filter(|(key, _)| !key.starts_with("ep_"))
            .filter_map(|(key, _)| key.split_once('/'))
            .collect();
        dropped += orphans.len();
        let batch = (orphans.into_iter()).fold(Batch::new(), |b, (owner, name)| {
            b.delete_secret(owner, name)
        });
        store.apply(batch).await?;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::secrets::{decrypted, list};
    use toolhost_testkit::on_both_engines;

    type Shared = Arc<dyn Store>;

    /// Writes secrets as an earlier release did: under `<slug>/<NAME>`, sealed with that key.
    async fn earlier_release(
        store: &dyn Store,
        cipher: &SecretsCipher,
        slug: &str,
        names: &[&str],
    ) {
        let at = time::macros::datetime!(2026-01-02 03:04:05 UTC);
        for name in names {
            let k = key(slug, name);
            let bytes = Sealed::seal(cipher, &k, &format!("{slug}:{name}"), at, at).unwrap();
            let row = SecretRow::new(slug, name, bytes);
            store.apply(Batch::new().put_secret(row)).await.unwrap();
        }
    }

    /// The secrets of endpoints in the catalog open under their ids with their old values and
    /// timestamps; the secrets of a slug no endpoint holds are gone; a second run does nothing;
    /// nodes running it at once move each secret once.
    async fn slug_keyed_secrets_move_under_ids(nodes: Vec<Shared>) {
        let cipher = Arc::new(SecretsCipher::from_hex(&SecretsCipher::generate_hex()).unwrap());
        let store = nodes[0].as_ref();
        earlier_release(store, &cipher, "tool", &["API_KEY", "OTHER"]).await;
        earlier_release(store, &cipher, "tool-2", &["TOKEN"]).await;
        earlier_release(store, &cipher, "deleted-tool", &["LEFT_BEHIND"]).await;
        let endpoints = [("tool", "ep_1"), ("tool-2", "ep_2")];
        let runs = nodes.iter().map(|node| {
            let (node, cipher) = (node.clone(), cipher.clone());
            tokio::spawn(async move { key_by_endpoint_id(node.as_ref(), &cipher, endpoints).await })
        });
        let mut total = Rekeyed::default();
        for run in runs {
            let done = run.await.unwrap().unwrap();
            total.moved += done.moved;
            total.dropped += done.dropped;
        }
        assert_eq!(total.moved, 3, "each secret moved once");
        assert!((1..=nodes.len()).contains(&total.dropped), "{total:?}");

        let env = decrypted(store, &cipher, "ep_1").await.unwrap();
        assert_eq!(env["API_KEY"], "tool:API_KEY");
        assert_eq!(env["OTHER"], "tool:OTHER");
        assert_eq!(
            decrypted(store, &cipher, "ep_2").await.unwrap()["TOKEN"],
            "tool-2:TOKEN"
        );
        let listed = list(store, "ep_1").await.unwrap();
        assert_eq!(
            listed[0].created_at, "2026-01-02T03:04:05Z",
            "timestamps kept"
        );
        let left: Vec<_> = (store.all_secrets(None, 100).await.unwrap().into_iter())
            .map(|(k, _)| k)
            .collect();
        assert_eq!(left, ["ep_1/API_KEY", "ep_1/OTHER", "ep_2/TOKEN"]);

        earlier_release(store, &cipher, "tool", &["LATE"]).await;
        assert_eq!(
            key_by_endpoint_id(store, &cipher, endpoints).await.unwrap(),
            Rekeyed::default(),
            "done once per store"
        );
    }

    on_both_engines!(slug_keyed_secrets_move_under_ids);
}
