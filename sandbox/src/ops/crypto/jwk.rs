//! The JSON Web Key members the algorithms read and write (RFC 7517, 7518, 8037). The glue
//! checks `use`, `key_ops` and `ext` against the key's usages and passes the string members
//! here; byte members are base64url without padding.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

use super::CryptoError;

#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Jwk {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) kty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) crv: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) alg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) k: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) x: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) y: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) d: Option<String>,
}

impl Jwk {
    /// Refuses a key whose `kty` is not `kty`.
    pub(super) fn expect_kty(&self, kty: &str) -> Result<(), CryptoError> {
        if self.kty.as_deref() == Some(kty) {
            Ok(())
        } else {
            Err(CryptoError::Data(format!("the JWK's kty must be {kty}")))
        }
    }

    /// Refuses a key with an `alg` that is present and not one of `allowed`.
    pub(super) fn expect_alg(&self, allowed: &[&str]) -> Result<(), CryptoError> {
        match self.alg.as_deref() {
            Some(alg) if !allowed.contains(&alg) => Err(CryptoError::Data(format!(
                "the JWK's alg must be {}",
                allowed.join(" or ")
            ))),
            _ => Ok(()),
        }
    }
}

/// A byte member, decoded; `None` when it is absent.
pub(super) fn decode(member: &Option<String>, name: &str) -> Result<Option<Vec<u8>>, CryptoError> {
    member
        .as_deref()
        .map(|text| {
            URL_SAFE_NO_PAD
                .decode(text)
                .map_err(|_| CryptoError::Data(format!("the JWK's {name} is not base64url")))
        })
        .transpose()
}

/// A byte member that must be there and be `len` bytes long.
pub(super) fn decode_exact(
    member: &Option<String>,
    name: &str,
    len: usize,
) -> Result<Vec<u8>, CryptoError> {
    match decode(member, name)? {
        Some(bytes) if bytes.len() == len => Ok(bytes),
        Some(_) => Err(CryptoError::Data(format!(
            "the JWK's {name} must be {len} bytes"
        ))),
        None => Err(CryptoError::Data(format!("the JWK has no {name}"))),
    }
}

pub(super) fn encode(bytes: &[u8]) -> Option<String> {
    Some(URL_SAFE_NO_PAD.encode(bytes))
}
