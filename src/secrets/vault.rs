//! Stored secrets per endpoint, keyed `<endpoint id>/<NAME>` (the store's
//! [`EndpointSecrets`](crate::store::EndpointSecrets)), each sealed with that key as associated
//! data.
//!
//! Keyed by the endpoint's id, never its slug: a deleted endpoint's slug is free for anyone,
//! and whoever claims it gets a new id, so it can neither read what the old endpoint stored nor
//! have its secrets wiped by the old endpoint's delete finishing late.

use std::collections::{BTreeMap, BTreeSet};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::cipher::{CryptoError, SecretsCipher};
use crate::error::{ApiError, ErrorCode};
use crate::store::{secrets::secret_key, Batch, SecretRow, Store, StoreError, StoreResult};
use crate::timestamp::rfc3339;

pub(super) const MAX_SECRETS: usize = 50;
pub(super) const MAX_VALUE_BYTES: usize = 8 * 1024;

/// Names as `ctx.env` exposes them: a letter or underscore, then letters, digits, underscores.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    (1..=64).contains(&name.len())
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The body of `POST /ai/endpoints/{slug}/secrets`: values to set and names to delete.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecretChanges {
    /// Name to new value. Values are write-only.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Names to delete; deleting an absent name is not an error.
    #[serde(default)]
    pub delete: Vec<String>,
}

/// What anyone ever sees of a secret.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecretInfo {
    pub name: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A secret as stored: its value sealed with its stored key as associated data, so a value
/// copied under another key fails to open.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Sealed {
    nonce: String,
    ciphertext: String,
    #[serde(with = "time::serde::rfc3339")]
    pub(super) created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub(super) updated_at: OffsetDateTime,
}

impl Sealed {
    /// `value` sealed under `key`, as stored bytes.
    pub(super) fn seal(
        cipher: &SecretsCipher,
        key: &[u8],
        value: &str,
        created_at: OffsetDateTime,
        updated_at: OffsetDateTime,
    ) -> Result<Vec<u8>, SecretsError> {
        let (nonce, ciphertext) = cipher.seal(key, value.as_bytes())?;
        let sealed = Sealed {
            nonce: B64.encode(nonce),
            ciphertext: B64.encode(ciphertext),
            created_at,
            updated_at,
        };
        Ok(serde_json::to_vec(&sealed).map_err(|e| StoreError::Corrupt(e.to_string()))?)
    }

    /// Stored bytes, parsed.
    pub(super) fn parse(key: &[u8], bytes: &[u8]) -> Result<Sealed, SecretsError> {
        serde_json::from_slice(bytes).map_err(|e| {
            let key = String::from_utf8_lossy(key);
            SecretsError::Store(StoreError::Corrupt(format!("secret {key}: {e}")))
        })
    }

    /// The value, opened with the key it was sealed under.
    pub(super) fn open(&self, cipher: &SecretsCipher, key: &[u8]) -> Result<String, SecretsError> {
        let corrupt = || {
            let key = String::from_utf8_lossy(key);
            SecretsError::Store(StoreError::Corrupt(format!("secret {key}")))
        };
        let nonce = B64.decode(&self.nonce).map_err(|_| corrupt())?;
        let sealed = B64.decode(&self.ciphertext).map_err(|_| corrupt())?;
        let plain = cipher.open(key, &nonce, &sealed)?;
        String::from_utf8(plain).map_err(|_| corrupt())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Crypto(#[from] CryptoError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<SecretsError> for ApiError {
    fn from(e: SecretsError) -> Self {
        match e {
            SecretsError::Invalid(_) => {
                ApiError::unprocessable(ErrorCode::InvalidSecret, e.to_string())
            }
            SecretsError::Crypto(e) => ApiError::internal(e),
            SecretsError::Store(e) => e.into(),
        }
    }
}

/// The stored key of an endpoint's secret, also its sealed value's associated data.
pub(super) fn key(endpoint: &str, name: &str) -> Vec<u8> {
    secret_key(endpoint, name).into_bytes()
}

async fn all_sealed(
    store: &dyn Store,
    endpoint: &str,
) -> Result<Vec<(String, Sealed)>, SecretsError> {
    let entries = store.secrets(endpoint, MAX_SECRETS * 2).await?;
    entries
        .into_iter()
        .map(|(name, v)| {
            let sealed = Sealed::parse(&key(endpoint, &name), &v)?;
            Ok((name, sealed))
        })
        .collect()
}

/// Names and timestamps of an endpoint's secrets, by name.
pub async fn list(store: &dyn Store, endpoint: &str) -> Result<Vec<SecretInfo>, SecretsError> {
    Ok(all_sealed(store, endpoint)
        .await?
        .into_iter()
        .map(|(name, s)| SecretInfo {
            name,
            created_at: rfc3339(s.created_at),
            updated_at: rfc3339(s.updated_at),
        })
        .collect())
}

/// Sets and deletes secrets in one atomic batch; returns the resulting list.
pub async fn apply_changes(
    store: &dyn Store,
    cipher: &SecretsCipher,
    endpoint: &str,
    changes: SecretChanges,
) -> Result<Vec<SecretInfo>, SecretsError> {
    for name in changes.set.keys().chain(changes.delete.iter()) {
        if !is_env_name(name) {
            return Err(SecretsError::Invalid(format!(
                "secret name {name:?} must be 1 to 64 letters, digits or underscores, not starting with a digit"
            )));
        }
    }
    if let Some(name) = changes.set.keys().find(|n| changes.delete.contains(n)) {
        return Err(SecretsError::Invalid(format!(
            "secret {name:?} is both set and deleted"
        )));
    }
    if let Some((name, _)) = changes
        .set
        .iter()
        .find(|(_, v)| v.is_empty() || v.len() > MAX_VALUE_BYTES)
    {
        return Err(SecretsError::Invalid(format!(
            "the value of {name:?} must be 1 to {MAX_VALUE_BYTES} bytes"
        )));
    }
    let existing: BTreeMap<String, Sealed> =
        all_sealed(store, endpoint).await?.into_iter().collect();
    let mut names: BTreeSet<&String> = existing.keys().collect();
    names.extend(changes.set.keys());
    for name in &changes.delete {
        names.remove(name);
    }
    if names.len() > MAX_SECRETS {
        return Err(SecretsError::Invalid(format!(
            "an endpoint holds at most {MAX_SECRETS} secrets"
        )));
    }
    let now = OffsetDateTime::now_utc();
    let mut batch = Batch::new();
    for (name, value) in &changes.set {
        let k = key(endpoint, name);
        let created_at = existing.get(name).map_or(now, |s| s.created_at);
        let bytes = Sealed::seal(cipher, &k, value, created_at, now)?;
        batch = batch.put_secret(SecretRow::new(endpoint, name, bytes));
    }
    for name in &changes.delete {
        batch = batch.delete_secret(endpoint, name);
    }
    store.apply(batch).await?;
    list(store, endpoint).await
}

/// The endpoint's secrets, decrypted, by name: for `ctx.env` and for redacting logs, nothing
/// else.
pub async fn decrypted(
    store: &dyn Store,
    cipher: &SecretsCipher,
    endpoint: &str,
) -> Result<BTreeMap<String, String>, SecretsError> {
    all_sealed(store, endpoint)
        .await?
        .into_iter()
        .map(|(name, s)| Ok((name.clone(), s.open(cipher, &key(endpoint, &name))?)))
        .collect()
}

/// Removes every secret of an endpoint (when it is deleted), readable or not.
pub async fn delete_all(store: &dyn Store, endpoint: &str) -> StoreResult<()> {
    store.delete_secrets(endpoint).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::EndpointSecrets;

    #[tokio::test]
    async fn env_names() {
        for ok in ["API_KEY", "_x", "a1"] {
            assert!(is_env_name(ok), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A B", "é", &"A".repeat(65)] {
            assert!(!is_env_name(bad), "{bad}");
        }
    }

    /// A throwaway store and a fresh cipher: all the vault works on.
    fn parts() -> (crate::store::SledStore, SecretsCipher) {
        let store = crate::store::SledStore::temporary().unwrap();
        let cipher = SecretsCipher::from_hex(&SecretsCipher::generate_hex()).unwrap();
        (store, cipher)
    }

    fn set(pairs: &[(&str, &str)]) -> SecretChanges {
        SecretChanges {
            set: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            delete: vec![],
        }
    }

    #[tokio::test]
    async fn set_list_decrypt_delete() {
        let (store, cipher) = parts();
        let listed = apply_changes(
            &store,
            &cipher,
            "receipt-echo",
            set(&[("API_KEY", "s3cr3t-value-1"), ("OTHER", "v2")]),
        )
        .await
        .unwrap();
        assert_eq!(
            listed.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["API_KEY", "OTHER"]
        );
        for (_, bytes) in store.all_secrets(None, 10).await.unwrap() {
            assert!(!String::from_utf8_lossy(&bytes).contains("s3cr3t"));
        }
        let secrets = decrypted(&store, &cipher, "receipt-echo").await.unwrap();
        assert_eq!(secrets["API_KEY"], "s3cr3t-value-1");
        assert_eq!(secrets["OTHER"], "v2");

        let changes = SecretChanges {
            set: BTreeMap::new(),
            delete: vec!["OTHER".into()],
        };
        assert_eq!(
            apply_changes(&store, &cipher, "receipt-echo", changes)
                .await
                .unwrap()
                .len(),
            1
        );
        delete_all(&store, "receipt-echo").await.unwrap();
        assert!(list(&store, "receipt-echo").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn rejects_bad_changes() {
        let (store, cipher) = parts();
        assert!(apply_changes(&store, &cipher, "s", set(&[("1BAD", "v")]))
            .await
            .is_err());
        assert!(apply_changes(&store, &cipher, "s", set(&[("EMPTY", "")]))
            .await
            .is_err());
        let too_many: Vec<(String, String)> = (0..=MAX_SECRETS)
            .map(|i| (format!("K{i}"), "v".to_string()))
            .collect();
        let changes = SecretChanges {
            set: too_many.into_iter().collect(),
            delete: vec![],
        };
        assert!(matches!(
            apply_changes(&store, &cipher, "s", changes).await,
            Err(SecretsError::Invalid(_))
        ));
    }
}
