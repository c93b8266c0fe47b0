//! Builder keys: 32 random bytes behind a `thb_` prefix, stored only as SHA-256 hashes.
//!
//! Keys are high-entropy, so a plain (unsalted) hash cannot be reversed by guessing and lets a
//! presented key be found with one index lookup. Revoked keys stay in the index, marked, so a
//! caller presenting one is told it was revoked (`builder_key_revoked`) rather than unknown
//! (`invalid_builder_key`), both 401.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

use crate::keyfile::random_token;

/// Prefix of every builder key, so a leaked one is recognisable (and scannable).
pub const KEY_PREFIX: &str = "thb_";

/// Constant-time equality of two secrets (length is not secret), so response timing says
/// nothing about how much of a guess was right.
pub fn secrets_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// A fresh key: the prefix and 32 random bytes as hex.
pub(super) fn generate() -> String {
    random_token(KEY_PREFIX, 32)
}

/// The stored form of a key: lowercase hex SHA-256.
pub(super) fn hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// The first characters of a key, safe to show so a builder can tell keys apart.
pub(super) fn display_prefix(key: &str) -> String {
    key.chars().take(KEY_PREFIX.len() + 6).collect()
}

/// One entry of the key index (the store's builder keys, under the key's hash).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct KeyEntry {
    pub builder_id: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub revoked_at: Option<OffsetDateTime>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn secrets_equal_compares_whole_strings() {
        assert!(super::secrets_equal("abc", "abc"));
        assert!(!super::secrets_equal("abc", "abd"));
        assert!(!super::secrets_equal("abc", "abcd"));
    }

    use super::*;

    #[test]
    fn keys_are_long_random_and_hashed() {
        let a = generate();
        let b = generate();
        assert_ne!(a, b);
        assert!(a.starts_with(KEY_PREFIX) && a.len() == KEY_PREFIX.len() + 64);
        assert_eq!(hash(&a).len(), 64);
        assert_ne!(hash(&a), hash(&b));
        assert!(!hash(&a).contains(&a[KEY_PREFIX.len()..]));
        assert_eq!(display_prefix(&a).len(), 10);
    }
}
