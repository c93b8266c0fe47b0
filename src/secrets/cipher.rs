//! The master key and AES-256-GCM-SIV sealing.

use aes_gcm_siv::aead::{Aead, KeyInit, Payload};
use aes_gcm_siv::{Aes256GcmSiv, Nonce};
use rand::RngCore;

pub(super) const NONCE_BYTES: usize = 12;

pub struct SecretsCipher {
    cipher: Aes256GcmSiv,
}

impl std::fmt::Debug for SecretsCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsCipher(..)")
    }
}

/// Sealing or opening failed: a wrong master key, or tampered data.
#[derive(Debug, thiserror::Error)]
#[error("secret could not be sealed or opened")]
pub struct CryptoError;

impl SecretsCipher {
    /// A cipher from 64 hex digits (32 bytes).
    pub fn from_hex(hex_key: &str) -> Result<Self, String> {
        let bytes = hex::decode(hex_key.trim())
            .map_err(|_| "the secrets master key must be 64 hex digits".to_string())?;
        if bytes.len() != 32 {
            return Err("the secrets master key must be 64 hex digits (32 bytes)".into());
        }
        let cipher = Aes256GcmSiv::new_from_slice(&bytes)
            .map_err(|_| "the secrets master key has the wrong length".to_string())?;
        Ok(Self { cipher })
    }

    /// A new random master key as 64 hex digits.
    pub fn generate_hex() -> String {
        crate::keyfile::random_token("", 32)
    }

    pub fn seal(
        &self,
        aad: &[u8],
        plaintext: &[u8],
    ) -> Result<([u8; NONCE_BYTES], Vec<u8>), CryptoError> {
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad,
                },
            )
            .map_err(|_| CryptoError)?;
        Ok((nonce, sealed))
    }

    pub fn open(&self, aad: &[u8], nonce: &[u8], sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        if nonce.len() != NONCE_BYTES {
            return Err(CryptoError);
        }
        self.cipher
            .decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad })
            .map_err(|_| CryptoError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_binding() {
        let cipher = SecretsCipher::from_hex(&SecretsCipher::generate_hex()).unwrap();
        let (nonce, sealed) = cipher.seal(b"slug/NAME", b"hunter2-value").unwrap();
        assert!(!sealed.windows(6).any(|w| w == b"hunter"));
        assert_eq!(
            cipher.open(b"slug/NAME", &nonce, &sealed).unwrap(),
            b"hunter2-value"
        );
        assert!(cipher.open(b"other/NAME", &nonce, &sealed).is_err());
        let other = SecretsCipher::from_hex(&SecretsCipher::generate_hex()).unwrap();
        assert!(other.open(b"slug/NAME", &nonce, &sealed).is_err());
        assert!(SecretsCipher::from_hex("abcd").is_err());
        assert!(format!("{cipher:?}").contains(".."));
    }
}
