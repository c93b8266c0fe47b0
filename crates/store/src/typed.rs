//! JSON (de)serialization over the byte-level store.

use serde::{de::DeserializeOwned, Serialize};

use super::{Store, StoreError, StoreResult, Tree};

pub async fn get_json<T: DeserializeOwned>(
    store: &dyn Store,
    tree: Tree,
    key: &[u8],
) -> StoreResult<Option<T>> {
    match store.get(tree, key).await? {
        None => Ok(None),
        Some(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            StoreError::Corrupt(format!(
                "{}/{}: {e}",
                tree.name(),
                String::from_utf8_lossy(key)
            ))
        }),
    }
}

pub async fn put_json<T: Serialize>(
    store: &dyn Store,
    tree: Tree,
    key: &[u8],
    value: &T,
) -> StoreResult<()> {
    let bytes = serde_json::to_vec(value).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    store.put(tree, key, &bytes).await
}
