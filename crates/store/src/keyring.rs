//! The service's own secrets (admin token, secrets master key, receipt signing key, dev payTo
//! key): where each comes from, and how every node of a cluster ends up with the same one.
//!
//! On the embedded store a key is the operator's (configuration) or a file generated into the
//! data dir on first start ([`keyfile`]). Nodes sharing a PostgreSQL store have no shared disk,
//! and a key generated per node would split the cluster (receipts signed by different keys,
//! secrets one node cannot open), so the first node generates each missing key into the store
//! and later nodes load it. A key given by configuration wins and is never stored: only its
//! fingerprint is, so a node configured with a different key refuses to start instead of
//! silently disagreeing with the others.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{Batch, Store, StoreError, Tree};
use toolhost_values::keyfile::{self, Origin};

/// Where keys are kept.
pub enum Keyring {
    /// Files in this directory (the embedded store's data dir).
    Files(PathBuf),
    /// The shared store, under `keys/{name}` in the meta tree.
    Store(Arc<dyn Store>),
}

#[derive(Debug, thiserror::Error)]
pub enum KeyringError {
    #[error("cannot read or create the key file {name}: {source}")]
    File {
        name: &'static str,
        source: std::io::Error,
    },
    #[error(
        "the configured {name} differs from the one this cluster's other nodes use; give every node \
         the same value (or none, to use the cluster's)"
    )]
    Disagrees { name: &'static str },
    #[error(
        "this cluster's {name} was given to its nodes by configuration and is not stored; give it \
         to this node too"
    )]
    NotStored { name: &'static str },
    #[error("cannot read or store the cluster's {name}: {source}")]
    Store {
        name: &'static str,
        source: StoreError,
    },
}

/// What the store keeps of a key.
#[derive(Serialize, Deserialize)]
struct StoredKey {
    /// SHA-256 of the key, hex: compared with a configured key.
    fingerprint: String,
    /// The key itself when a node generated it; absent when the operator configured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<String>,
}

impl Keyring {
    /// The key `name`: the `configured` one when given, else the one kept here, else a new one
    /// from `generate` (kept for next time). Concurrent first starts agree on one generated key.
    pub async fn key(
        &self,
        name: &'static str,
        configured: Option<&str>,
        generate: impl FnOnce() -> String,
    ) -> Result<(String, Origin), KeyringError> {
        match self {
            Keyring::Files(dir) => match configured {
                Some(key) => Ok((key.to_owned(), Origin::Existing)),
                None => keyfile::load_or_generate(&dir.join(name), generate)
                    .map_err(|source| KeyringError::File { name, source }),
            },
            Keyring::Store(store) => {
                let store_error = |source| KeyringError::Store { name, source };
                let key = format!("keys/{name}").into_bytes();
                let wanted = match configured {
                    Some(value) => StoredKey {
                        fingerprint: fingerprint(value),
                        value: None,
                    },
                    None => {
                        let value = generate();
                        StoredKey {
                            fingerprint: fingerprint(&value),
                            value: Some(value),
                        }
                    }
                };
                let bytes = serde_json::to_vec(&wanted)
                    .map_err(|e| store_error(StoreError::Corrupt(e.to_string())))?;
                let claimed = store
                    .apply(Batch::new().require_absent(Tree::Meta, key.clone()).put(
                        Tree::Meta,
                        key.clone(),
                        bytes,
                    ))
                    .await;
                match claimed {
                    Ok(()) => {
                        let origin = match configured {
                            Some(_) => Origin::Existing,
                            None => Origin::Generated,
                        };
                        let value = configured.map(str::to_owned).or(wanted.value);
                        return Ok((value.unwrap_or_default(), origin));
                    }
                    Err(StoreError::ConditionFailed(_)) => {}
                    Err(e) => return Err(store_error(e)),
                }
                let stored = store
                    .get(Tree::Meta, &key)
                    .await
                    .map_err(store_error)?
                    .ok_or_else(|| store_error(StoreError::Corrupt(format!("{name} vanished"))))?;
                let stored: StoredKey = serde_json::from_slice(&stored)
                    .map_err(|e| store_error(StoreError::Corrupt(e.to_string())))?;
                match (configured, stored.value) {
                    (Some(value), _) if fingerprint(value) == stored.fingerprint => {
                        Ok((value.to_owned(), Origin::Existing))
                    }
                    (Some(_), _) => Err(KeyringError::Disagrees { name }),
                    (None, Some(value)) => Ok((value, Origin::Existing)),
                    (None, None) => Err(KeyringError::NotStored { name }),
                }
            }
        }
    }
}

fn fingerprint(key: &str) -> String {
    hex::encode(Sha256::digest(key.trim().as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SledStore;

    #[tokio::test]
    async fn nodes_share_generated_keys_and_refuse_disagreeing_ones() {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let ring = Keyring::Store(store.clone());
        let (first, origin) = ring.key("k", None, || "aaa".into()).await.unwrap();
        assert_eq!((first.as_str(), origin), ("aaa", Origin::Generated));
        let (again, origin) = ring.key("k", None, || "bbb".into()).await.unwrap();
        assert_eq!((again.as_str(), origin), ("aaa", Origin::Existing));
        assert!(ring.key("k", Some("aaa"), String::new).await.is_ok());
        assert!(matches!(
            ring.key("k", Some("other"), String::new).await,
            Err(KeyringError::Disagrees { name: "k" })
        ));

        // A configured key is kept only as a fingerprint: unconfigured nodes cannot get it.
        let (configured, _) = ring.key("c", Some("ccc"), String::new).await.unwrap();
        assert_eq!(configured, "ccc");
        let raw = store.get(Tree::Meta, b"keys/c").await.unwrap().unwrap();
        assert!(!String::from_utf8_lossy(&raw).contains("ccc"));
        assert!(matches!(
            ring.key("c", None, || "ddd".into()).await,
            Err(KeyringError::NotStored { name: "c" })
        ));
    }

    #[tokio::test]
    async fn files_keep_the_data_dir_behaviour() {
        let dir = tempfile::tempdir().unwrap();
        let ring = Keyring::Files(dir.path().to_path_buf());
        let (first, origin) = ring.key("k", None, || "aaa".into()).await.unwrap();
        assert_eq!((first.as_str(), origin), ("aaa", Origin::Generated));
        let (again, _) = ring.key("k", None, || "bbb".into()).await.unwrap();
        assert_eq!(again, "aaa");
        let (configured, _) = ring.key("k", Some("zzz"), String::new).await.unwrap();
        assert_eq!(configured, "zzz");
    }
}
