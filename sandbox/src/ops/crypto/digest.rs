//! The SHA family: `digest`, and the hash of HMAC and ECDSA.

use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};

use super::CryptoError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hash {
    Sha1,
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    /// By the name the glue normalized (`SHA-256`, ...).
    pub(super) fn parse(name: &str) -> Result<Hash, CryptoError> {
        match name {
            "SHA-1" => Ok(Hash::Sha1),
            "SHA-256" => Ok(Hash::Sha256),
            "SHA-384" => Ok(Hash::Sha384),
            "SHA-512" => Ok(Hash::Sha512),
            "" => Err(CryptoError::NotSupported("a hash is required".to_owned())),
            _ => Err(CryptoError::NotSupported(format!(
                "the hash {name} is not supported"
            ))),
        }
    }

    pub(super) fn digest(self, data: &[u8]) -> Vec<u8> {
        match self {
            Hash::Sha1 => Sha1::digest(data).to_vec(),
            Hash::Sha256 => Sha256::digest(data).to_vec(),
            Hash::Sha384 => Sha384::digest(data).to_vec(),
            Hash::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// The block size in bits: an HMAC key's length when `generateKey` is given none.
    pub(super) fn block_bits(self) -> u32 {
        match self {
            Hash::Sha1 | Hash::Sha256 => 512,
            Hash::Sha384 | Hash::Sha512 => 1024,
        }
    }

    /// The JWK `alg` of an HMAC key with this hash.
    pub(super) fn hmac_jwk_alg(self) -> &'static str {
        match self {
            Hash::Sha1 => "HS1",
            Hash::Sha256 => "HS256",
            Hash::Sha384 => "HS384",
            Hash::Sha512 => "HS512",
        }
    }
}
